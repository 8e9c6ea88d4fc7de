"""A job's folder: a temporary directory a kvlab job (`kvlab compare`) makes for the databases it creates, holds a
lock on for as long as it runs, and removes as it ends, whatever ends it.  Only a SIGKILL (or a crash of the
interpreter) leaves one behind; then nobody holds its lock, and `kvlab clean` (dbfiles.leftovers) removes it.
The lock is taken before the folder holds anything and let go only after it is gone, so a live job's folder is
never taken for a leftover."""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from pathlib import Path

from ... import errors

JOB_LOCK = ".kvlab-job.lock"


def temporary_base(base: str | None = None) -> str | None:
    """Where kvlab makes a temporary folder: `base`, else $KVLAB_TMPDIR, else None (the temporary folder).  One that
    is not a writable directory is refused by its name before anything is made."""
    given = base or os.environ.get("KVLAB_TMPDIR") or None
    if given is None:
        return None
    named = f"{given!r}" if base else f"$KVLAB_TMPDIR ({given})"
    if not os.path.isdir(given):
        raise errors.UnsafeDirectory(f"{named} is not a directory; kvlab makes its temporary databases there: "
                                     "point it to a directory you can write, or unset it for the temporary folder")
    if not os.access(given, os.W_OK | os.X_OK):
        raise errors.UnsafeDirectory(f"{named} is not writable by this user; kvlab makes its temporary databases "
                                     "there: point it to a directory you can write, or unset it for the temporary "
                                     "folder")
    return given


@contextlib.contextmanager
def job_folder(prefix: str, base: str | None = None):
    """A fresh folder `prefix`XXXX under `base` (default $KVLAB_TMPDIR, else the temporary folder), locked by
    this process until it is removed on the way out."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=temporary_base(base)))
    fd = os.open(folder / JOB_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield folder
    finally:
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)   # the lock goes with the folder
