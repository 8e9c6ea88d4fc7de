"""Writing a file that appears whole or not at all, with the mode the user's umask gives a new file.

`write_atomic(path, text)` writes beside `path` (tempfile.mkstemp), fsyncs, and renames over it: a reader
sees the old file or the new one, never half of one.  mkstemp makes its file 0600 whatever the umask; the
file kvlab leaves is a result to share (a --json file, a report, a rescued run), so it is given what
open(path, "w") would have given it: 0o666 without the umask's bits (0644 under umask 022, 0600 under 077).
Every writer of such a file goes through here.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

_SET_AND_READ: list = []


def umask() -> int:
    """The process's umask now, read without changing it (/proc/self/status, Linux 4.7+).  Where that cannot
    be read, it is read once by setting it and putting it back at once (a file another thread creates in that
    instant gets 077, never more than the user allows) and that value is kept."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8) & 0o777
    except (OSError, ValueError, IndexError):
        pass
    if not _SET_AND_READ:
        old = os.umask(0o077)
        os.umask(old)
        _SET_AND_READ.append(old)
    return _SET_AND_READ[0]


def new_file_mode() -> int:
    """The mode a file created now with open(path, "w") gets: 0o666 without the umask's bits."""
    return 0o666 & ~umask()


def write_atomic(path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write `text` to `path` whole or not at all (beside it, fsynced, renamed over it), its folder made
    if missing, the file's mode the umask's (new_file_mode).  Returns the path; an OSError leaves
    nothing behind but what was there before."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding=encoding) as f:
            os.fchmod(f.fileno(), new_file_mode())
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
