"""db_bench parity (issue 38, item 5): readrandomwriterandom, updaterandom, multireadrandom and
fillseqdeterministic on real engines, --compaction_style reaching RocksDB's OPTIONS file, direct I/O honoured
where the engine has it and refused with a clear error where it has not."""
import json
import math

import pytest

import kvlab
from kvlab import _native, cli, errors
from kvlab.cli import dbbench

from .conftest import require

ENGINES = ("lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb", "bdb-notxn")


@pytest.fixture(params=ENGINES)
def engine(request):
    require(request.param)
    return request.param


def test_readrandomwriterandom_counts_reads_and_writes_apart(engine):
    r = kvlab.run(engine, "fillseq,readrandomwriterandom", num=4_000, reads=1_000, threads=2, readwritepercent=70,
                  seed=3, interval=0)
    b = r.by_workload("readrandomwriterandom")
    assert b.ops == 2 * 1_000 and b.per_thread_ops == [1_000, 1_000]
    # db_bench's pattern: of each 100 ops, the first readwritepercent are gets, the rest puts
    assert (b.latency_by_op["read"]["count"], b.latency_by_op["write"]["count"]) == (1_400, 600)
    assert b.found == 1_400 and b.not_found == 0   # only the reads have an outcome; every key is there
    assert b.params["read_percent"] == 70


def test_readrandomwriterandom_default_read_share(engine):
    r = kvlab.run(engine, "fillseq,readrandomwriterandom", num=2_000, reads=1_050, seed=4, interval=0)
    b = r.by_workload("readrandomwriterandom")
    reads, writes = b.latency_by_op["read"]["count"], b.latency_by_op["write"]["count"]
    assert reads + writes == b.ops == 1_050
    assert abs(reads / b.ops - 0.9) < 0.01    # db_bench's default 90; the last 50 ops are all reads


def test_updaterandom_reads_then_writes_new_values(engine, tmp_path):
    db = str(tmp_path / "db")
    kvlab.run(engine, "fillseq", num=2_000, db=db, seed=5, interval=0)
    before = _values(engine, db, 2_000)
    r = kvlab.run(engine, "updaterandom", num=2_000, reads=500, db=db, use_existing_db=True, seed=6, interval=0)
    b = r.by_workload("updaterandom")
    assert b.ops == 500 and b.found == 500 and b.not_found == 0
    assert set(b.latency_by_op) == {"rmw"} and b.latency_by_op["rmw"]["count"] == 500
    after = _values(engine, db, 2_000)
    assert all(v is not None for v in after)
    changed = sum(a != o for a, o in zip(after, before))
    # 500 draws of 2,000 keys hit about 2000 * (1 - (1 - 1/2000)^500) = 442 distinct keys, each rewritten
    assert 380 <= changed <= 500, changed


def _values(engine, db, num):
    from kvlab import engines
    cfg = engines.get(engine)
    h = _native.Engine(cfg.adapter, db, cfg.config({}, max_threads=2))
    try:
        return [h.get(_native.make_key(i, 16)) for i in range(num)]
    finally:
        h.close()


def test_multireadrandom_finds_what_gets_find(engine):
    """Its keys are readrandom's (the same read stream), `batch` a call: through RocksDB's MultiGet or a loop of
    gets, it must find exactly what readrandom's gets find, after a fillrandom that left some keys out."""
    r = kvlab.run(engine, "fillrandom,readrandom,multireadrandom", num=3_000, reads=1_000, threads=2, batch=16,
                  seed=7, interval=0)
    gets, multi = r.by_workload("readrandom"), r.by_workload("multireadrandom")
    assert multi.ops == 2_000 and multi.found + multi.not_found == 2_000
    assert multi.found == gets.found
    assert 0.55 < multi.found / multi.ops < 0.72   # fillrandom's live share, 1 - 1/e
    assert multi.latency_unit == "batch"
    assert multi.latency_by_op["read"]["count"] == 2 * math.ceil(1_000 / 16)   # one entry per batch
    has = _native.batched_reads()
    from kvlab import engines
    adapter = engines.get(engine).adapter
    if adapter in has:
        assert multi.params["batched_read"] == has[adapter]
    else:
        assert multi.params["batched_read"].startswith(f"none: {adapter} has no batched read")


def test_multireadrandom_uses_rocksdbs_multiget():
    require("rocksdb")
    assert _native.batched_reads()["rocksdb"].startswith("rocksdb_multi_get")
    r = kvlab.run("rocksdb", "fillseq,multireadrandom", num=2_000, reads=300, batch=7, seed=8, interval=0)
    b = r.by_workload("multireadrandom")
    assert b.ops == 300 and b.found == 300
    assert b.params["batched_read"].startswith("rocksdb_multi_get")


def test_fillseqdeterministic_one_thread_then_compacted(engine):
    r = kvlab.run(engine, "fillseqdeterministic,readrandom", num=3_000, reads=1_000, threads=2, seed=9,
                  interval=0)
    fill, read = r.by_workload("fillseqdeterministic"), r.by_workload("readrandom")
    assert fill.ops == 3_000 and fill.threads == 1 and fill.per_thread_ops == [3_000]
    assert set(fill.latency_by_op) == {"write"}   # the compaction is in the phase's time, not an op
    assert read.found == read.ops == 2 * 1_000


def _files_by_level(stats_text):
    """{level: files} from rocksdb.stats' compaction table ("  L0      2/0    1.54 MB ...")."""
    rows = [ln.split() for ln in stats_text.splitlines() if ln.strip()[:1] == "L" and ln.strip()[1:2].isdigit()]
    return {int(r[0][1:]): int(r[1].split("/")[0]) for r in rows}


def test_fillseqdeterministic_leaves_rocksdb_one_level():
    """With memtables of 256 KiB a fill flushes about 27 files, which fillseq leaves wherever the background
    compactions stood (level 0 among them); fillseqdeterministic leaves every file in one level below 0."""
    require("rocksdb")
    r = kvlab.run("rocksdb", "fillseqdeterministic", num=60_000, seed=10, interval=0, write_buffer_size=256 << 10)
    levels = _files_by_level(r[0].engine_stats["text"])
    used = {lv: n for lv, n in levels.items() if n}
    assert len(used) == 1 and 0 not in used and sum(used.values()) > 1, levels


def test_new_loops_are_native_and_registered():
    from kvlab.model import workloads
    for name in ("readrandomwriterandom", "updaterandom", "multireadrandom", "fillseqdeterministic"):
        assert workloads.get(name).native == name and name in _native.WORKLOADS
    assert _native.WORKLOADS["readrandomwriterandom"].several
    assert not _native.WORKLOADS["readrandom"].several


# --- kvlab dbbench's flags ------------------------------------------------------------------------------------

def test_dbbench_benchmarks_and_compaction_style_reach_rocksdbs_options_file(tmp_path, capsys):
    require("rocksdb")
    out = tmp_path / "o.json"
    argv = ["--benchmarks=fillseq,readrandomwriterandom,updaterandom,multireadrandom", "--num=3000", "--reads=500",
            "--readwritepercent=60", "--batch_size=10", "--compaction_style=1", "--seed=11"]
    assert cli.main(["dbbench", "--engine", "rocksdb", "--no-store", "--json", str(out), *argv]) == 0
    text = capsys.readouterr().out
    assert "readrandomwriterandom : " in text and "( reads:300 writes:200 total:500 found:300)" in text
    assert "( updates:500 found:500)" in text
    records = {r["workload"]: r for r in json.loads(out.read_text())}
    for r in records.values():   # RocksDB's own account: the OPTIONS file it wrote
        assert r["provenance"]["engine_config_reported"]["CFOptions.compaction_style"] == "kCompactionStyleUniversal"
        assert "compaction_style=kCompactionStyleUniversal" in r["params"]["engine_config"]["options"]
    assert records["multireadrandom"]["params"]["batch"] == 10


@pytest.mark.parametrize("style,name", [(0, "kCompactionStyleLevel"), (2, "kCompactionStyleFIFO")])
def test_dbbench_compaction_style_names(style, name):
    p = dbbench.plan("rocksdb", [f"--compaction_style={style}"])
    assert f"compaction_style={name}" in p.spec.engine_settings["options"]


def test_dbbench_compaction_style_out_of_range():
    with pytest.raises(errors.SpecError, match="compaction_style=3.*0 \\(level\\), 1 \\(universal\\), 2 \\(fifo\\)"):
        dbbench.plan("rocksdb", ["--compaction_style=3"])


@pytest.mark.parametrize("engine_name", ["lmdb", "leveldb", "bdb", "wiredtiger"])
def test_dbbench_compaction_style_refused_where_it_means_nothing(engine_name):
    with pytest.raises(errors.SpecError) as e:
        dbbench.plan(engine_name, ["--compaction_style=1"])
    msg = str(e.value)
    assert "--compaction_style=1 changes what is measured" in msg and "honoured by RocksDB" in msg


@pytest.mark.parametrize("flag", ["use_direct_reads", "use_direct_io_for_flush_and_compaction"])
@pytest.mark.parametrize("engine_name", ["lmdb", "leveldb", "bdb", "bdb-notxn"])
def test_dbbench_direct_io_refused_where_the_engine_has_none(engine_name, flag):
    with pytest.raises(errors.SpecError) as e:
        dbbench.plan(engine_name, [f"--{flag}=1"])
    msg = str(e.value)
    assert f"--{flag}=1 changes what is measured" in msg
    assert "RocksDB" in msg and "WiredTiger (in its own options: direct_io=[data])" in msg
    if engine_name.startswith("bdb"):
        assert "DB_DIRECT_DB" in msg


def test_dbbench_defaults_of_measured_flags_only_warn():
    p = dbbench.plan("lmdb", ["--compaction_style=0", "--use_direct_reads=0", "--num=10"])
    assert len(p.warnings) == 1 and "--compaction_style (RocksDB only)" in p.warnings[0]
    assert "options" not in p.spec.engine_settings


def test_dbbench_direct_io_on_rocksdb(tmp_path):
    require("rocksdb")
    p = dbbench.plan("rocksdb", ["--use_direct_reads=1", "--use_direct_io_for_flush_and_compaction=1"])
    opts = p.spec.engine_settings["options"]
    assert "use_direct_reads=true" in opts and "use_direct_io_for_flush_and_compaction=true" in opts
    r = kvlab.run("rocksdb", "fillseq,readrandom", num=2_000, reads=500, options=opts, seed=12, interval=0,
                  db=str(tmp_path / "db"))
    rep = r[1].provenance["engine_config_reported"]
    assert rep["DBOptions.use_direct_reads"] == "true"
    assert rep["DBOptions.use_direct_io_for_flush_and_compaction"] == "true"
    assert r[1].found == r[1].ops


@pytest.mark.parametrize("use_lsm", ["0", "1"])
def test_dbbench_direct_io_on_wiredtiger(tmp_path, use_lsm):
    require("wiredtiger-lsm" if use_lsm == "1" else "wiredtiger-btree")
    p = dbbench.plan("wiredtiger", [f"--use_lsm={use_lsm}", "--use_direct_reads=1",
                                    "--use_direct_io_for_flush_and_compaction=1"])
    assert p.spec.engine_settings["options"] == "direct_io=[data]"   # both flags, one WiredTiger setting
    assert not p.warnings
    r = kvlab.run(p.spec.engine, "fillseq,readrandom", num=2_000, reads=500, options="direct_io=[data]", seed=13,
                  interval=0, db=str(tmp_path / "db"))
    assert r[1].found == r[1].ops


def test_kvlab_run_takes_the_new_workloads(tmp_path):
    require("lmdb")
    out = tmp_path / "o.json"
    assert cli.main(["run", "--engine", "lmdb", "--workload", "readrandomwriterandom,updaterandom,multireadrandom",
                     "--num", "2000", "--reads", "200", "--readwritepercent", "50", "--batch", "4", "--no-store",
                     "--quiet", "--json", str(out), "--seed", "14"]) == 0
    records = {r["workload"]: r for r in json.loads(out.read_text()) if r["phase"] == "run"}
    rw = records["readrandomwriterandom"]
    assert (rw["latency_by_op"]["read"]["count"], rw["latency_by_op"]["write"]["count"]) == (100, 100)
    assert records["updaterandom"]["ops"] == 200 and records["multireadrandom"]["found"] == 200


def test_readrandomwriterandom_warmup_cut_counts_reads_only():
    """A warm-up cut leaves readrandomwriterandom's outcomes to its reads: its writes are not counted missing."""
    require("lmdb")
    r = kvlab.run("lmdb", "fillseq,readrandomwriterandom", num=2_000, duration=1.0, warmup=0.3, interval=0.1,
                  seed=15)
    b = r.by_workload("readrandomwriterandom")
    assert b.warmup and b.warmup["ops_excluded"] > 0
    # every key is there: a missing read would be a write counted as one (the sampler reads the found count, the
    # progress and the histograms at the cut a few ops apart, so allow those few)
    reads = b.latency_by_op["read"]["count"]
    assert b.found + b.not_found == reads and b.not_found <= reads * 1e-3
    assert abs(b.ops - b.latency_by_op["read"]["count"] - b.latency_by_op["write"]["count"]) <= b.ops * 1e-3
    assert abs(b.latency_by_op["read"]["count"] / b.ops - 0.9) < 0.01
