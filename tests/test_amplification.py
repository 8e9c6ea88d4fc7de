"""Amplification (issue 27 item 1) and steady state (item 3).

Amplification figures on real engines against values computed here by hand from the same counters (the
process's /proc/self/io, the engine's own LOG and statistics, LMDB's page counts); a database on a small tmpfs
gets None with the reason; the store keeps the figures as columns.  MSER-5 and the trend test on synthetic
series; auto warm-up on a RocksDB run that starts with a backlog of level-0 files to compact."""
import json
import math
import os
import random
import re

import pytest

import kvlab
from kvlab import cli, errors
from kvlab.results import amplification, steady
from kvlab.results.result import upgrade
from kvlab.results.store import Store

from .conftest import mounted_tmpfs, require

ENTRY = 16 + 800   # key_size + value_size of the runs below


# --- write amplification on real engines -------------------------------------------------------------------------

def _log_table_bytes(db) -> int:
    """Every table file RocksDB's LOG says it created, summed by hand."""
    total = 0
    for line in open(os.path.join(db, "LOG"), encoding="utf-8", errors="replace"):
        if "EVENT_LOG_v1" in line and '"table_file_creation"' in line:
            total += json.loads(line.split("EVENT_LOG_v1 ", 1)[1])["file_size"]
    return total


def test_rocksdb_fillrandom_and_compaction_write_more_than_the_user_wrote(tmp_path):
    require("rocksdb")
    db = str(tmp_path / "db")
    # a 1 MB memtable: the 40 MB of fillrandom flush and compact many times within the phase
    r = kvlab.run("rocksdb", "fillrandom,compact", num=50_000, value_size=800, seed=3, interval=0.25, db=db,
                  keep_db=True, write_buffer_size=1 << 20)
    fill, compact = r
    a = fill.amplification
    user = fill.ops * ENTRY
    assert a["user_write_bytes"] == user
    assert a["write_amp"] == pytest.approx(fill.accounting["io_write_bytes"] / user)
    assert a["write_amp"] > 1.5, a
    # the engine's own account: LOG's table files + the WAL RocksDB reports, over the same user bytes
    e = a["engine"]
    assert e["bytes_written"] == e["flush_bytes"] + e["compaction_bytes"] + e["wal_bytes"]
    assert a["write_amp_engine"] == pytest.approx(e["bytes_written"] / user)
    assert e["compaction_bytes"] > 0 and e["flush_bytes"] > 0.5 * user
    assert abs(e["wal_bytes"] - user) < 0.1 * user + 0.01 * 2 ** 30     # the WAL holds what was written (0.01 GiB)
    # across the phases, the tables counted are every table the LOG records, none twice, none lost between phases
    counted = sum(b.amplification["engine"]["flush_bytes"] + b.amplification["engine"]["compaction_bytes"] for b in r)
    assert counted == _log_table_bytes(db)
    # the compaction wrote, but the user did not: no ratio, and the reason
    assert compact.amplification["write_amp"] is None
    assert compact.amplification["notes"]["write_amp"] == "no user writes in this phase"
    assert compact.amplification["engine"]["compaction_bytes"] > 0
    # space: allocated size over the expected distinct keys of uniform random writes
    n = 50_000
    expected_keys = n * (1 - (1 - 1 / n) ** fill.ops)
    assert a["live_keys"] == pytest.approx(expected_keys)
    assert compact.amplification["space_amp"] == pytest.approx(
        compact.accounting["db_size_bytes"] / (expected_keys * ENTRY))
    assert compact.amplification["space_amp"] < a["space_amp"]    # compaction dropped the overwritten versions
    # each interval has its own figures, from the same counters
    ivs = [iv for iv in fill.intervals if iv["workers"]["ops"].get("write")]
    assert ivs and all(iv["amplification"]["write_amp"] is not None for iv in ivs)
    iv = ivs[0]
    assert iv["amplification"]["write_amp"] == pytest.approx(iv["io_write_bytes"] / (iv["workers"]["ops"]["write"]
                                                                                    * ENTRY))


def test_lmdb_fillseq_is_near_one_plus_its_page_overhead():
    require("lmdb")
    r = kvlab.run("lmdb", "fillseq", num=20_000, value_size=800, seed=1, interval=0)
    b = r[0]
    a, st = b.amplification, b.engine_stats["numbers"]
    user = 20_000 * ENTRY
    # what LMDB's tree holds: its pages (branch, leaf, overflow) and the two meta pages, by hand
    pages = (st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"] + 2) * st["page_size"]
    assert a["write_amp"] == pytest.approx(b.accounting["io_write_bytes"] / user)
    assert a["write_amp"] == pytest.approx(pages / user, rel=0.02), (a, st)
    # 4 entries of 816 bytes (+ node headers) to a 4 KiB page: about 4096 / (4 x 816) = 1.25, never below 1
    assert 1.0 < a["write_amp"] < 1.8
    assert a["write_amp_engine"] is None and "LMDB counts no pages written" in a["notes"]["write_amp_engine"]
    assert a["live_keys"] == 20_000 == st["entries"]
    assert a["space_amp"] == pytest.approx(b.accounting["db_size_bytes"] / user)


def test_fillrandom_live_keys_match_lmdbs_exact_count():
    """The expected distinct keys the space figure uses, against LMDB's own entry count."""
    require("lmdb")
    r = kvlab.run("lmdb", "fillrandom", num=30_000, value_size=100, seed=5, interval=0)
    a, st = r[0].amplification, r[0].engine_stats["numbers"]
    sd = math.sqrt(30_000 * math.exp(-1) * (1 - 2 * math.exp(-1)))    # the distinct count's spread
    assert abs(a["live_keys"] - st["entries"]) < 5 * sd, (a["live_keys"], st["entries"])
    assert "uniform random writes" in a["live_how"]


def test_reads_count_device_reads_per_read_op():
    require("lmdb")
    r = kvlab.run("lmdb", "fillseq,readrandom", num=20_000, seed=1, interval=0)
    load, read = r
    a = read.amplification
    assert a["read_ops"] == read.ops
    assert load.amplification["notes"]["read_amp"] == "no read ops in this phase"
    assert a["notes"]["write_amp"] == "no user writes in this phase"
    if read.accounting.get("disk_reads") is not None:    # a block device under the database
        assert a["read_amp"] == pytest.approx(read.accounting["disk_reads"] / read.ops)
        assert a["read_bytes_per_read"] == pytest.approx(read.accounting["disk_read_bytes"] / read.ops)
    assert a["process_read_bytes_per_read"] == pytest.approx(read.accounting["io_read_bytes"] / read.ops)


@pytest.fixture
def small_tmpfs(tmp_path):
    with mounted_tmpfs(tmp_path / "tmpfs", "size=64m") as where:
        yield where


def test_on_tmpfs_the_storage_figures_are_none_with_the_reason(small_tmpfs):
    require("lmdb")
    r = kvlab.run("lmdb", "fillseq,readrandom", num=10_000, seed=1, interval=0.1, db=str(small_tmpfs / "db"))
    load, read = r
    a = load.amplification
    assert a["write_amp"] is None and "tmpfs" in a["notes"]["write_amp"] and "in memory" in a["notes"]["write_amp"]
    assert a["write_amp_device"] is None and "no block device" in a["notes"]["write_amp_device"]
    assert read.amplification["read_amp"] is None and "no block device" in read.amplification["notes"]["read_amp"]
    assert read.amplification["process_read_bytes_per_read"] is None
    # space needs no block device: tmpfs allocates pages too
    assert a["space_amp"] == pytest.approx(load.accounting["db_size_bytes"] / (10_000 * (16 + 100)))
    assert all(iv["amplification"]["write_amp"] is None for iv in load.intervals)


def test_a_database_that_existed_has_no_space_figure(tmp_path):
    require("lmdb")
    db = str(tmp_path / "db")
    kvlab.run("lmdb", "fillseq", num=5_000, seed=1, interval=0, db=db, keep_db=True)
    r = kvlab.run("lmdb", "readrandom", num=5_000, seed=1, interval=0, db=db, use_existing_db=True)
    a = r[0].amplification
    assert a["space_amp"] is None and "existed before the run" in a["notes"]["space_amp"]


def test_store_keeps_the_figures_and_compare_compares_them(tmp_path, capsys):
    require("lmdb")
    store = Store(tmp_path / "s.duckdb")
    r = kvlab.run("lmdb", "fillseq,readrandom", num=10_000, seed=1, interval=0.1)
    run_id = store.append(r)
    frame = store.frame(run_id=run_id)
    for b, row in zip(r, frame.to_dict("records")):
        for k in ("write_amp", "read_amp", "space_amp"):
            want = b.amplification[k]
            assert (row[k] != row[k]) if want is None else row[k] == pytest.approx(want)
    back = store.load(run_id=run_id)
    assert back[0].amplification == json.loads(json.dumps(r[0].amplification))
    ivs = store.query("SELECT i.write_amp FROM intervals i JOIN benchmarks b ON b.id = i.benchmark_id WHERE "
                      "b.run_id = ? AND b.workload = 'fillseq'", [run_id])
    assert len(ivs) and ivs.write_amp.notna().any()
    cmp = kvlab.compare(r, r)
    assert {"write_amp", "read_amp"} <= set(cmp.metric)
    assert cli.main(["results", "list", "--store", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert "W-amp" in out and "S-amp" in out


def test_a_version_6_record_upgrades():
    old = {"schema": "kvlab.result/6", "engine": "lmdb"}
    d = upgrade(old)
    assert d["schema"] == "kvlab.result/7" and d["amplification"] is None


# --- the live set ----------------------------------------------------------------------------------------------

def test_live_set_model():
    start = amplification.live_start(True)
    # sequential writes: every key written, once
    seq = amplification.live_after(start, "sequential", 1000, 400, 10.0)
    assert (seq["keys"], seq["bytes"]) == (400, 4000)
    full = amplification.live_after(seq, "sequential", 1000, 1000, 10.0)
    assert full["keys"] == pytest.approx(1000)
    # fillseq's threads: their shares, wrapping when timed
    assert amplification.covered_arcs(100, [(0, 30), (50, 30)]) == 60
    assert amplification.covered_arcs(100, [(0, 70), (50, 40)]) == 90
    assert amplification.covered_arcs(100, [(90, 20)]) == 20
    # random writes: the expected distinct count, with replacement
    one = [(("seed", "worker", 0), 1000)]
    rnd = amplification.live_after(start, "random", 1000, 1000, 10.0, streams=one)
    assert rnd["keys"] == pytest.approx(1000 * (1 - (1 - 1 / 1000) ** 1000))
    # an overwrite from the same stream retraces those keys: nothing new; a second thread's stream adds
    assert amplification.live_after(rnd, "random", 1000, 1000, 10.0, streams=one)["keys"] == pytest.approx(rnd["keys"])
    two = one + [(("seed", "worker", 1), 1000)]
    assert amplification.live_after(rnd, "random", 1000, 2000, 10.0, streams=two)["keys"] == pytest.approx(
        1000 * (1 - (1 - 1 / 1000) ** 2000))
    # overwrite on a full key space adds nothing
    assert amplification.live_after(full, "random", 1000, 5000, 10.0)["keys"] == pytest.approx(1000)
    # random deletes remove their share
    assert amplification.live_after(full, "delete", 1000, 1000, 10.0)["keys"] == pytest.approx(
        1000 * (1 - 1 / 1000) ** 1000)
    # unknown stays unknown
    assert amplification.live_after(amplification.live_start(False), "random", 10, 5, 1.0)["keys"] is None


def test_overwrite_retraces_fillrandoms_keys():
    """kvlab's random writes draw from (seed, stream, thread): an overwrite of the same seed writes the keys the
    fillrandom wrote, so the live set does not grow, as readrandom's found count shows."""
    require("lmdb")
    r = kvlab.run("lmdb", "fillrandom,overwrite,readrandom", num=20_000, seed=7, interval=0)
    fill, over, read = r
    assert over.amplification["live_keys"] == pytest.approx(fill.amplification["live_keys"])
    assert over.engine_stats["numbers"]["entries"] == fill.engine_stats["numbers"]["entries"]
    assert abs(read.found / read.ops * 20_000 - read.amplification["live_keys"]) < 0.03 * 20_000


# --- steady state ------------------------------------------------------------------------------------------------

def _noisy(values, sd=0.03, seed=1):
    rng = random.Random(seed)
    return [v * (1 + sd * rng.gauss(0, 1)) for v in values]


def test_mser5_finds_a_transient_that_starts_low():
    # 60 intervals: the first 10 rise from 40% to full throughput, then flat
    series = _noisy([1e6 * (1 - 0.6 * max(0.0, 1 - i / 10)) for i in range(60)])
    got = steady.mser5(series)
    assert got["method"] == "MSER-5" and got["batch"] == 5 and got["batches"] == 12
    assert 10 <= got["cut"] <= 30 and got["cut"] % 5 == 0, got   # the transient whole, within the first half
    assert got["p"] < steady.CUT_ALPHA
    # the statistic by hand, for the chosen d
    z = [sum(series[j * 5:(j + 1) * 5]) / 5 for j in range(12)]
    d = got["cut_batches"]
    tail = z[d:]
    mean = sum(tail) / len(tail)
    assert got["mser"][d] == pytest.approx(sum((v - mean) ** 2 for v in tail) / len(tail) ** 2)
    assert got["mser"][d] == min(got["mser"])
    assert len(got["mser"]) == 12 // 2 + 1   # only the first half is a candidate


def test_mser5_finds_none_in_a_flat_series():
    assert steady.mser5([1e6] * 60)["cut"] == 0
    # noise alone: MSER-5 by itself truncates a good share of stationary series; the t test on the batch means
    # it would drop keeps most of them whole (about 13% at p < 0.05 on normal noise, see docs/measurement.md)
    runs = [steady.mser5(_noisy([1e6] * 60, seed=seed)) for seed in range(200)]
    assert sum(r["mser_cut"] > 0 for r in runs) / len(runs) > 0.3
    assert sum(r["cut"] > 0 for r in runs) / len(runs) < 0.2
    assert steady.mser5(_noisy([1e6] * 60, seed=0))["cut"] == 0
    short = steady.mser5([1.0, 2.0, 3.0] * 5)
    assert short["cut"] == 0 and "needs at least 4" in short["note"]


def test_t_test_matches_scipy():
    scipy_stats = pytest.importorskip("scipy.stats")
    for t, df in ((0.3, 2), (2.1, 10), (4.0, 3), (1.0, 60), (8.0, 7)):
        assert steady.t_two_sided_p(t, df) == pytest.approx(2 * scipy_stats.t.sf(t, df), rel=1e-9)


def test_trend_warns_on_a_series_still_falling_and_not_on_a_flat_one():
    times = [0.5 + i for i in range(60)]
    falling = _noisy([1e6 * (1 - 0.006 * i) for i in range(60)])   # 18% down over the last half
    tr = steady.trend(falling, times)
    assert tr["steady"] is False and tr["batch"] == 5 and tr["p"] < 0.05 and tr["change"] < -0.1
    assert tr["slope_per_s"] == pytest.approx(-6000, rel=0.2)
    w = steady.not_steady_warning(tr)
    assert w.startswith("not at steady state: throughput still falls by ") and "Mann-Kendall p=" in w
    assert re.search(r"Sen's slope -[\d,]+\.\d ops/s per s", w)
    flat = steady.trend(_noisy([1e6] * 60), times)
    assert flat["steady"] is True and steady.not_steady_warning(flat) is None
    assert steady.trend([1.0] * 10)["steady"] is None     # 5 points in the last half: too few to tell


def test_auto_warmup_cuts_the_start_of_a_run_that_starts_cold():
    """RocksDB reading right after a fillrandom through a 1 MB memtable: dozens of level-0 files still being
    compacted make the first second's reads slow.  On a busy machine one run may not show it: up to 3 tries."""
    require("rocksdb")
    for attempt in range(3):
        r = kvlab.run("rocksdb", "fillrandom,readrandom", num=200_000, value_size=400, seed=attempt, duration=3,
                      interval=0.05, warmup="auto", write_buffer_size=1 << 20, compression="none")
        b = r[-1]
        w = b.warmup
        assert w["method"] == "MSER-5" and w["batch"] == 5 and "steady_state" in w
        if w["cut_intervals"]:
            break
    assert w["cut_intervals"] > 0 and w["excluded"], w
    # exact: the cut is an interval boundary; what it excluded is what those intervals did
    k = w["cut_intervals"]
    assert w["ops_excluded"] == sum(sum(iv["workers"]["ops"].values()) for iv in b.intervals[:k])
    # each thread's ops are cut too (its progress counter, read just after the counters: a few ops apart)
    assert abs(sum(b.per_thread_ops) - b.ops) <= max(100, b.ops * 1e-3)
    # from the workers' start; the intervals count from the first sample, taken as their threads were made
    assert 0 <= b.intervals[k]["t_start_s"] - w["seconds"] < 0.1
    # the histograms are read in the same pass but not at the same instant as the counters: a few ops apart
    assert abs(b.latency_us["count"] - b.ops) <= 100
    # every run phase gets its own (fillrandom is one here), as a fixed warm-up applies to each
    assert r[0].phase == "run" and r[0].warmup["method"] == "MSER-5"


def test_auto_warmup_spec_and_cli():
    with pytest.raises(errors.SpecError, match="needs interval > 0"):
        kvlab.model.spec.make_spec("lmdb", "readrandom", warmup="auto", interval=0)
    with pytest.raises(errors.SpecError, match="allowed: seconds, or 'auto'"):
        kvlab.model.spec.make_spec("lmdb", "readrandom", warmup="soon")
    assert kvlab.model.spec.make_spec("lmdb", "readrandom", warmup="AUTO").warmup == "auto"
    from kvlab.cli.main import build_parser
    from kvlab.cli.run import spec_from_args
    args = build_parser().parse_args(["run", "--engine", "lmdb", "--warmup", "auto"])
    assert spec_from_args(args).warmup == "auto"
    assert "--warmup auto" in spec_from_args(args).cli_command()
    r = kvlab.run("lmdb", "readrandom", num=5_000, seed=1, interval=0.05, warmup="auto")
    assert [b.phase for b in r] == ["load", "run"] and r[0].warmup is None and r[1].warmup["method"] == "MSER-5"
    assert "needs at least 4" in r[1].warmup["note"]    # a run this short has too few intervals to tell
