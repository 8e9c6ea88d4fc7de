"""Writing the report's file: the path checked before anything is built, the file written whole or not at all."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ... import errors
from ...execution import dbdir


def check_out(out, flag: str = "report") -> Path:
    """The report's file: not a directory; its folder writable, or creatable below a writable one (made when
    the page is written, after everything else has been checked).  The path as given: the writer uses it."""
    if out is None or not str(out).strip():
        raise errors.SpecError(f"{flag}: a file to write is needed (out=..., --out FILE)")
    return dbdir.check_output_file(out, flag)


def write(target: Path, text: str) -> Path:
    """The file appears whole or not at all: written beside it, then renamed."""
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise errors.ResultsError(f"report {target}: cannot be written ({exc.strerror or exc})") from None
    return target
