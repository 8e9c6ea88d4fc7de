"""A database remembers how it was made (issue 14, part 1).

The reported bug, with real processes: fillseq --sync on wiredtiger-btree, kill -9, then readseq
with use_existing_db and without --sync found 0 records (the reopen turned WiredTiger's log off,
which skips recovery and sets the table aside).  Every engine here: a reopen without sync finds
what a reopen with sync finds, on a copy of the same killed database."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

import kvlab
from kvlab import _native, engines, errors
from kvlab.execution.dbfiles import dbdir
from kvlab.model import dbformat

from .conftest import CONFORMANCE, require

FILL_NUM = 10_000_000


def _kill_mid_fill(name, db, settle=0.7):
    """A `kvlab run` child filling `db` with sync on, killed with SIGKILL once it has written."""
    child = subprocess.Popen(
        [sys.executable, "-m", "kvlab.cli", "run", "--engine", name, "--workload", "fillseq", "--num", str(FILL_NUM),
         "--sync", "--db", str(db), "--no-store", "--progress", "off", "--interval", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    marker = db / ".kvlab-db"
    # wait for the engine's own files: the marker's format record comes just before the open, but the
    # open can take a second more (WiredTiger 3.2.1's first open in a process calibrates its clock)
    while time.monotonic() < deadline and child.poll() is None:
        if marker.exists() and "format" in marker.read_text() and any(
                c.name not in (dbdir.MARKER, dbdir.MARKER + ".tmp", dbdir.LOCK) for c in db.iterdir()):
            break
        time.sleep(0.05)
    time.sleep(settle)
    assert child.poll() is None, f"the fill ended before the kill: {child.stderr.read().decode()[-2000:]}"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    _until_let_go(db)


def _until_let_go(db, timeout=10.0):
    """The killed command's trial worker goes with it a few ms later (it kills itself when its caller's end of
    the channel closes; 0.03-5.9 ms measured): wait until no process holds the database's lock, as a tool that
    copies a database must, so that nothing is written after the copy."""
    import fcntl
    fd = os.open(db / dbdir.LOCK, os.O_RDWR)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
                return
            except OSError:
                assert time.monotonic() < deadline, f"{db}: still locked {timeout:g} s after the kill"
                time.sleep(0.001)
    finally:
        os.close(fd)


def _readseq(name, db, **settings):
    r = kvlab.run(name, "readseq", num=FILL_NUM, reads=10**12, db=str(db), use_existing_db=True, keep_db=True,
                  interval=0, engine_stats=False, **settings)
    return r.by_workload("readseq")


@pytest.mark.parametrize("name", CONFORMANCE)
def test_killed_sync_fill_reopens_without_sync(name, tmp_path):
    require(name)
    db = tmp_path / "db"
    _kill_mid_fill(name, db)
    copy = tmp_path / "copy"
    shutil.copytree(db, copy, symlinks=True)
    if not dbformat.rules(engines.get(name)).recovers:
        # bdb-notxn: no log, and the killed process's lock is still in the environment (an open would hang)
        with pytest.raises(errors.EngineCorruption, match="not closed cleanly.*Allowed: a fresh database"):
            _readseq(name, db)
        return
    plain = _readseq(name, db)                  # the probe of the issue: no --sync on the reopen
    synced = _readseq(name, copy, sync=True)    # the reopen that always worked
    assert synced.found > 0, f"{name}: nothing was written before the kill"
    assert plain.found == synced.found, f"{name}: reopen without sync found {plain.found}, with sync {synced.found}"


def test_wiredtiger_log_off_reopen_would_lose_the_data(tmp_path):
    """The test above would have caught the bug: opening the killed database the old way (log off)
    finds nothing, while kvlab's reopen finds the records."""
    require("wiredtiger-btree")
    db = tmp_path / "db"
    _kill_mid_fill("wiredtiger-btree", db)
    old_way = tmp_path / "old"
    shutil.copytree(db, old_way)
    cfg = engines.get("wiredtiger-btree")
    with _native.Engine("wiredtiger", str(old_way), cfg.config({}, max_threads=2)) as e:
        assert e.scan(limit=1) == []
    assert _readseq("wiredtiger-btree", db).found > 0
    assert json.loads((db / ".kvlab-db").read_text())["format"]["log"] is True


@pytest.mark.parametrize("make", [False, True])
def test_use_existing_db_needs_a_database(tmp_path, make):
    require("lmdb")
    d = tmp_path / "db"
    if make:
        d.mkdir()
    with pytest.raises(errors.NoDatabase, match="no database to reuse; allowed:"):
        kvlab.run("lmdb", "readrandom", num=100, db=str(d), use_existing_db=True)
    assert d.exists() == make and (not make or os.listdir(d) == [])


def test_a_database_open_elsewhere_is_busy(tmp_path):
    require("lmdb")
    d = tmp_path / "db"
    kvlab.run("lmdb", "fillseq", num=1000, db=str(d), interval=0)
    handle = kvlab.start("lmdb", "readrandom", num=1000, duration=30, db=str(d), use_existing_db=True)
    try:
        deadline = time.monotonic() + 20
        while handle.progress is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(errors.EngineBusy, match="open in another process"):
            kvlab.run("lmdb", "readrandom", num=1000, db=str(d), use_existing_db=True)
    finally:
        handle.stop(timeout=10)
    # closed cleanly: it reopens, and no lock is left behind
    assert kvlab.run("lmdb", "readseq", num=1000, db=str(d), use_existing_db=True, interval=0)[0].found == 1000
    assert sorted(os.listdir(d)) == [".kvlab-db", "data.mdb", "lock.mdb"]


def test_use_existing_db_on_a_marker_only(tmp_path):
    """A directory kvlab marked but no engine ever wrote (its open failed) holds no database."""
    require("lmdb")
    d = tmp_path / "db"
    with pytest.raises(errors.SpecError):
        kvlab.run("lmdb", "fillseq", num=100, db=str(d), threads=0)
    d.mkdir(exist_ok=True)
    (d / ".kvlab-db").write_text(json.dumps({"engine": "lmdb", "key_encoding": "decimal-zero-padded"}))
    with pytest.raises(errors.NoDatabase, match="holds no lmdb database"):
        kvlab.run("lmdb", "readrandom", num=100, db=str(d), use_existing_db=True)


def test_wiredtiger_fixed_settings(tmp_path):
    require("wiredtiger-btree")
    d = tmp_path / "db"
    kvlab.run("wiredtiger-btree", "fillseq", num=2000, db=str(d), compression="snappy", interval=0)
    # unset: the database's own compression (the snappy extension is loaded, the table opens)
    b = kvlab.run("wiredtiger-btree", "readseq", num=2000, db=str(d), use_existing_db=True, interval=0)[0]
    assert b.found == 2000 and b.params["engine_config"]["compression"] == "snappy"
    # asked otherwise: the table keeps what it was made with, and the result says so
    b = kvlab.run("wiredtiger-btree", "readseq", num=2000, db=str(d), use_existing_db=True, compression="none",
                  block_size=8192, interval=0)[0]
    assert b.found == 2000 and b.params["engine_config"]["compression"] == "snappy"
    assert "block_size" not in b.params["engine_config"]
    assert any("made with compression='snappy'" in w and "asked for compression='none'" in w for w in b.warnings)
    assert any("made with block_size=unset" in w for w in b.warnings)


def test_wiredtiger_log_once_on_stays_on(tmp_path):
    """fillseq (log off) then fillsync (log on) in one run: from then on every open keeps the log."""
    require("wiredtiger-btree")
    d = tmp_path / "db"
    kvlab.run("wiredtiger-btree", "fillseq,fillsync", num=2000, db=str(d), interval=0)
    assert json.loads((d / ".kvlab-db").read_text())["format"]["log"] is True
    b = kvlab.run("wiredtiger-btree", "readseq", num=2000, db=str(d), use_existing_db=True, interval=0)[0]
    assert "log=(enabled=true)" in b.params["engine_config"]["options"]
    with pytest.raises(errors.DatabaseMismatch, match="disable_wal=true would open it with the log off"):
        kvlab.run("wiredtiger-btree", "readseq", num=2000, db=str(d), use_existing_db=True, disable_wal=True)
    with pytest.raises(errors.DatabaseMismatch, match=r"log=\(enabled=false\)"):
        kvlab.run("wiredtiger-btree", "readseq", num=2000, db=str(d), use_existing_db=True,
                  options="log=(enabled=false)")


def test_wiredtiger_log_found_by_its_files_for_an_old_marker(tmp_path):
    """A marker from before the format record: WiredTiger's log files say the log was on."""
    require("wiredtiger-btree")
    d = tmp_path / "db"
    kvlab.run("wiredtiger-btree", "fillseq", num=1000, db=str(d), sync=True, interval=0)
    m = json.loads((d / ".kvlab-db").read_text())
    del m["format"]
    (d / ".kvlab-db").write_text(json.dumps(m))
    b = kvlab.run("wiredtiger-btree", "readseq", num=1000, db=str(d), use_existing_db=True, interval=0)[0]
    assert b.found == 1000 and "log=(enabled=true)" in b.params["engine_config"]["options"]


def test_lsm_settings_remembered_and_changes_warned(tmp_path):
    require("rocksdb")
    d = tmp_path / "db"
    kvlab.run("rocksdb", "fillseq", num=2000, db=str(d), compression="zstd", block_size=8192, interval=0)
    b = kvlab.run("rocksdb", "readseq", num=2000, db=str(d), use_existing_db=True, interval=0)[0]
    assert b.found == 2000
    assert b.params["engine_config"]["compression"] == "zstd" and b.params["engine_config"]["block_size"] == 8192
    assert not any("was made with" in w for w in b.warnings)
    b = kvlab.run("rocksdb", "readseq", num=2000, db=str(d), use_existing_db=True, compression="none",
                  interval=0)[0]
    assert b.found == 2000 and any("made with compression='zstd'" in w for w in b.warnings)


def test_lmdb_map_size_remembered_sync_is_runtime(tmp_path):
    require("lmdb")
    d = tmp_path / "db"
    kvlab.run("lmdb", "fillseq", num=2000, db=str(d), map_size=1 << 26, sync=True, interval=0)
    fmt = json.loads((d / ".kvlab-db").read_text())["format"]
    assert fmt == {"version": 1, "map_size": 1 << 26}      # sync is the run's, not the database's
    b = kvlab.run("lmdb", "readseq", num=2000, db=str(d), use_existing_db=True, interval=0)[0]
    assert b.found == 2000 and b.params["engine_config"]["map_size"] == 1 << 26
    assert not b.params["engine_config"].get("sync")
