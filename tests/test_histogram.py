"""The driver's histogram against exact numpy percentiles."""
import numpy as np
import pytest

from kvlab import _native
from kvlab.results.histogram import Histogram, merge_all


@pytest.mark.parametrize("dist", ["lognormal", "uniform", "bimodal"])
def test_percentiles_within_one_percent(dist):
    rng = np.random.default_rng(42)
    if dist == "lognormal":
        v = rng.lognormal(8, 1.5, 300_000)
    elif dist == "uniform":
        v = rng.uniform(100, 5_000_000, 300_000)
    else:
        v = np.concatenate([rng.normal(800, 50, 200_000), rng.normal(2_000_000, 1e5, 1_000)])
    v = np.maximum(v, 1).astype(np.uint64)
    h = Histogram.from_native(_native.histogram_of(v))
    assert h.count == len(v) and h.max == v.max()
    assert abs(h.min - float(v.min())) <= 0.008 * float(v.min())   # min is its bucket's lower bound
    assert abs(h.mean() - float(v.mean())) <= 0.01 * float(v.mean())
    for q in (50, 75, 90, 99, 99.9, 99.99):
        exact = np.percentile(v, q, method="inverted_cdf")
        assert abs(h.percentile(q) - exact) <= 0.01 * exact, (q, h.percentile(q), exact)


def test_merge_equals_whole():
    rng = np.random.default_rng(1)
    v = rng.lognormal(9, 1, 100_000).astype(np.uint64)
    parts = [Histogram.from_native(_native.histogram_of(p)) for p in np.array_split(v, 4)]
    whole = Histogram.from_native(_native.histogram_of(v))
    merged = merge_all(parts)
    assert (merged.counts == whole.counts).all()
    assert merged.percentile(99) == whole.percentile(99)


def test_small_values_exact():
    v = np.arange(0, 128, dtype=np.uint64)
    h = Histogram.from_native(_native.histogram_of(v))
    assert h.percentile(50) == np.percentile(v, 50, method="inverted_cdf")


def test_native_index_matches_bucket_bounds_at_every_edge():
    """The driver's (branch-free) bucket index puts each bucket's lowest and highest value in that
    bucket, as kvlab.results.histogram.bucket_bounds reads them, and clamps huge values into the last one."""
    from kvlab.results.histogram import bucket_bounds
    n = len(_native.histogram_of(np.zeros(1, dtype=np.uint64))["counts"])
    low, high = bucket_bounds(n)
    for i in range(n):
        for v in {int(low[i]), int(high[i]) - 1}:
            counts = _native.histogram_of(np.array([v], dtype=np.uint64))["counts"]
            assert int(np.flatnonzero(counts)[0]) == i, (v, i)
    for v in (int(high[-1]), 2 ** 50, 2 ** 64 - 1):
        counts = _native.histogram_of(np.array([v], dtype=np.uint64))["counts"]
        assert int(np.flatnonzero(counts)[0]) == n - 1
