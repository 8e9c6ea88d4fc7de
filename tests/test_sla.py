"""The best rate under a latency bound (issue 38, item 4): `kvlab sla`, `kvlab.sla`, `plots.sla`.

The bisection and the verdicts on fake probes (a known threshold, noise that straddles the bound, an engine that
falls short of its target); the bound's parsing and the command line's mistakes, refused before anything runs;
one real search on LMDB, tiny, for the walk, the answer, the records and the figure (no timing asserted)."""
import json
import math

import pytest

import kvlab
from kvlab import cli, errors
from kvlab.model.spec import make_spec
from kvlab.services import sla as service
from kvlab.services.sla import Bound, Sample

from .conftest import require

BOUND = Bound(2000.0, 99.0)   # p99 <= 2 ms


def _fake(threshold, noise=0.0, short_above=None):
    """measure(rate, n, first) of an engine whose p99 is 1 ms up to `threshold` txn/s and 5 ms above it;
    `noise`: the runs' p99 spread around 2 ms (the bound) within 5% of the threshold; `short_above`: a rate above
    which it achieves 90% of the target."""
    calls = []

    def measure(rate, n, first):
        calls.append((rate, n, first))
        out = []
        for k in range(first, first + n):
            near = abs(rate / threshold - 1) < 0.05
            lat = 2000.0 + (k - 0.5 * n) * noise if near and noise else (1000.0 if rate <= threshold else 5000.0)
            got = rate * (0.9 if short_above is not None and rate > short_above else 1.0)
            out.append(Sample(got, lat, 100_000))
        return out
    return measure, calls


@pytest.mark.parametrize("threshold", [1_234.0, 40_000.0, 95_000.0])
def test_bisection_converges_on_a_known_threshold(threshold):
    measure, calls = _fake(threshold)
    walk = service.bisect(measure, 1_000.0, 100_000.0, BOUND, repeat=3, tolerance_pct=5, max_probes=20)
    lo, hi = walk.bracket
    assert walk.converged and walk.answer == lo
    assert lo <= threshold < hi <= lo * 1.05
    assert [p.target_rate for p in walk.probes][:2] == [100_000.0, 1_000.0]   # the top, then the bottom
    assert all(n == 3 for _, n, _ in calls)
    for p in walk.probes:
        assert p.verdict == ("pass" if p.target_rate <= threshold else "fail")
        assert p.latency["n"] == 3 and p.latency["median_ci"] is not None


def test_ends_of_the_range():
    measure, _ = _fake(1e9)
    walk = service.bisect(measure, 10.0, 1000.0, BOUND)
    assert walk.answer == 1000.0 and walk.bracket == (1000.0, None) and len(walk.probes) == 1
    assert "raise --max-rate" in walk.ended
    measure, _ = _fake(1.0)
    walk = service.bisect(measure, 10.0, 1000.0, BOUND)
    assert walk.answer is None and walk.bracket == (None, 10.0) and len(walk.probes) == 2
    assert "lower --min-rate" in walk.ended


def test_max_probes_stops_with_the_bracket():
    measure, _ = _fake(5_000.0)
    walk = service.bisect(measure, 10.0, 1e6, BOUND, tolerance_pct=0.1, max_probes=5)
    assert len(walk.probes) == 5 and not walk.converged and "out of probes" in walk.ended
    lo, hi = walk.bracket
    assert lo <= 5_000.0 < hi


def test_undecided_gets_more_runs_then_counts_as_not_shown():
    measure, calls = _fake(10_000.0, noise=400.0)
    walk = service.bisect(measure, 1_000.0, 100_000.0, BOUND, repeat=3, tolerance_pct=1, max_probes=30)
    undecided = [p for p in walk.probes if p.verdict == "undecided"]
    assert undecided, [(p.target_rate, p.verdict) for p in walk.probes]
    for p in undecided:
        assert p.extra_repeats == 3 and p.latency["n"] == 6 and "not shown to pass" in p.reason
        assert (p.target_rate, 3, 3) in calls   # the second batch continues the repeats' seeds
        assert walk.answer < p.target_rate      # the answer is a rate shown to pass


def test_overloaded_fails_whatever_the_latency():
    measure, _ = _fake(1e9, short_above=30_000.0)   # latency always under the bound, but falls short above 30k
    walk = service.bisect(measure, 1_000.0, 100_000.0, BOUND, tolerance_pct=5, max_probes=20)
    assert walk.probes[0].verdict == "overloaded" and "below the target" in walk.probes[0].reason
    lo, hi = walk.bracket
    assert lo <= 30_000.0 < hi


def test_decide_rules():
    ok = [Sample(1000, 1500, 1), Sample(1000, 1600, 1), Sample(1000, 1700, 1)]
    assert service.decide(ok, 1000, BOUND)[0] == "pass"
    assert service.decide([Sample(1000, 2500, 1)] * 3, 1000, BOUND)[0] == "fail"
    assert service.decide([Sample(1000, v, 1) for v in (1500, 1900, 2500)], 1000, BOUND)[0] == "undecided"
    assert service.decide([Sample(985, 10, 1)] * 3, 1000, BOUND)[0] == "overloaded"
    assert service.decide([Sample(995, 10, 1)] * 3, 1000, BOUND)[0] == "pass"     # within 1%
    verdict, reason = service.decide([Sample(1000, 1500, 1)], 1000, BOUND)
    assert verdict == "pass" and "no interval" in reason


@pytest.mark.parametrize("text,us", [("2ms", 2000.0), ("500us", 500.0), ("500 µs", 500.0), ("0.5s", 5e5),
                                     ("750ns", 0.75), ("1.5MS", 1500.0), ("1e3us", 1000.0)])
def test_latencies_with_units(text, us):
    assert math.isclose(service.parse_latency(text), us)


@pytest.mark.parametrize("text,says", [("2", "no unit"), ("2 parsecs", "unknown"), ("ms", "not a latency"),
                                       ("-2ms", "not a latency"), ("0ms", "out of range"), ("", "not a latency"),
                                       ("2 hours", "unknown"), ("5000s", "out of range")])
def test_bad_latencies_say_what_is_allowed(text, says):
    with pytest.raises(errors.SpecError, match=says) as e:
        service.parse_latency(text)
    assert "allowed" in str(e.value)


def test_bound_from_and_percentiles():
    assert service.bound_from(p99="2ms") == Bound(2000.0, 99.0)
    assert service.bound_from(bound="1ms", percentile="p99.9") == Bound(1000.0, 99.9)
    assert service.bound_from(bound=250.0) == Bound(250.0, 99.0)
    assert Bound(2000.0, 99.9).text() == "p99.9 <= 2 ms"
    for kw, says in (({}, "give the latency bound"), ({"p99": "2ms", "bound": "1ms"}, "not both"),
                     ({"p99": "2ms", "percentile": 99.9}, "give bound="), ({"bound": "1ms", "percentile": 100},
                                                                             "out of range")):
        with pytest.raises(errors.SpecError, match=says):
            service.bound_from(**kw)


def test_search_refuses_what_it_cannot_pace():
    with pytest.raises(errors.SpecError, match="db_bench's loops"):
        service.check_spec(make_spec("lmdb", "readrandom", duration=1))
    with pytest.raises(errors.SpecError, match="one mix"):
        service.check_spec(make_spec("lmdb", "ycsb-a,ycsb-c", duration=1))
    with pytest.raises(errors.SpecError, match="by time"):
        service.check_spec(make_spec("lmdb", "ycsb-a"))
    with pytest.raises(errors.SpecError, match="target rate itself"):
        service.check_spec(make_spec("lmdb", "ycsb-a", duration=1, target_rate=100))
    with pytest.raises(errors.SpecError, match="min_rate"):
        service.search(make_spec("lmdb", "ycsb-a", duration=1), BOUND, min_rate=10, max_rate=5)
    with pytest.raises(errors.SpecError, match="repeat"):
        kvlab.sla("lmdb", "ycsb-a", p99="2ms", repeat=0)


@pytest.mark.parametrize("argv,says", [
    (["--p99", "2"], "no unit"),
    (["--p99", "2 furlongs"], "unknown"),
    ([], "bound is missing"),
    (["--p99", "2ms", "--bound", "1ms"], "not both"),
    (["--p99", "2ms", "--percentile", "99.9"], "--bound"),
    (["--bound", "2ms", "--percentile", "100"], "out of range"),
    (["--p99", "2ms", "--target-rate", "100"], "unknown option --target-rate"),
    (["--p99", "2ms", "--duration", "0"], "by time"),
    (["--p99", "2ms", "--min-rate", "500", "--max-rate", "100"], "--min-rate"),
    (["--p99", "2ms", "--min-rate", "0"], "out of range"),
    (["--p99", "2ms", "--tolerance", "x"], "not a percentage"),
    (["--p99", "2ms", "--plot", "walk.txt"], ".png"),
    (["--p99", "2ms", "--workload", "readrandom"], "db_bench's loops"),
])
def test_cli_mistakes_are_refused_before_anything_runs(argv, says, tmp_path, capsys, monkeypatch):
    from kvlab.execution.run import runner
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "run_spec", lambda *a, **k: pytest.fail("ran"))
    if "--workload" not in argv:
        argv = ["--workload", "ycsb-a", *argv]
    assert cli.main(["sla", "--engine", "lmdb", *argv, "--no-store"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvlab: error: sla") or err.startswith("kvlab: error: ")
    assert says in err, err


def test_sla_workload_is_required(capsys):
    assert cli.main(["sla", "--engine", "lmdb", "--p99", "2ms", "--no-store"]) == 2
    assert "--workload" in capsys.readouterr().err


def _outcome(threshold=20_000.0):
    measure, _ = _fake(threshold)
    spec = make_spec("lmdb", "ycsb-c", duration=1)
    walk = service.bisect(measure, 1_000.0, 50_000.0, BOUND, tolerance_pct=5)
    return service.Outcome(spec, BOUND, "sla:test", 3, 5.0, 50_000.0, 1_000.0, 50_000.0, walk, [], [])


def test_plot_draws_the_walk_the_bound_and_the_answer(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from kvlab.lab import plots
    out = _outcome()
    fig = plots.sla(out)
    ax = fig.axes[0]
    labels = [t.get_text() for t in fig.legends[0].get_texts()] if fig.legends else \
        [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(s.startswith("bound: p99 ≤ 2 ms") for s in labels), labels
    assert any(s.startswith("answer: ") for s in labels) and any("capacity" in s for s in labels)
    bound_lines = [ln for ln in ax.get_lines() if ln.get_label().startswith("bound")]
    assert bound_lines and set(bound_lines[0].get_ydata()) == {2.0}   # in ms
    assert "(ms" in ax.get_ylabel() and "transactions/s" in ax.get_xlabel()
    assert plots.check(fig) == []
    fig.savefig(tmp_path / "sla.png")
    plt.close(fig)
    assert (tmp_path / "sla.png").stat().st_size > 0


def test_print_walk_table_and_answer(capsys):
    from kvlab.cli import sla as command
    out = _outcome()
    command.print_walk(out)
    text = capsys.readouterr().out
    assert "#  target txn/s" in text.splitlines()[0]
    assert len([ln for ln in text.splitlines() if ln.split()[:1] and ln.split()[0].isdigit()]) == len(out.probes)
    assert f"highest rate under p99 <= 2 ms: {out.answer:,.0f} txn/s (bracket [" in text


def test_sla_on_lmdb_end_to_end(tmp_path, capsys):
    """A real search, tiny: the load, the capacity, the walk, the answer, the records tagged, the figure."""
    require("lmdb")
    pytest.importorskip("matplotlib")
    js, png = tmp_path / "sla.json", tmp_path / "sla.png"
    code = cli.main(["sla", "--engine", "lmdb", "--workload", "ycsb-c", "--num", "2000", "--duration", "0.2",
                     "--interval", "0", "--p99", "1s", "--repeat", "1", "--max-probes", "3", "--tolerance", "50",
                     "--json", str(js), "--no-store", "--plot", str(png), "--progress", "off", "--seed", "7"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "capacity (closed loop):" in out and "#  target txn/s" in out
    assert "highest rate under p99 <= 1 s:" in out or "no rate in the range meets p99 <= 1 s" in out
    records = kvlab.load_json(js)
    assert {"sla"} <= set(records[0].tags)
    roles = [b.provenance["sla"]["role"] for b in records]
    assert roles[:2] == ["load", "capacity"] and set(roles[2:]) == {"probe"}
    assert png.stat().st_size > 0
    probes = [b for b in records if b.provenance["sla"]["role"] == "probe"]
    assert all(b.mix["pacing"]["mode"] == "open" for b in probes)
    assert json.loads(js.read_text())   # the --json schema kvlab.load_json reads


def test_a_stop_signal_ends_the_walk_with_what_was_decided():
    measure, calls = _fake(40_000.0)

    def stopping(rate, n, first):
        return None if len(calls) >= 4 else measure(rate, n, first)
    walk = service.bisect(stopping, 1_000.0, 100_000.0, BOUND)
    assert len(walk.probes) == 4 and walk.ended == "stopped" and not walk.converged
    lo, hi = walk.bracket
    assert walk.answer == lo and lo <= 40_000.0 < hi
