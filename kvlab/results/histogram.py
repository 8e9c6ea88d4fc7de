"""Latency histograms from the native driver: merge and read percentiles.

The driver records each op as one bucket increment plus an exact max; count, min
and mean are derived from the buckets afterwards (min and mean within 0.4%).

Mirrors kv_hist.h: nanosecond values below 2**SUB_BITS are exact; above, each
power of two is split into 2**SUB_BITS linear buckets.  A bucket reports its
midpoint (clamped to the recorded min/max), within 0.4% of any value in it.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

SUB_BITS = 7
SUB = 1 << SUB_BITS
PERCENTILES = {"p50": 50.0, "p75": 75.0, "p95": 95.0, "p99": 99.0, "p999": 99.9, "p9999": 99.99}


def bucket_bounds(n_buckets: int):
    """(low, high) arrays of each bucket's value range in ns, high exclusive."""
    idx = np.arange(n_buckets, dtype=np.float64)
    low = idx.copy()
    high = idx + 1
    big = idx >= SUB
    shift = np.floor((idx[big] - SUB) / SUB)
    sub = (idx[big] - SUB) - shift * SUB + SUB
    low[big] = sub * 2.0 ** shift
    high[big] = (sub + 1) * 2.0 ** shift
    return low, high


@lru_cache(maxsize=4)
def _reported(n_buckets: int):
    """The value each bucket reports: exact below SUB, else its midpoint."""
    low, high = bucket_bounds(n_buckets)
    mids = np.where(np.arange(n_buckets) < SUB, low, (low + high) / 2)
    mids.setflags(write=False)
    return mids


class Histogram:
    """A merged latency histogram (ns)."""

    def __init__(self, counts=None, count=0, vmin=0, vmax=0, ns_per_tick=1.0):
        self.counts = counts
        self.count = int(count)
        self.min = int(vmin)            # in ticks of the run's latency clock
        self.max = int(vmax)
        self.ns_per_tick = float(ns_per_tick)

    @classmethod
    def from_native(cls, h: dict) -> "Histogram":
        return cls(h["counts"].astype(np.uint64), h["count"], h["min"], h["max"], h.get("ns_per_tick", 1.0))

    def merge(self, other: "Histogram") -> "Histogram":
        if other is None or other.count == 0:
            return self
        if self.count == 0:
            return Histogram(other.counts.copy(), other.count, other.min, other.max, other.ns_per_tick)
        if abs(self.ns_per_tick - other.ns_per_tick) > 1e-9 * self.ns_per_tick:
            raise ValueError("histograms from runs with different latency clocks do not merge")
        return Histogram(self.counts + other.counts, self.count + other.count, min(self.min, other.min),
                         max(self.max, other.max), self.ns_per_tick)

    def percentile(self, q: float) -> float:
        """Value in ns at percentile q (0-100), by the nearest-rank rule."""
        if self.count == 0:
            return float("nan")
        rank = max(1, int(np.ceil(q / 100.0 * self.count)))
        i = int(np.searchsorted(np.cumsum(self.counts), rank))
        return float(min(max(_reported(len(self.counts))[i], self.min), self.max)) * self.ns_per_tick

    def mean(self) -> float:
        """From bucket midpoints (within 0.4%): the driver keeps no exact sum, to keep
        its per-op recording to one increment and a max."""
        if not self.count:
            return float("nan")
        mids = _reported(len(self.counts))
        return float((self.counts.astype(np.float64) * mids).sum() / self.count) * self.ns_per_tick

    def stddev(self) -> float:
        if not self.count:
            return float("nan")
        mids = _reported(len(self.counts))
        c = self.counts.astype(np.float64)
        m = (c * mids).sum() / self.count
        return float(np.sqrt(max((c * (mids - m) ** 2).sum() / self.count, 0.0))) * self.ns_per_tick

    def summary_us(self) -> dict:
        """The percentiles every result carries, in microseconds."""
        if self.count == 0:
            return {k: None for k in (*PERCENTILES, "max", "min", "mean", "stddev", "count")}
        out = {k: self.percentile(q) / 1000.0 for k, q in PERCENTILES.items()}
        out.update(max=self.max * self.ns_per_tick / 1000.0, min=self.min * self.ns_per_tick / 1000.0,
                   mean=self.mean() / 1000.0,
                   stddev=self.stddev() / 1000.0, count=self.count)
        return out


def merge_all(hists) -> Histogram:
    out = Histogram()
    for h in hists:
        out = out.merge(h)
    return out
