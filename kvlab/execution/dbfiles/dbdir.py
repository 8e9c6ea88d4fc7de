"""Database directories: kvlab writes into, clears and removes only what it made.

A directory kvlab creates or adopts (an empty one) gets a marker file,
`.kvlab-db`, recording the engine and key encoding, and, written before the engine
first creates its files, how the database was made (`format`: the settings that
decide its on-disk format or recovery, kvlab.model.dbformat), and how far its load got
(`load`).  Reopening with use_existing_db goes through `reconcile`, which opens it that
way or refuses; a missing or empty directory is an error there, never a new database.
A non-empty directory without the marker is refused; a marked directory may be cleared
for a fresh run of the same engine configuration (its contents only: the directory
itself stays, and nothing outside it is touched); another configuration's database
only with overwrite.  A temporary directory kvlab creates for a run is removed afterwards.

The lock comes first: `prepare` takes the directory's lock (`.kvlab-db.lock`, flock)
before it reads the marker, clears or writes anything, and the run holds it until it
ends, so a refused command leaves every byte as it was.  The lock file says whether the
engine is open (`open`) or only held (`held`); a lock file left saying `open` by a
process that died is an unclean close (the next open recovers, or refuses an engine
that keeps no log).
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ... import _signals as signals
from ... import engines, errors
from ...model import dbformat

MARKER = ".kvlab-db"
LOCK = ".kvlab-db.lock"     # flock held for the whole run; removed at a clean end
# the marker's load record of a database made or cleared for a run, until a fill says how far it got
NOT_LOADED = {"complete": False, "by": None, "unit": "records", "written": 0, "of": 0}
TEMP_PREFIX = "kvlab-"      # kvlab-<engine>-XXXX: a run's temporary database (kvlab clean finds the orphans)
KVLAB_FILES = (MARKER, MARKER + ".tmp", LOCK)


def _lock_state(text: str) -> str:
    """'open', 'held' or '' from a lock file's text ("PID STATE"); a bare PID is the older form, written
    only while the engine was open."""
    parts = text.split()
    if not parts:
        return ""
    return parts[1] if len(parts) > 1 else "open"


@dataclass
class DbDir:
    path: Path
    temporary: bool      # created by kvlab for this run only; removed by cleanup()
    existed: bool        # held a database of this engine before the run
    lock_fd: int | None = None
    unclean: bool = False   # the last process to open the engine here ended without closing it
    owner: int | None = None   # the process the lock file names (None: this one); a trial's worker names its caller

    def acquire(self, engine: str) -> bool:
        """Hold the directory's lock (before anything in it is read, cleared or written); True if the last
        process to open the engine here ended without closing it (killed).  Another process holding it is
        an EngineBusy error, and nothing has been touched."""
        if self.lock_fd is not None:
            return self.unclean
        lock = self.path / LOCK
        while True:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                _lock_or_wait_for_a_dead_holder(fd, lock)
            except OSError:
                os.close(fd)
                held = _marker_engine(self.path) or engine   # the holder's engine, not the one asked for
                raise errors.EngineBusy(
                    f"--db {self.path}: the {held} database is open in another process (or another run of this "
                    f"one): {LOCK} is locked{_holder(lock)}; nothing in it was touched; allowed: wait for it to "
                    "end, or another --db") from None
            try:   # the holder before us may have removed the file as we opened it: lock the one at the path
                same = os.fstat(fd).st_ino == os.stat(lock).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        previous = os.pread(fd, 256, 0).decode(errors="replace")
        self.unclean = _lock_state(previous) == "open"
        self.lock_fd = fd
        self._state("open" if self.unclean else "held")   # an unclean close stays recorded until a clean one
        return self.unclean

    def _state(self, state: str):
        if self.lock_fd is not None:
            os.ftruncate(self.lock_fd, 0)
            os.pwrite(self.lock_fd, f"{self.owner or os.getpid()} {state}\n".encode(), 0)

    def engine_opening(self):
        """The engine is about to open: a death from here on is an unclean close."""
        self._state("open")

    def engine_closed(self):
        """The engine closed cleanly (or never opened)."""
        self.unclean = False
        self._state("held")

    def release(self):
        """The run is over: the lock file goes unless it records an unclean close, and the lock is let go."""
        if self.lock_fd is not None:
            state = _lock_state(os.pread(self.lock_fd, 256, 0).decode(errors="replace"))
            if state != "open":
                try:
                    (self.path / LOCK).unlink()
                except OSError:
                    pass
            os.close(self.lock_fd)
            self.lock_fd = None

    def cleanup(self):
        """A temporary directory is removed while its lock is still held (kvlab clean never mistakes a
        finishing run's directory for an orphan); then the lock goes."""
        if self.temporary and (self.path / MARKER).exists():
            (self.path / MARKER).unlink()   # first: without it, the directory is nobody's orphan
            shutil.rmtree(self.path, ignore_errors=True)
        self.release()


HOLDER_GONE_WAIT_S = 10.0   # how long a lock whose named holder is gone may take to be let go


def _lock_or_wait_for_a_dead_holder(fd: int, lock: Path) -> None:
    """flock the lock; where another holds it but the process the lock file names is gone (a killed run whose
    trial's worker is still ending: it dies with its caller, and a large mapping takes a moment to tear down),
    wait for it up to HOLDER_GONE_WAIT_S.  OSError: held by a live run."""
    deadline = time.monotonic() + HOLDER_GONE_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            if _holder_alive(lock) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def _holder_alive(lock: Path) -> bool:
    try:
        pid = int(lock.read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def lock_state(lock: Path) -> str:
    """'open', 'held' or '' from a lock file (kvlab.execution.dbfiles.leftovers)."""
    try:
        return _lock_state(Path(lock).read_text())
    except OSError:
        return ""


def _holder(lock: Path) -> str:
    try:
        pid = lock.read_text().split()[0]
    except (OSError, IndexError):
        return ""
    return f" by process {pid}"


def _marker_engine(path: Path) -> str | None:
    try:
        return (read_marker(path) or {}).get("engine")
    except errors.KvlabError:   # a marker being written: the engine asked for names it
        return None


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
                  created: str | None = None, **more):
    data = {"engine": engine, "key_encoding": key_encoding,
            "created": created or time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    if format is not None:
        data["format"] = format
    data.update({k: v for k, v in more.items() if v is not None})
    _write_marker_data(path, data)


def _write_marker_data(path: Path, data: dict):
    tmp = path / (MARKER + ".tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps(data) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path / MARKER)
    _fsync_dir(path)


def update_marker(path: Path, **fields):
    """Merge `fields` into the marker of a directory this run holds the lock of."""
    data = read_marker(path) or {}
    data.update(fields)
    _write_marker_data(Path(path), data)


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
    if where.unclean and where.existed and not dbformat.rules(cfg).recovers:
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
        update_marker(where.path, format=new)
    return out, notes


def _clear_contents(path: Path) -> list:
    """Everything in the directory but kvlab's own files removed; returns [(name, bytes)] of what was."""
    removed = []
    for child in path.iterdir():
        if child.name in KVLAB_FILES:
            continue
        removed.append((child.name + ("/" if child.is_dir() and not child.is_symlink() else ""), _size(child)))
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    return removed


def _size(p: Path) -> int:
    try:
        if p.is_dir() and not p.is_symlink():
            return sum(f.lstat().st_size for f in p.rglob("*") if not f.is_dir())
        return p.lstat().st_size
    except OSError:
        return 0


def cleared_text(path, removed: list, most: int = 8) -> str:
    """'--db X: a fresh run removed what it held: data.mdb, lock.mdb, notes.txt (3 entries, 1.2 MiB)'."""
    names = [n for n, _ in removed]
    shown = ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
    total = sum(b for _, b in removed)
    return (f"--db {path}: a fresh run removed what it held: {shown} ({len(names)} "
            f"entr{'y' if len(names) == 1 else 'ies'}, {total / 1048576:.1f} MiB)")


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
    probe = nearest_existing(path)
    if not probe.is_dir():
        raise error(f"{what}: {probe} is a file, so nothing can be made below it")
    if not os.access(probe, os.W_OK | os.X_OK):
        where = "it" if probe == path else f"its parent {probe}"
        raise error(f"{what}: {where} is not writable ({_why_not_writable(probe)}); allowed: a place you can "
                    "write in")


def nearest_existing(path: Path) -> Path:
    """`path` (absolute) or its nearest ancestor that exists."""
    while not path.exists():
        path = path.parent
    return path


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


def prepare(db: str | None, engine: str, key_encoding: str, use_existing: bool, overwrite: bool = False,
            holding: DbDir | None = None) -> DbDir:
    """Return the directory to open the engine in, locked, created or cleared as allowed.  `holding`: the same
    directory, still locked by this run's previous trial (its lock goes on)."""
    try:
        return _prepare(db, engine, key_encoding, use_existing, overwrite, holding)
    except OSError as exc:
        raise errors.UnsafeDirectory(f"--db {db or exc.filename}: cannot prepare the database directory "
                                     f"({exc.strerror or exc}); allowed: a directory you can write in") from None


def _prepare(db, engine, key_encoding, use_existing, overwrite, holding=None) -> DbDir:
    if db is None:
        return _temporary(engine, key_encoding)
    path = Path(db).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise errors.UnsafeDirectory(f"--db {path} exists and is not a directory")
    if use_existing and not path.exists():
        raise errors.NoDatabase(f"use_existing_db: --db {path} does not exist, so there is no database to "
                                "reuse; allowed: a directory holding a kvlab database, or run without "
                                "use_existing_db to make a new one")
    path.mkdir(parents=True, exist_ok=True)
    _refuse_foreign(path, use_existing)   # read-only: a directory kvlab did not make gets no lock file either
    where = DbDir(path, temporary=False, existed=False)
    if holding is not None and holding.path == path:
        where.lock_fd, holding.lock_fd = holding.lock_fd, None
    with signals.held():   # a signal between the lock and its keeping would leak it
        where.acquire(engine)
    try:
        _refuse_foreign(path, use_existing)   # as it is now that nobody else can change it
        return _adopt(where, engine, key_encoding, use_existing, overwrite)
    except BaseException:
        where.release()
        raise


def _temporary(engine, key_encoding) -> DbDir:
    from .jobdir import temporary_base
    base = temporary_base()
    # an engine of your own is named by its path: its file's name goes into the folder's
    path = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{Path(engine).name}-", dir=base))
    where = DbDir(path, temporary=True, existed=False)
    try:
        with signals.held():
            where.acquire(engine)
            _write_marker(path, engine, key_encoding, temporary=True, pid=os.getpid())
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        where.release()
        raise
    return where


def _refuse_foreign(path: Path, use_existing: bool):
    """No marker: an empty directory (kvlab's lock apart) is adopted, anything else refused untouched."""
    if (path / MARKER).exists():
        return
    other = [c.name for c in path.iterdir() if c.name not in KVLAB_FILES]
    if use_existing and not other:
        raise errors.NoDatabase(f"use_existing_db: --db {path} is empty, so there is no database to reuse; "
                                "allowed: a directory holding a kvlab database, or run without "
                                "use_existing_db to make a new one")
    if other:
        raise errors.UnsafeDirectory(
            f"--db {path} is not empty and was not created by kvlab (no {MARKER} marker); "
            "kvlab will not write into it. Give a new or empty directory.")


def _adopt(where: DbDir, engine, key_encoding, use_existing, overwrite) -> DbDir:
    """Under the lock: the marked (or empty) directory made ready for this run."""
    path = where.path
    marker = read_marker(path)
    if marker is None:
        _write_marker(path, engine, key_encoding, load=NOT_LOADED)
        return where
    has_data = any(c.name not in KVLAB_FILES for c in path.iterdir())
    if marker.get("engine") != engine:
        if use_existing:
            raise errors.DatabaseMismatch(
                f"--db {path} holds a {marker.get('engine')} database, not {engine}; "
                f"use_existing_db needs the same engine; allowed: engine {marker.get('engine')!r}")
        if has_data and not overwrite:
            raise errors.DatabaseMismatch(
                f"--db {path} holds another engine configuration's database: {describe(path, marker)}. "
                f"A fresh {engine} run would delete it; nothing was touched. Allowed: --overwrite "
                "(overwrite=True) to replace it, another --db, or --engine " + str(marker.get("engine")))
    if marker.get("key_encoding") not in (None, key_encoding):
        raise errors.UnsafeDirectory(f"--db {path} was written with key encoding "
                                     f"{marker.get('key_encoding')}, kvlab now uses {key_encoding}")
    if use_existing:
        if not has_data and engines.get(engine).stores_data:
            raise errors.NoDatabase(f"use_existing_db: --db {path} holds no {engine} database (only kvlab's "
                                    "marker: it was never written); allowed: a directory holding a kvlab "
                                    "database, or run without use_existing_db to make a new one")
        where.existed = has_data
        return where
    with signals.held():   # the marker says "being cleared" first: a half-cleared database never looks whole
        _write_marker(path, engine, key_encoding, load={"complete": False, "by": "clearing", "unit": "records",
                                                        "written": None, "of": 0})
        removed = _clear_contents(path)
        if removed:   # said once: files a user put in a kvlab-made --db go too
            print(f"kvlab: {cleared_text(path, removed)}", file=sys.stderr, flush=True)
        where.unclean = False   # the database that was not closed is gone
        where.engine_closed()
        _write_marker(path, engine, key_encoding, load=NOT_LOADED)
    return where


def describe(path: Path, marker: dict | None = None) -> str:
    """What a marked directory holds, in words: engine, records, size, when it was made."""
    marker = marker if marker is not None else (read_marker(path) or {})
    parts = [f"a {marker.get('engine', 'unknown')} database"]
    load = marker.get("load") or {}
    if load.get("records") is not None:
        done = "" if load.get("complete") else f" of {load.get('of', 0):,} (its load was cut)"
        parts.append(f"{load['records']:,} records{done}")
    elif load and not load.get("complete", True):
        parts.append(f"its {load['by']} was cut" if load.get("by") else "never loaded")
    parts.append(f"{size_on_disk(path) / 2**20:,.1f} MiB")
    if marker.get("created"):
        parts.append(f"made {marker['created']}")
    return ", ".join(parts)


def disk_usage(path: Path) -> tuple[int, int]:
    """(live bytes, preallocated bytes) of the database under path; kvlab's own marker and lock are not the
    database's.  A file's live bytes are its allocated blocks (st_blocks x 512, what `du` counts) up to its
    length rounded up to whole blocks (st_blksize): a sparse file (LMDB's map) counts the blocks it uses, and
    blocks allocated past a file's end (fallocate's KEEP_SIZE: RocksDB's WAL and MANIFEST, given their
    preallocation size up front and trimmed at close) are the preallocated bytes, counted apart."""
    live = preallocated = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            if f in KVLAB_FILES and os.path.samefile(root, path):
                continue
            try:
                st = os.lstat(os.path.join(root, f))
            except OSError:
                continue
            allocated = st.st_blocks * 512
            block = st.st_blksize or 4096
            length = -(-st.st_size // block) * block
            live += min(allocated, length)
            preallocated += max(allocated - length, 0)
    return live, preallocated


def size_on_disk(path: Path) -> int:
    """The database's live bytes under path (disk_usage): what `du` says once the engine is closed, without the
    space an engine preallocated and has not written."""
    return disk_usage(path)[0]
