"""Statistics across repeated trials: the median, an interval for the median, and the Mann-Whitney U test.

The interval is for the statistic it is printed beside, the median, and it is the exact order-statistic
(binomial) interval, as benchstat computes it: with n samples, the k-th smallest and k-th largest bound the
true median with probability P(k <= Binomial(n, 1/2) <= n - k), whatever the distribution (continuous,
samples independent).  Chosen over a bootstrap because benchmark repeats are few: a percentile bootstrap of
the median of 3 to 10 values claims 95% but covers far less (with 3 values it returns the min-max range and
covers 75% of the time); the order-statistic interval states the confidence it has.  It is also
deterministic (no resampling, no seed) and costs one sort, which keeps a compare over 10,000 runs fast.

- n >= 6: the narrowest symmetric pair of order statistics with confidence >= 95% (its exact level is given);
- 3 <= n <= 5: no pair reaches 95%; the interval is the min-max range, with its own confidence
  1 - 2^(1-n) (75%, 87.5%, 93.75%), and every printer says so;
- n < 3: no interval (None), printed as "n=2: no interval".

`mann_whitney_u` is the two-sided Mann-Whitney U test as scipy.stats.mannwhitneyu computes it by default:
the exact null distribution when one sample has at most 8 values and there are no ties, otherwise the normal
approximation with the tie correction and the continuity correction (tests/test_compare.py checks it
against scipy; kvlab itself needs only numpy).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import cast

import numpy as np

LEVEL = 0.95          # the confidence every interval asks for
MIN_SAMPLES = 3       # fewer than this: no interval, no p-value
METHOD = "order statistics (exact binomial)"


def clean(values) -> np.ndarray:
    """The finite numbers among `values` (None and NaN left out), as floats."""
    out = [float(x) for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    v = np.asarray(out, dtype=float)
    return v[np.isfinite(v)]


@lru_cache(maxsize=4096)
def _order_statistic_rank(n: int, level: float) -> tuple:
    """(r, confidence): the interval [x(r), x(n+1-r)] of the sorted samples with the largest r whose
    confidence 1 - 2 P(Binomial(n, 1/2) <= r-1) is at least `level`; r = 1 (min-max), with its own lower
    confidence, when none is."""
    allowed = Fraction(1 - level).limit_denominator(10 ** 9) * 2 ** n   # integer arithmetic: n may be large
    r, below = 1, 1                   # below = sum_{i < r} C(n, i): orderings with r-1 or fewer under the median
    term = 1
    while 2 * (r + 1) <= n + 1:
        term = term * (n - r + 1) // r        # C(n, r)
        if 2 * (below + term) > allowed:
            break
        below += term
        r += 1
    return r, 1 - 2 * below / 2 ** n


def median_interval(values, level: float = LEVEL):
    """(lo, hi, confidence) of the median of `values`, or None with fewer than MIN_SAMPLES of them."""
    v = np.sort(clean(values))
    n = len(v)
    if n < MIN_SAMPLES:
        return None
    k, confidence = _order_statistic_rank(n, level)
    return float(v[k - 1]), float(v[n - k]), confidence


def summarize(values, level: float = LEVEL) -> dict:
    """n, the median and its interval (`median_ci` [lo, hi], its confidence `median_ci_level`, both None
    below MIN_SAMPLES), the mean (for reference only: the interval is not about it) and the values."""
    v = clean(values)
    n = len(v)
    ci = median_interval(v, level)
    return {"n": n, "median": float(np.median(v)) if n else None,
            "median_ci": [ci[0], ci[1]] if ci else None, "median_ci_level": ci[2] if ci else None,
            "median_ci_method": METHOD, "mean": float(v.mean()) if n else None, "values": v.tolist()}


def interval_text(s: dict, fmt=str, level: float = LEVEL) -> str:
    """A summary's interval for a table cell: 'lo .. hi', with '(75%: min-max of 3)' when the samples cannot
    give `level`, or 'n=2: no interval'.  `fmt` formats a number."""
    if not s.get("median_ci"):
        return f"n={s.get('n', 0)}: no interval"
    lo, hi = s["median_ci"]
    got = s.get("median_ci_level")
    below = f" ({_percent(got)}: min-max of {s['n']})" if got is not None and got < level else ""
    return f"{fmt(lo)} .. {fmt(hi)}{below}"


def interval_phrase(s: dict, fmt=str, level: float = LEVEL) -> str:
    """A summary's interval in a sentence: '96.9% interval of the median: lo .. hi', 'min-max lo .. hi, a 75%
    interval of the median (95% needs 6 samples)', or 'n=2: no interval'."""
    if not s.get("median_ci"):
        return f"n={s.get('n', 0)}: no interval"
    lo, hi = s["median_ci"]
    got = s.get("median_ci_level")
    if got is not None and got < level:
        return (f"min-max {fmt(lo)} .. {fmt(hi)}, a {_percent(got)} interval of the median ({_percent(level)} needs "
                f"{samples_for(level)} samples)")
    # summarize() sets median_ci and median_ci_level together, so a summary with an interval has its level
    return f"{_percent(cast(float, got))} interval of the median: {fmt(lo)} .. {fmt(hi)}"


def samples_for(level: float = LEVEL) -> int:
    """The fewest samples whose min-max range is an interval of the median at `level` (6 for 95%)."""
    n = MIN_SAMPLES
    while 1 - 2 / 2 ** n < level:
        n += 1
    return n


def _percent(x: float) -> str:
    return f"{x:.0%}" if round(x * 100, 6).is_integer() else f"{x:.1%}"


def with_repetitions(trials) -> list:
    """The trials again, each benchmark of the last trial a new record carrying the statistics of its counterparts
    across trials (records are never changed once built: the one a worker handed back stays as it was)."""
    import dataclasses
    by_key: dict = {}
    for trial in trials:
        for b in trial:
            by_key.setdefault((b.workload, b.phase), []).append(b)
    new = {}
    for (workload, phase), bs in by_key.items():
        rep = {"ops_per_sec": summarize(b.ops_per_sec for b in bs),
               "latency_us": {p: summarize(b.latency_us.get(p) for b in bs)
                              for p in ("p50", "p99", "p999", "p9999", "max")}}
        new[id(bs[-1])] = dataclasses.replace(bs[-1], repetitions=rep)
    return [[new.get(id(b), b) for b in trial] for trial in trials]


def attach_repetitions(trials):
    """with_repetitions, in place: each list of `trials` gets the new records (the records themselves unchanged)."""
    for trial, fresh in zip(trials, with_repetitions(trials)):
        trial[:] = fresh


# --- Mann-Whitney U ----------------------------------------------------------------------------

EXACT_MAX_N = 8   # scipy's 'auto': exact when a sample has at most this many values and nothing ties


def mann_whitney_u(x, y) -> tuple:
    """(U of x, two-sided p-value) of the Mann-Whitney U test, as scipy.stats.mannwhitneyu(x, y) gives them."""
    x, y = clean(x), clean(y)
    n1, n2 = len(x), len(y)
    if n1 == 0 or n2 == 0:
        raise ValueError("the Mann-Whitney U test needs at least one value in each sample")
    both = np.concatenate([x, y])
    _, inverse, counts = np.unique(both, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    ranks = (ends - (counts - 1) / 2.0)[inverse]          # average ranks, 1-based
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    u = max(u1, n1 * n2 - u1)
    ties = bool((counts > 1).any())
    if min(n1, n2) <= EXACT_MAX_N and not ties:
        p = 2.0 * _exact_sf(n1, n2, int(round(u)))
    else:
        mu = n1 * n2 / 2.0
        n = n1 + n2
        tie_term = float((counts.astype(float) ** 3 - counts).sum())
        s = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))))
        if s == 0:      # every value equal: no evidence of any difference
            return u1, 1.0
        z = (u - mu - 0.5) / s
        p = math.erfc(z / math.sqrt(2.0))                  # 2 * P(Z > z)
    return u1, min(max(p, 0.0), 1.0)


def ratio_interval(base, other, level: float = LEVEL) -> dict | None:
    """How many times `base` `other` is, distribution-free: the Hodges-Lehmann estimate (the median of every
    ratio other_j / base_i) with the interval the Mann-Whitney test inverts to (order statistics k and N-k+1 of the
    N = n1*n2 ratios, k the largest with 2 P(U < k) <= 1 - level; below that, all the ratios' range with the
    confidence it has).  {"ratio", "interval": [lo, hi], "level"}, or None without MIN_SAMPLES a side or a
    value that is not positive."""
    x, y = clean(base), clean(other)
    if len(x) < MIN_SAMPLES or len(y) < MIN_SAMPLES or (x <= 0).any() or (y <= 0).any():
        return None
    logs = np.sort((np.log(y)[None, :] - np.log(x)[:, None]).ravel())
    counts = _u_counts(min(len(x), len(y)), max(len(x), len(y)))
    below = np.cumsum(counts) / counts.sum()          # P(U <= u)
    k = 1
    while k < len(logs) // 2 and 2 * below[k] <= 1 - level:   # 2 P(U <= k) = 2 P(U < k + 1)
        k += 1
    confidence = 1 - 2 * float(below[k - 1])
    return {"ratio": float(np.exp(np.median(logs))),
            "interval": [float(np.exp(logs[k - 1])), float(np.exp(logs[len(logs) - k]))], "level": confidence}


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p-value samples of these sizes can give (no ties): 2 / C(n1 + n2, n1)."""
    log_ways = math.lgamma(n1 + n2 + 1) - math.lgamma(n1 + 1) - math.lgamma(n2 + 1)
    return min(1.0, 2.0 * math.exp(-log_ways))


def fewest_per_side(alpha: float, most: int = 1000) -> int:
    """The fewest samples a side (as many on each) whose smallest two-sided p is below `alpha`: 4 at 0.05
    (3 vs 3 can give no less than 0.1)."""
    n = 1
    while smallest_p(n, n) >= alpha and n < most:
        n += 1
    return n


def reach_text(n1: int, n2: int, alpha: float) -> str | None:
    """None when samples of these sizes can reach p < alpha, else the sentence that says they cannot, before
    any is spent: '3 vs 3 samples cannot reach p < 0.05: the smallest two-sided Mann-Whitney p they can give
    is 0.100 (4 a side can: 0.029; 5 a side: 0.008)'."""
    smallest = smallest_p(n1, n2)
    if smallest < alpha:
        return None
    need = fewest_per_side(alpha)
    return (f"{n1} vs {n2} samples cannot reach p < {alpha:g}: the smallest two-sided Mann-Whitney p they can give "
            f"is {smallest:.3f}, so every verdict would be '~' ({need} a side can: {smallest_p(need, need):.3f}; "
            f"{need + 1} a side: {smallest_p(need + 1, need + 1):.3f})")


def _exact_sf(n1: int, n2: int, u: int) -> float:
    """P(U >= u) under the null hypothesis, from the exact distribution of U."""
    counts = _u_counts(min(n1, n2), max(n1, n2))
    total = counts.sum()
    return float(counts[u:].sum() / total) if u < len(counts) else 0.0


@lru_cache(maxsize=256)
def _u_counts(n1: int, n2: int) -> np.ndarray:
    """How many of the C(n1 + n2, n1) orderings give U = 0 .. n1*n2: the coefficients of the Gaussian
    binomial [n1 + n2, n1]_q = prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), truncated at degree n1*n2
    (exact in integers while the counts fit in 62 bits, else in floats)."""
    m = n1 * n2
    exact = math.comb(n1 + n2, n1) < 2 ** 62
    c = np.zeros(m + 1, dtype=np.int64 if exact else float)
    c[0] = 1
    for i in range(1, n1 + 1):
        s = n2 + i
        if s <= m:
            c[s:] = c[s:] - c[:m + 1 - s].copy()            # times (1 - q^s)
        for r in range(i):                                   # divided by (1 - q^i): a running sum, stride i
            c[r::i] = np.cumsum(c[r::i])
    c.setflags(write=False)
    return c
