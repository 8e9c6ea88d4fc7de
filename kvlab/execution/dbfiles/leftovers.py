"""What killed runs left behind, and its removal (`kvlab clean`).

A run's temporary database (`kvlab-<engine>-XXXX` under $KVLAB_TMPDIR or the temporary folder, its marker saying
`temporary`) is removed by the run as it ends, whatever signal ends it; only a SIGKILL (or a crash of the
interpreter) leaves one.  It is an orphan when nobody holds its lock: the owner takes the lock before it writes
the marker and removes the directory before it lets the lock go, so a live run's directory is never taken for
one.  A `--db` directory is the user's: `clean` never removes it, only a lock file nobody holds that records no
open engine; one that records an open engine stays, since it is how the next open knows to recover.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import dbdir
from .jobdir import JOB_LOCK


@dataclass(frozen=True)
class Leftover:
    path: Path
    what: str          # "temporary database" or "stale lock"
    engine: str
    size: int
    pid: str

    def describe(self) -> str:
        return (f"{self.what} {self.path} ({self.engine}, {self.size / 2**20:,.1f} MiB, left by process "
                f"{self.pid or '?'}, which is gone)")


def temp_bases() -> list:
    bases = [os.environ.get("KVLAB_TMPDIR"), tempfile.gettempdir()]
    out = []
    for b in bases:
        if b and Path(b).is_dir() and Path(b).resolve() not in out:
            out.append(Path(b).resolve())
    return out


def held(lock: Path) -> bool:
    """Whether a live process holds the lock (False when there is no lock file)."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)   # closing lets go of a lock taken here
    return False


def _mine(path: Path) -> bool:
    """Another user's runs are theirs to clean (a shared temporary folder)."""
    try:
        return path.stat().st_uid == os.getuid()
    except OSError:
        return False


def _pid(path: Path, marker: dict) -> str:
    try:
        return (path / dbdir.LOCK).read_text().split()[0]
    except (OSError, IndexError):
        return str(marker.get("pid") or "")


def orphans() -> list:
    """Temporary databases whose run is gone."""
    out = []
    for base in temp_bases():
        try:
            candidates = sorted(base.glob(dbdir.TEMP_PREFIX + "*"))
        except OSError:
            continue
        for path in candidates:
            try:
                marker = dbdir.read_marker(path) if path.is_dir() else None
            except Exception:   # an unreadable marker: not kvlab's to judge
                continue
            if not marker or not marker.get("temporary") or not _mine(path) or held(path / dbdir.LOCK):
                continue
            out.append(Leftover(path, "temporary database", str(marker.get("engine")), dbdir.size_on_disk(path),
                                _pid(path, marker)))
        out += _job_folders(base)
    return out


def _job_folders(base: Path) -> list:
    """Folders of killed jobs (dbfiles.jobdir): a job lock nobody holds."""
    out = []
    try:
        candidates = sorted(p for p in base.glob("kvlab-*") if (p / JOB_LOCK).is_file())
    except OSError:
        return out
    for path in candidates:
        if not _mine(path) or held(path / JOB_LOCK):
            continue
        try:
            pid = (path / JOB_LOCK).read_text().split()[0]
        except (OSError, IndexError):
            pid = ""
        out.append(Leftover(path, "job folder", path.name.split("-")[1], dbdir.size_on_disk(path), pid))
    return out


def stale_lock(db: Path) -> Leftover | None:
    """A --db directory's lock file that nobody holds, if any."""
    lock = Path(db) / dbdir.LOCK
    if not lock.exists() or held(lock):
        return None
    marker = dbdir.read_marker(Path(db)) or {}
    return Leftover(lock, "stale lock", str(marker.get("engine")), 0, _pid(Path(db), marker))


def remove(left: Leftover) -> str:
    """Remove what a killed run left; returns what was done, in words."""
    if left.what in ("temporary database", "job folder"):
        lock = left.path / (dbdir.LOCK if left.what == "temporary database" else JOB_LOCK)
        if held(lock):   # looked at again just before: never a live run's
            return f"kept {left.path}: a run holds it now"
        shutil.rmtree(left.path, ignore_errors=True)
        if left.path.exists():
            return f"could not remove all of {left.path} (permissions?); remove it by hand"
        return f"removed {left.describe()}"
    return _remove_stale_lock(left)


def _remove_stale_lock(left: Leftover) -> str:
    """The lock file goes only while this process holds it (as a run's release does), so a run that starts
    meanwhile is never left holding a lock on a file that is gone."""
    try:
        fd = os.open(left.path, os.O_RDWR)
    except FileNotFoundError:
        return f"nothing to remove at {left.path}"
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return f"kept {left.path}: a run holds it now"
        if dbdir.lock_state(left.path) == "open":
            return (f"kept {left.path}: it records that the engine was open when process {left.pid or '?'} ended, "
                    "which the next open of that database uses to recover it (or to refuse an engine that keeps "
                    "no log)")
        if os.fstat(fd).st_ino == os.stat(left.path).st_ino:
            left.path.unlink()
        return f"removed {left.describe()}"
    finally:
        os.close(fd)


def notice() -> str | None:
    """One line naming what killed runs left behind, or None."""
    found = orphans()
    if not found:
        return None
    total = sum(o.size for o in found)
    names = ", ".join(str(o.path) for o in found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return (f"kvlab: note: {len(found)} temporary database{'s' if len(found) > 1 else ''} left by killed runs "
            f"({total / 2**20:,.1f} MiB): {names}; `kvlab clean` removes them")
