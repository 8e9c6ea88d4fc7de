"""kvlab results compare / kvlab.compare: the statistics (Mann-Whitney U against scipy, the median's interval
and its coverage), the selections, and real comparisons: an A/A on one spec says `~`, a real difference is
found, and n=2 gives no interval and no p-value."""
import json
import re

import numpy as np
import pytest
from scipy import stats as scipy_stats

import kvlab
from kvlab import cli, errors
from kvlab.results import compare as cmp
from kvlab.results import stats
from kvlab.results import sweeps as stored
from kvlab.results.store import Store

from .conftest import require

# --- Mann-Whitney U against scipy ---------------------------------------------------------------

FIXED = {
    # small, no ties: scipy's exact distribution
    "exact 3/4": ([1.2, 3.4, 2.2], [4.1, 5.0, 3.9, 6.2]),
    "exact 5/5 overlap": ([10.1, 12.3, 9.8, 11.0, 10.7], [10.4, 11.9, 13.2, 12.8, 10.0]),
    "exact 8/30": (list(np.linspace(1.05, 9.05, 8)), list(np.linspace(0.5, 30.5, 30) / 3.0)),
    "exact 1/6": ([3.5], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    # ties: the normal approximation with the tie correction
    "ties 4/5": ([1.0, 2.0, 2.0, 3.0], [2.0, 3.0, 3.0, 4.0, 5.0]),
    "ties 3/3": ([7.0, 7.0, 8.0], [7.0, 9.0, 9.0]),
    "all equal": ([5.0, 5.0, 5.0], [5.0, 5.0, 5.0, 5.0]),
    # large: the normal approximation
    "large 40/55": (list(np.random.default_rng(7).lognormal(0.0, 0.5, 40)),
                    list(np.random.default_rng(8).lognormal(0.2, 0.5, 55))),
    "large ties 60/60": (list(np.random.default_rng(9).integers(0, 10, 60).astype(float)),
                         list(np.random.default_rng(10).integers(1, 11, 60).astype(float))),
    "large 200/9 shifted": (list(np.random.default_rng(11).normal(100, 5, 200)),
                            list(np.random.default_rng(12).normal(108, 5, 9))),
}


@pytest.mark.parametrize("name", FIXED)
def test_mann_whitney_matches_scipy(name):
    x, y = FIXED[name]
    u, p = stats.mann_whitney_u(x, y)
    want = scipy_stats.mannwhitneyu(x, y, alternative="two-sided")
    assert u == pytest.approx(float(want.statistic), abs=1e-9)
    assert p == pytest.approx(float(want.pvalue), rel=1e-9, abs=1e-14)
    assert stats.mann_whitney_u(y, x)[1] == pytest.approx(p, rel=1e-12)   # two-sided: symmetric


def test_mann_whitney_matches_scipy_on_many_draws():
    rng = np.random.default_rng(2024)
    for _ in range(400):
        n1, n2 = int(rng.integers(1, 14)), int(rng.integers(1, 25))
        ties = rng.random() < 0.4
        x = rng.integers(0, 6, n1).astype(float) if ties else rng.normal(0, 1, n1)
        y = rng.integers(0, 7, n2).astype(float) if ties else rng.normal(0.4, 1, n2)
        want = scipy_stats.mannwhitneyu(x, y, alternative="two-sided")
        u, p = stats.mann_whitney_u(x, y)
        assert u == pytest.approx(float(want.statistic)) and p == pytest.approx(float(want.pvalue), rel=1e-9)


def test_smallest_p_is_what_exact_samples_can_reach():
    assert stats.smallest_p(3, 3) == pytest.approx(0.1)
    assert stats.smallest_p(4, 4) == pytest.approx(2 / 70)
    assert stats.mann_whitney_u([1, 2, 3], [4, 5, 6])[1] == pytest.approx(stats.smallest_p(3, 3))


# --- the median's interval ----------------------------------------------------------------------

@pytest.mark.parametrize("n", [4, 6, 10, 25, 60])
def test_median_interval_covers_at_its_stated_rate(n):
    """1,000 lognormal samples of size n: the interval covers the true median (exp(mu)) at least as often as
    the confidence it states (>= 95% from 6 samples), within sampling error."""
    rng = np.random.default_rng(n)
    mu, sigma, trials = 2.0, 0.8, 1000
    true_median = np.exp(mu)
    hits, levels = 0, set()
    for _ in range(trials):
        lo, hi, level = stats.median_interval(rng.lognormal(mu, sigma, n))
        hits += lo <= true_median <= hi
        levels.add(level)
    (level,) = levels
    coverage = hits / trials
    se = np.sqrt(level * (1 - level) / trials)
    assert abs(coverage - level) <= 3.5 * se + 1e-9, (coverage, level)
    if n >= 6:
        assert level >= 0.95 and coverage >= 0.95 - 3.5 * se
    else:
        assert level == pytest.approx(1 - 2 / 2 ** n)   # min-max, said to be below 95%


def test_median_interval_ranks_are_the_textbook_ones():
    # (n, 1-based ranks of the 95% interval) from the binomial tables
    for n, rank in ((6, 1), (8, 1), (9, 2), (12, 3), (20, 6), (30, 10), (100, 40)):
        v = np.arange(1.0, n + 1)
        lo, hi, level = stats.median_interval(v[::-1])
        assert (lo, hi) == (rank, n + 1 - rank) and level >= 0.95, n
    assert stats.median_interval([1.0, 2.0]) is None
    assert stats.median_interval([3.0, None, float("nan"), 1.0]) is None   # two real values
    s = stats.summarize([2.0, 1.0])
    assert s["median"] == 1.5 and s["median_ci"] is None
    assert stats.interval_text(s) == "n=2: no interval" and stats.interval_phrase(s) == "n=2: no interval"
    s3 = stats.summarize([3.0, 1.0, 2.0])
    assert stats.interval_text(s3) == "1.0 .. 3.0 (75%: min-max of 3)"


# --- selections ---------------------------------------------------------------------------------

def test_selection_grammar():
    s = cmp.parse_selection("tag:fig3,engine=lmdb,threads=1|2,value-size=100")
    assert s.terms == (("tags", ("fig3",)), ("engine", ("lmdb",)), ("threads", (1, 2)), ("value_size", (100,)))
    assert cmp.parse_selection("4c2be05e47d2").terms == (("run_id", ("4c2be05e47d2",)),)
    assert cmp.parse_selection("sweep:grid").terms == (("sweep_id", ("grid",)),)
    with pytest.raises(errors.SpecError, match="did you mean engine"):
        cmp.parse_selection("engien=lmdb")
    with pytest.raises(errors.SpecError, match="whole numbers"):
        cmp.parse_selection("threads=two")
    with pytest.raises(errors.SpecError, match="empty term"):
        cmp.parse_selection("tag:a,,engine=lmdb")


def test_verdict_and_noise_floor_hook():
    ops, p99, cpu = cmp.BY_NAME["ops_per_sec"], cmp.BY_NAME["p99_us"], cmp.BY_NAME["cpu_us_per_op"]
    assert cmp.verdict(ops, 7.2, 0.003, 0.05, 2.0) == "faster"
    assert cmp.verdict(ops, -7.2, 0.003, 0.05, 2.0) == "slower"
    assert cmp.verdict(p99, -7.2, 0.003, 0.05, 2.0) == "faster"
    assert cmp.verdict(cpu, 7.2, 0.003, 0.05, 2.0) == "worse"
    assert cmp.verdict(ops, 7.2, 0.2, 0.05, 2.0) == "~"        # not significant
    assert cmp.verdict(ops, 1.5, 0.001, 0.05, 2.0) == "~"      # below the floor
    assert cmp.verdict(ops, 7.2, None, 0.05, 2.0) == "~"       # no p-value (n < 3)
    assert cmp.noise_floor_pct("ops_per_sec", {}, 2.0) == (2.0, "threshold")
    assert cmp.noise_floor_pct("ops_per_sec", {}, 2.0, {"ops_per_sec": 4.5}) == (4.5, "measured")
    assert cmp.noise_floor_pct("ops_per_sec", {}, 2.0, lambda m, k: 1.0) == (2.0, "threshold")


# --- real runs ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Interleaved real LMDB runs (A and B alternate, the order swapping each round, so drift falls on both):
    an A/A pair of readrandom specs, and fillseq with 100 B against 4000 B values, 5 a side each
    (test_a_real_difference_is_significant adds two more fillseq rounds)."""
    require("lmdb")
    s = Store(tmp_path_factory.mktemp("compare") / "s.duckdb")
    for i in range(5):
        order = ("aa-1", "aa-2") if i % 2 == 0 else ("aa-2", "aa-1")
        for tag in order:
            r = kvlab.run("lmdb", "readrandom", num=20_000, reads=200_000, seed=3)   # ~50 ms: a few % apart
            for b in r:
                b.tags = [tag]
            s.append(r)
        _fillseq_round(s, i)
    return s


def _fillseq_round(s, i):
    """fillseq of 100 B and of 4000 B values, 100 and 200 ms, the order swapping each round."""
    for size in (100, 4000) if i % 2 == 0 else (4000, 100):
        r = kvlab.run("lmdb", "fillseq", num=20_000, value_size=size, seed=3)
        for b in r:
            b.tags = [f"v{size}"]
        s.append(r)


def _row(frame, workload, phase, metric):
    rows = frame[(frame.workload == workload) & (frame.phase == phase) & (frame.metric == metric)]
    assert len(rows) == 1, frame[["workload", "phase", "metric"]]
    return rows.iloc[0]


def test_a_a_is_not_significant(store):
    """The same spec on both sides: `~` for throughput.  (At alpha 0.05 an A/A is called significant at
    most 5% of the time by construction; the 2% floor makes that rarer still.)  In the timing tier (conftest): its 50-ms
    readrandoms, 5 a side, are told apart by a machine that other tests share (a shared CI run called two such
    A/As 'slower'), which an idle machine does not do."""
    frame = kvlab.compare("tag:aa-1", "tag:aa-2", store=store)
    row = _row(frame, "readrandom", "run", "ops_per_sec")
    assert (row.a_n, row.b_n) == (5, 5)
    assert row.verdict == "~", row.to_dict()
    assert 0 < row.p_value <= 1 and row.a_ci_lo <= row.a_median <= row.a_ci_hi
    # every metric the run phase has (readrandom writes nothing: its write amplification is the load's)
    assert {"ops_per_sec", "p50_us", "p99_us", "cpu_us_per_op"} <= set(frame.metric) <= {m.name for m in cmp.METRICS}
    geo = frame[(frame.workload == "geomean") & (frame.metric == "ops_per_sec")].iloc[0]
    assert geo.geomean_of == 1 and geo.phase == "run"   # the load phase (fillseq) left out unless asked
    assert geo.a_median == pytest.approx(np.exp(np.mean(np.log(frame[(frame.metric == "ops_per_sec") &
                                                                      (frame.workload != "geomean")].a_median))))
    loads = kvlab.compare("tag:aa-1", "tag:aa-2", store=store, loads=True, metrics=["ops_per_sec"])
    assert sorted(loads[loads.workload == "geomean"].phase) == ["load", "run"]   # a geomean pools one kind


def test_a_real_difference_is_significant(store, capsys):
    """fillseq of 100 B against 4000 B values, 7 a side (the fixture's 5 and two rounds more): a U test of 7 and 7
    stays below 0.05 with up to 8 of the 49 pairs swapped, so pauses of a shared machine cannot undo it (a CI run
    had 2 of 25 pairs swapped at 5 a side of 30 and 70 ms)."""
    for i in (5, 6):
        _fillseq_round(store, i)
    frame = kvlab.compare("tag:v100", "tag:v4000", store=store)
    ops = _row(frame, "fillseq", "run", "ops_per_sec")
    samples = store.query("SELECT tags, ops_per_sec, seconds, ops FROM benchmarks WHERE list_contains(tags, 'v100') "
                          "OR list_contains(tags, 'v4000') ORDER BY id")
    assert ops.verdict == "slower" and ops.p_value < 0.05 and ops.change_pct < -2, (ops.to_dict(),
                                                                                    samples.to_string())
    assert ops.p_value == pytest.approx(scipy_stats.mannwhitneyu(
        store.query("SELECT ops_per_sec FROM benchmarks WHERE list_contains(tags, 'v100')").ops_per_sec,
        store.query("SELECT ops_per_sec FROM benchmarks WHERE list_contains(tags, 'v4000')").ops_per_sec).pvalue)
    io = _row(frame, "fillseq", "run", "io_bytes_per_op")
    if io.a_median and io.a_median > 0:   # where the process's storage writes are measurable
        assert io.verdict == "worse" and io.change_pct > 100
    # a measured noise floor larger than the change makes it noise
    wide = kvlab.compare("tag:v100", "tag:v4000", store=store, noise_floor={"ops_per_sec": 1e6})
    row = _row(wide, "fillseq", "run", "ops_per_sec")
    assert row.verdict == "~" and row.floor_source == "measured"
    # the command line: benchstat's table, numbers without scientific notation
    assert cli.main(["results", "compare", "tag:v100", "tag:v4000", "--store", str(store.path)]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("fillseq run 1 thr") and "slower" in ln)
    # scientific notation as Python writes it has a sign (1e+05); the sides' run ids are hex and have none
    assert not re.search(r"\d[eE][+-]\d", out), "never scientific notation"
    assert "7/7" in line and "geomean of 1" in out


def test_n2_gives_no_interval_and_no_p(store, capsys, tmp_path):
    runs = store.query("SELECT DISTINCT run_id, tags FROM benchmarks ORDER BY run_id")
    a = [r for r, t in zip(runs.run_id, runs.tags) if "aa-1" in list(t)][:2]
    b = [r for r, t in zip(runs.run_id, runs.tags) if "aa-2" in list(t)][:2]
    out_json = tmp_path / "c.json"
    code = cli.main(["results", "compare", "run:" + "|".join(a), "run:" + "|".join(b), "--store",
                     str(store.path), "--metric", "ops_per_sec", "--json", str(out_json)])
    assert code == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("readrandom run 1 thr"))
    assert line.count("n=2: no interval") == 2 and line.rstrip().endswith("~") and "2/2" in line
    records = json.loads(out_json.read_text())
    row = next(r for r in records if r["workload"] == "readrandom" and r["phase"] == "run")
    assert row["a_ci_lo"] is None and row["p_value"] is None and row["verdict"] == "~" and row["a_n"] == 2
    assert any(r["workload"] == "geomean" for r in records)


def test_in_hand_results_and_where(store):
    """Results in hand compare like stored ones; --where narrows both sides."""
    require("lmdb")
    r1 = kvlab.run("lmdb", "fillseq", num=2_000, repeat=3, seed=1)
    r2 = kvlab.run("lmdb", "fillseq", num=2_000, repeat=3, seed=1)
    frame = kvlab.compare(r1, r2, metrics=["ops_per_sec"])
    row = _row(frame, "fillseq", "run", "ops_per_sec")
    assert (row.a_n, row.b_n) == (3, 3) and row.a_ci_level == pytest.approx(0.75)
    assert row.min_p == pytest.approx(0.1) and row.verdict == "~"   # 3 a side can never reach 0.05
    only_run = kvlab.compare("tag:aa-1", "tag:aa-2", store=store, where="phase=run", metrics=["p99_us"])
    assert set(only_run.phase.dropna()) == {"run"}


def test_selecting_nothing_names_what_was_meant(store):
    with pytest.raises(errors.ResultsError, match="did you mean tag:aa-1"):
        kvlab.compare("aa-1", "tag:aa-2", store=store)
    with pytest.raises(errors.ResultsError, match="matches one of B"):
        kvlab.compare("tag:v100", "tag:aa-2,workload=readrandom", store=store)
    with pytest.raises(errors.ResultsError, match="selects no benchmark"):
        kvlab.compare("tag:v100", "tag:v4000", store=store, where="threads=64")


def test_sweep_frame_gives_the_medians_interval_from_3_repeats(store, tmp_path, capsys):
    """results list --sweep / Sweep.frame: the interval is the median's, with its confidence."""
    s = Store(tmp_path / "sweep.duckdb")
    values = []
    recs = store.load(tag="aa-1", phase="run")
    for i in range(3):
        b = recs[i]
        values.append(b.ops_per_sec)
        s.append([b], point={"sweep_id": "three", "point_id": f"p{i}", "repeat": i, "values": {"engine": "lmdb"},
                             "host": "h", "worker": "w", "started_at": 0.0, "ended_at": 1.0})
    frame = stored.tidy(s, "three")
    row = frame.iloc[0]
    assert row.repeats == 3 and row.ops_per_sec == pytest.approx(np.median(values))
    assert (row.ops_per_sec_ci95_lo, row.ops_per_sec_ci95_hi) == pytest.approx((min(values), max(values)))
    assert row.ops_per_sec_ci_level == pytest.approx(0.75)
    # the listing prints that interval with its confidence, not a bare 95%
    assert cli.main(["results", "list", "--sweep", "three", "--store", str(s.path)]) == 0
    out = capsys.readouterr().out
    assert "(75%: min-max of 3)" in out and "median's interval" in out


@pytest.mark.parametrize("repeat, said", [(2, "n=2: no interval"),
                                          (3, "a 75% interval of the median (95% needs 6 samples)"),
                                          (6, "96.9% interval of the median: ")])
def test_repeat_line_names_the_medians_interval(repeat, said, capsys):
    require("lmdb")
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "2000", "--repeat", str(repeat),
                     "--no-store", "--progress", "off"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith(f"  fillseq: {repeat} trials"))
    assert said in line and "mean" not in line


def test_compare_figure(store):
    pytest.importorskip("matplotlib")
    pytest.importorskip("seaborn")
    from kvlab.lab import plots
    frame = kvlab.compare("tag:v100", "tag:v4000", store=store, metrics=["ops_per_sec", "p99_us"])
    fig = plots.compare(frame)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 2
    assert [t.get_text() for t in visible[0].get_yticklabels()] == ["geomean", "fillseq run 1 thr"]
