"""redb: a copy-on-write B-tree in pure Rust, one writer at a time (engine_redb.c over the shim crate, shim/).

It is never compiled into kvlab: `kvlab engines build redb@VERSION` builds the project's shim crate (redb behind a
few `extern "C"` calls) with cargo as a static library and links it into the adapter's shared object, loaded at
run time; plain `redb` runs BUILD's `loaded` version, which scripts/setup.sh builds (about a minute)."""
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
# `loaded`: never compiled into kvlab; plain "redb" is this version, built by its recipe below (cargo, no Debian
# package: the crate is pure Rust).
BUILD = {"loaded": "4.6.0"}

# What redb's documentation promises for each durability (redb 4.x has two: Durability::Immediate and ::None; the
# Eventual and Paranoid of redb 1.x are gone, Paranoid's two-phase commit now a setting of its own).  The adapter
# maps kvlab's sync to Immediate (on) or None (off).
DURABILITY = (
    Durability("immediate", {"sync": True}, "durable",
               "Durability::Immediate: the commit is fsynced before WriteTransaction::commit returns (one-phase: "
               "the new commit slot is checksummed, a torn one is passed over at recovery); a committed "
               "transaction survives a process crash, an OS crash and a power loss"),
    Durability("two_phase", {"sync": True, "options": "two_phase_commit"}, "durable",
               "Durability::Immediate with two-phase commit: the data and commit slot are fsynced, then the slot "
               "is made primary and fsynced again; as durable, and the primary slot needs no checksum to trust"),
    Durability("none", {"sync": False}, "prefix",
               "Durability::None: a commit is visible at once but not persisted until a later Immediate commit or "
               "the database's close; any crash, a SIGKILL too, rolls back to the last persisted commit, never "
               "tearing a transaction"),
)

SHIM = Path(__file__).resolve().parent / "shim"

# The versions `kvlab engines build redb@VERSION` makes: the shim crate in this folder, whose Cargo.lock pins the redb
# crate; the build checks that the lock holds this version with this checksum (the crates.io index's), then cargo
# builds with --locked, checking the downloaded crate against the lock.
VERSIONS = {
    "4.6.0": Recipe("shim", "redb", pin="4.6.0",
                    sha256="096b1dd5ec053c9c2a5a26a93aafeadf73ebcb710ea54dc3151f17a8e20535ef",
                    include="shim", library="kvlab_redb", link=("gcc_s", "util", "rt", "dl"), minutes=1.0,
                    rust="1.90")   # redb 4.6.0's rust-version,
}

# Builder's default cache (redb's db.rs: "cache_size_bytes: 1GiB")
DEFAULT_CACHE_BYTES = 1 << 30


def memory(budget: int) -> dict:
    """A memory budget as redb's settings: its cache (Builder::set_cache_size: pages read, and the write buffer, at
    most half of it) is the one knob.  redb reads its file with pread through the OS page cache, which keeps a
    second copy of what it reads: half of what the process leaves goes to redb's cache, half to the page cache.
    redb's documentation gives no split."""
    return {"cache_size": engine_share(budget) // 2}


NO_DIRECT_IO = NO_DIRECT_IO_SHIM.format(engine="redb")

DESCRIPTOR = Descriptor(
    "redb", title="redb", rank=70, build=BUILD,
    configs=(EngineConfig(
        "redb", "redb", "redb B-tree in pure Rust, copy-on-write, single writer, through an extern \"C\" shim "
                        "(loaded at run time)",
        honours=frozenset({"sync", "cache_size", "options"}),
        notes="sync: Durability::Immediate, else Durability::None; cache_size: redb's cache (default 1 GiB); "
              "options: comma list of two_phase_commit, quick_repair, check_integrity; a get outside a "
              "transaction renews the thread's snapshot only after a commit; one file, data.redb",
        colour="#666644", durability=DURABILITY),),
    format=AdapterFormat(),
    events=events.EVENTS,
    counters=Absent("redb counts no bytes written or read; the shim counts commits (its events)"),
    own_config=own_config.own_config,
    cache=Cache("cache_size", DEFAULT_CACHE_BYTES, "redb's Builder default, cache_size_bytes 1 GiB"),
    memory=memory,
    facts=BuildFacts(assertions_of_library=shim_assertions(SHIM)),
    dbbench=DbBench(refusals={flag: NO_DIRECT_IO for flag in ("use_direct_reads",
                                                              "use_direct_io_for_flush_and_compaction")}),
    versions=VERSIONS,
)
