"""Statistics across repeated trials: median and a 95% confidence interval.

The interval is Student's t interval for the mean of the trials,
mean +/- t(0.975, n-1) * s / sqrt(n); the median is reported beside it as the
robust centre.  Both are plain numpy computations (tests check them against numpy).
"""
from __future__ import annotations

import math

import numpy as np

# two-sided 95% critical values of Student's t, by degrees of freedom
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
         10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
         18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t975(df: int) -> float:
    if df in _T975:
        return _T975[df]
    if df > 120:
        return 1.960
    return _T975[min(k for k in _T975 if k >= df)]


def summarize(values) -> dict:
    v = np.asarray([x for x in values if x is not None and not math.isnan(x)], dtype=float)
    n = len(v)
    if n == 0:
        return {"n": 0, "median": None, "mean": None, "ci95": [None, None], "values": []}
    mean = float(v.mean())
    if n > 1:
        half = t975(n - 1) * float(v.std(ddof=1)) / math.sqrt(n)
        ci = [mean - half, mean + half]
    else:
        ci = [None, None]
    return {"n": n, "median": float(np.median(v)), "mean": mean, "ci95": ci, "values": v.tolist()}


def attach_repetitions(trials):
    """Give each benchmark of the last trial the statistics of its counterparts across trials."""
    by_key = {}
    for trial in trials:
        for b in trial:
            by_key.setdefault((b.workload, b.phase), []).append(b)
    for (workload, phase), bs in by_key.items():
        rep = {"ops_per_sec": summarize(b.ops_per_sec for b in bs),
               "latency_us": {p: summarize(b.latency_us.get(p) for b in bs)
                              for p in ("p50", "p99", "p999", "p9999", "max")}}
        bs[-1].repetitions = rep
