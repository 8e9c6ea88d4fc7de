"""Pebble: CockroachDB's LSM-tree engine in Go (github.com/cockroachdb/pebble/v2), through kvlab's Go shim
(../_goshim: Pebble and Badger behind the C calls of kvgo.h, one c-shared object for both, since a process hosts one
Go runtime).

It is never compiled into kvlab: `kvlab engines build pebble@VERSION` builds the shim with `go build
-buildmode=c-shared` (Go 1.24 or newer) and this folder's adapter against it, loaded at run time; plain `pebble`
runs BUILD's `loaded` version, which scripts/setup.sh builds where a new enough Go is present and skips with a
reason where not.  db_bench's write and read loops run inside Go (kv_engine.h's own_loop): a call from C into Go
costs a few hundred ns, more than a cached get."""
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
from . import events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring).
BUILD = {"loaded": "2.1.7"}

# Pebble's WriteOptions.Sync documentation: "Setting Sync is required for durability of individual write
# operations ... If false, and the process or machine crashes, then a recent write may be lost. This is due to the
# recently written data being buffered inside the process running Pebble."  Its WAL is replayed in order.
DURABILITY = (
    Durability("sync", {"sync": True}, "durable",
               "pebble.Sync: each commit's WAL record is synced before Set or Batch.Commit returns; a committed "
               "write survives a process crash and a power loss"),
    Durability("nosync", {"sync": False}, "prefix",
               "pebble.NoSync: the WAL record is buffered inside the process and written later; a process crash "
               "or a power loss may lose the most recent commits, never one in the middle (the WAL replays in order)"),
)

GO_MIN = "1.24"   # the shim's go.mod: the newest minimum of its modules (Badger v4.9.6's go directive)

VERSIONS = {
    "2.1.7": Recipe("go", "github.com/cockroachdb/pebble/v2", pin="2.1.7",
                    sha256="8454276ec9e249683d05570d28cb9a52e7d83e255763ab89bda63d82b6d0f7e5",
                    include="../_goshim", library="kvgo", minutes=1.0, go=GO_MIN),
}

DEFAULT_CACHE_BYTES = 8 << 20   # Pebble's own block cache when none is given (Options.EnsureDefaults)


def memory(budget: int) -> dict:
    """A memory budget as Pebble's settings: its block cache and its memtable.  Pebble reads its tables through the
    OS page cache and its Go heap grows to about twice what it keeps live (GOGC=100): half of what the process
    leaves goes to the block cache, a sixteenth to the memtable (Pebble holds up to two while one flushes; at most
    64 MiB), the rest to the page cache and Go's heap.  Pebble's documentation gives no split."""
    share = engine_share(budget)
    return {"cache_size": share // 2, "write_buffer_size": min(64 << 20, share // 16)}


NO_DIRECT_IO = "it reads and writes its files through the OS page cache; Pebble has no direct I/O"

DESCRIPTOR = Descriptor(
    "pebble", title="Pebble", rank=74, build=BUILD,
    configs=(EngineConfig(
        "pebble", "pebble", "Pebble, CockroachDB's LSM-tree in Go, leveled compaction, batches, through kvlab's Go "
                            "shim (db_bench's write and read loops run inside Go; loaded at run time)",
        honours=frozenset({"sync", "cache_size", "write_buffer_size", "block_size", "options"}),
        notes="sync: pebble.Sync at each commit, else NoSync; cache_size: the block cache (default 8 MiB); "
              "write_buffer_size: MemTableSize (default 4 MiB); block_size: data blocks in every level (default "
              "4 KiB); options: comma list of compression=none|snappy|zstd, bloom_bits=N, "
              "l0_compaction_threshold=N, l0_stop_writes_threshold=N, max_concurrent_compactions=N, "
              "bytes_per_sync=BYTES, disable_wal; deletes are blind tombstones",
        colour="#5A5A78", durability=DURABILITY),),
    format=AdapterFormat(),
    events=events.EVENTS,
    counters=Absent("the shim reads Pebble's Metrics as engine events (WAL, flushes, compactions, bytes per level), "
                    "not as per-run I/O counters"),
    own_config=own_config.own_config,
    cache=Cache("cache_size", DEFAULT_CACHE_BYTES, "Pebble's default block cache, 8 MiB"),
    memory=memory,
    facts=BuildFacts(assertions_of_library=lambda path: False),   # Go has no assert; Pebble's invariants are a
    #                                                               build tag (-tags invariants) the build never sets
    dbbench=DbBench(refusals={flag: NO_DIRECT_IO for flag in ("use_direct_reads",
                                                              "use_direct_io_for_flush_and_compaction")}),
    versions=VERSIONS,
)
