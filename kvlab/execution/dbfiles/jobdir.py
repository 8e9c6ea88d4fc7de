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

JOB_LOCK = ".kvlab-job.lock"


@contextlib.contextmanager
def job_folder(prefix: str, base: str | None = None):
    """A fresh folder `prefix`XXXX under `base` (default $KVLAB_TMPDIR, else the temporary folder), locked by
    this process until it is removed on the way out."""
    base = base or os.environ.get("KVLAB_TMPDIR") or None
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
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
