"""Fair trials, the noise floor and the system checks (issue 28 items 4 and 5).

- `kvlab results compare --run SPEC_A SPEC_B --repeat N` runs A B A B ..., each trial in its own fresh database,
  stores every trial tagged compare:ID:A / :B (and --tag), then compares them (the null engine where the
  harness is what is measured, LMDB where an engine is);
- `kvlab noise` stores the machine's A/A spread, and a later compare takes it as its noise floor;
- the system checks read this machine's /proc and /sys, and a spinning child at the start is a busy machine.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kvlab
from kvlab import cli, errors
from kvlab.execution.host import system
from kvlab.execution.orchestration.interleave import run_interleaved
from kvlab.model.spec import make_spec
from kvlab.results.store import NOISE_METRICS, Store

from .conftest import require

NULL_A = "--engine null --workload readrandom --num 20000"
NULL_B = "--engine null --workload readrandom --num 20000 --value-size 1000"


def _main(*argv):
    return cli.main([str(a) for a in argv])


# --- fair trials -------------------------------------------------------------------------------------

def test_run_interleaved_alternates_who_starts():
    require("null")
    order = []
    a, b = run_interleaved(make_spec("null", "readrandom", num=5_000, seed=3),
                           make_spec("null", "readrandom", num=5_000, seed=3, value_size=500), 3,
                           on_result=lambda side, x: order.append((side, x.trial, x.phase)),
                           on_trial=lambda side, i, r: order.append((side, i, "end")), label="t")
    assert order == [(side, i, what) for i in range(3) for side in ("AB", "BA")[i % 2]
                     for what in ("load", "run", "end")]
    assert [x.trial for x in a] == [0, 0, 1, 1, 2, 2] == [x.trial for x in b]
    assert [x.provenance["interleaved"]["order"] for x in a] == [0, 0, 3, 3, 4, 4]
    assert [x.provenance["interleaved"]["order"] for x in b] == [1, 1, 2, 2, 5, 5]
    assert {x.params["value_size"] for x in b} == {500} and {x.params["value_size"] for x in a} == {100}
    assert a[-1].repetitions["ops_per_sec"]["n"] == 3 and b[-1].repetitions["ops_per_sec"]["n"] == 3


def test_compare_run_stores_abab_with_tags_and_compares(tmp_path, capsys):
    require("null")
    store = tmp_path / "s.duckdb"
    assert _main("results", "compare", "--run", NULL_A, NULL_B, "--repeat", 3, "--store", store,
                 "--tag", "fair", "--progress", "off", "--metric", "ops_per_sec") == 0
    out = capsys.readouterr().out
    printed = [" ".join(ln.split()[:3]) for ln in out.splitlines() if ln[:2] in ("A ", "B ")]
    assert printed == [f"{side} {i}/3 {workload}" for i in (1, 2, 3) for side in ("BA", "AB")[i % 2]
                       for workload in ("fillseq", "readrandom")]
    rows = Store(store).query("SELECT id, run_id, phase, trial, tags, record FROM benchmarks ORDER BY id")
    assert len(rows) == 12 and rows.run_id.nunique() == 6   # one stored run per trial
    sides = []
    for tags, record in zip(rows.tags, rows.record):
        (label,) = [t for t in tags if t.startswith("compare:")]
        assert "fair" in tags and label.endswith(":" + json.loads(record)["provenance"]["interleaved"]["side"])
        sides.append(label[-1])
    assert sides == list("AABBBBAAAABB") and list(rows.trial) == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    label = next(t for t in rows.tags[0] if t.startswith("compare:"))[:-2]
    # the load phases left out of the comparison (they are not what it compares), and said so
    assert f"A: tag:{label}:A  (3 runs, 3 benchmarks; null)" in out and "3/3" in out
    assert "load phases left out (fillseq load)" in out
    # both sides drew the same keys: B took A's seed
    seeds = {json.loads(r)["seed"] for r in rows.record}
    assert len(seeds) == 1 and "one seed for both sides" in out
    # the comparison can be made again from the store, by the tags
    assert _main("results", "compare", f"tag:{label}:A", f"tag:{label}:B", "--store", store) == 0


def test_each_lmdb_trial_gets_a_fresh_database(tmp_path, capsys):
    require("lmdb")
    store = tmp_path / "s.duckdb"
    assert _main("results", "compare", "--run", "--engine lmdb --workload readrandom --num 20000 --seed 5",
                 "--engine lmdb --workload readrandom --num 20000 --value-size 400", "--repeat", 2,
                 "--store", store, "--progress", "off", "--quiet") == 0
    rows = Store(store).load()
    runs = [b for b in rows if b.phase == "run"]
    assert [b.phase for b in rows] == ["load", "run"] * 4          # every trial loads its own database
    assert all(b.found == b.ops for b in runs) and {b.seed for b in rows} == {5}
    paths = {b.provenance["storage"]["path"] for b in rows if b.phase == "run"}
    assert len(paths) == 4 and not any(Path(p).exists() for p in paths)   # fresh, and removed after
    out = capsys.readouterr().out
    assert "readrandom run 1 thr" in out and "2/2" in out


def test_a_stored_run_id_is_a_side(tmp_path, capsys):
    require("null")
    store = tmp_path / "s.duckdb"
    assert _main("run", "--engine", "null", "--workload", "readrandom", "--num", 10000, "--seed", 77,
                 "--store", store, "--quiet", "--progress", "off") == 0
    (run_id,) = set(Store(store).frame().run_id)
    assert _main("results", "compare", "--run", run_id[:8], NULL_B, "--repeat", 2, "--store", store, "--quiet",
                 "--progress", "off") == 0
    out = capsys.readouterr().out
    assert "n=2/2" in out or "2/2" in out
    b_seeds = {b.seed for b in Store(store).load() if any(t.endswith(":B") for t in b.tags)}
    assert b_seeds == {77}   # B, given without --seed, took the stored run's


@pytest.mark.parametrize("argv, said", [
    (["A", "B", "--run", NULL_A, NULL_B], "not both"),
    (["--repeat", "3", "tag:a", "tag:b"], "--repeat goes with --run"),
    (["--tag", "x", "tag:a", "tag:b"], "--tag goes with --run"),
    ([], "A and B missing"),
    (["--run", NULL_A + " --json x.json", NULL_B], "--json is not a side's option"),
    (["--run", NULL_A + " --repeat 3", NULL_B], "--repeat is not a side's option"),
    (["--run", NULL_A + " --thread 2", NULL_B], "--run SPEC_A"),
    (["--run", "'--engine null", NULL_B], "--run SPEC_A"),
    (["--run", "nosuchrun", NULL_B], "nosuchrun"),
])
def test_run_usage_errors(tmp_path, capsys, argv, said):
    Store(tmp_path / "s.duckdb").check()
    assert _main("results", "compare", *argv, "--store", tmp_path / "s.duckdb") == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


# --- the noise floor ---------------------------------------------------------------------------------

def test_noise_stores_a_floor_and_compare_uses_it(tmp_path, capsys):
    require("lmdb")
    store = tmp_path / "s.duckdb"
    assert _main("noise", "--engine", "lmdb", "--workload", "readrandom", "--num", 20000, "--repeat", 3,
                 "--store", store, "--progress", "off", "--seed", 9) == 0
    out = capsys.readouterr().out
    assert "ops/s spread" in out and "stored as the noise floor of lmdb" in out
    noise = Store(store).query("SELECT * FROM noise ORDER BY workload")
    assert list(noise.workload) == ["fillseq", "readrandom"] and set(noise.engine) == {"lmdb"}
    assert set(noise.threads) == {1} and set(noise.n) == {3} and set(noise.method) == {"range"}
    host = noise.host[0]
    assert host == kvlab.run("null", "readrandom", num=1000)[0].provenance["machine"]["hostname"]
    floor = Store(store).noise_floor(host, "lmdb", "readrandom", 1)
    assert floor["n"] == 3 and all(floor[m] >= 0 for m in NOISE_METRICS if m in floor)
    detail = json.loads(noise.detail[1])
    ops = detail["ops_per_sec"]
    assert floor["ops_per_sec"] == pytest.approx((ops["max"] - ops["min"]) / ops["median"] * 100)

    # two later sides on the same host and engine: the stored spread is their floor where it beats --threshold
    for tag, size in (("small", 100), ("big", 400)):
        assert _main("run", "--engine", "lmdb", "--workload", "readrandom", "--num", 20000, "--repeat", 3,
                     "--value-size", size, "--tag", tag, "--store", store, "--quiet", "--progress", "off") == 0
    capsys.readouterr()
    cmp_json = tmp_path / "c.json"
    assert _main("results", "compare", "tag:small", "tag:big", "--store", store, "--threshold", 0,
                 "--json", cmp_json) == 0
    out = capsys.readouterr().out
    rows = {(r["workload"], r["metric"]): r for r in json.loads(cmp_json.read_text())}
    ops_row = rows[("readrandom", "ops_per_sec")]
    assert ops_row["floor_source"] == "measured" and ops_row["floor_pct"] == pytest.approx(floor["ops_per_sec"])
    assert "noise floor from `kvlab noise` (3 runs" in out
    # --no-noise-floor: the threshold alone
    assert _main("results", "compare", "tag:small", "tag:big", "--store", store, "--no-noise-floor",
                 "--json", cmp_json) == 0
    assert {r["floor_source"] for r in json.loads(cmp_json.read_text()) if r["floor_source"]} == {"threshold"}
    # a floor is a host's and an engine's: another engine's benchmarks have none
    Store(store).append_noise({"host": host, "engine": "rocksdb", "workload": "readrandom", "phase": "run",
                               "threads": 1, "n": 3, "method": "range", "ops_per_sec_pct": 1e6})
    assert _main("results", "compare", "tag:small", "tag:big", "--store", store, "--threshold", 0,
                 "--json", cmp_json) == 0
    again = {(r["workload"], r["metric"]): r for r in json.loads(cmp_json.read_text())}
    assert again[("readrandom", "ops_per_sec")]["floor_pct"] == pytest.approx(floor["ops_per_sec"])


def test_noise_needs_three_runs(tmp_path, capsys):
    assert _main("noise", "--engine", "null", "--repeat", 2, "--store", tmp_path / "s.duckdb") == 2
    assert "at least 3" in capsys.readouterr().err


# --- system checks -----------------------------------------------------------------------------------

def _first(path):
    return Path(path).read_text().split()[0]


def test_the_system_checks_read_this_machine():
    state = system.snapshot()
    assert state["cores"] == os.cpu_count()
    load = state["load"]
    assert load["avg_1min"] == pytest.approx(os.getloadavg()[0], abs=1.0)
    assert 0 <= load["own_1min"] and load["others_1min"] <= load["avg_1min"] + 1e-9
    source = Path("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    if source.exists():
        assert state["clocksource"]["current"] == _first(source)
    total = next(int(ln.split()[1]) * 1024 for ln in Path("/proc/meminfo").read_text().splitlines()
                 if ln.startswith("MemTotal:"))
    assert state["memory"]["total_bytes"] == total
    if Path("/proc/pressure/memory").exists():
        assert "some_avg10" in state["memory"]["pressure"]
    cpufreq = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    if cpufreq.exists():
        assert _first(cpufreq) in state["cpufreq"]["governors"]
    else:   # a VM: nothing to read, said so, and nothing warned about
        assert state["cpufreq"]["governors"] is None and "note" in state["cpufreq"]
        assert not any("governor" in w for w in system.warnings(state))
    assert all(p["pid"] != os.getpid() for p in state["busy_processes"])


def test_a_spinning_child_at_the_start_is_a_busy_machine():
    require("null")
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)   # running, and spinning
        r = kvlab.run("null", "readrandom", num=10_000, seed=1, interval=0)
    finally:
        child.kill()
        child.wait()
    state = r[-1].provenance["machine"]["system"]
    busy = {p["pid"]: p for p in state["busy_processes"]}
    assert child.pid in busy and busy[child.pid]["cpu_pct"] > system.BUSY_CPU_PCT
    assert "while True" in busy[child.pid]["command"]
    warned = [w for w in r[-1].warnings if w.startswith("machine busy at the start: other processes")]
    assert warned and (f"pid {child.pid}," in warned[0] or "more;" in warned[0])
    assert all(w.startswith("machine busy") for b in r for w in b.warnings if w.startswith("machine "))


QUIET = {"cores": 2, "load": {"avg_1min": 0.3, "others_1min": 0.2}, "busy_processes": [],
         "cpufreq": {"governors": {"performance": [0, 1]}}, "clocksource": {"current": "tsc"},
         "memory": {"total_bytes": 8 << 30, "available_bytes": 6 << 30, "pressure": {"some_avg10": 0.0}}}


@pytest.mark.parametrize("change, said", [
    ({}, None),
    ({"load": {"avg_1min": 1.6, "others_1min": 1.5}}, "load average 1.60 over the last minute (1.50 besides"),
    ({"load": {"avg_1min": 1.6, "others_1min": 0.4}}, None),     # this process's own load is not the machine's
    ({"load": {"avg_1min": 1.6, "others_1min": 1.5}, "others_runnable": 0}, None),   # work that has ended
    ({"load": {"avg_1min": 1.6, "others_1min": 1.5}, "others_runnable": 2}, None),   # this process's own threads
    ({"cpufreq": {"governors": {"powersave": [0, 1]}}}, "governor powersave on CPU 0-1, not 'performance'"),
    ({"cpufreq": {"governors": None, "note": "none"}}, None),
    ({"clocksource": {"current": "hpet"}}, "clocksource hpet, not tsc"),
    ({"memory": {"total_bytes": 8 << 30, "available_bytes": 1 << 28, "pressure": None}}, "short of memory"),
    ({"memory": {"total_bytes": 8 << 30, "available_bytes": 6 << 30, "pressure": {"some_avg10": 35.0}}},
     "stalled on memory 35%"),
    ({"busy_processes": [{"pid": 42, "name": "spin", "cpu_pct": 97.0}]}, "spin (pid 42, 97% of a CPU)"),
])
def test_what_the_checks_warn_about(change, said):
    got = system.warnings({**QUIET, **change})
    if said is None:
        assert got == []
    else:
        (w,) = got
        assert said in w and w.startswith("machine ")


def test_errors_are_kvlab_errors():
    with pytest.raises(errors.SpecError):
        from kvlab.cli.results import _side_spec
        _side_spec(Store("/nonexistent/s.duckdb"), "--engine nosuchengine", "--run SPEC_A")
