"""Issue 34, item 6: `kvlab compare`, the main job. Each engine loaded once into a directory the job makes and
removes, the points run round-robin across repeats on the loaded databases, the estimate said before the first
run, a ranking per point with the significance of each gap, each kind of warning once naming its rows (every
text in full with --explain and in the JSON).  Tiny runs (no assertion on timings)."""
import json
from pathlib import Path

import pytest

from kvlab import cli
from kvlab.results.result import BenchmarkResult
from kvlab.services import maincompare
from kvlab.services.maincompare import Plan, Point

from .conftest import require

TINY = ["--num", "2000", "--duration", "0.3", "--warmup", "0.1", "--repeat", "2", "--no-store", "--progress", "off"]


def bench(engine="lmdb", threads=1, rate=1000.0, *, phase="run", workload="readrandom", warnings=(), trial=0):
    return BenchmarkResult(
        engine=engine, workload=workload, phase=phase, threads=threads, ops=100_000, seconds=100_000 / rate,
        thread_seconds=100_000 / rate, found=None, not_found=None, bytes=0,
        latency_us={"p50": 1e6 / rate, "p99": 2e6 / rate}, latency_by_op={}, latency_unit="op", seed=1,
        params={"num": 100_000}, versions={}, key_encoding="", warnings=list(warnings), trial=trial)


# --- warnings, once per kind -------------------------------------------------------------------------

def _short(engine, threads, ops):
    return (f"too short to be a stable figure: {engine} readrandom at {threads} thread{'s' if threads > 1 else ''} "
            f"ran {ops:,} ops in 0.300 s, under the 1 s and 10,000 ops a figure needs (in less, ...); give it more")


BUSY_PROCS = "machine busy at the start: other processes were using the CPUs: python (pid 9, 95% of a CPU); ..."
BUSY_LOAD = "machine busy at the start: load average 2.89 over the last minute (2.80 besides this process) on 2 cores"
ASSERTS = "{e}: the library (Debian package lib{e} 1.{n}-4) has assertions compiled in; its numbers understate"


def _records():
    load = bench("leveldb", phase="load", workload="fillseq", warnings=[ASSERTS.format(e="leveldb", n=23)])
    return [
        bench("lmdb", phase="load", workload="fillseq", warnings=[BUSY_PROCS, BUSY_LOAD]), load,
        bench("lmdb", 1, warnings=[_short("lmdb", 1, 1234), BUSY_LOAD]),
        bench("lmdb", 1, trial=1, warnings=[_short("lmdb", 1, 1500)]),
        bench("leveldb", 2, warnings=[_short("leveldb", 2, 999), ASSERTS.format(e="leveldb", n=23)]),
        bench("leveldb", 2, trial=1, warnings=[ASSERTS.format(e="leveldb", n=23)]),
        bench("rocksdb", 1, warnings=[ASSERTS.format(e="rocksdb", n=8),
                                      "rocksdb readrandom at 1 thread was measured right after the load phase, with "
                                      "no warm-up: it ran while ..."]),
    ]


def test_each_kind_of_warning_is_one_line_naming_its_rows():
    records = _records()
    kinds = maincompare.collapse_warnings(records)
    every = maincompare.rows_of(records)
    lines = [k.line(every, len(records)) for k in kinds]
    assert lines == [
        "machine busy at the start: 2 of 7 runs",            # two texts, one kind, counted by record
        "the library has assertions compiled in: leveldb (every run), rocksdb readrandom 1 thr",
        "too short to be a stable figure: lmdb readrandom 1 thr (x2), leveldb readrandom 2 thr",
        "readrandom at 1 thread was measured right after the load phase, with no warm-up: rocksdb readrandom 1 thr",
    ]
    short = kinds[2]
    assert len(short.texts) == 3 and short.texts[_short("lmdb", 1, 1234)] == ["lmdb readrandom 1 thr"]
    assert [k.machine for k in kinds] == [True, False, False, False]
    assert all(len(b.warnings) for b in records)   # the records keep their own


def test_a_builds_fact_is_a_note_not_a_warning():
    """A library with assertions compiled in says so on every run, quiet machine or not: a note."""
    from kvlab.execution.host import buildfacts
    facts = {"assertions": True, "origin": "Debian package libleveldb1d 1.23-4"}
    text = buildfacts.warning_for("leveldb", facts)
    b = bench("leveldb", warnings=[text, _short("leveldb", 1, 999)])
    b.versions = {"engine_build": facts}
    build, short = maincompare.collapse_warnings([b])
    assert build.build and not short.build


def test_a_warning_kind_ignores_names_and_numbers():
    a = maincompare.warning_kind(_short("lmdb", 1, 1234), bench("lmdb"))
    b = maincompare.warning_kind(_short("wiredtiger-btree", 2, 99), bench("wiredtiger-btree", 2))
    assert a == b == ("too short to be a stable figure", "too short to be a stable figure")
    c = maincompare.warning_kind("memory budget of 1024 MiB covers the engine caches only (no cgroup: x: y)",
                                 bench("lmdb"))
    d = maincompare.warning_kind("memory budget of 512 MiB covers the engine caches only (other: z)", bench("bdb"))
    assert c[0] == d[0] and c[1] == "memory budget of 1024 MiB covers the engine caches only"
    e = maincompare.warning_kind("leveldb's cache (cache_size) is smaller than its data (30 MiB): reads go ...",
                                 bench("leveldb"))
    assert e == ("{engine}'s cache is smaller than its data", "the engine's cache is smaller than its data")


# --- the plan ----------------------------------------------------------------------------------------

def test_the_schedule_is_round_robin_with_the_first_engine_rotating():
    plan = Plan(engines=("a", "b", "c"), threads=(1, 2), repeat=4)
    order = maincompare.schedule(plan)
    assert len(order) == 3 * 2 * 4
    for r in range(4):
        part = [(e, p) for rr, e, p in order if rr == r]
        assert len(part) == 6 and len(set(part)) == 6           # every engine at every point, once a repeat
        assert order[r * 6:(r + 1) * 6] == [(r, e, p) for e, p in part]   # repeats do not overlap in time
    firsts = [order[r * 6][1] for r in range(4)]
    assert firsts == ["a", "b", "c", "a"]
    assert [order[r * 6][2].threads for r in range(4)] == [1, 2, 1, 2]    # the points take turns too
    seconds = maincompare.estimate_seconds(plan, {})
    assert seconds >= 24 * (plan.duration + maincompare.RUN_OVERHEAD_S)


def test_the_ranking_compares_every_pair_within_repeats_and_never_chains():
    """Issue 46: neighbours-only Mann-Whitney chained 'a ~ b ~ c' with a and c far apart.  Every pair is compared
    on its ratios within a repeat (a block), Holm over the point's pairs: an A/A is indistinguishable, a 1.5x gap
    is not, a 1% gap is under the 2% floor, and no engine is grouped with one it differs from."""
    def five(engine, rates):
        return [bench(engine, rate=r, trial=i) for i, r in enumerate(rates)]
    drift = (1.00, 1.03, 0.97, 1.02, 0.98)   # what each repeat shared: every engine's figure moves with it
    records = (five("rocksdb", [500 * d for d in drift]) + five("lmdb", [1000 * d * e for d, e in
                                                                          zip(drift, (1, 1.01, .99, 1, 1))]) +
               five("lmdb@0.9.24", [1000 * d * e for d, e in zip(drift, (1.01, 1, 1, .99, 1))]) +
               five("bdb", [667 * d * e for d, e in zip(drift, (1, .99, 1.01, 1, 1))]) +
               five("leveldb", [495 * d for d in drift]) +
               [bench("lmdb", phase="load", workload="fillseq", rate=9000)])
    rows = maincompare.summarize(records)
    (point, entries), = maincompare.rank(rows)
    assert point == Point("readrandom", 1)
    by = {e["row"]["engine"]: e for e in entries}
    assert [e["row"]["engine"] for e in entries][:2] in (["lmdb", "lmdb@0.9.24"], ["lmdb@0.9.24", "lmdb"])
    assert "lmdb@0.9.24" in by["lmdb"]["same_as"] and "lmdb" in by["lmdb@0.9.24"]["same_as"]   # the A/A
    assert "bdb" not in by["lmdb"]["same_as"] and by["bdb"]["same_as"] == []   # 1.5x: different from all
    assert "leveldb" in by["rocksdb"]["same_as"]   # 1% apart: under the 2% floor
    for e in entries:   # no chain: indistinguishable is symmetric, and nobody is with an engine it differs from
        for other in e["same_as"]:
            assert e["row"]["engine"] in by[other]["same_as"]
    assert by["bdb"]["vs_best"]["ci"][1] < 1 and by["bdb"]["vs_best"]["ratio"] == pytest.approx(0.667, rel=0.02)
    assert entries[0]["family"]["pairs"] == 10
    assert len(maincompare.rank(rows, loads=True)) == 2


def test_the_databases_go_whatever_ends_the_job(tmp_path):
    require("lmdb")
    mine = tmp_path / "kvlab-compare-not-mine"
    mine.mkdir()
    plan = Plan(engines=("lmdb",), num=1000, repeat=2, duration=0.2, warmup=0.05)

    def interrupt(b):
        raise KeyboardInterrupt
    out = maincompare.run_plan(plan, on_result=interrupt, base=str(tmp_path))
    assert out.stopped == "SIGINT" and len(out.results) == 1 and out.results[0].phase == "load"

    def fail(b):
        raise RuntimeError("a failure of the caller's")
    with pytest.raises(RuntimeError):
        maincompare.run_plan(plan, on_result=fail, base=str(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == [mine.name]   # only what it made went


# --- the command ------------------------------------------------------------------------------------

def test_compare_says_the_plan_first_then_ranks_and_collapses(tmp_path, monkeypatch, capsys):
    require("lmdb")
    require("bdb-notxn")
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("KVLAB_TMPDIR", str(temp))
    out = tmp_path / "c.json"
    assert cli.main(["compare", "--engines", "lmdb,bdb-notxn", *TINY, "--json", str(out), "--explain"]) == 0
    stdout, stderr = capsys.readouterr()
    lines = stdout.splitlines()
    about = next(i for i, ln in enumerate(lines) if ln.startswith("that is 2 loads + 8 runs: about "))
    assert about < next(i for i, ln in enumerate(lines) if "loaded:" in ln)     # the estimate before any run
    assert lines[1].startswith("memory budget: 1024 MiB each")
    assert "readrandom 1 thr (no pair tested: fewer than 3 repeats):" in stdout and "readrandom 2 thr (" in stdout and "ranking by the geometric mean" in stdout
    assert "--repeat 2: 2 vs 2 samples cannot reach p < 0.05" in stderr
    assert stderr.count("warning: too short to be a stable figure: ") == 1        # once, naming its rows
    assert "lmdb readrandom 1 thr (x2)" in stderr
    assert "warning (lmdb readrandom 1 thr): too short to be a stable figure: lmdb readrandom at 1 thread ran" \
        in stderr                                                                   # --explain: the texts in full
    assert list(temp.iterdir()) == []                                               # the databases went
    records = json.loads(out.read_text())
    assert [r["phase"] for r in records[:2]] == ["load", "load"] and len(records) == 10
    label = records[0]["provenance"]["compare"]["label"]
    assert all(label in r["tags"] and f"{label}:{r['engine']}" in r["tags"] for r in records)
    runs = records[2:]
    assert [r["provenance"]["compare"]["order"] for r in runs] == list(range(8))
    assert [(r["engine"], r["threads"], r["trial"]) for r in runs] == [
        ("lmdb", 1, 0), ("bdb-notxn", 1, 0), ("lmdb", 2, 0), ("bdb-notxn", 2, 0),
        ("bdb-notxn", 2, 1), ("lmdb", 2, 1), ("bdb-notxn", 1, 1), ("lmdb", 1, 1)]
    assert all(r["params"]["duration"] == 0.3 and r["warmup"]["excluded"] for r in runs)
    assert all(any(w.startswith("too short") for w in r["warnings"]) for r in runs)   # each keeps its own
    assert not any("right after the load" in w for r in runs for w in r["warnings"])
    assert sum(1 for r in runs if r.get("repetitions")) == 4                         # the last of each point


def test_compare_without_a_budget_says_the_engine_defaults(tmp_path, capsys):
    require("lmdb")
    assert cli.main(["compare", "--engines", "lmdb", "--threads", "1", *TINY, "--memory", "none", "--quiet",
                     "--json", str(tmp_path / "c.json")]) == 0
    records = json.loads(Path(tmp_path / "c.json").read_text())
    assert {r["params"]["memory_budget"]["bytes"] for r in records} == {None} and len(records) == 3


def test_compare_with_no_store_writes_no_file_unless_asked(tmp_path, monkeypatch, capsys):
    """Issue 46: `kvlab compare --no-store` wrote compare-<time>.json into kvlab's per-user folder all the same."""
    require("null")
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    assert cli.main(["compare", "--engines", "null", *TINY]) == 0
    assert not list(home.rglob("compare-*.json")) and "results written to" not in capsys.readouterr().out
    out = tmp_path / "asked.json"
    assert cli.main(["compare", "--engines", "null", *TINY, "--json", str(out)]) == 0
    assert out.exists()
