"""Steady state from a run's time series: where the start-up transient ends, and whether the end still trends.

`mser5(series)` is MSER-5 (White 1997, "An effective truncation heuristic for bias reduction in simulation
output"; the batch size of 5 is White, Cobb and Spratt 2000): the series is cut into batches of 5 consecutive
observations, and the truncation point is the number of leading batches d that minimises the marginal
standard error of the batch means that remain,

    MSER(d) = sum_{j>d} (Z_j - mean(Z_{d+1..m}))^2 / (m - d)^2,

with d restricted to the first half of the batches (beyond it the statistic degenerates as too few batches
remain).  `trend(series, times)` is the Mann-Kendall test for a monotonic trend with Sen's slope, applied to
the last half of what is kept: a run whose throughput still rises or falls there is not at steady state.

Pure functions of lists of numbers; the runner (kvlab.execution.runner) feeds them the per-interval
throughput and applies the cut as it applies a fixed warm-up.
"""
from __future__ import annotations

import math

BATCH = 5
MIN_BATCHES = 4          # fewer batches than this: no cut is chosen (too little to tell a transient)
TREND_MIN_POINTS = 6     # the last half needs this many intervals for the trend test
TREND_ALPHA = 0.05       # Mann-Kendall two-sided p below this ...
TREND_MIN_CHANGE = 0.05  # ... and a change of at least 5% of the mean over the last half: "not at steady state"
METHOD = "MSER-5"


def mser5(series, batch: int = BATCH) -> dict:
    """The MSER-5 truncation point of `series` (observations in time order, e.g. ops/s per interval):
    {"method", "batch", "batches", "cut": observations to drop from the start, "cut_batches", "mser": the
    statistic per candidate d, "note": why no cut was chosen (too short), or None}."""
    x = [float(v) for v in series]
    m = len(x) // batch
    out = {"method": METHOD, "batch": batch, "batches": m, "cut": 0, "cut_batches": 0, "mser": [], "note": None}
    if m < MIN_BATCHES:
        out["note"] = (f"{len(x)} intervals make {m} batches of {batch}; MSER-5 needs at least {MIN_BATCHES} "
                       f"({MIN_BATCHES * batch} intervals): nothing excluded (a shorter interval gives more)")
        return out
    z = [sum(x[j * batch:(j + 1) * batch]) / batch for j in range(m)]
    stats = []
    for d in range(m // 2 + 1):
        tail = z[d:]
        mean = sum(tail) / len(tail)
        stats.append(sum((v - mean) ** 2 for v in tail) / len(tail) ** 2)
    best = min(range(len(stats)), key=lambda d: (stats[d], d))
    out.update(cut=best * batch, cut_batches=best, mser=stats)
    return out


def _norm_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_kendall(values) -> tuple[int, float, float]:
    """(S, z, two-sided p) of the Mann-Kendall trend test, with the variance corrected for ties."""
    x = list(values)
    n = len(x)
    s = 0
    for i in range(n - 1):
        xi = x[i]
        for j in range(i + 1, n):
            s += (x[j] > xi) - (x[j] < xi)
    ties = {}
    for v in x:
        ties[v] = ties.get(v, 0) + 1
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties.values())) / 18.0
    if var <= 0:
        return s, 0.0, 1.0
    z = (s - 1) / math.sqrt(var) if s > 0 else (s + 1) / math.sqrt(var) if s < 0 else 0.0
    return s, z, min(1.0, 2.0 * _norm_sf(abs(z)))


def sen_slope(values, times) -> float:
    """Sen's slope: the median of the pairwise slopes (value units per time unit)."""
    slopes = sorted((values[j] - values[i]) / (times[j] - times[i])
                    for i in range(len(values) - 1) for j in range(i + 1, len(values)) if times[j] != times[i])
    if not slopes:
        return 0.0
    k = len(slopes)
    return slopes[k // 2] if k % 2 else (slopes[k // 2 - 1] + slopes[k // 2]) / 2.0


def trend(series, times=None, *, alpha: float = TREND_ALPHA, min_change: float = TREND_MIN_CHANGE) -> dict:
    """Does the last half of `series` still trend?  `times`: each observation's time in s (default 0, 1, ...).
    {"test": "Mann-Kendall", "points", "p", "slope_per_s" (Sen's), "change": slope x span / mean (a fraction),
    "steady": False when p < alpha and |change| >= min_change, None when too short to test, else True,
    "from_s", "to_s"}."""
    x = [float(v) for v in series]
    t = [float(v) for v in times] if times is not None else [float(i) for i in range(len(x))]
    half = len(x) // 2
    x, t = x[half:], t[half:]
    out = {"test": "Mann-Kendall", "points": len(x), "p": None, "slope_per_s": None, "change": None,
           "steady": None, "from_s": t[0] if t else None, "to_s": t[-1] if t else None}
    if len(x) < TREND_MIN_POINTS:
        return out
    _, _, p = mann_kendall(x)
    slope = sen_slope(x, t)
    mean = sum(x) / len(x)
    change = slope * (t[-1] - t[0]) / mean if mean else 0.0
    out.update(p=p, slope_per_s=slope, change=change, steady=not (p < alpha and abs(change) >= min_change))
    return out


def not_steady_warning(tr: dict, what: str = "throughput", unit: str = "ops/s") -> str | None:
    """The warning a result carries when `trend` found its last half still moving, else None."""
    if tr.get("steady") is not False:
        return None
    word = "rises" if tr["change"] > 0 else "falls"
    return (f"not at steady state: {what} still {word} by {abs(tr['change']) * 100:.1f}% over the last half of "
            f"the run ({tr['from_s']:.1f}-{tr['to_s']:.1f} s; Sen's slope {tr['slope_per_s']:+,.1f} {unit} per s, "
            f"Mann-Kendall p={tr['p']:.3g}): background work (compactions, flushes, checkpoints, a cache still "
            f"warming) is not done; run longer, or measure after it settles")
