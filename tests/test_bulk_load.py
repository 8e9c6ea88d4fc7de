"""Bulk loads (load="bulk": each engine's bulk path, kv_engine.h's bulk_* calls) and resumed loads, on the real
engines: every record there once and in order, the result saying which load ran, a load killed by SIGKILL
resumed from what it committed, and the refusals before anything is written."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

import kvlab
from kvlab import engines, errors
from kvlab.execution import native

from .conftest import CONFORMANCE, require

BULK = tuple(n for n in CONFORMANCE if engines.get(n).adapter in ("lmdb", "rocksdb", "wiredtiger", "bdb", "mdbx"))


def _records(engine: str, path) -> list:
    from kvlab import _native
    cfg = engines.get(engine)
    e = _native.Engine(native.adapter_name(cfg), str(path), cfg.config({}, max_threads=2))
    try:
        return [k for k, _ in e.scan(b"")]
    finally:
        e.close()


def _keys(n: int) -> list:
    from kvlab import _native
    return [_native.make_key(i) for i in range(n)]


@pytest.mark.parametrize("engine", BULK)
def test_bulk_load_holds_every_record_once_and_says_so(engine, tmp_path):
    require(engine)
    db = tmp_path / "db"
    r = kvlab.run(engine, "readrandom", num=25_000, reads=2_000, value_size=64, load="bulk", db=str(db),
                  keep_db=True, interval=0, engine_counters=True)   # WiredTiger's counters, which say how it loaded
    load, read = r.benchmarks
    assert load.phase == "load" and load.ops == 25_000
    assert load.params["load"] == "bulk" and load.params["native_loop"] == "bulkload"
    # what the adapter says of its bulk path, asked where it is loaded: a trial's worker (the session loads no engine)
    from kvlab.execution.worker import spawn
    bulk = spawn.call("kvlab.execution.run.loads:bulk_loads_of", (engine,)).value
    assert load.params["load_method"] == bulk[engines.get(engine).native_name]
    assert read.found == 2_000
    assert _records(engine, db) == _keys(25_000)
    if engines.get(engine).adapter == "wiredtiger":   # its bulk cursor, not the ordered-insert fallback
        assert load.engine_stats["numbers"]["cursor: cursor bulk loaded cursor insert calls"] == 25_000


def test_batched_load_is_the_default_and_says_so(tmp_path):
    r = kvlab.run("lmdb", "readrandom", num=5_000, reads=100, interval=0)
    assert r.benchmarks[0].params["load"] == "batched" and r.benchmarks[0].params["native_loop"] == "fillseq"
    assert "batches of 1000" in r.benchmarks[0].params["load_method"]


def _allocated(db) -> int:
    """Bytes allocated under `db` now; a file the engine removes while it is counted (RocksDB's ingested
    kvlab-bulk.sst) counts nothing."""
    total = 0
    for f in (db.rglob("*") if db.exists() else ()):
        try:
            total += f.stat().st_blocks * 512 if f.is_file() else 0
        except FileNotFoundError:
            pass
    return total


def _kill_midway(cmd, db, at_bytes: int, timeout: float = 60.0):
    """Start `cmd`, SIGKILL it once the database folder has at_bytes allocated (or it ends by itself); allocated,
    not length: a sparse file's length says nothing of what was written."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        size = _allocated(db)
        if size >= at_bytes:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    proc.wait()
    return proc.returncode


@pytest.mark.parametrize("engine,load", [("lmdb", "bulk"), ("rocksdb", "bulk"), ("lmdb", "batched"),
                                         ("wiredtiger-btree", "bulk")])
def test_killed_load_resumes_and_holds_every_record_once(engine, load, tmp_path):
    """A load killed with SIGKILL midway (`kvlab run` in a process of its own), resumed (here in-process: the same
    runner the CLI's --resume calls), holds every record once, in order.  WiredTiger's bulk cursor writes its
    records when it closes at the load's end, so a killed one leaves none behind (the object recovers empty)
    and the resumed load starts from record 0; the others resume midway."""
    require(engine)
    db = tmp_path / "db"
    num, value = 1_500_000, 100
    batch = 50_000 if load == "bulk" else 1000
    cmd = [sys.executable, "-m", "kvlab.cli", "run", "--engine", engine, "--workload", "fillseq", "--num", str(num),
           "--value-size", str(value), "--batch", str(batch), "--load", load, "--db", str(db), "--no-store",
           "--quiet", "--interval", "0"]
    rc = _kill_midway(cmd, db, at_bytes=num * (16 + value) // 3)
    assert rc == -signal.SIGKILL, "the load ended before it could be killed: give it more records"
    params = dict(num=num, value_size=value, batch=batch, load=load, db=str(db), keep_db=True, resume=True, interval=0)
    wt_bulk = engine.startswith("wiredtiger") and load == "bulk"
    try:
        b = kvlab.run(engine, "fillseq", **params).benchmarks[0]
        first = b.params["first_key"]
        assert b.ops == num - first
    except errors.SpecError as exc:   # the kill landed after the bulk cursor's close had written every record
        assert wt_bulk and f"holds all {num:,} records" in str(exc), exc
        first = num
    assert (first == 0 or first == num) if wt_bulk else (0 < first < num)
    assert _records(engine, db) == _keys(num)
    with pytest.raises(errors.SpecError, match=f"holds all {num:,} records of the load already"):
        kvlab.run(engine, "fillseq", **params)


def test_wiredtiger_resumes_into_a_table_with_records_without_a_bulk_cursor(tmp_path):
    """An object that holds records cannot take a bulk cursor: the resumed chunks are ordered-insert
    transactions, and every record is there once."""
    require("wiredtiger-btree")
    db = tmp_path / "db"
    kvlab.run("wiredtiger-btree", "fillseq", num=30_000, db=str(db), keep_db=True, interval=0)
    r = kvlab.run("wiredtiger-btree", "fillseq", num=70_000, load="bulk", db=str(db), keep_db=True, resume=True,
                  interval=0, engine_counters=True)
    b = r.benchmarks[0]
    assert b.params["first_key"] == 30_000 and b.ops == 40_000
    from kvlab.cli.output import format_line
    assert format_line(b).endswith("[bulk load, resumed at record 30,000]")
    assert b.engine_stats["numbers"]["cursor: cursor bulk loaded cursor insert calls"] == 0
    assert _records("wiredtiger-btree", db) == _keys(70_000)


def test_resume_refuses_a_database_that_is_not_a_prefix(tmp_path):
    db = tmp_path / "db"
    kvlab.run("lmdb", "fillrandom", num=20_000, db=str(db), keep_db=True, interval=0)
    with pytest.raises(errors.SpecError, match="not the prefix an ordered one-thread load leaves"):
        kvlab.run("lmdb", "fillseq", num=20_000, db=str(db), keep_db=True, resume=True, interval=0)


@pytest.mark.parametrize("params,message", [
    (dict(engine="leveldb", load="bulk"), "leveldb has no bulk load path; allowed: load='batched', or load='bulk' on"),
    (dict(workload="ycsb-a", load="bulk", num=1000), "hashed keys"),
    (dict(workload="fillseq", load="bulk", threads=2), "on one thread"),
    (dict(workload="fillbatch", resume=True, db="x", threads=2), "fillbatch with threads=2 cannot"),
    (dict(load="fast"), "load='fast' is unknown; allowed: batched, bulk"),
    (dict(resume=True), "give db"),
])
def test_load_refusals_come_before_anything_is_written(params, message, tmp_path):
    if params.get("engine") == "leveldb":
        require("leveldb")
    params = {"engine": "lmdb", "workload": "fillseq,readrandom", "num": 1000, **params}
    before = set(os.listdir(tmp_path))
    with pytest.raises(errors.SpecError, match=re.escape(message)):
        kvlab.run(params.pop("engine"), params.pop("workload"), interval=0, **params)
    assert set(os.listdir(tmp_path)) == before


def test_cli_load_flags(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "kvlab.cli", "run", "--load", "fast"], capture_output=True, text=True)
    assert bad.returncode == 2 and "batched" in bad.stderr and "bulk" in bad.stderr
    no_db = subprocess.run([sys.executable, "-m", "kvlab.cli", "run", "--resume"], capture_output=True, text=True)
    assert no_db.returncode == 2 and "--resume needs --db DIR" in no_db.stderr
