"""Each key distribution against its definition, drawn by the native generator (kvlab.keys).

Goodness of fit: chi-square over the distribution's head (each key or rank with an expected
count >= 20, the rest pooled), at significance 0.001; with a fixed seed each test is
deterministic, so a failure is a real difference, not bad luck of the day.
"""
import math

import numpy as np
import pytest
from scipy import stats

import kvlab

ALPHA = 0.001
N = 1_000_000


def chi_square_p(observed_counts: dict, expected_probs: dict, total: int) -> float:
    """p-value of observed counts against probabilities (keys not listed pooled into one bin)."""
    obs, exp = [], []
    for key, p in expected_probs.items():
        if p * total >= 20:
            obs.append(observed_counts.get(key, 0))
            exp.append(p * total)
    if total - sum(exp) > 1e-6 * total:
        obs.append(total - sum(obs))
        exp.append(total - sum(exp))
    exp = np.array(exp) * (sum(obs) / sum(exp))   # float rounding only
    return stats.chisquare(obs, exp).pvalue


def counts_of(keys) -> dict:
    values, counts = np.unique(keys, return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


# --- YCSB 0.17.0's construction, transcribed for the test from its definition -----------------

YCSB_ITEMS = 10_000_000_000 + 1      # ZipfianGenerator(0, ScrambledZipfianGenerator.ITEM_COUNT)
YCSB_ZETAN = 26.46902820178302


def java_fnvhash64_abs(v: int) -> int:
    """site.ycsb.Utils.fnvhash64: FNV-1a over the 8 bytes, low byte first, then Math.abs."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= v & 0xFF
        v >>= 8
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    signed = h - (1 << 64) if h >> 63 else h
    return abs(signed)


def gray_item_probs(theta: float, zetan: float, items: float, upto: int) -> dict:
    """P(item = i) for i < upto under Gray et al.'s method as YCSB's ZipfianGenerator applies it:
    u uniform; u*zetan < 1 -> 0; < 1 + 0.5^theta -> 1; else floor(items * (eta*u - eta + 1)^alpha)."""
    alpha = 1 / (1 - theta)
    zeta2 = 1 + 0.5 ** theta
    eta = (1 - (2 / items) ** (1 - theta)) / (1 - zeta2 / zetan)
    u_min = (1 + 0.5 ** theta) / zetan

    def u_at(x):  # the u where items * b^alpha = x
        return ((x / items) ** (1 / alpha) - 1 + eta) / eta

    probs = {0: 1 / zetan, 1: 0.5 ** theta / zetan}
    for i in range(2, upto):
        lo, hi = max(u_at(i), u_min), min(u_at(i + 1), 1.0)
        probs[i] = max(0.0, hi - lo)
    return probs


def test_ycsb_zipfian_matches_ycsb_construction():
    keyspace = 100_000
    modulus = keyspace + 1                       # CoreWorkload: insertcount + expectednewkeys + 1
    keys = kvlab.keys("zipfian", N, keyspace=keyspace, seed=7)
    assert keys.min() >= 0 and keys.max() < keyspace
    item_probs = gray_item_probs(0.99, YCSB_ZETAN, YCSB_ITEMS, 2000)
    # the other ~10^10 items are each far rarer; hashed, they spread evenly over the keys
    background = (1 - sum(item_probs.values())) / modulus
    key_probs = {}
    for item, p in item_probs.items():
        k = java_fnvhash64_abs(item) % modulus
        key_probs[k] = key_probs.get(k, background) + p
    # a draw of key == keyspace is drawn again (CoreWorkload's nextKeynum): condition on the rest
    rejected = key_probs.pop(keyspace, background)
    key_probs = {k: p / (1 - rejected) for k, p in key_probs.items()}
    observed = counts_of(keys)
    assert chi_square_p(observed, key_probs, N) > ALPHA
    # its hottest key carries 1/zetan of the draws, 3.78%: far less skewed than a plain zipf(0.99)
    hottest = java_fnvhash64_abs(0) % modulus
    assert observed[hottest] / N == pytest.approx(1 / YCSB_ZETAN, rel=0.02)


@pytest.mark.parametrize("theta", [0.99, 0.5, 1.2])
def test_plain_zipfian_rank_frequencies_match_the_pmf(theta):
    keyspace = 1000
    keys = kvlab.keys("zipfian-plain", N, keyspace=keyspace, seed=3, theta=theta)
    weights = np.arange(1, keyspace + 1, dtype=float) ** -theta
    pmf = dict(enumerate((weights / weights.sum()).tolist()))
    assert chi_square_p(counts_of(keys), pmf, N) > ALPHA


def test_plain_zipfian_is_more_skewed_than_ycsbs():
    plain = counts_of(kvlab.keys("zipfian-plain", N, keyspace=100_000, seed=1))
    scrambled = counts_of(kvlab.keys("zipfian", N, keyspace=100_000, seed=1))
    assert max(plain.values()) > 2 * max(scrambled.values())


def test_uniform_is_flat():
    keys = kvlab.keys("uniform", N, keyspace=1000, seed=5)
    assert chi_square_p(counts_of(keys), {k: 1 / 1000 for k in range(1000)}, N) > ALPHA


def test_latest_favours_the_newest_keys_and_follows_inserts():
    for keyspace in (10_000, 20_000):
        keys = kvlab.keys("latest", N, keyspace=keyspace, seed=2)
        c = counts_of(keys)
        newest = keyspace - 1
        assert max(c, key=c.get) == newest                      # the newest key is the hottest
        assert c[newest] > c.get(newest - 1, 0) > c.get(newest - 10, 0) > c.get(newest - 1000, 0)
        assert np.mean(keys >= keyspace // 2) > 0.6            # most draws land among the newer half


@pytest.mark.parametrize("keyspace", [10_000, 20_000])
def test_latest_is_ycsbs_skewed_latest(keyspace):
    """YCSB's SkewedLatestGenerator: the newest key index minus a ZipfianGenerator draw over that many items
    (Gray et al.'s method, constant 0.99); the distance from the newest key fits its construction's pmf."""
    last = keyspace - 1
    keys = kvlab.keys("latest", N, keyspace=keyspace, seed=2)
    zetan = float(np.sum(np.arange(1, last + 1, dtype=float) ** -0.99))
    probs = gray_item_probs(0.99, zetan, last, last + 1)
    assert chi_square_p(counts_of(last - keys), probs, N) > ALPHA


def test_hotspot_fractions():
    keys = kvlab.keys("hotspot", N, keyspace=10_000, seed=4, hot_fraction=0.1, hot_ops=0.9)
    in_hot = np.mean(keys < 1000)
    assert in_hot == pytest.approx(0.9, abs=4 * math.sqrt(0.9 * 0.1 / N))
    hot, cold = keys[keys < 1000], keys[keys >= 1000]
    assert stats.chisquare(np.bincount(hot, minlength=1000)).pvalue > ALPHA          # flat inside the hot set
    assert stats.chisquare(np.bincount(cold - 1000, minlength=9000)).pvalue > ALPHA  # and inside the cold one


def test_sequential_walks_and_wraps_from_each_threads_share():
    assert kvlab.keys("sequential", 7, keyspace=5).tolist() == [0, 1, 2, 3, 4, 0, 1]
    assert kvlab.keys("sequential", 3, keyspace=100, thread=1, threads=4).tolist() == [25, 26, 27]


def test_exponential_puts_percentile_in_the_newest_fraction():
    keyspace = 100_000
    keys = kvlab.keys("exponential", N, keyspace=keyspace, seed=6, percentile=90, frac=0.2)
    share = np.mean(keys >= keyspace - 0.2 * keyspace)
    assert share == pytest.approx(0.9, abs=4 * math.sqrt(0.09 / N) + 1e-3)
    # memoryless: the distance back from the newest key is exponential
    back = (keyspace - 1 - keys)[: 200_000]
    gamma = -math.log(1 - 0.9) / (0.2 * keyspace)
    assert stats.kstest(back + 0.5, "expon", args=(0, 1 / gamma)).pvalue > ALPHA


@pytest.mark.parametrize("name", ["uniform", "zipfian", "zipfian-plain", "latest", "hotspot", "sequential",
                                  "exponential"])
def test_same_seed_same_stream_and_threads_differ(name):
    a = kvlab.keys(name, 10_000, keyspace=50_000, seed=11)
    assert np.array_equal(a, kvlab.keys(name, 10_000, keyspace=50_000, seed=11))
    assert a.min() >= 0 and a.max() < 50_000
    if name != "sequential":
        assert not np.array_equal(a, kvlab.keys(name, 10_000, keyspace=50_000, seed=12))
    assert not np.array_equal(kvlab.keys(name, 1000, keyspace=50_000, seed=11, thread=0, threads=2),
                              kvlab.keys(name, 1000, keyspace=50_000, seed=11, thread=1, threads=2))


@pytest.mark.parametrize("call, message", [
    (dict(distribution="zipf"), "allowed: uniform, zipfian, zipfian-plain"),
    (dict(distribution="zipfian", theta=1.0), "0 < theta < 1"),
    (dict(distribution="zipfian-plain", theta=0), "theta=0 is out of range"),
    (dict(distribution="uniform", theta=0.5), "has no parameter(s) theta; allowed: none"),
    (dict(distribution="hotspot", hot_ops=1.5), "hot_ops=1.5 is out of range; allowed: a number in [0.0, 1.0]"),
    (dict(distribution="uniform", keyspace=0), "keyspace=0 is out of range"),
    (dict(distribution="uniform", thread=2, threads=2), "thread=2 is out of range"),
    (dict(distribution="latest", theta="high"), "theta='high' is out of range"),
])
def test_bad_distributions_say_what_is_allowed(call, message):
    with pytest.raises(kvlab.SpecError, match=None) as info:
        kvlab.keys(n=10, **call)
    assert message in str(info.value)
