"""Sanity warnings (issue 28, item 6): each raised by a real run built to trigger it, and none on a clean run.

LMDB where the engine's behaviour matters; the null engine where the harness is what is checked (it measures
the harness, never an engine)."""
import json
import os
import subprocess
import sys

import pytest

import kvlab
from kvlab import cli
from kvlab.results import sanity

from .conftest import require


def _has(b, start):
    return [w for w in b.warnings if w.startswith(start)]


def test_a_short_run_phase_is_too_short_to_be_a_stable_figure(tmp_path, capsys):
    require("lmdb")
    r = kvlab.run("lmdb", "fillseq,readrandom", num=2000, seed=1, interval=0)
    for b in r:
        (w,) = _has(b, "too short to be a stable figure:")
        assert f"lmdb {b.workload} at 1 thread ran 2,000 ops in" in w and "1 s and 10,000 ops" in w
    # the terminal prints it once, as one line
    assert cli.main(["run", "--engine", "lmdb", "--workload", "readrandom", "--num", "3000", "--no-store",
                     "--quiet", "--progress", "off"]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "too short to be a stable figure" in ln]
    assert len(lines) == 1 and lines[0].startswith("warning: too short to be a stable figure: lmdb readrandom")


def test_a_load_phase_and_a_compaction_are_not_held_to_the_length_of_a_figure(tmp_path):
    require("lmdb")
    r = kvlab.run("lmdb", "readrandom,compact", num=2000, seed=1, interval=0)
    load, read, compact = r
    assert load.phase == "load" and not _has(load, "too short")
    assert _has(read, "too short") and not _has(compact, "too short")


def _sanity(warnings) -> list:
    """A result's warnings but the machine's (kvlab.execution.host.system: busy or untuned at the start, which a
    shared test machine often is): those are about the machine, not about the result."""
    return [w for w in warnings if not w.startswith("machine ")]


def test_a_clean_run_has_no_warning(tmp_path):
    """More than 1 s and 10,000 ops, after a warm-up: nothing to say (and the load phase says nothing)."""
    require("lmdb")
    r = kvlab.run("lmdb", "readrandom", num=100_000, duration=1.5, warmup=0.3, seed=1, interval=0)
    assert [b.phase for b in r] == ["load", "run"]
    assert r[1].seconds > 1 and r[1].ops > 10_000
    assert [_sanity(b.warnings) for b in r] == [[], []]


def test_a_one_thread_point_right_after_the_load_without_warm_up(tmp_path):
    require("lmdb")
    db = str(tmp_path / "db")
    r = kvlab.run("lmdb", "readrandom", num=100_000, duration=1.2, seed=1, interval=0, db=db, keep_db=True)
    (w,) = _has(r[1], "lmdb readrandom at 1 thread was measured right after the load phase, with no warm-up")
    assert "--warmup" in w and "--use-existing-db" in w
    assert not _has(r[1], "too short")
    # fillseq as the run's own first workload loads it too (kvlab compare's order)
    r = kvlab.run("lmdb", "fillseq,readrandom", num=100_000, duration=1.2, seed=1, interval=0)
    assert _has(r[1], "lmdb readrandom at 1 thread was measured right after the fillseq")
    # not on the loaded database, nor at 2 threads
    again = kvlab.run("lmdb", "readrandom", num=100_000, duration=1.2, seed=1, interval=0, db=db,
                      use_existing_db=True)
    two = kvlab.run("lmdb", "readrandom", num=100_000, duration=1.2, threads=2, seed=1, interval=0)
    assert [b.phase for b in again] == ["run"] and _sanity(again[0].warnings) == []
    assert not any("right after" in w for b in two for w in b.warnings)


def test_an_overloaded_open_loop_says_target_achieved_lag_and_response(capsys):
    """The null engine (the harness alone) at a rate no client reaches: the schedule runs ahead and
    transactions queue."""
    require("null")
    r = kvlab.run("null", "ycsb-c", num=10_000, clients=1, target_rate=500_000_000, duration=1.2, warmup=0.1,
                  seed=1, interval=0)
    b = r[-1]
    pacing = b.mix["pacing"]
    assert pacing["achieved_ratio"] < 0.99
    (w,) = _has(b, "open loop overloaded: null ycsb-c achieved ")
    assert "of its target 500,000,000 (" in w
    for part in ("start lag p50", "us, p99", "response p50", "lower the target rate or add clients"):
        assert part in w
    assert f"{100 * pacing['achieved_ratio']:.1f}%" in w
    # the terminal: the open-loop line, then the warning once
    assert cli.main(["run", "--engine", "null", "--workload", "ycsb-c", "--clients", "1", "--target-rate",
                     "500000000", "--duration", "1.2", "--num", "10000", "--no-store", "--progress", "off"]) == 0
    out = capsys.readouterr()
    assert "open loop: target 500,000,000 txn/s" in out.out
    assert sum(ln.startswith("warning: open loop overloaded: null ycsb-c") for ln in out.err.splitlines()) == 1


def test_an_open_loop_on_schedule_is_not_overloaded():
    require("null")
    r = kvlab.run("null", "ycsb-c", num=10_000, clients=1, target_rate=20_000, duration=1.5, warmup=0.2,
                  seed=1, interval=0)
    b = r[-1]
    assert b.mix["pacing"]["mode"] == "open" and b.mix["pacing"]["achieved_ratio"] >= 0.99
    assert _sanity(b.warnings) == []


def _hogs(cpus):
    """Busy processes, one per CPU in `cpus`, each pinned to its CPU: the machine shared with others."""
    return [subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{c}}})\nwhile True: pass"])
            for c in cpus]


def _stop(procs):
    for p in procs:
        p.kill()
        p.wait()


@pytest.fixture
def loaded_lmdb(tmp_path):
    require("lmdb")
    db = str(tmp_path / "db")
    kvlab.run("lmdb", "fillseq", num=100_000, db=db, keep_db=True, seed=1, interval=0)
    return dict(num=100_000, db=db, use_existing_db=True, keep_db=True, duration=1.2, seed=2, interval=0)


def test_a_superlinear_thread_scaling_step_names_its_cause(loaded_lmdb):
    """The 1-thread point shares its core with four busy processes: the 2-thread point is many times faster
    on 2 cores, which no engine does; the warning names the CPU the 1-thread point did not get."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    hogs = _hogs([0] * 4)
    try:
        one = kvlab.run("lmdb", "readrandom", threads=1, cpus="0", **loaded_lmdb)
    finally:
        _stop(hogs)
    two = kvlab.run("lmdb", "readrandom", threads=2, **loaded_lmdb)
    assert not any("superlinear" in w for b in (*one, *two) for w in b.warnings)   # each run alone: one point
    added = sanity.annotate_scaling([*one, *two])
    (w,) = added
    assert w.startswith("superlinear thread scaling: lmdb readrandom ran ") and " at 2 threads against " in w
    assert "more than the 2x that 1 core at 1 thread and 2 cores at 2 allow" in w
    assert "worker thread(s) were on a CPU only" in w and "benchmarks/bare_loop.c" in w
    assert _sanity(two[0].warnings) == [w] and _sanity(one[0].warnings) == []   # carried by the higher point's result


def test_a_step_within_the_cores_is_not_superlinear(loaded_lmdb):
    """The 2-thread point shares both cores with busy processes: slower than linear, nothing to say."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs")
    one = kvlab.run("lmdb", "readrandom", threads=1, **loaded_lmdb)
    hogs = _hogs([0, 1, 0, 1])
    try:
        two = kvlab.run("lmdb", "readrandom", threads=2, **loaded_lmdb)
    finally:
        _stop(hogs)
    assert sanity.annotate_scaling([*one, *two]) == []
    assert [_sanity(b.warnings) for b in (*one, *two)] == [[], []]


def test_a_step_above_the_cores_only_by_noise_is_not_superlinear():
    """With repeats on both sides, the step must clear the cores' bound beyond the medians' intervals: a 2.1x
    step of medians over wide 1-thread runs is the VM's noise, a 2.6x step clear of both intervals is not."""
    from kvlab.results.result import BenchmarkResult

    def point(threads, rate, trial):
        return BenchmarkResult(
            engine="lmdb", workload="readrandom", phase="run", threads=threads, ops=1_000_000,
            seconds=1_000_000 / rate, thread_seconds=1_000_000 / rate, found=None, not_found=None, bytes=0,
            latency_us={"p50": 1.0}, latency_by_op={}, latency_unit="op", seed=1, trial=trial,
            params={"num": 100_000, "key_size": 16, "value_size": 100, "native_loop": "readrandom"},
            versions={}, key_encoding="", provenance={"spec": {"cpus": "0-1"}, "machine": {"cores": 2}})

    ones = [1.01e6, 1.20e6, 1.25e6, 1.30e6, 1.32e6]
    noisy = [point(1, r, i) for i, r in enumerate(ones)] + \
        [point(2, r, i) for i, r in enumerate([1.31e6, 2.5e6, 2.64e6, 2.9e6, 3.19e6])]
    assert sanity.scaling_warnings(noisy) == []
    clear = [point(1, r, i) for i, r in enumerate(ones)] + \
        [point(2, r, i) for i, r in enumerate([3.2e6, 3.3e6, 3.4e6, 3.5e6, 3.6e6])]
    assert len(sanity.scaling_warnings(clear)) == 5


def test_compare_checks_scaling_across_its_runs(tmp_path, capsys, monkeypatch):
    """kvlab compare hands every record of its runs (1 and 2 threads, every repeat) to the scaling check, and
    stores what it adds; tiny runs are too short and say so, once for all the rows."""
    require("null")
    seen = []
    real = sanity.with_scaling   # new records with the notes: a record is never changed once built

    def spy(results):
        results = list(results)
        seen.append(sorted((b.workload, b.threads) for b in results))
        return real(results)
    monkeypatch.setattr(sanity, "with_scaling", spy)
    out = tmp_path / "c.json"
    assert cli.main(["compare", "--engines", "null", "--num", "5000", "--threads", "2", "--no-store", "--json",
                     str(out), "--progress", "off", "--duration", "0.2", "--warmup", "0.05", "--repeat", "2"]) == 0
    assert seen[-1].count(("readrandom", 1)) == 2 and seen[-1].count(("readrandom", 2)) == 2   # all at once
    records = json.loads(out.read_text())
    assert all(any(w.startswith("too short to be a stable figure") for w in r["warnings"]) for r in records
               if r["phase"] == "run")
    err = capsys.readouterr().err
    assert err.count("warning: too short to be a stable figure:") == 1
    assert "null readrandom 2 thr (x2)" in err
