"""Engine faults become kvlab.errors exceptions and the database opens again afterwards: a full disk
(a real 3 MiB tmpfs, mounted here as root) for every engine, LMDB's map full in the middle of a
batch, a read-only file system.  Each fault runs in a child process, so a library that aborts or
panics the process shows as a failure here instead of taking the test runner down."""
import json
import os
import subprocess
import sys

import pytest

from kvlab import _native, errors
from kvlab.execution import native
from kvlab.model import engines

from .conftest import CONFORMANCE, require

WRITER = r"""
import json, os, sys
from kvlab import _native, errors
from kvlab.model import engines
name, path, mode = sys.argv[1:4]
cfg = engines.get(name)
try:
    db = _native.Engine(cfg.adapter, path, cfg.config({"sync": True}, max_threads=2))
except errors.KvlabError as exc:   # refused at open (BerkeleyDB sizes its regions up front)
    print(json.dumps({"written": 0, "error": type(exc).__name__, "message": str(exc), "at_open": True}))
    sys.exit(0)
out = {"written": 0}
try:
    if mode == "fill":
        v = os.urandom(4000)
        for i in range(100000):
            db.put(b"k%08d" % i, v)
            out["written"] = i + 1
    else:   # read-only file system: one write
        db.put(b"after", b"x")
        out["written"] = 1
except errors.KvlabError as exc:
    out.update(error=type(exc).__name__, message=str(exc))
try:
    db.close()
except errors.KvlabError as exc:
    out["close_error"] = type(exc).__name__
print(json.dumps(out))
"""

READER = r"""
import json, sys
from kvlab import _native
from kvlab.model import engines
name, path = sys.argv[1:3]
cfg = engines.get(name)
db = _native.Engine(cfg.adapter, path, cfg.config({"sync": True}, max_threads=2))
out = {"k0": db.get(b"k%08d" % 0) is not None, "keys": len(db.scan(b"", -1))}
try:
    db.close()
except Exception as exc:   # reported, and judged by the test
    out["close_error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def _child(code, *args):
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, f"the child died ({p.returncode}): {p.stderr[-1500:]}"
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "fs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _remount(mnt, opts):
    subprocess.run(["mount", "-o", f"remount,{opts}", str(mnt)], check=True, capture_output=True)


@pytest.mark.parametrize("name", [n for n in CONFORMANCE if n != "bdb-notxn"])
def test_disk_full_is_an_error_and_the_database_reopens(small_fs, name):
    cfg = require(name)
    facts = native.library_facts(cfg.adapter)
    if cfg.adapter == "rocksdb" and facts.get("assertions"):
        pytest.skip("Debian's librocksdb has assertions compiled in: a full disk aborts the process inside "
                    "RocksDB (WritableFileWriter::AssertFalseAndGetStatusForPrevError); a release build "
                    "(make engines) returns the IO error")
    db = small_fs / "db"
    db.mkdir()
    out = _child(WRITER, name, str(db), "fill")
    assert out.get("error") in ("EngineFull", "EngineIOError", "EngineCorruption"), out
    assert "No space left" in out["message"] or "panic" in out["message"], out
    if out["error"] == "EngineCorruption":   # WiredTiger panics on a full log: said, and the process is told
        assert "needs a new process" in out["message"]
    _remount(small_fs, "size=256m")
    back = _child(READER, name, str(db))
    if not out.get("at_open"):
        assert back["k0"] and back["keys"] >= 1, (out, back)
    # The file system is still full when the database reopens.  WiredTiger's LSM may then start a merge in the
    # background that hits ENOSPC, and its close panics (seen once in a full suite run under load).  That is an
    # error stated as such, never a crash, and the data was read back above; any other engine must close cleanly.
    if "close_error" in back:
        assert name == "wiredtiger-lsm" and "panic" in back["close_error"], back


@pytest.mark.parametrize("name", [n for n in CONFORMANCE if n != "bdb-notxn"])
def test_read_only_file_system_is_an_error_and_the_database_reopens(small_fs, name):
    """A database on a file system remounted read-only (root ignores a directory's mode bits): opening it
    for writing, or writing, is a kvlab error, not a crash; remounted read-write, it opens with its data."""
    cfg = require(name)
    # room for BerkeleyDB's regions, made in full at open, and WiredTiger's log: its file and two preallocated
    # ones of 100 MB each (with 256m the LSM's own files sometimes tipped the set-up write into ENOSPC)
    _remount(small_fs, "size=512m")
    db = small_fs / "db"
    db.mkdir()
    h = _native.Engine(cfg.adapter, str(db), cfg.config({"sync": True}, max_threads=2))
    h.put(b"k%08d" % 0, b"v")
    h.close()
    _remount(small_fs, "ro")
    p = subprocess.run([sys.executable, "-c", WRITER, name, str(db), "ro"], capture_output=True, text=True,
                       timeout=60)
    text = p.stdout + p.stderr
    assert p.returncode == 0, text[-1500:]
    assert '"error"' in p.stdout or '"written": 1' in p.stdout, text[-1500:]
    _remount(small_fs, "rw")
    assert _child(READER, name, str(db))["k0"]


def test_lmdb_map_full_in_the_middle_of_a_batch(tmp_path):
    require("lmdb")
    cfg = engines.get("lmdb")
    h = _native.Engine(cfg.adapter, str(tmp_path), cfg.config({"map_size": 1 << 20}, max_threads=2))
    h.put(b"committed", b"v")
    h.batch_begin()
    with pytest.raises(errors.EngineFull, match="MDB_MAP_FULL|map"):
        for i in range(10_000):
            h.put(b"k%08d" % i, os.urandom(1000))
        h.batch_commit()
    h.batch_abort()
    assert h.get(b"committed") == b"v" and h.get(b"k%08d" % 0) is None   # the batch left nothing
    h.put(b"after", b"ok")                                               # and the database goes on
    h.close()
    h = _native.Engine(cfg.adapter, str(tmp_path), cfg.config({"map_size": 1 << 20}, max_threads=2))
    assert h.get(b"after") == b"ok"
    h.close()
