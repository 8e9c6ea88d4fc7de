"""Badger: an LSM-tree in Go that keeps large values apart in a value log, after the WiscKey paper
(github.com/dgraph-io/badger/v4), through kvlab's Go shim (../_goshim: Pebble and Badger behind the C calls of
kvgo.h, one c-shared object for both, since a process hosts one Go runtime).

It is never compiled into kvlab: `kvlab engines build badger@VERSION` builds the shim with `go build
-buildmode=c-shared` (Go 1.24 or newer) and this folder's adapter against it, loaded at run time; plain `badger`
runs BUILD's `loaded` version, which scripts/setup.sh builds where a new enough Go is present and skips with a
reason where not.  db_bench's write and read loops run inside Go (kv_engine.h's own_loop).  Values below the value
threshold (Badger's default 1 MiB) stay in the LSM-tree; `options=value_threshold=N` separates them as WiscKey does."""
from ..descriptor import (
    Absent,
    AdapterFormat,
    BuildFacts,
    Cache,
    DbBench,
    Descriptor,
    Durability,
    EngineConfig,
    Recipe,
    engine_share,
)
from ..pebble import GO_MIN
from . import events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring).
BUILD = {"loaded": "4.9.6"}

# Badger's Options.SyncWrites documentation: "When SyncWrites is true all writes are synced to disk.  Setting this
# to false would achieve better performance, but may cause data loss in case of crash."  Its write-ahead log (the
# memtable's .mem file, memory-mapped) is replayed in order at open.
DURABILITY = (
    Durability("sync", {"sync": True}, "durable",
               "SyncWrites: each commit's write-ahead log entry is synced (msync of the memtable's log) before the "
               "commit returns; a committed write survives a process crash and a power loss"),
    Durability("nosync", {"sync": False}, "prefix",
               "SyncWrites off: each commit is written into the memory-mapped log and left to the OS; its "
               "documentation allows data loss on a crash, replayed in order (a prefix)"),
)

VERSIONS = {
    "4.9.6": Recipe("go", "github.com/dgraph-io/badger/v4", pin="4.9.6",
                    sha256="210a8c3d518b34242bd5be0cbbc9479189bfc72a8546cc8a68512dc8b8bd0824",
                    include="../_goshim", library="kvgo", minutes=1.0, go=GO_MIN),
}

DEFAULT_CACHE_BYTES = 256 << 20   # Badger's DefaultOptions BlockCacheSize


def memory(budget: int) -> dict:
    """A memory budget as Badger's settings: its block cache and its memtables.  Badger keeps up to NumMemtables (5)
    memtables of MemTableSize, reads its tables and value log through memory maps (the page cache) and its Go heap
    grows to about twice what it keeps live (GOGC=100): half of what the process leaves goes to the block cache, a
    twentieth to each memtable (a quarter for the five; at most 64 MiB each), the rest to the page cache and Go's
    heap.  Badger's documentation gives no split."""
    share = engine_share(budget)
    return {"cache_size": share // 2, "write_buffer_size": min(64 << 20, share // 20)}


NO_DIRECT_IO = "it reads its tables and value log through memory maps; Badger has no direct I/O"

DESCRIPTOR = Descriptor(
    "badger", title="Badger", rank=75, build=BUILD,
    configs=(EngineConfig(
        "badger", "badger", "Badger, an LSM-tree in Go with a WiscKey value log (values of 1 MiB or more by "
                            "default), update transactions, through kvlab's Go shim (db_bench's write and read loops "
                            "run inside Go; loaded at run time)",
        honours=frozenset({"sync", "cache_size", "write_buffer_size", "block_size", "options"}),
        notes="sync: SyncWrites, else off; cache_size: BlockCacheSize (default 256 MiB); write_buffer_size: "
              "MemTableSize (default 64 MiB, up to 5 of them); block_size: table blocks (default 4 KiB); options: "
              "comma list of value_threshold=BYTES, compression=none|snappy|zstd, num_compactors=N, "
              "num_memtables=N, index_cache=BYTES, bloom_false_positive=PERMILLE, detect_conflicts=0|1, "
              "bypass_lock_guard (its crash tests' setting: the test holds the directory's flock); deletes are blind "
              "tombstones",
        colour="#003C2D", durability=DURABILITY),),
    format=AdapterFormat(),
    events=events.EVENTS,
    counters=Absent("the shim reads Badger's sizes and tables as engine events, not per-run I/O counters"),
    own_config=own_config.own_config,
    cache=Cache("cache_size", DEFAULT_CACHE_BYTES, "Badger's DefaultOptions block cache, 256 MiB"),
    memory=memory,
    facts=BuildFacts(assertions_of_library=lambda path: False),   # Go has no assert; Badger's y.AssertTrue checks
    #                                                               are always on, as in its own builds
    dbbench=DbBench(refusals={flag: NO_DIRECT_IO for flag in ("use_direct_reads",
                                                              "use_direct_io_for_flush_and_compaction")}),
    versions=VERSIONS,
    # Badger flocks its directory, as kvlab's crash test flocks its test directory to keep a second test out:
    # under a crash test Badger's own lock is off (BypassLockGuard), the test's lock guarding the directory
    crash_settings={"options": "bypass_lock_guard"},
)
