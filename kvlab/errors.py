"""kvlab's exception hierarchy.  The native module raises these through one
function, from_code(), so an engine failure always arrives as a Python
exception carrying the engine's own message, never as a crash."""
from __future__ import annotations


class KvlabError(Exception):
    """Base of every error kvlab raises."""


class SpecError(KvlabError, ValueError):
    """A run description is invalid: says what was wrong and what is allowed."""


class EngineNotBuilt(KvlabError):
    """The engine's library was not found when kvlab was built."""

    def __init__(self, name, hint=None):
        self.engine = name
        msg = f"engine {name!r} is not built into this kvlab"
        if hint:
            msg += f": {hint}"
        super().__init__(msg)


class UnsafeDirectory(KvlabError):
    """kvlab refuses to write into or clear a directory it did not create."""


class NotEnoughDisk(KvlabError):
    """A run whose estimated disk use exceeds the free space where it would write (kvlab.lab.estimate)."""


class DatabaseMismatch(UnsafeDirectory):
    """use_existing_db asked to open a database otherwise than it was made (a setting fixed at
    creation, or a way that would skip its recovery): names the difference and what is allowed."""


class NoDatabase(UnsafeDirectory):
    """use_existing_db on a directory that is missing or holds no database."""


class ResultsError(KvlabError):
    """A results file is missing, broken or of an unknown version."""


class EngineClosed(KvlabError):
    """An operation on a database that was already closed."""


class EngineError(KvlabError):
    """The engine reported an error; the message is the engine's own.

    Each subclass names its adapter return code in `c_name` (KV_ERRORS in cython_ext/include/kv_engine.h);
    the numbers live only there: kvlab._native hands them to bind_codes() as it loads, which sets `code`
    on each class (py-lmdb builds its exceptions from the MDB_* names the same way)."""

    c_name = "KV_E_OTHER"
    code: int | None = None   # from the C table (bind_codes)

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code


class EngineIOError(EngineError):
    c_name = "KV_E_IO"


class EngineFull(EngineError):
    """Out of space: LMDB map full, disk full."""
    c_name = "KV_E_FULL"


class EngineConfigError(EngineError, ValueError):
    """The engine rejected a configuration value or option string."""
    c_name = "KV_E_CONFIG"


class EngineCorruption(EngineError):
    c_name = "KV_E_CORRUPT"


class EngineConflict(EngineError):
    """A transaction conflict that the adapter's retries did not clear."""
    c_name = "KV_E_CONFLICT"


class EngineBusy(EngineError):
    """The database is locked by another process."""
    c_name = "KV_E_BUSY"


class EngineNotSupported(EngineError):
    c_name = "KV_E_NOTSUP"


ENGINE_ERRORS = (EngineError, EngineIOError, EngineFull, EngineConfigError, EngineCorruption, EngineConflict,
                 EngineBusy, EngineNotSupported)
_BY_CODE: dict[int, type[EngineError]] = {}


def bind_codes(codes: dict[str, int]) -> None:
    """Give each engine error class its code from the C core's table ({C name: code}, kvlab._native's
    ERROR_CODES).  A name on one side only is a build out of step with this file: it fails loudly."""
    by_name = {cls.c_name: cls for cls in ENGINE_ERRORS}
    if set(codes) != set(by_name):
        raise ImportError(f"kvlab.errors and kv_engine.h's KV_ERRORS disagree: only in C "
                          f"{sorted(set(codes) - set(by_name))}, only in Python {sorted(set(by_name) - set(codes))}")
    for name, code in codes.items():
        by_name[name].code = code
        _BY_CODE[code] = by_name[name]


def from_code(code, message):
    """Map an adapter return code (KV_E_* in kv_engine.h) to an exception instance."""
    cls = _BY_CODE.get(code, EngineError)
    return cls(message, code)


class NotebookFailed(KvlabError):
    """A notebook `kvlab notebooks run` executed failed: the message names the notebook, the cell and the
    exception, and where the executed notebook (with the error) is kept."""

    def __init__(self, message, notebook=None, path=None):
        super().__init__(message)
        self.notebook, self.path = notebook, path
