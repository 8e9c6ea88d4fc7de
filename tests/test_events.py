"""Engine events on the timeline (issue 27 item 2): each engine's background work sampled per interval from its
stats text, the periods it ran in, and plots.timeline shading them.  Real engines in temp directories."""
import pytest
from matplotlib.colors import to_rgba

import kvlab
from kvlab import engines
from kvlab.lab import plots
from kvlab.lab.plots.timeline import KIND_STYLE
from kvlab.results import events
from kvlab.results.result import load_json

from .conftest import require

# What a short fillrandom shows of each engine's fields, at least (more may appear once work has run)
EXPECTED = {
    "rocksdb": {"running_flushes", "running_compactions", "pending_compaction_bytes",
                "delayed_write_rate_bytes_per_s", "compaction_write_bytes", "compaction_read_bytes", "flush_bytes",
                "stall_seconds", "stalls", "l0_jobs", "compactions"},
    "leveldb": {"l0_files", "files", "memory_bytes", "compaction_write_bytes", "compaction_read_bytes",
                "compaction_seconds"},
    "wiredtiger-btree": {"checkpoint_running", "checkpoints", "checkpoint_ms", "pages_evicted_by_app",
                         "app_eviction_us", "cache_bytes"},
    "wiredtiger-lsm": {"checkpoint_running", "checkpoints", "lsm_rows_merged", "lsm_merge_queued"},
    "bdb": {"cache_hits", "cache_misses", "pages_read", "pages_written"},
    "lmdb": {"last_page", "leaf_pages", "branch_pages", "depth", "entries", "transactions"},
}


@pytest.fixture(scope="module")
def rocksdb_run(tmp_path_factory):
    """A RocksDB fillrandom + overwrite with a 1 MB memtable: it flushes and compacts many times per phase."""
    require("rocksdb")
    db = str(tmp_path_factory.mktemp("ev") / "db")
    return kvlab.run("rocksdb", "fillrandom,overwrite", num=60_000, value_size=800, seed=3, interval=0.1, db=db,
                     write_buffer_size=1 << 20)


def test_events_appear_in_the_intervals_of_a_rocksdb_run_that_flushes_and_compacts(rocksdb_run, tmp_path):
    for b in rocksdb_run:
        assert all("events" in iv for iv in b.intervals)
        ev = [iv["events"] for iv in b.intervals]
        # counters are increases per interval: their sum is what the phase did
        assert sum(e.get("flush_bytes", 0) for e in ev) > 0
        assert sum(e.get("compaction_read_bytes", 0) for e in ev) > 0 or \
            sum(e.get("compactions", 0) for e in ev) > 0
        assert any(e["running_flushes"] or e.get("l0_jobs") for e in ev)
        p = events.periods(b)
        assert p["flush"] and p["compaction"], p
        assert "stall" in p   # reported, whether or not writes stalled
        for t0, t1 in p["compaction"]:
            assert 0 <= t0 < t1 <= b.intervals[-1]["t_end_s"] + 1e-9
    # and in the --json record, read back
    path = tmp_path / "r.json"
    rocksdb_run.write_json(path)
    back = load_json(path)
    assert back.benchmarks[0].intervals[0]["events"] == rocksdb_run.benchmarks[0].intervals[0]["events"]


def test_events_are_stored_per_interval_and_an_older_store_gets_them_from_its_records(rocksdb_run, tmp_path):
    import json

    import duckdb

    from kvlab.results.store import Store
    path = tmp_path / "s.duckdb"
    Store(path).append(rocksdb_run)
    query = "SELECT interval, events FROM intervals WHERE side = 'workers' ORDER BY benchmark_id, interval"

    def stored():
        con = duckdb.connect(str(path))
        try:
            return [(i, json.loads(e)) for i, e in con.execute(query).fetchall()]
        finally:
            con.close()

    rows = stored()
    first = [iv["events"] for iv in rocksdb_run.benchmarks[0].intervals]
    assert [e for i, e in rows[:len(first)]] == first
    con = duckdb.connect(str(path))   # a store of version 7: no events column; the migration fills it
    con.execute("ALTER TABLE intervals DROP COLUMN events")
    con.execute("UPDATE kvlab_meta SET value = '7' WHERE key = 'version'")
    con.close()
    Store(path).frame()
    assert stored() == rows


def test_no_events_without_engine_stats(tmp_path):
    require("lmdb")
    r = kvlab.run("lmdb", "fillrandom", num=5_000, interval=0.05, engine_stats=False, db=str(tmp_path / "db"))
    assert r.benchmarks[0].intervals and not any("events" in iv for iv in r.benchmarks[0].intervals)


def test_wiredtiger_keeps_its_costly_counters_only_when_asked(tmp_path):
    """WiredTiger's statistics=(fast) costs every op: off by default, the result says so (instruments), no events
    or engine write counters are read, and its cache is still reported; --engine-counters turns them on."""
    require("wiredtiger-btree")
    off = kvlab.run("wiredtiger-btree", "fillrandom", num=5_000, interval=0.05, cache_size=64 << 20,
                    db=str(tmp_path / "off")).benchmarks[0]
    assert "off: WiredTiger's statistics=(fast)" in off.params["instruments"]["engine_counters"]
    assert off.params["instruments"]["engine_events"] == "not read" and off.engine_stats is None
    assert not any("events" in iv for iv in off.intervals)
    assert off.amplification["engine"]["bytes_written"] is None
    assert "--engine-counters" in off.amplification["engine"]["note"]
    assert off.provenance["engine_config_reported"]["connection.cache_size"] == 64 << 20
    on = kvlab.run("wiredtiger-btree", "fillrandom", num=5_000, interval=0.05, engine_counters=True,
                   db=str(tmp_path / "on")).benchmarks[0]
    assert on.params["instruments"]["engine_counters"].startswith("on: ")
    assert on.engine_stats and any("events" in iv for iv in on.intervals)
    assert on.amplification["engine"]["bytes_written"] is not None


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_engines_parser_gives_its_named_fields_on_a_real_run(name, tmp_path):
    require(name)
    r = kvlab.run(name, "fillrandom", num=30_000, value_size=400, seed=1, interval=0.05, db=str(tmp_path / "db"),
                  engine_counters=True)   # WiredTiger keeps its statistics only when asked (they cost per op)
    b = r.benchmarks[0]
    adapter = engines.get(name).adapter
    known = events.fields(adapter)
    seen = set()
    for iv in b.intervals:
        assert set(iv["events"]) <= set(known)            # nothing the registry does not describe
        assert all(isinstance(v, (int, float)) for v in iv["events"].values())
        seen |= set(iv["events"])
    assert EXPECTED[name] <= seen, EXPECTED[name] - seen
    for f in known.values():
        assert f.unit and f.kind in ("gauge", "counter") and f.what


ROCKSDB_TEXT = """
** Compaction Stats [default] **
Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) \
Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop Rblob(GB) Wblob(GB)
----------------------------------------------------------------------------------------------------------------
  L0      2/0    1.90 MB   0.5      0.0     0.0      0.0       0.0      0.0       0.0   1.0      0.0    200.0 \
     0.05              0.01        14    0.004       0      0       0.0       0.0
  L1      3/0    3.00 MB   0.1      0.0     0.0      0.0       0.0      0.0       0.0   0.0      0.0      0.0 \
     0.10              0.00         2    0.050       0      0       0.0       0.0
  L2      5/0    9.00 MB   0.1      0.0     0.0      0.0       0.0      0.0       0.0   0.0      0.0      0.0 \
     0.20              0.00         3    0.050       0      0       0.0       0.0
 Sum     10/0   13.90 MB   0.0      0.0     0.0      0.0       0.0      0.0       0.0   1.0      0.0    289.1 \
     0.35              0.01        19    0.004       0      0       0.0       0.0
Flush(GB): cumulative 0.014, interval 0.014
Cumulative compaction: 0.25 GB write, 113.02 MB/s write, 0.50 GB read, 0.00 MB/s read, 1.5 seconds
Stalls(count): 1 level0_slowdown, 0 level0_slowdown_with_compaction, 2 level0_numfiles, 5 memtable_compaction, \
0 memtable_slowdown, interval 5 total count
Cumulative stall: 00:01:2.500 H:M:S, 32.6 percent
""".replace("\\\n", "")


def test_the_rocksdb_parser_reads_the_cumulative_lines_and_leaves_out_what_is_missing():
    got = events.parse("rocksdb", {"num-running-flushes": 1, "actual-delayed-write-rate": 0}, ROCKSDB_TEXT)
    gib = 1024 ** 3
    assert got == {"running_flushes": 1, "delayed_write_rate_bytes_per_s": 0,
                   "compaction_write_bytes": round(0.25 * gib), "compaction_read_bytes": round(0.5 * gib),
                   "compaction_seconds": 1.5, "flush_bytes": round(0.014 * gib), "stalls": 8,
                   "stall_seconds": 62.5, "l0_jobs": 14, "compactions": 5}
    assert events.parse("rocksdb", {}, "") == {}           # nothing reported: nothing invented
    assert events.parse("null", {}, "") is None            # an adapter without a row


def test_an_interval_keeps_gauges_at_its_end_and_counters_as_increases():
    before = {"running_flushes": 1, "flush_bytes": 100, "stalls": 5}
    after = {"running_flushes": 0, "flush_bytes": 300, "stalls": 2, "compactions": 4}
    # stalls went backwards (the engine reopened) and compactions has no start: both absent
    assert events.interval("rocksdb", before, after) == {"running_flushes": 0, "flush_bytes": 200}


def test_the_timeline_passes_the_figure_check_and_shades_the_compaction_periods(rocksdb_run):
    import matplotlib.pyplot as plt
    fig = plots.timeline(rocksdb_run)
    try:
        assert plots.check(fig, results=rocksdb_run.benchmarks) == []
        top = fig.axes[0]
        want = to_rgba(KIND_STYLE["compaction"]["facecolor"])[:3]
        shaded = sorted((round(p.get_x(), 6), round(p.get_x() + p.get_width(), 6)) for p in top.patches
                        if tuple(round(c, 3) for c in p.get_facecolor()[:3]) == tuple(round(c, 3) for c in want))
        expected, offset = [], 0.0
        for b in rocksdb_run:
            expected += [(round(offset + t0, 6), round(offset + t1, 6)) for t0, t1 in events.periods(b)["compaction"]]
            offset += b.intervals[-1]["t_end_s"]
        assert shaded and shaded == sorted(expected)
        legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        assert events.PERIOD_KINDS["compaction"] in legend and events.PERIOD_KINDS["flush"] in legend
    finally:
        plt.close(fig)
