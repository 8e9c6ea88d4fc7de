"""Database directories: kvlab writes into, clears and removes only what it made.

A directory kvlab creates or adopts (an empty one) gets a marker file,
`.kvlab-db`, recording the engine and key encoding, and, written before the engine
first creates its files, how the database was made (`format`: the settings that
decide its on-disk format or recovery, kvlab.model.dbformat).  Reopening with
use_existing_db goes through `reconcile`, which opens it that way or refuses; a
missing or empty directory is an error there, never a new database.  A non-empty directory
without the marker is refused; a marked directory may be cleared for a fresh
run (its contents only: the directory itself stays, and nothing outside it is
touched).  A temporary directory kvlab creates for a run is removed afterwards.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import errors
from ..model import dbformat, engines

MARKER = ".kvlab-db"
LOCK = ".kvlab-db.lock"     # held (flock) while kvlab has the engine open; removed at a clean close


@dataclass
class DbDir:
    path: Path
    temporary: bool      # created by kvlab for this run only; removed by cleanup()
    existed: bool        # held a database of this engine before the run
    lock_fd: int | None = None

    def acquire(self, engine: str) -> bool:
        """Hold the directory's open-lock; True if the last process to open it ended without
        closing it (killed).  Another process holding it is an EngineBusy error."""
        if self.lock_fd is not None:
            return False
        lock = self.path / LOCK
        unclean = lock.exists()
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise errors.EngineBusy(f"--db {self.path}: the {engine} database is open in another process (or another "
                                    f"run of this one): {LOCK} is locked; allowed: wait for it to end, or another "
                                    "--db") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.lock_fd = fd
        return unclean

    def release(self):
        """After a clean close: the lock file goes, so the next open knows the close was clean."""
        if self.lock_fd is not None:
            try:
                (self.path / LOCK).unlink()
            except OSError:
                pass
            os.close(self.lock_fd)
            self.lock_fd = None

    def cleanup(self):
        self.release()
        if self.temporary and (self.path / MARKER).exists():
            shutil.rmtree(self.path, ignore_errors=True)


def read_marker(path: Path) -> dict | None:
    m = Path(path) / MARKER
    if not m.exists():
        return None
    try:
        return json.loads(m.read_text())
    except (OSError, ValueError) as exc:
        raise errors.UnsafeDirectory(f"{path}: the kvlab marker {MARKER} is unreadable ({exc}); "
                                     "kvlab will not touch this directory") from None


def _write_marker(path: Path, engine: str, key_encoding: str, format: dict | None = None,
                  created: str | None = None):
    tmp = path / (MARKER + ".tmp")
    data = {"engine": engine, "key_encoding": key_encoding,
            "created": created or time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if format is not None:
        data["format"] = format
    with open(tmp, "w") as f:
        f.write(json.dumps(data) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path / MARKER)
    _fsync_dir(path)


def _fsync_dir(path: Path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def reconcile(where: "DbDir", cfg, settings: dict) -> tuple[dict, list]:
    """The settings to open the engine with in `where`, and warnings for the result.  The first
    open of a database records how it is made (before the engine writes a file); every later one
    (a reopen with use_existing_db, or the next workload of the same run) is reconciled with that
    record: fixed settings are kept or the open refused, a recovery log that has been on stays on.
    The record is updated (log switched on) before the engine opens."""
    marker = read_marker(where.path) or {}
    recorded = marker.get("format")
    if where.acquire(cfg.name) and where.existed and not dbformat.rules(cfg).recovers:
        where.release()
        raise errors.EngineCorruption(
            f"--db {where.path}: this {cfg.name} database was not closed cleanly (the process that had it open "
            f"ended without closing it, e.g. killed). {cfg.name} keeps no log, so nothing can recover it, and its "
            "environment may still hold the dead process's locks (opening it could hang). "
            "Allowed: a fresh database (run without use_existing_db)")
    if recorded is None and not where.existed:
        out, notes = dict(settings), []
    else:
        out, notes = dbformat.reconcile(cfg, recorded, settings, where.path)
    new = dbformat.record(cfg, out, where.path if where.existed else None, recorded)
    if recorded is not None:
        new = {**recorded, **new}
    if new != recorded:
        _write_marker(where.path, marker.get("engine", cfg.name), marker.get("key_encoding"), new,
                      marker.get("created"))
    return out, notes


def _clear_contents(path: Path):
    for child in path.iterdir():
        if child.name in (MARKER, LOCK):
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def check(db: str | None, use_existing: bool = False) -> None:
    """Before anything is written anywhere: --db names a directory kvlab can use (an existing
    directory it may write in, or a new one under a writable parent), and use_existing_db has one."""
    if db is None:
        if use_existing:
            raise errors.NoDatabase("use_existing_db needs --db DIR, the database to reopen (without --db kvlab "
                                    "makes a new temporary database, so there would be nothing to reuse)")
        return
    path = Path(db).expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise errors.UnsafeDirectory(f"--db {db}: {path} exists and is not a directory; allowed: a new or empty "
                                     "directory, or one a kvlab run made")
    if use_existing and not path.exists():
        raise errors.NoDatabase(f"use_existing_db: --db {db} does not exist, so there is no database to reuse; "
                                "allowed: a directory holding a kvlab database, or run without use_existing_db")
    check_can_make(path, f"--db {db}", errors.UnsafeDirectory)


def check_can_make(path: Path, what: str, error=errors.UnsafeDirectory) -> None:
    """`path` (a directory, or a file's folder) exists and is writable, or can be made below its nearest
    existing ancestor: else `error`, saying which place is in the way and why."""
    path = Path(path).expanduser().absolute()
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise error(f"{what}: {probe} is a file, so nothing can be made below it")
    if not os.access(probe, os.W_OK | os.X_OK):
        where = "it" if probe == path else f"its parent {probe}"
        raise error(f"{what}: {where} is not writable ({_why_not_writable(probe)}); allowed: a place you can "
                    "write in")


def check_output_file(path, flag: str) -> Path:
    """An output file a command can write: not a directory, its folder writable or makeable below a writable
    one, an existing file writable.  The path as given: the writer uses the same one."""
    target = Path(path)
    if target.is_dir():
        raise errors.ResultsError(f"{flag} {path} is a directory; allowed: a file name")
    check_can_make(target.absolute().parent, f"{flag} {path}", errors.ResultsError)
    if target.exists() and not os.access(target, os.W_OK):
        raise errors.ResultsError(f"{flag} {path} exists and is not writable")
    return target


def _why_not_writable(path: Path) -> str:
    try:
        st = os.statvfs(path)
        if st.f_flag & os.ST_RDONLY:
            return "on a read-only file system"
    except OSError:
        pass
    return "permission denied"


def prepare(db: str | None, engine: str, key_encoding: str, use_existing: bool) -> DbDir:
    """Return the directory to open the engine in, creating or clearing it as allowed."""
    try:
        return _prepare(db, engine, key_encoding, use_existing)
    except OSError as exc:
        raise errors.UnsafeDirectory(f"--db {db or exc.filename}: cannot prepare the database directory "
                                     f"({exc.strerror or exc}); allowed: a directory you can write in") from None


def _prepare(db: str | None, engine: str, key_encoding: str, use_existing: bool) -> DbDir:
    if db is None:
        base = os.environ.get("KVLAB_TMPDIR") or None
        path = Path(tempfile.mkdtemp(prefix=f"kvlab-{engine}-", dir=base))
        _write_marker(path, engine, key_encoding)
        return DbDir(path, temporary=True, existed=False)
    path = Path(db).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise errors.UnsafeDirectory(f"--db {path} exists and is not a directory")
    if use_existing and not path.exists():
        raise errors.NoDatabase(f"use_existing_db: --db {path} does not exist, so there is no database to "
                                "reuse; allowed: a directory holding a kvlab database, or run without "
                                "use_existing_db to make a new one")
    if not path.exists():
        path.mkdir(parents=True)
        _write_marker(path, engine, key_encoding)
        return DbDir(path, temporary=False, existed=False)
    marker = read_marker(path)
    if marker is None:
        if use_existing and not any(path.iterdir()):
            raise errors.NoDatabase(f"use_existing_db: --db {path} is empty, so there is no database to reuse; "
                                    "allowed: a directory holding a kvlab database, or run without "
                                    "use_existing_db to make a new one")
        if any(path.iterdir()):
            raise errors.UnsafeDirectory(
                f"--db {path} is not empty and was not created by kvlab (no {MARKER} marker); "
                "kvlab will not write into it. Give a new or empty directory.")
        _write_marker(path, engine, key_encoding)
        return DbDir(path, temporary=False, existed=False)
    if marker.get("engine") != engine:
        if use_existing:
            raise errors.DatabaseMismatch(
                f"--db {path} holds a {marker.get('engine')} database, not {engine}; "
                f"use_existing_db needs the same engine; allowed: engine {marker.get('engine')!r}")
    if marker.get("key_encoding") not in (None, key_encoding):
        raise errors.UnsafeDirectory(f"--db {path} was written with key encoding "
                                     f"{marker.get('key_encoding')}, kvlab now uses {key_encoding}")
    has_data = any(c.name not in (MARKER, MARKER + ".tmp", LOCK) for c in path.iterdir())
    if use_existing:
        if not has_data and engines.get(engine).stores_data:
            raise errors.NoDatabase(f"use_existing_db: --db {path} holds no {engine} database (only kvlab's "
                                    "marker: it was never written); allowed: a directory holding a kvlab "
                                    "database, or run without use_existing_db to make a new one")
        return DbDir(path, temporary=False, existed=has_data)
    _clear_contents(path)
    _write_marker(path, engine, key_encoding)
    return DbDir(path, temporary=False, existed=False)


def size_on_disk(path: Path) -> int:
    """Allocated bytes under path (st_blocks), so sparse LMDB maps count what they use; kvlab's
    own marker and lock are not the database's."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            if f in (MARKER, LOCK) and os.path.samefile(root, path):
                continue
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total
