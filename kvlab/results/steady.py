"""Steady state from a run's time series: where the start-up transient ends, and whether the end still trends.

`mser5(series)` is MSER-5 (White 1997, "An effective truncation heuristic for bias reduction in simulation
output"; the batch size of 5 is White, Cobb and Spratt 2000): the series is cut into batches of 5 consecutive
observations, and the truncation point is the number of leading batches d that minimises the marginal
standard error of the batch means that remain,

    MSER(d) = sum_{j>d} (Z_j - mean(Z_{d+1..m}))^2 / (m - d)^2,

with d restricted to the first half of the batches (beyond it the statistic degenerates as too few batches
remain).  MSER truncates stationary noise too (in a simulation of 60 normal observations, 44% of series lost
a mean of 7), so the cut it picks is kept only where the batches it drops differ from those it keeps: a t test
of the dropped batch means' mean against the kept ones', with the kept batches' variance (the dropped ones'
spread is the transient's shape), p < CUT_ALPHA (then 13% of those series lose a mean of 2.3); otherwise
nothing is excluded and `mser_cut` says what MSER alone would have dropped.

`trend(series, times)` is the Mann-Kendall test for a monotonic trend (on batch means of 5 where there are
enough, as throughput noise is autocorrelated) with Sen's slope, applied to the last half of what is kept: a
run whose throughput still rises or falls there by TREND_MIN_CHANGE or more, significantly, is not at steady
state.

Pure functions of lists of numbers; the runner (kvlab.execution.run.runner) feeds them the per-interval
throughput and applies the cut as it applies a fixed warm-up.
"""
from __future__ import annotations

import math

BATCH = 5
MIN_BATCHES = 4          # fewer batches than this: no cut is chosen (too little to tell a transient)
CUT_ALPHA = 0.05         # the dropped batches' mean must differ from the kept ones' at this level
TREND_MIN_POINTS = 8     # the last half needs this many intervals for the trend test
TREND_MIN_BATCHES = 5    # ... and this many batches of BATCH to test batch means rather than raw points
TREND_ALPHA = 0.05       # Mann-Kendall two-sided p below this ...
TREND_MIN_CHANGE = 0.05  # ... and a change of at least 5% of the mean over the last half: "not at steady state"
METHOD = "MSER-5"


def mser5(series, batch: int = BATCH) -> dict:
    """The MSER-5 truncation point of `series` (observations in time order, e.g. ops/s per interval):
    {"method", "batch", "batches", "cut": observations to drop from the start, "cut_batches", "mser_cut": what
    MSER alone picked, "p": the t test of the dropped batch means against the kept ones, "mser": the statistic
    per candidate d, "note": why no cut was chosen, or None}."""
    x = [float(v) for v in series]
    m = len(x) // batch
    out = {"method": METHOD, "batch": batch, "batches": m, "cut": 0, "cut_batches": 0, "mser_cut": 0, "p": None,
           "mser": [], "note": None}
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
    out.update(mser_cut=best * batch, mser=stats)
    if best:
        p = dropped_vs_kept_p(z[:best], z[best:])
        out["p"] = p
        if p < CUT_ALPHA:
            out.update(cut=best * batch, cut_batches=best)
        else:
            out["note"] = (f"MSER-5 would drop the first {best * batch} intervals, but their mean does not differ from "
                           f"the rest's (t test on batch means, p={p:.3g} >= {CUT_ALPHA}): nothing excluded")
    return out


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (Lentz's method)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p of Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return _betai(df / 2.0, 0.5, df / (df + t * t))


def dropped_vs_kept_p(dropped, kept) -> float:
    """Two-sided p of the t test of the dropped batch means' mean against the kept ones', with the variance of the
    kept batches alone (nb - 1 degrees of freedom): the dropped ones are the transient, whose spread is its shape,
    not noise."""
    na, nb = len(dropped), len(kept)
    if nb < 2 or not na:
        return 1.0
    ma, mb = sum(dropped) / na, sum(kept) / nb
    ss = sum((v - mb) ** 2 for v in kept)
    if ss <= 0:
        return 1.0 if ma == mb else 0.0
    t = (ma - mb) / math.sqrt(ss / (nb - 1) * (1.0 / na + 1.0 / nb))
    return t_two_sided_p(t, nb - 1)


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
    ties: dict[float, int] = {}
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
    The Mann-Kendall test runs on batch means of BATCH where the last half makes at least TREND_MIN_BATCHES of
    them (throughput noise is autocorrelated: raw points would call its slow wander a trend), else on the raw
    points (at least TREND_MIN_POINTS) at alpha / 5; Sen's slope is over the raw points.
    {"test": "Mann-Kendall", "points", "batch", "p", "slope_per_s", "change": slope x span / mean (a fraction),
    "steady": False when p < alpha and |change| >= min_change, None when too short to test, else True,
    "from_s", "to_s"}."""
    x = [float(v) for v in series]
    t = [float(v) for v in times] if times is not None else [float(i) for i in range(len(x))]
    half = len(x) // 2
    x, t = x[half:], t[half:]
    batch = BATCH if len(x) // BATCH >= TREND_MIN_BATCHES else 1
    out = {"test": "Mann-Kendall", "points": len(x), "batch": batch, "p": None, "slope_per_s": None,
           "change": None, "steady": None, "from_s": t[0] if t else None, "to_s": t[-1] if t else None}
    if len(x) < TREND_MIN_POINTS:
        return out
    z = [sum(x[j * batch:(j + 1) * batch]) / batch for j in range(len(x) // batch)]
    _, _, p = mann_kendall(z)
    slope = sen_slope(x, t)
    mean = sum(x) / len(x)
    change = slope * (t[-1] - t[0]) / mean if mean else 0.0
    # raw points of autocorrelated noise wander: they must pass a 5x stricter test
    level = alpha if batch > 1 else alpha / 5
    out.update(p=p, alpha=level, slope_per_s=slope, change=change,
               steady=not (p < level and abs(change) >= min_change))
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
