"""fjall: an LSM-tree in pure Rust (leveled compaction, a journal, one keyspace here), through a shim like redb's
(engine_fjall.c over the shim crate, shim/).

It is never compiled into kvlab: `kvlab engines build fjall@VERSION` builds the project's shim crate (fjall behind a
few `extern "C"` calls) with cargo as a static library and links it into the adapter's shared object, loaded at run
time; plain `fjall` runs BUILD's `loaded` version, which scripts/setup.sh builds (about a minute)."""
from pathlib import Path

from ..descriptor import (
    NO_DIRECT_IO_SHIM,
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
    shim_assertions,
)
from . import events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring).
BUILD = {"loaded": "3.1.13"}

# What fjall's documentation promises for each PersistMode (fjall's PersistMode docs: Buffer "flushes to OS buffers,
# which is enough to survive an application crash, but not a power loss"; SyncData and SyncAll fsync the journal).
# Its journal is replayed whole batches at a time, a torn last batch dropped (fjall's journal recovery).
DURABILITY = (
    Durability("sync_all", {"sync": True}, "durable",
               "PersistMode::SyncAll: each commit's journal batch is fsynced before the commit returns; a committed "
               "transaction survives a process crash, an OS crash and a power loss"),
    Durability("sync_data", {"sync": True, "options": "sync_data"}, "durable",
               "PersistMode::SyncData: the journal is fdatasynced at each commit; as durable for the data (the "
               "journal's size and new files rely on fdatasync's metadata rules)"),
    Durability("buffer", {"sync": False}, "prefix",
               "PersistMode::Buffer: the journal batch is written to the OS at commit: a process crash loses "
               "nothing, a power loss loses the batches the OS had not written back, never a torn one"),
)

SHIM = Path(__file__).resolve().parent / "shim"

# The versions `kvlab engines build fjall@VERSION` makes: the shim crate in this folder, whose Cargo.lock pins the
# fjall crate; the build checks that the lock holds this version with this checksum (the crates.io index's), then
# cargo builds with --locked, checking the downloaded crate against the lock.
VERSIONS = {
    "3.1.13": Recipe("shim", "fjall", pin="3.1.13",
                     sha256="6e98f7212d748b723dcfbd43d5f166958945ad2c05ad4537fb99bcda42ad8a96",
                     include="shim", library="kvlab_fjall", link=("gcc_s", "util", "rt", "dl"), minutes=1.0,
                     rust="1.90")   # fjall 3.1.13's rust-version
}

DEFAULT_CACHE_BYTES = 32 << 20   # fjall's DatabaseBuilder default cache (32 MiB)


def memory(budget: int) -> dict:
    """A memory budget as fjall's settings: its block cache and its memtable.  fjall reads its tables with pread
    through the OS page cache, which keeps a second copy of what it reads: half of what the process leaves goes to
    fjall's block cache, an eighth to the memtable (at most fjall's 64 MiB default), the rest to the page cache.
    fjall's documentation gives no split."""
    share = engine_share(budget)
    return {"cache_size": share // 2, "write_buffer_size": min(64 << 20, share // 8)}


NO_DIRECT_IO = NO_DIRECT_IO_SHIM.format(engine="fjall")

DESCRIPTOR = Descriptor(
    "fjall", title="fjall", rank=72, build=BUILD,
    configs=(EngineConfig(
        "fjall", "fjall", "fjall LSM-tree in pure Rust, leveled compaction, single-writer transactions, through an "
                          "extern \"C\" shim (loaded at run time)",
        honours=frozenset({"sync", "cache_size", "write_buffer_size", "block_size", "options"}),
        notes="sync: PersistMode::SyncAll at each commit, else Buffer; cache_size: the block cache (default 32 MiB); "
              "write_buffer_size: the keyspace's max memtable size (default 64 MiB); block_size: data blocks "
              "(default 4 KiB); options: comma list of sync_data, compression=default|none|lz4 (default: none in "
              "levels 0-1, LZ4 below), bloom_bits=N, kv_separation=BYTES, max_journaling_size=BYTES, "
              "worker_threads=N; the keyspace's settings are fixed when it is made; deletes are blind tombstones",
        colour="#9966FF", durability=DURABILITY),),
    format=AdapterFormat(fixed=("write_buffer_size", "block_size")),
    events=events.EVENTS,
    counters=Absent("fjall counts no bytes written or read; its events give disk space, tables and compactions"),
    own_config=own_config.own_config,
    cache=Cache("cache_size", DEFAULT_CACHE_BYTES, "fjall's DatabaseBuilder default, 32 MiB"),
    memory=memory,
    facts=BuildFacts(assertions_of_library=shim_assertions(SHIM)),
    dbbench=DbBench(refusals={flag: NO_DIRECT_IO for flag in ("use_direct_reads",
                                                              "use_direct_io_for_flush_and_compaction")}),
    versions=VERSIONS,
)
