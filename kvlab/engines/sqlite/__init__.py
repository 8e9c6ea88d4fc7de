"""SQLite as a key-value store: one WITHOUT ROWID table of BLOB key and value, in WAL mode (engine_sqlite.c)."""
from ..descriptor import AdapterFormat, Cache, DbBench, Descriptor, Durability, EngineConfig, Recipe, engine_share
from . import counters, events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring)
BUILD = {"header": "sqlite3.h", "library": "sqlite3", "package": "libsqlite3-dev"}

# What SQLite's documentation promises for each `synchronous` in WAL mode (sqlite.org/pragma.html#pragma_synchronous
# and sqlite.org/wal.html): the adapter maps kvlab's sync to FULL (on) or NORMAL (off); OFF is an option.
DURABILITY = (
    Durability("full", {"sync": True}, "durable",
               "WAL mode with synchronous=FULL: the WAL is fsynced before each commit returns; a committed "
               "transaction survives a process crash, an OS crash and a power loss"),
    Durability("normal", {"sync": False}, "prefix",
               "WAL mode with synchronous=NORMAL: a commit is written to the WAL, which is fsynced only at "
               "checkpoints; durable against a process crash (SIGKILL), while an OS crash or power loss may roll "
               "back the newest transactions, never corrupting the database"),
    Durability("off", {"sync": False, "options": "synchronous=off"}, "none",
               "synchronous=OFF: SQLite never fsyncs; a process crash loses nothing, an OS crash or power loss "
               "may corrupt the database"),
)

# SQLite's default cache, PRAGMA cache_size=-2000 (Debian's build: DEFAULT_CACHE_SIZE=-2000): 2000 KiB a connection
DEFAULT_CACHE_BYTES = 2000 * 1024


def memory(budget: int) -> dict:
    """A memory budget as SQLite's settings: its page cache (PRAGMA cache_size) is the one knob, and it is private
    to each connection; the adapter opens one connection per thread and gives each cache_size / max_threads, so the
    caches together never pass cache_size (kvlab's runner passes max_threads = threads + 2: a run of T threads
    fills at most T / (T + 2) of it; and the pages every thread reads, the B-tree's upper levels, are held once per
    thread); the adapter's own connection (PRAGMAs, VACUUM) keeps 256 KiB besides.  SQLite reads its files
    through the OS (no direct I/O; mmap_size=0 by default), so the page cache of the database and WAL files needs
    room in the same memory, and the wal-index (-shm) and statement memory come on top: half of what the process
    leaves goes to the connections' caches, half to the OS page cache.  SQLite's documentation gives no split."""
    return {"cache_size": engine_share(budget) // 2}


NO_DIRECT_IO = "its unix VFS reads and writes through the OS page cache; SQLite has no direct I/O option"

DESCRIPTOR = Descriptor(
    "sqlite", title="SQLite", rank=60, build=BUILD,
    configs=(EngineConfig(
        "sqlite", "sqlite", "SQLite B-tree as a key-value store: a WITHOUT ROWID table (k BLOB PRIMARY KEY, v BLOB), "
                            "WAL mode, a connection per thread",
        honours=frozenset({"cache_size", "sync", "block_size", "options"}),
        notes="sync: synchronous=FULL, else NORMAL; cache_size: the total of the threads' page caches, split "
              "evenly over max_threads connections; block_size: the page size, when the file is made; options: "
              "key=value list of synchronous, wal_autocheckpoint, mmap_size, busy_timeout (ms, default 60000: a "
              "writer waits for SQLite's one write lock), secure_delete (Debian builds it on), cache_spill",
        colour="#661100", aliases=("sqlite3",), durability=DURABILITY),),
    # a WAL database's page size is decided when its file is made; a later PRAGMA page_size is ignored
    format=AdapterFormat(fixed=("block_size",)),
    events=events.EVENTS, counters=counters.COUNTERS, own_config=own_config.own_config,
    cache=Cache("cache_size", DEFAULT_CACHE_BYTES,
                "SQLite's default PRAGMA cache_size=-2000, 2000 KiB per connection (one connection per thread)"),
    memory=memory,
    dbbench=DbBench(refusals={"use_direct_reads": NO_DIRECT_IO, "use_direct_io_for_flush_and_compaction": NO_DIRECT_IO,
                              "compaction_style": "a B-tree that frees pages in place, with no compaction styles "
                                                  "to choose"}),
    # the version Debian has, as an adapter loaded at run time (`kvlab engines build sqlite@3.40.1`)
    versions={"3.40.1": Recipe("debian", "libsqlite3-dev", minutes=0.1)},
    op_counters="SQLite's statement counters (sqlite3_stmt_status: virtual machine steps, full-scan steps, sorts, "
                "automatic indexes, runs), which SQLite keeps for every statement at no cost kvlab can turn off",
)
