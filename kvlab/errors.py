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


class EngineInUse(KvlabError):
    """A database a native Run still executes on was asked to close: the run ends first (py-lmdb refuses to
    close what its transactions and cursors still use, rather than leave them pointing at freed memory)."""


class EngineError(KvlabError):
    """The engine reported an error; the message is the engine's own.

    A raised one carries what the engine said, whole: `code`, the engine's own numeric code (MDB_MAP_FULL's
    -30792, WT_ROLLBACK's, a RocksDB Status::Code, an errno an engine returns as its code), `code_name`, that
    code as the engine's headers spell it ("MDB_MAP_FULL", "DB_LOCK_DEADLOCK", "IOError", "ENOSPC"), and
    `errno`, where the OS failed; each is None where the engine gave none (a refusal of kvlab's own, such as an
    unknown option).  `kv_code` is kvlab's code for the failure, which picks the class.

    Each class below names its kvlab code in `c_name` (KV_ERRORS in cython_ext/include/kv_engine.h); the
    numbers live only there: kvlab._native hands them to bind_codes() as it loads, which sets each class's
    `kv_code` (and, on the class, `code`: the class-level code is kvlab's) as py-lmdb builds its exceptions
    from the MDB_* names.  The classes after ENGINE_ERRORS are narrower: each is raised for the engine code
    names in its `engine_names`, under the class of kvlab's code (MapFullError is an EngineFull)."""

    c_name = "KV_E_OTHER"
    kv_code: int | None = None   # from the C table (bind_codes)
    code: int | None = None      # on the class: kvlab's code (bind_codes); on a raised one: the engine's
    code_name: str | None = None
    errno: int | None = None

    def __init__(self, message, code=None, code_name=None, errno=None, kv_code=None):
        super().__init__(message)
        self.code, self.code_name, self.errno = code, code_name, errno
        if kv_code is not None:
            self.kv_code = kv_code


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


class _ByEngineName:
    """A narrower engine error, raised by the engine's code name: no kvlab code of its own (c_name None; its
    kvlab code is its parent's)."""
    c_name = None
    engine_names: tuple[str, ...] = ()


class MapFullError(_ByEngineName, EngineFull):
    """LMDB's map is full (MDB_MAP_FULL): a larger map_size holds more."""
    engine_names = ("MDB_MAP_FULL",)


class ReadersFullError(_ByEngineName, EngineFull):
    """LMDB's reader table is full (MDB_READERS_FULL): more threads than max_threads."""
    engine_names = ("MDB_READERS_FULL",)


class TxnFullError(_ByEngineName, EngineFull):
    """An LMDB transaction holds too many dirty pages (MDB_TXN_FULL): a smaller batch fits."""
    engine_names = ("MDB_TXN_FULL",)


class DbsFullError(_ByEngineName, EngineFull):
    engine_names = ("MDB_DBS_FULL",)


class CacheFullError(_ByEngineName, EngineFull):
    """WiredTiger's cache is full of what it cannot evict (WT_CACHE_FULL)."""
    engine_names = ("WT_CACHE_FULL",)


class DeadlockError(_ByEngineName, EngineConflict):
    """Berkeley DB chose this transaction as a deadlock's victim (DB_LOCK_DEADLOCK)."""
    engine_names = ("DB_LOCK_DEADLOCK",)


class LockNotGrantedError(_ByEngineName, EngineConflict):
    engine_names = ("DB_LOCK_NOTGRANTED",)


class RollbackError(_ByEngineName, EngineConflict):
    """WiredTiger rolled the transaction back: a conflict with another one (WT_ROLLBACK)."""
    engine_names = ("WT_ROLLBACK",)


BY_ENGINE_NAME: dict[str, type[EngineError]] = {
    name: cls for cls in (MapFullError, ReadersFullError, TxnFullError, DbsFullError, CacheFullError, DeadlockError,
                          LockNotGrantedError, RollbackError)
    for name in cls.engine_names}
_BY_CODE: dict[int, type[EngineError]] = {}


def bind_codes(codes: dict[str, int]) -> None:
    """Give each engine error class its code from the C core's table ({C name: code}, kvlab._native's
    ERROR_CODES).  A name on one side only is a build out of step with this file: it fails loudly."""
    by_name = {cls.c_name: cls for cls in ENGINE_ERRORS}
    if set(codes) != set(by_name):
        raise ImportError(f"kvlab.errors and kv_engine.h's KV_ERRORS disagree: only in C "
                          f"{sorted(set(codes) - set(by_name))}, only in Python {sorted(set(by_name) - set(codes))}")
    for name, code in codes.items():
        by_name[name].code = by_name[name].kv_code = code
        _BY_CODE[code] = by_name[name]


def from_code(kv_code, message, code=None, code_name=None, errno=None):
    """The exception for an adapter's failure (kvlab._native's check(), the one caller): kvlab's code (KV_E_* in
    kv_engine.h) picks the class, narrowed to the one named for the engine's code name where that one is of the
    same kind; the engine's code, its name and errno go on the exception."""
    cls = _BY_CODE.get(kv_code, EngineError)
    named = BY_ENGINE_NAME.get(code_name)
    if named is not None and issubclass(named, cls):
        cls = named
    return cls(message, code=code, code_name=code_name, errno=errno, kv_code=kv_code)


class NotebookFailed(KvlabError):
    """A notebook `kvlab notebooks run` executed failed: the message names the notebook, the cell and the
    exception, and where the executed notebook (with the error) is kept."""

    def __init__(self, message, notebook=None, path=None):
        super().__init__(message)
        self.notebook, self.path = notebook, path
