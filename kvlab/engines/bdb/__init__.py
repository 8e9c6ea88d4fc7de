"""Berkeley DB 5.3: a B-tree, in a transactional environment or a Concurrent Data Store (engine_bdb.c)."""
from ..descriptor import AdapterFormat, Cache, DbBench, Descriptor, Durability, EngineConfig, Recipe, engine_share
from . import counters, events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring)
BUILD = {"header": "db.h", "library": "db", "package": "libdb5.3-dev"}

# Berkeley DB's direct I/O is DB_ENV->set_flags(DB_DIRECT_DB), but Debian's libdb5.3 is built without it: the
# call fails with EINVAL, "DB_ENV->set_flags: direct I/O either not configured or not supported" (tried here on
# 5.3.28, Debian 12), so db_bench's direct I/O flags are refused on it rather than run buffered
NO_DIRECT_IO = ("Debian's libdb5.3 has no direct I/O: DB_ENV->set_flags(DB_DIRECT_DB) fails with \"direct I/O "
                "either not configured or not supported\"")

# the cache engine_bdb.c opens with when cache_size is not given (Berkeley DB's own is 256 KiB)
DEFAULT_CACHE_BYTES = 64 << 20

def memory(budget: int) -> dict:
    """A memory budget as Berkeley DB's settings: its memory pool is the one knob (DB_ENV->set_cachesize; the
    Reference Guide's "Selecting a cache size": large enough for the working set, at least the tree's internal
    pages, since what misses it is read through the OS).  As WiredTiger's, the cache is what the process
    leaves less a quarter for the page cache of the database and log files and the environment's other
    regions (locks, log buffer)."""
    return {"cache_size": engine_share(budget) * 3 // 4}


DESCRIPTOR = Descriptor(
    "bdb", title="Berkeley DB", rank=50, build=BUILD,
    configs=(
        EngineConfig(
            "bdb", "bdb", "Berkeley DB 5.3 B-tree, transactional environment with the log on (as seed 001)",
            variant="txn", honours=frozenset({"cache_size", "sync"}),
            notes=f"cache_size defaults to {DEFAULT_CACHE_BYTES >> 20} MiB; deadlocks are detected and retried",
            colour="#000000", aliases=("berkeleydb",),
            durability=(
                Durability("txn sync", {"sync": True}, "durable",
                           "Berkeley DB transactions: the log is flushed at commit"),
                Durability("txn_write_nosync", {"sync": True}, "prefix",
                           "DB_TXN_WRITE_NOSYNC: the log is written, not flushed, at commit; a system crash loses "
                           "the newest transactions, keeps ACI",
                           files=(("DB_CONFIG", "set_flags DB_TXN_WRITE_NOSYNC\n"),)),
                Durability("txn_nosync", {"sync": False}, "prefix",
                           "DB_TXN_NOSYNC: the log is neither written nor flushed at commit; a crash loses the "
                           "newest transactions, keeps ACI"),
            )),
        EngineConfig(
            "bdb-notxn", "bdb", "Berkeley DB 5.3 B-tree, no transactions or log (Concurrent Data Store)",
            variant="notxn", honours=frozenset({"cache_size"}),
            notes="a batch is buffered and applied at commit: abort discards it, a crash mid-commit is not atomic",
            colour="#882255",
            # no log, and the dead process's lock stays in the environment's region files
            format=AdapterFormat(recovers=False)),
    ),
    format=AdapterFormat(),
    events=events.EVENTS, counters=counters.COUNTERS, own_config=own_config.own_config,
    cache=Cache("cache_size", DEFAULT_CACHE_BYTES,
                "engine_bdb.c's default (set_cachesize); Berkeley DB's own default is 256 KiB"),
    memory=memory,
    dbbench=DbBench(refusals={"use_direct_reads": NO_DIRECT_IO, "use_direct_io_for_flush_and_compaction": NO_DIRECT_IO}),
    # the version Debian has, as an adapter loaded at run time (`kvlab engines build bdb@5.3.28`): the same library as
    # the compiled-in bdb, so the two differ only by the dispatch (benchmarks/harness_instructions.py --loaded)
    versions={"5.3.28": Recipe("debian", "libdb5.3-dev", minutes=0.1)},
)
