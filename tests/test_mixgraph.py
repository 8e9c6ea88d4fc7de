"""Meta's mixgraph (issue 38, item 2): its key, value-size and scan-length distributions, drawn by the native
generators (the same C as the mix loop), against the model's definitions with the paper's fitted parameters
(Cao et al., FAST 2020, as db_bench's mixgraph takes them), the way test_distributions.py checks the zipfian
against YCSB's; db_bench's flags on `kvlab dbbench`; mixgraph end to end on real engines.

Goodness of fit: chi-square over each distribution's head (bins expected >= 20, the rest pooled) at
significance 0.001; with fixed seeds each test is deterministic.
"""
import json
import math

import numpy as np
import pytest
from scipy import stats

import kvlab
from kvlab import _native, cli, engines, errors
from kvlab.cli import dbbench
from kvlab.model.workloads import mixgraph
from kvlab.model.workloads.distributions import distribution, range_shares
from kvlab.model.workloads.presets import PRESETS
from kvlab.model.workloads.toml_file import from_toml_text

from .conftest import require

ALPHA = 0.001
N = 1_000_000

# The paper's fitted parameters ("all_dist"), as db_bench's mixgraph examples and defaults give them
PAPER_KEYS = {"keyrange_dist_a": 14.18, "keyrange_dist_b": -2.917, "keyrange_dist_c": 0.0164,
              "keyrange_dist_d": -0.08082, "keyrange_num": 30, "key_dist_a": 0.002312, "key_dist_b": 0.3467}
PAPER_VALUE = {"k": 0.2615, "sigma": 25.45, "theta": 0.0}     # db_bench's value_k, value_sigma, value_theta
PAPER_SCAN = {"k": 2.517, "sigma": 14.236, "theta": 0.0}      # db_bench's iter_k, iter_sigma, iter_theta


def chi_square_p(observed, expected_probs, total) -> float:
    """p-value of observed counts ({bin: n}) against probabilities ({bin: p}); bins expected < 20 pooled."""
    obs, exp = [], []
    for key, p in expected_probs.items():
        if p * total >= 20:
            obs.append(observed.get(key, 0))
            exp.append(p * total)
    obs.append(total - sum(obs))
    exp.append(total - sum(exp))
    if exp[-1] < 1e-6 * total:
        obs, exp = obs[:-1], exp[:-1]
    exp = np.array(exp) * (sum(obs) / sum(exp))
    return stats.chisquare(obs, exp).pvalue


def counts_of(values) -> dict:
    v, c = np.unique(values, return_counts=True)
    return dict(zip(v.tolist(), c.tolist()))


def gpd_cdf(x, k, sigma, theta):
    """The generalized Pareto's CDF, 1 - (1 + k (x - theta) / sigma)^(-1/k) (x >= theta), from its definition."""
    z = np.maximum(np.asarray(x, dtype=float) - theta, 0.0) / sigma
    return 1 - (1 + k * z) ** (-1 / k)


def sizes_pmf(k, sigma, theta, bound, upto, wraps=2_000):
    """P(size = w) for w in 1..upto under db_bench's rule: X rounded up; past `bound`, taken modulo bound. A size
    w < bound comes from ceil(X) = w or w + j*bound (j >= 1)."""
    w = np.arange(1, upto + 1, dtype=float)
    p = gpd_cdf(w, k, sigma, theta) - gpd_cdf(w - 1, k, sigma, theta)
    for j0 in range(1, wraps, 500):
        j = np.arange(j0, min(j0 + 500, wraps))[:, None] * bound
        p += (gpd_cdf(w + j, k, sigma, theta) - gpd_cdf(w - 1 + j, k, sigma, theta)).sum(axis=0)
    return dict(zip(range(1, upto + 1), p.tolist()))


# --- the parameters -----------------------------------------------------------------------------------------

def test_defaults_are_db_benchs_and_the_preset_the_papers():
    d = mixgraph.DEFAULTS   # db_bench_tool.cc's DEFINE_*s for mixgraph
    assert (d["value_k"], d["value_sigma"], d["value_theta"]) == (0.2615, 25.45, 0.0)
    assert (d["iter_k"], d["iter_sigma"], d["iter_theta"]) == (2.517, 14.236, 0.0)
    assert (d["mix_get_ratio"], d["mix_put_ratio"], d["mix_seek_ratio"]) == (1.0, 0.0, 0.0)
    assert (d["mix_max_scan_len"], d["mix_max_value_size"], d["keyrange_num"]) == (10000, 1024, 1)
    assert (d["sine_a"], d["sine_b"], d["sine_c"], d["sine_d"]) == (1.0, 1.0, 0.0, 1.0)
    mix = PRESETS["mixgraph"]
    assert mix.distribution.name == "two-term-exp" and mix.distribution.params == PAPER_KEYS
    assert mix.value_pareto.to_dict() == PAPER_VALUE and mix.value_size == (1, 1024)
    seek = next(t for t in mix.templates if t.name == "seek").ops[0]
    assert seek.kind == "scan" and seek.length == 10000 and seek.length_pareto.to_dict() == PAPER_SCAN
    assert [round(w, 2) for w in mix.weights] == [0.83, 0.14, 0.03]
    assert distribution("two-term-exp").params == PAPER_KEYS   # the distribution's own defaults too


# --- value sizes and scan lengths ---------------------------------------------------------------------------

def test_value_sizes_follow_the_papers_generalized_pareto():
    sizes = _native.pareto_sizes(N, 17, least=1, max=1024, **PAPER_VALUE)
    assert sizes.min() >= 1 and sizes.max() <= 1024
    p = chi_square_p(counts_of(sizes), sizes_pmf(**PAPER_VALUE, bound=1024, upto=1024), N)
    assert p > ALPHA, p
    # the fitted model's own figures: median sigma (2^k - 1) / k = 19.33 bytes (rounded up: 20), mean
    # sigma / (1 - k) = 34.46 bytes before rounding up (about half a byte more after, less the rare wraps)
    assert np.median(sizes) == 20
    assert 34.46 < sizes.mean() < 34.46 + 0.6


def test_scan_lengths_follow_the_papers_generalized_pareto():
    lengths = _native.pareto_sizes(N, 23, least=0, max=10000, **PAPER_SCAN)
    assert lengths.max() <= 10000
    expected = sizes_pmf(**PAPER_SCAN, bound=10000, upto=2000)
    p = chi_square_p(counts_of(lengths), expected, N)
    assert p > ALPHA, p
    # a heavy tail: P(X > 10,000) = (1 + k * 10000 / sigma)^(-1/k) = 5.1% of the seeks wrap
    tail = (1 + 2.517 * 10000 / 14.236) ** (-1 / 2.517)
    assert abs(tail - 0.0515) < 0.001
    assert abs(np.mean(lengths <= 1) - gpd_cdf(1, **PAPER_SCAN)) < 0.002


# --- keys ---------------------------------------------------------------------------------------------------

def two_term_weights(a, b, c, d, n):
    """db_bench's key-range hotness: range x = 1..n weighs a e^(bx) + c e^(dx) (below 1e-16: 0), normalized."""
    w = [a * math.exp(b * x) + c * math.exp(d * x) for x in range(1, n + 1)]
    w = [v if v >= 1e-16 else 0.0 for v in w]
    return [v / sum(w) for v in w]


def test_key_ranges_follow_the_two_term_exponential():
    p = PAPER_KEYS
    shares = range_shares(p)   # the model's, in key order (shuffled)
    expected = two_term_weights(p["keyrange_dist_a"], p["keyrange_dist_b"], p["keyrange_dist_c"],
                                p["keyrange_dist_d"], 30)
    assert sorted(shares) == pytest.approx(sorted(expected), rel=1e-12)
    assert max(expected) == pytest.approx(0.791, abs=0.001)   # the hottest range takes ~79% of the accesses
    assert shares.index(max(shares)) != 0                       # shuffled: the hot range is not the first
    per_range = 1000
    keys = kvlab.keys(distribution("two-term-exp", **p), N, keyspace=30 * per_range, seed=29)
    observed = counts_of(keys // per_range)
    assert chi_square_p(observed, dict(enumerate(shares)), N) > ALPHA


def test_keys_within_a_range_follow_the_power_law():
    """One range: a key's rank s has P(rank <= s) = key_dist_a * s^key_dist_b, and rank s lands on key
    fnv(s) mod the range's size; over 10^8 keys the head ranks land on distinct keys, nearly alone."""
    a, b = PAPER_KEYS["key_dist_a"], PAPER_KEYS["key_dist_b"]
    keyspace = 100_000_000
    keys = kvlab.keys(distribution("two-term-exp", keyrange_num=1, key_dist_a=a, key_dist_b=b), N,
                      keyspace=keyspace, seed=31)
    ranks = range(1, 400)
    where = {_native.fnv_abs(s) % keyspace: s for s in ranks}
    assert len(where) == len(ranks)
    observed = counts_of(keys)
    by_rank = {s: observed.get(k, 0) for k, s in where.items()}
    probs = {s: a * (s ** b - (s - 1) ** b) for s in ranks}
    assert chi_square_p(by_rank, probs, N) > ALPHA
    assert by_rank[1] / N == pytest.approx(a, rel=0.1)    # rank 1: u <= key_dist_a


def test_two_term_exp_is_refused_without_a_hot_range():
    with pytest.raises(errors.SpecError, match="sum to"):
        distribution("two-term-exp", keyrange_dist_a=0, keyrange_dist_c=0)
    with pytest.raises(errors.SpecError, match="keyrange_num"):
        distribution("two-term-exp", keyrange_num=2.5)


# --- the model: Python, TOML, db_bench's flags --------------------------------------------------------------

def test_key_choice_follows_db_bench():
    assert mixgraph.mixgraph().distribution.name == "uniform"      # key_dist_a 0: db_bench's random keys
    one = mixgraph.mixgraph(key_dist_a=0.002312, key_dist_b=0.3467).distribution
    assert one.name == "two-term-exp" and one.params["keyrange_num"] == 1
    assert mixgraph.mixgraph(**mixgraph.PAPER).distribution.params == PAPER_KEYS


def test_toml_mixgraph_is_the_python_one():
    text = """
        name = "mg"
        distribution = { name = "two-term-exp" }
        value_size = [1, 1024]
        value_pareto = { k = 0.2615, sigma = 25.45 }
        [[template]]
        name = "get"
        weight = 0.83
        txn = "g1"
        [[template]]
        name = "put"
        weight = 0.14
        ops = [ { kind = "put" } ]
        [[template]]
        name = "seek"
        weight = 0.03
        ops = [ { kind = "scan", length = 10000, min_length = 0, length_distribution = "pareto" } ]
    """
    toml, py = from_toml_text(text, "mg.toml"), PRESETS["mixgraph"]
    assert toml.distribution == py.distribution and toml.value_pareto == py.value_pareto
    assert [t.ops for t in toml.templates] == [t.ops for t in py.templates]


def test_dbbench_mixgraph_flags_build_the_model():
    argv = ["--benchmarks=mixgraph", *(f"--{k}={v}" for k, v in mixgraph.PAPER.items()), "--sine_mix_rate=1",
            "--sine_a=1000", "--sine_b=0.000073", "--sine_d=4500", "--sine_mix_rate_interval_milliseconds=5000",
            "--mix_max_value_size=512"]
    mix = dbbench.plan("lmdb", argv).spec.mixes["mixgraph"]
    assert mix.distribution.params == PAPER_KEYS and mix.value_size == (1, 512)
    s = mix.pacing.schedule
    assert (s.kind, s.a, s.b, s.c, s.d, s.interval) == ("sine", 1000, 0.000073, 0, 4500, 5.0)


def test_dbbench_refuses_what_it_cannot_honour():
    with pytest.raises(errors.SpecError, match="sine_mix_rate_noise=0.5 cannot be honoured"):
        dbbench.plan("lmdb", ["--benchmarks=mixgraph", "--sine_mix_rate_noise=0.5"])
    with pytest.raises(errors.SpecError, match="mix_accesses is not a db_bench flag kvlab knows"):
        dbbench.plan("lmdb", ["--benchmarks=mixgraph", "--mix_accesses=100"])
    with pytest.raises(errors.SpecError, match="all 0"):
        dbbench.plan("lmdb", ["--benchmarks=mixgraph", "--mix_get_ratio=0"])
    p = dbbench.plan("lmdb", ["--benchmarks=readrandom", "--value_k=0.3"])   # no mixgraph: said, not dropped
    assert "--value_k (mixgraph only)" in p.warnings[0]


# --- end to end ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ["lmdb", "rocksdb"])
def test_dbbench_mixgraph_runs(engine, tmp_path, capsys):
    require(engine)
    out = tmp_path / "o.json"
    argv = ["--benchmarks=fillrandom,mixgraph", "--num=3000", "--reads=1000", "--threads=2", "--seed=7",
            *(f"--{k}={v}" for k, v in mixgraph.PAPER.items())]
    assert cli.main(["dbbench", "--engine", engine, "--no-store", "--json", str(out), *argv]) == 0
    assert "( Gets:" in capsys.readouterr().out
    r = {b["workload"]: b for b in json.loads(out.read_text())}["mixgraph"]
    by_type = r["mix"]["ops_by_type"]
    assert sum(by_type.values()) == r["mix"]["transactions"] == 2 * 1000
    assert 0.78 < by_type["read"] / 2000 < 0.88 and by_type["write"] > 200 and by_type["scan"] > 20
    assert r["found"] > 0


@pytest.mark.parametrize("engine", ["lmdb", "rocksdb"])
def test_mixgraph_preset_writes_pareto_values(engine, tmp_path):
    """The preset's puts write values of the Pareto's sizes: read back, their sizes are the model's."""
    require(engine)
    db = str(tmp_path / "db")
    kvlab.run(engine, "mixgraph", num=2000, reads=3000, seed=9, db=db, interval=0, auto_load=False)
    cfg = engines.get(engine)
    h = _native.Engine(cfg.adapter, db, cfg.config({}, max_threads=1))
    try:
        sizes = [len(v) for v in (h.get(_native.make_key(i, 16)) for i in range(2000)) if v is not None]
    finally:
        h.close()
    assert len(sizes) > 100
    assert 1 <= min(sizes) and max(sizes) <= 1024
    assert 14 < np.median(sizes) < 28   # the model's median 20 bytes (the paper: most values are tens of bytes)
