"""kvlab's exception hierarchy.  The native module raises these through one
function, from_code(), so an engine failure always arrives as a Python
exception carrying the engine's own message, never as a crash."""


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
    """The engine reported an error; the message is the engine's own."""

    code = -1

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code


class EngineIOError(EngineError):
    code = -2


class EngineFull(EngineError):
    """Out of space: LMDB map full, disk full."""
    code = -3


class EngineConfigError(EngineError, ValueError):
    """The engine rejected a configuration value or option string."""
    code = -4


class EngineCorruption(EngineError):
    code = -5


class EngineConflict(EngineError):
    """A transaction conflict that the adapter's retries did not clear."""
    code = -6


class EngineBusy(EngineError):
    """The database is locked by another process."""
    code = -7


class EngineNotSupported(EngineError):
    code = -8


_BY_CODE = {cls.code: cls for cls in (EngineError, EngineIOError, EngineFull, EngineConfigError,
                                      EngineCorruption, EngineConflict, EngineBusy, EngineNotSupported)}


def from_code(code, message):
    """Map an adapter return code (KV_E_* in kv_engine.h) to an exception instance."""
    cls = _BY_CODE.get(code, EngineError)
    return cls(message, code)
