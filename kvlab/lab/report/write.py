"""Writing the report's file: the path checked before anything is built, the file written whole or not at all."""
from __future__ import annotations

from pathlib import Path

from ... import errors
from ..._files import write_atomic
from ...execution.dbfiles import dbdir


def check_out(out, flag: str = "report") -> Path:
    """The report's file: not a directory; its folder writable, or creatable below a writable one (made when
    the page is written, after everything else has been checked).  The path as given: the writer uses it."""
    if out is None or not str(out).strip():
        raise errors.SpecError(f"{flag}: a file to write is needed (out=..., --out FILE)")
    return dbdir.check_output_file(out, flag)


def write(target: Path, text: str) -> Path:
    """The file appears whole or not at all (written beside it, then renamed), with the mode the umask
    gives a new file."""
    try:
        return write_atomic(target, text)
    except OSError as exc:
        raise errors.ResultsError(f"report {target}: cannot be written ({exc.strerror or exc})") from None
