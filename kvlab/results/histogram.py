"""Latency histograms from the native driver: merge and read percentiles.

The driver records each op as one bucket increment plus an exact max; count, min
and mean are derived from the buckets afterwards (min and mean within 0.4%).

Mirrors kv_hist.h: values (ticks of the run's latency clock) below 2**SUB_BITS
are exact; above, each power of two is split into 2**SUB_BITS linear buckets.
A bucket reports its midpoint (clamped to the recorded min/max), within 0.4% of
any value in it.  The layout is HdrHistogram's with a lowest discernible value
of 1 and 2 significant digits (256 sub-buckets, 37 buckets, 4864 counts): index
for index the same buckets.

A result keeps its histograms whole (`to_record`/`from_record`: runs of
non-empty buckets), so any percentile, the mean and the CDF can be read from a
stored record exactly as the run read them.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import errors

SUB_BITS = 7
SUB = 1 << SUB_BITS
SCHEME = "kvlab-log-v1"     # the bucket layout above; a stored histogram names it with its parameters
_RUN_GAP = 3                # empty buckets a stored run spans rather than starting a new one
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

    def to_record(self) -> dict:
        """The histogram as a result keeps it, lossless and compact, in ticks of the run's latency clock:
        `counts` is a list of runs [first bucket, its count, the next bucket's count, ...] covering every
        non-empty bucket (a run may hold a few empty buckets: a 0 is shorter than a new run).
        `from_record` reads it back to the same counts, min, max and clock."""
        n = 0 if self.counts is None else len(self.counts)
        runs = []
        if n:
            nonzero = np.flatnonzero(self.counts)
            if len(nonzero):
                breaks = np.flatnonzero(np.diff(nonzero) > _RUN_GAP + 1)
                for first, last in zip(np.concatenate(([0], breaks + 1)), np.concatenate((breaks, [len(nonzero) - 1]))):
                    lo, hi = int(nonzero[first]), int(nonzero[last])
                    runs.append([lo, *self.counts[lo:hi + 1].tolist()])
        return {"bounds": {"scheme": SCHEME, "sub_bits": SUB_BITS, "buckets": n}, "ns_per_tick": self.ns_per_tick,
                "count": self.count, "min": self.min, "max": self.max, "counts": runs}

    @classmethod
    def from_record(cls, d: dict) -> "Histogram":
        bounds = d.get("bounds") or {}
        if bounds.get("scheme") != SCHEME or bounds.get("sub_bits") != SUB_BITS:
            raise errors.ResultsError(f"a stored histogram's buckets are {bounds!r}; this kvlab reads "
                                      f"{SCHEME!r} with sub_bits={SUB_BITS}")
        counts = np.zeros(int(bounds["buckets"]), dtype=np.uint64)
        for run in d["counts"]:
            first = int(run[0])
            if first < 0 or first + len(run) - 1 > len(counts):
                raise errors.ResultsError(f"a stored histogram has a run of buckets {first}..{first + len(run) - 2} "
                                          f"past its {len(counts)} buckets")
            counts[first:first + len(run) - 1] = run[1:]
        if int(counts.sum()) != int(d["count"]):
            raise errors.ResultsError(f"a stored histogram's buckets add up to {int(counts.sum())}, "
                                      f"not its count {d['count']}")
        return cls(counts, d["count"], d["min"], d["max"], d["ns_per_tick"])

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

    def cdf(self):
        """(values in ns, cumulative fraction): for each non-empty bucket the value it reports (as
        `percentile` does) and the fraction of ops at or below it."""
        if not self.count:
            return np.zeros(0), np.zeros(0)
        nonzero = np.flatnonzero(self.counts)
        values = np.clip(_reported(len(self.counts))[nonzero], self.min, self.max) * self.ns_per_tick
        return values, np.cumsum(self.counts[nonzero].astype(np.float64)) / self.count

    def spectrum(self):
        """(percentiles 0-100, values in ns) for a percentile-spectrum plot: each non-empty bucket's value
        from the percentile where it starts to the one where it ends, as steps.  Percentiles stop at
        100 * (1 - 1/count), the highest that `count` ops tell apart (100% is off a 1/(1-p) axis): the
        buckets above it (the max among them) rise there, as a vertical last step."""
        values, frac = self.cdf()
        if not len(values):
            return np.zeros(0), np.zeros(0)
        cap = 1.0 - 1.0 / self.count if self.count > 1 else 0.0
        start = np.minimum(np.concatenate(([0.0], frac[:-1])), cap)
        end = np.minimum(frac, cap)
        return np.column_stack((start, end)).ravel() * 100, np.repeat(values, 2)

    def to_hgrm(self, unit_ratio: float = 1000.0, ticks_per_half_distance: int = 5, decimals: int = 3) -> str:
        """HdrHistogram's percentile distribution text (.hgrm, as its outputPercentileDistribution writes
        it, for its plotter and HistogramLogAnalyzer): values are nanoseconds divided by `unit_ratio` (1000:
        microseconds); a row at each percentile level, the levels halving their distance to 100% every
        `ticks_per_half_distance` rows; then the mean, standard deviation, max and count.  A row's value
        is the one `percentile` reports at that level (the bucket's midpoint, not its top as HdrHistogram
        prints), so reading the table back gives kvlab's percentiles."""
        lines = [f"{'Value':>12} {'Percentile':>14} {'TotalCount':>10} {'1/(1-Percentile)':>14}", ""]
        row = f"{{:12.{decimals}f}} {{:2.12f}} {{:10d}} {{:14.2f}}"
        if self.count:
            values, _ = self.cdf()
            cum = np.cumsum(self.counts[np.flatnonzero(self.counts)].astype(np.int64))
            level = 0.0
            for v, c in zip(values / unit_ratio, cum):
                while 100.0 * c / self.count >= level:
                    lines.append(row.format(v, level / 100, int(c), 1 / (1 - level / 100)))
                    # the next level: halve the distance to 100% every ticks_per_half_distance rows
                    halvings = int(math.log(100.0 / (100.0 - level)) / math.log(2)) + 1
                    level += 100.0 / (ticks_per_half_distance * 2 ** halvings)
                    if c == self.count:   # the last bucket: one row, then 100%
                        break
            lines.append(f"{{:12.{decimals}f}} {{:2.12f}} {{:10d}}".format(values[-1] / unit_ratio, 1.0,
                                                                            self.count))
        mean, sd = (self.mean(), self.stddev()) if self.count else (0.0, 0.0)
        top = self.max * self.ns_per_tick if self.count else 0.0
        n = len(self.counts) if self.counts is not None else SUB
        lines += [f"#[Mean    = {mean / unit_ratio:12.{decimals}f}, StdDeviation   = {sd / unit_ratio:12.{decimals}f}]",
                  f"#[Max     = {top / unit_ratio:12.{decimals}f}, Total count    = {self.count:12d}]",
                  f"#[Buckets = {n // SUB - 1:12d}, SubBuckets     = {2 * SUB:12d}]"]
        return "\n".join(lines) + "\n"

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
