"""Traces (docs/traces.md): a run's operations recorded (kvlab run --record-trace, kvlab.run(record_trace=...)),
replayed on every engine with the same operations in each thread's order (checked by recording the replay), the
header's provenance, damaged files refused with a clear error, the importers of RocksDB's trace format and the
cache traces' CSV on files written here, and a recorded-speed replay that keeps the recorded pace."""
import json
import struct

import numpy as np
import pytest

import kvlab
from kvlab import SpecError
from kvlab.cli.main import main
from kvlab.execution import native
from kvlab.execution.traces import fileformat, replay
from kvlab.execution.traces.fileformat import TraceError

from .conftest import CONFORMANCE, require


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A trace recorded on LMDB: a fillseq load, then YCSB-A (reads and updates) on 2 threads."""
    require("lmdb")
    path = tmp_path_factory.mktemp("trace") / "ycsb-a.kvtrace"
    result = kvlab.run("lmdb", "ycsb-a", num=2000, reads=1500, threads=2, seed=7, interval=0, record_trace=str(path))
    return path, result


def _by_phase(trace):
    return [{t: r for t, r in p.threads.items()} for p in trace.phases]


def test_the_header_says_where_the_trace_came_from(recorded):
    path, result = recorded
    t = fileformat.read(path)
    h = t.header
    assert h["format"] == "kvlab-trace" and h["version"] == fileformat.FORMAT_VERSION
    assert h["kvlab"] == kvlab.__version__ and h["engine"] == "lmdb" and h["workload"] == "ycsb-a"
    assert h["spec"] == json.loads(json.dumps(result.spec.to_dict(), default=str))
    assert h["ops"][:2] == ["read", "write"]
    assert [p.info["name"] for p in t.phases] == ["fillseq", "ycsb-a"]
    assert [p.info["kind"] for p in t.phases] == ["load", "run"]
    assert [len(p.threads) for p in t.phases] == [1, 2]
    assert [p.ops for p in t.phases] == [b.ops for b in result]
    assert [sum(b.per_thread_ops) for b in result] == [b.ops for b in result]   # a mix's txns are not ops
    for b in result:
        assert b.params["record_trace"] == str(path)
    load = t.phases[0].threads[0]   # fillseq's batches of 1000: each put flagged, the last of each its commit
    assert result[0].params["batch"] == 1000 and len(load) == 2000
    assert (load["flags"] & native.load().TRACE_BATCHED).all()
    commits = np.flatnonzero(load["flags"] & native.load().TRACE_COMMIT)
    assert commits.tolist() == [999, 1999]
    run = t.phases[1]
    assert not any(r["flags"].any() for r in run.threads.values())   # YCSB-A's ops each on its own
    ops = set(np.concatenate([r["op"] for r in run.threads.values()]).tolist())
    assert ops == {h["ops"].index("read"), h["ops"].index("write")}
    for r in run.threads.values():   # each thread's starts in order, from the phase's start
        assert (np.diff(r["start_ns"]) >= 0).all() and r["start_ns"][0] >= 0
        assert (r["intended_ns"] == -1).all()   # a closed loop has no intended starts


@pytest.mark.parametrize("engine", CONFORMANCE)
def test_a_trace_replays_on_every_engine_in_each_threads_order(recorded, engine, tmp_path):
    require(engine)
    path, result = recorded
    again = tmp_path / "replayed.kvtrace"
    got = kvlab.replay(str(path), engine=engine, speed="max", interval=0, record_trace=str(again))
    assert [b.ops for b in got] == [b.ops for b in result]
    assert [b.phase for b in got] == ["load", "run"]
    for b in got:
        assert b.workload == "replay"
        assert b.params["replay"]["file"] == str(path) and b.params["replay"]["header"]["engine"] == "lmdb"
        assert b.provenance["spec"]["replay"]["path"] == str(path)
    first, second = fileformat.read(path), fileformat.read(again)
    assert second.header["replay_of"]["path"] == str(path)
    for a, b in zip(_by_phase(first), _by_phase(second)):
        assert a.keys() == b.keys()
        for t in a:
            for column in ("key", "op", "size", "flags"):   # the batches replayed as recorded
                assert (a[t][column] == b[t][column]).all(), (engine, t, column)


def test_kvlab_replay_on_the_command_line(recorded, tmp_path):
    path, result = recorded
    out = tmp_path / "replay.json"
    assert main(["replay", str(path), "--engine", "lmdb", "--speed", "4x", "--threads", "1", "--interval", "0",
                 "--json", str(out), "--no-store", "-q"]) == 0
    records = json.loads(out.read_text())
    got = records["benchmarks"] if isinstance(records, dict) else records
    assert [(b["workload"], b["phase"], b["ops"], b["threads"]) for b in got] == \
        [("replay", "load", result[0].ops, 1), ("replay", "run", result[1].ops, 1)]
    assert got[1]["params"]["replay"]["speed"] == "4x" and got[1]["params"]["replay"]["threads_recorded"] == 2
    assert main(["replay", str(path), "--speed", "fast"]) == 2


def test_fewer_replay_threads_keep_each_recorded_threads_order(recorded, tmp_path):
    path, _ = recorded
    again = tmp_path / "one.kvtrace"
    kvlab.replay(str(path), engine="lmdb", speed="max", threads=1, interval=0, record_trace=str(again))
    first, second = fileformat.read(path), fileformat.read(again)
    merged = second.phases[1].threads[0]
    assert len(merged) == first.phases[1].ops
    merged_keys = merged["key"].tolist()
    for r in first.phases[1].threads.values():   # each recorded thread's ops a subsequence of the one thread's
        it = iter(merged_keys)
        assert all(k in it for k in r["key"].tolist())


def test_more_replay_threads_keep_each_keys_order(recorded):
    path, _ = recorded
    t = fileformat.read(path)
    phases = replay.phases(t, 0.0, 5)
    kept = replay.phases(t, 0.0, None)[0]
    assert kept.describe["batches"] == "replayed as recorded" and kept.threads[0]["flags"].any()
    split = phases[0]   # the load's one thread split by key onto 5: no batch survives
    assert split.describe["batches"].startswith("split by key") and not any(a["flags"].any() for a in split.threads)
    run = phases[1]
    assert run.describe["batches"] == "none recorded"
    assert len(run.threads) == 5 and run.ops == t.phases[1].ops
    for r, ops in t.phases[1].threads.items():   # recorded thread r's ops go to replay threads r, r + 2, r + 4
        mine = [run.threads[i] for i in range(r, 5, 2)]
        assert sum(len(a) for a in mine) == len(ops)
        for k in set(ops["key"].tolist()):   # each key's ops on one of them, in their recorded order
            holding = [a for a in mine if (a["key"] == k).any()]
            assert len(holding) == 1
            assert holding[0]["size"][holding[0]["key"] == k].tolist() == ops["size"][ops["key"] == k].tolist()


def test_damaged_files_are_refused_saying_why(recorded, tmp_path):
    path, _ = recorded
    data = path.read_bytes()
    cut = tmp_path / "cut.kvtrace"
    cut.write_bytes(data[:len(data) - 40])
    with pytest.raises(TraceError, match="cut short"):
        fileformat.read(cut)
    magic = tmp_path / "magic.kvtrace"
    magic.write_bytes(b"NOTATRCE" + data[8:])
    with pytest.raises(TraceError, match="not a kvlab trace"):
        fileformat.read(magic)
    with pytest.raises(TraceError, match="none of the formats"):
        replay.detect(magic)
    version = tmp_path / "version.kvtrace"
    version.write_bytes(data[:8] + struct.pack("<I", 99) + data[12:])
    with pytest.raises(TraceError, match="format version 99"):
        fileformat.read(version)
    header = tmp_path / "header.kvtrace"
    header.write_bytes(data[:30])
    with pytest.raises(TraceError, match="cut short in its header"):
        fileformat.read(header)
    assert main(["replay", str(cut), "--engine", "lmdb", "--no-store", "-q"]) == 2


def test_a_thread_that_fills_its_buffer_writes_blocks_as_it_goes(tmp_path):
    require("lmdb")
    path = tmp_path / "long.kvtrace"
    per_thread = 70_000   # more than a buffer (kv_trace.h's KV_TRACE_BUF_RECS, 65,536): a block mid-run, one at the end
    got = kvlab.run("lmdb", "readrandom", num=1000, reads=per_thread, threads=2, seed=5, interval=0,
                    record_trace=str(path))
    t = fileformat.read(path)
    run = t.phases[1]
    assert {k: len(r) for k, r in run.threads.items()} == {0: per_thread, 1: per_thread} == \
        dict(enumerate(got[1].per_thread_ops))
    for r in run.threads.values():
        assert (np.diff(r["start_ns"]) >= 0).all() and (r["key"] < 1000).all()
    data = path.read_bytes()
    assert data.count(struct.pack("<I", fileformat.native.load().TRACE_BLOCK_TAG)) >= 5   # load's, 2 x 2 run's


def test_what_cannot_be_recorded_or_replayed_is_refused_before_anything_runs(tmp_path):
    require("lmdb")
    with pytest.raises(SpecError, match="cannot be recorded"):
        kvlab.run("lmdb", "fillseq,readseq", num=1000, record_trace=str(tmp_path / "t"))
    assert not (tmp_path / "t").exists()
    with pytest.raises(SpecError, match="records one trial"):
        kvlab.run("lmdb", "readrandom", num=1000, repeat=2, record_trace=str(tmp_path / "t"))
    with pytest.raises(SpecError, match="replays a trace"):
        kvlab.run("lmdb", "replay", num=1000)
    for bad in ("fast", "0x", "-2x", "x"):
        with pytest.raises(SpecError, match="allowed: recorded, max, or Nx"):
            replay.parse_speed(bad)
    assert replay.parse_speed("2x") == 2.0 and replay.parse_speed("max") == 0.0


# --- the importers, on files written here in their formats ---------------------------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _lp(b: bytes) -> bytes:
    return _varint(len(b)) + b


def _rec(ts: int, kind: int, payload: bytes) -> bytes:
    return struct.pack("<QBI", ts, kind, len(payload)) + payload


def rocksdb_trace(path):
    """A RocksDB query trace (trace version 0.2, as db_bench --trace_file writes it): a get, a write batch (put,
    delete, merge), a seek, a two-key MultiGet, a block-cache record, the end."""
    head = b"feedcafedeadbeef\tTrace Version: 0.2\tRocksDB Version: 7.8\tFormat: Timestamp OpType Payload\n"
    bitmap = struct.pack("<Q", 0b11)
    batch = struct.pack("<QI", 1, 3) + b"\x01" + _lp(b"key2") + _lp(b"v" * 50) + b"\x00" + _lp(b"key1") \
        + b"\x02" + _lp(b"key3") + _lp(b"+1")
    keys = _lp(b"key1") + _lp(b"key2")
    data = (_rec(1000, 1, head)
            + _rec(1000, 4, bitmap + struct.pack("<I", 0) + _lp(b"key1"))
            + _rec(1100, 3, struct.pack("<Q", 1) + _lp(batch))
            + _rec(1300, 5, bitmap + struct.pack("<I", 0) + _lp(b"key0"))
            + _rec(1400, 13, struct.pack("<QI", 0b111, 2) + _lp(struct.pack("<II", 0, 0)) + _lp(keys))
            + _rec(1450, 7, b"block")
            + _rec(1500, 2, b""))
    path.write_bytes(data)
    return path


def test_a_rocksdb_trace_is_imported_and_replayed(tmp_path):
    require("lmdb")
    path = rocksdb_trace(tmp_path / "db_bench.trace")
    assert replay.detect(path) == "rocksdb"
    t = replay.load(path)
    names = t.header["ops"]
    recs = t.phases[0].threads[0]
    assert [names[o] for o in recs["op"]] == ["read", "write", "delete", "seek", "read", "read"]
    assert recs["key"].tolist() == [1, 2, 1, 0, 1, 2]   # key0 < key1 < key2, numbered in byte order
    assert recs["size"].tolist() == [0, 50, 0, 0, 0, 0]
    assert recs["start_ns"].tolist() == [0, 100_000, 100_000, 300_000, 400_000, 400_000]
    assert t.header["skipped"] == {"merge": 1, "block_index": 1}
    assert t.header["source"]["trace_version"] == "0.2" and t.header["source"]["ended"]
    got = kvlab.replay(str(path), engine="lmdb", speed="max", interval=0)
    assert [b.ops for b in got] == [6]
    assert any("2 operations kvlab has no counterpart for, skipped (1 merge, 1 block_index)" in w
               for w in got[0].warnings)
    cut = tmp_path / "cut.trace"
    cut.write_bytes(path.read_bytes()[:-3])
    with pytest.raises(TraceError, match="cut short"):
        replay.load(cut, "rocksdb")
    with pytest.raises(TraceError, match="not a RocksDB trace"):
        replay.load(fileformat.__file__, "rocksdb")


def test_a_cache_trace_csv_is_imported_and_replayed(tmp_path):
    require("lmdb")
    path = tmp_path / "cluster.csv"
    path.write_text("timestamp,key,key_size,value_size,client_id,operation,ttl\n"
                    "0,a,1,0,c1,get,0\n"
                    "1,b,1,100,c2,set,3600\n"
                    "1.5,a,1,10,c1,incr,0\n"
                    "2,c,1,0,c1,delete,0\n"
                    "2.5,b,1,0,c2,gets,0\n"
                    "3,x,1,0,c2,flush_all,0\n")
    assert replay.detect(path) == "csv"
    t = replay.load(path)
    names = t.header["ops"]
    c1, c2 = t.phases[0].threads[0], t.phases[0].threads[1]
    assert [names[o] for o in c1["op"]] == ["read", "rmw", "delete"] and c1["key"].tolist() == [0, 0, 2]
    assert [names[o] for o in c2["op"]] == ["write", "read"] and c2["size"].tolist() == [100, 0]
    assert c1["start_ns"].tolist() == [0, 1_500_000_000, 2_000_000_000]
    assert t.header["skipped"] == {"flush_all": 1}
    got = kvlab.replay(str(path), engine="lmdb", speed="max", interval=0)
    assert got[0].ops == 5 and got[0].threads == 2
    assert any("1 flush_all" in w for w in got[0].warnings)
    bad = tmp_path / "bad.csv"
    bad.write_text("0,a,1,zero,c1,get,0\n")
    with pytest.raises(TraceError, match="line 1"):
        replay.load(bad)


# --- speed -----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def paced(tmp_path_factory):
    """An open-loop recording: 2 clients at 2,000 transactions/s in all, 300 each (about 0.3 s)."""
    require("lmdb")
    path = tmp_path_factory.mktemp("paced") / "open.kvtrace"
    kvlab.run("lmdb", "ycsb-b", num=1000, reads=300, threads=2, target_rate=2000, seed=3, interval=0,
              record_trace=str(path))
    return path


def _span_s(trace) -> float:
    return max(int(r["intended_ns"].max()) for r in trace.phases[-1].threads.values()) / 1e9


def test_recorded_speed_starts_each_op_at_its_recorded_time(paced, tmp_path):
    first = fileformat.read(paced)
    for r in first.phases[-1].threads.values():
        assert (r["intended_ns"] >= 0).all() and (np.diff(r["intended_ns"]) > 0).all()
        assert (r["start_ns"] >= r["intended_ns"]).all()   # an op starts at its intended time or after
    again = tmp_path / "again.kvtrace"
    got = kvlab.replay(str(paced), engine="lmdb", interval=0, record_trace=str(again))
    run = got[-1]
    assert {"response", "lag"} <= set(run.latency_by_op)   # latency from the intended start, its lag apart
    assert run.latency_us == run.latency_by_op["response"]
    # a paced op never starts before its time: the phase takes at least the recording's span (a bound no busy
    # machine breaks)
    assert run.seconds >= 0.9 * _span_s(first)
    second = fileformat.read(again)
    for t, r in first.phases[-1].threads.items():   # the same schedule, up to each thread's start
        a, b = r["intended_ns"], second.phases[-1].threads[t]["intended_ns"]
        assert np.abs((a - a[0]) - (b - b[0])).max() < 2_000
    twice = kvlab.replay(str(paced), engine="lmdb", speed="2x", interval=0)
    assert twice[-1].seconds >= 0.45 * _span_s(first)


def test_recorded_speed_keeps_the_recorded_pace(paced):
    # timing tier: on a quiet machine a 0.3 s schedule is kept within 0.3 s (a busy one may fall behind)
    first = fileformat.read(paced)
    got = kvlab.replay(str(paced), engine="lmdb", interval=0)
    assert got[-1].seconds <= _span_s(first) + 0.3


def test_dbbench_and_ycsb_record_traces_too(tmp_path):
    require("lmdb")
    bench = tmp_path / "dbbench.kvtrace"
    assert main(["dbbench", "--engine", "lmdb", "--no-store", "-q", "--record-trace", str(bench),
                 "--benchmarks=fillrandom,readrandom", "--num=2000", "--reads=500", "--threads=2", "--seed=3"]) == 0
    t = fileformat.read(bench)
    assert [p.info["name"] for p in t.phases] == ["fillrandom", "readrandom"]
    assert [p.ops for p in t.phases] == [2000, 1000] and len(t.phases[1].threads) == 2
    props = tmp_path / "workloadc"
    props.write_text("recordcount=1000\noperationcount=800\nreadproportion=1\nrequestdistribution=uniform\n"
                     "workload=site.ycsb.workloads.CoreWorkload\n")
    ycsb = tmp_path / "ycsb.kvtrace"
    assert main(["ycsb", "-P", str(props), "--engine", "lmdb", "--no-store", "-q", "--progress", "off",
                 "--record-trace", str(ycsb)]) == 0
    t = fileformat.read(ycsb)
    assert [p.info["kind"] for p in t.phases] == ["load", "run"] and [p.ops for p in t.phases] == [1000, 800]
    assert t.header["engine"] == "lmdb" and t.header["spec"]["record_trace"] == str(ycsb)
