"""Engines compared at one point of a blocked design: every repeat (a block) ran every engine once, so each pair of
engines is compared on its ratios within a repeat, and every pair at the point is tested, under one family-wise
error rate.

Why this and not the neighbours' Mann-Whitney tests (docs/compare.md): testing only neighbours in the order of the
medians chains ("a ~ b ~ c" while a and c are 2x apart), and nothing controlled the many tests a point makes; with 5
runs a side Mann-Whitney's smallest p is 0.0079, which no family-wise correction over a dozen pairs lets through.
The design already pairs the runs: within a repeat, the engines ran back to back on the same machine state, so the
ratio x_i / x_j within a repeat cancels what the repeat shared (a slower minute, a warmer disk).  Each pair's log
ratios are tested with Student's paired t (their mean is 0 under the null; a throughput ratio is close to log-normal)
and Holm's step-down procedure holds the family-wise error at `alpha` over all k(k-1)/2 pairs of the point.  Two
engines differ when the adjusted test rejects and their ratio is at least `threshold` % from 1; otherwise they are
indistinguishable, and the output says so per engine (overlapping groups, never a chain).  Friedman's test with
Nemenyi's post-hoc (Demsar 2006) was the other candidate: with 5 blocks and 13 engines its critical difference is
8.2 mean ranks of 13, so it could not separate engines 2x apart, and ranks drop the magnitudes the ratios keep.
"""
from __future__ import annotations

import math
from itertools import combinations

from .steady import t_two_sided_p

MIN_BLOCKS = 3


def t_quantile(q: float, df: int) -> float:
    """The `q` quantile (0.5 < q < 1) of Student's t, by bisection on its distribution (steady.t_two_sided_p)."""
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if 1.0 - t_two_sided_p(mid, df) / 2.0 < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def log_ratios(a: dict, b: dict) -> list:
    """ln(a_r / b_r) over the blocks r both ran in (positive values only)."""
    return [math.log(a[r] / b[r]) for r in sorted(set(a) & set(b)) if a[r] and b[r] and a[r] > 0 and b[r] > 0]


def paired(a: dict, b: dict, level: float = 0.95) -> dict:
    """a against b within blocks: n, the geometric mean ratio a/b with its `level` interval, and the paired t test's
    two-sided p (None below MIN_BLOCKS blocks)."""
    d = log_ratios(a, b)
    n = len(d)
    if n == 0:
        return {"n": 0, "ratio": None, "ci": None, "p": None}
    mean = sum(d) / n
    if n < MIN_BLOCKS:
        return {"n": n, "ratio": math.exp(mean), "ci": None, "p": None}
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    se = sd / math.sqrt(n)
    if se == 0.0:
        p = 1.0 if mean == 0.0 else 0.0
        half = 0.0
    else:
        p = t_two_sided_p(mean / se, n - 1)
        half = t_quantile(0.5 + level / 2, n - 1) * se
    return {"n": n, "ratio": math.exp(mean), "ci": [math.exp(mean - half), math.exp(mean + half)], "p": p}


def holm(ps: dict, alpha: float) -> dict:
    """{key: rejected} by Holm's step-down procedure over the p-values given (None: not tested, not rejected)."""
    tested = sorted(((p, k) for k, p in ps.items() if p is not None), key=lambda t: t[0])
    m, out = len(tested), {k: False for k in ps}
    for i, (p, k) in enumerate(tested):
        if p > alpha / (m - i):
            break
        out[k] = True
    return out


def compare_point(by_engine: dict, alpha: float, threshold_pct: float, level: float = 0.95) -> dict:
    """Every pair of engines at one point.  `by_engine`: {engine: {block: value}} (higher is better), in rank
    order.  Returns {"pairs": {(a, b): paired(a, b) + differ}, "same_as": {engine: [engines indistinguishable from
    it]}, "vs_best": {engine: paired(engine, best)}, "m": pairs tested, "alpha", "threshold_pct"}."""
    names = list(by_engine)
    pairs = {(a, b): paired(by_engine[a], by_engine[b], level) for a, b in combinations(names, 2)}
    rejected = holm({k: v["p"] for k, v in pairs.items()}, alpha)
    for k, v in pairs.items():
        big = v["ratio"] is not None and abs(v["ratio"] - 1.0) * 100 >= threshold_pct
        v["differ"] = bool(rejected[k] and big)
    same = {e: [o for o in names if o != e and not pairs[(e, o) if (e, o) in pairs else (o, e)]["differ"]]
            for e in names}
    best = names[0] if names else None
    vs_best = {e: paired(by_engine[e], by_engine[best], level) for e in names} if best else {}
    return {"pairs": pairs, "same_as": same, "vs_best": vs_best, "best": best,
            "m": sum(1 for v in pairs.values() if v["p"] is not None), "alpha": alpha, "threshold_pct": threshold_pct}
