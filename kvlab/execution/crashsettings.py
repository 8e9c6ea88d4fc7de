"""The durability settings a crash test knows, per engine, and what each one's documentation promises for a
crash: `durable` (no acknowledged write lost, nothing torn, every reopen works), `prefix` (recent writes may be
lost, never a torn transaction or a failed reopen) or `none` (the engine says a crash may corrupt: only
measured).  execution.crashtest holds each setting's promise against what it saw."""
from __future__ import annotations

from dataclasses import dataclass

from .. import errors


@dataclass(frozen=True)
class Durability:
    """A durability setting of one engine, and what its documentation promises for a crash."""
    name: str
    settings: dict                 # engine settings (sync, disable_wal, options)
    claim: str                     # durable | prefix | none (CLAIMS, module docstring)
    promise: str                   # the documentation's promise, in a sentence
    files: tuple = ()              # (name, text) written into the database directory before it is made


CLAIMS = ("durable", "prefix", "none")
_LMDB = (
    Durability("default", {"sync": True}, "durable",
               "LMDB: a committed transaction is on disk when mdb_txn_commit returns (fdatasync of the data file)"),
    Durability("nometasync", {"sync": True, "options": "nometasync"}, "prefix",
               "MDB_NOMETASYNC: omits the meta page flush; keeps ACI, a system crash may undo the last transaction"),
    Durability("nosync", {"sync": True, "options": "nosync"}, "none",
               "MDB_NOSYNC: no flush at commit; a system crash can corrupt the database or lose the last transactions"),
    Durability("writemap", {"sync": True, "options": "writemap"}, "durable",
               "MDB_WRITEMAP: writes through a writable map, msync(MS_SYNC) at commit: as durable as the default"),
    Durability("writemap,mapasync", {"sync": True, "options": "writemap,mapasync"}, "none",
               "MDB_MAPASYNC: asynchronous flushes of the map; as MDB_NOSYNC, a system crash can corrupt or lose"),
)
_WT = (
    Durability("log+sync", {"sync": True}, "durable",
               "WiredTiger with its log and transaction_sync=(enabled=true): a commit is durable when it returns"),
    Durability("log", {"sync": False, "options": "log=(enabled=true)"}, "prefix",
               "WiredTiger's log without transaction_sync: commits are written to the log, flushed in the "
               "background; a crash loses the newest, recovery replays the rest"),
    Durability("no log", {"sync": False}, "prefix",
               "WiredTiger without a log: durable as of the last checkpoint"),
)
DURABILITY: dict[str, tuple] = {
    "lmdb": _LMDB,
    "rocksdb": (
        Durability("wal+sync", {"sync": True}, "durable",
                   "RocksDB WriteOptions.sync: the WAL is fsynced before the write returns"),
        Durability("wal", {"sync": False}, "prefix",
                   "RocksDB without sync: a machine crash may lose the newest writes; recovery is to a point in time"),
        Durability("no wal", {"sync": False, "disable_wal": True}, "prefix",
                   "RocksDB with the WAL disabled: writes since the last memtable flush are lost on a crash"),
    ),
    "leveldb": (
        Durability("sync", {"sync": True}, "durable",
                   "LevelDB WriteOptions.sync: the log is fsynced before the write returns"),
        Durability("nosync", {"sync": False}, "prefix",
                   "LevelDB without sync: a machine crash may lose the newest writes"),
    ),
    "wiredtiger-btree": _WT,
    "wiredtiger-lsm": _WT,
    "bdb": (
        Durability("txn sync", {"sync": True}, "durable",
                   "Berkeley DB transactions: the log is flushed at commit"),
        Durability("txn_write_nosync", {"sync": True}, "prefix",
                   "DB_TXN_WRITE_NOSYNC: the log is written, not flushed, at commit; a system crash loses the "
                   "newest transactions, keeps ACI",
                   files=(("DB_CONFIG", "set_flags DB_TXN_WRITE_NOSYNC\n"),)),
        Durability("txn_nosync", {"sync": False}, "prefix",
                   "DB_TXN_NOSYNC: the log is neither written nor flushed at commit; a crash loses the newest "
                   "transactions, keeps ACI"),
    ),
}


def durability(engine: str, name: str | None = None, sync: bool = False) -> Durability:
    """The named durability setting of `engine`; without a name, plain sync on (durable) or off (prefix)."""
    if name is None:
        return Durability("", {"sync": sync}, "durable" if sync else "prefix",
                          "sync on: no acknowledged write lost" if sync else "sync off: recent writes may be lost")
    known = DURABILITY.get(engine, ())
    for d in known:
        if d.name == name:
            return d
    raise errors.SpecError(f"crashtest: {engine} has no durability setting {name!r}; allowed: "
                           f"{', '.join(d.name for d in known) or 'none (use --sync or not)'}")

