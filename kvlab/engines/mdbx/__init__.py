"""libmdbx: a memory-mapped copy-on-write B+tree descended from LMDB, one writer at a time (engine_mdbx.c).

It is never compiled into kvlab: its adapter is built with libmdbx linked in by `kvlab engines build mdbx@VERSION`
from the mdbx-sys crate (scripts/setup.sh builds the default version) and loaded at run time; plain `mdbx` runs
that default version, BUILD's `loaded`."""

from ..._scan import holds
from ..descriptor import Absent, AdapterFormat, BuildFacts, DbBench, Descriptor, Durability, EngineConfig, Recipe
from . import events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring).
# `loaded`: never compiled into kvlab; plain "mdbx" is this version, built by its recipe below.  `build_packages`:
# what the recipe's build needs from Debian (scripts/setup.sh installs them): the mdbx-sys crate's build script runs
# bindgen over mdbx.h, which loads libclang at run time and needs clang's own headers (stdarg.h, stddef.h).
BUILD = {"loaded": "0.14.4", "build_packages": ["libclang1-14", "libclang-common-14-dev"]}

# What libmdbx's documentation promises for each sync mode (mdbx.h, "SYNC MODES"; the adapter maps kvlab's sync to
# MDBX_SYNC_DURABLE (on) or MDBX_SAFE_NOSYNC (off), the other two are options).  A process crash (SIGKILL) loses
# nothing in any mode: the data is in the OS page cache; the promises differ for a system crash or power loss.
DURABILITY = (
    Durability("durable", {"sync": True}, "durable",
               "MDBX_SYNC_DURABLE: the data is flushed, then the meta page, at every commit; a committed "
               "transaction survives a system crash or power loss"),
    Durability("nometasync", {"sync": True, "options": "nometasync"}, "prefix",
               "MDBX_NOMETASYNC: one flush per commit, the meta page's omitted; keeps ACI, a system crash may undo "
               "the last committed transaction"),
    Durability("safe_nosync", {"sync": False}, "prefix",
               "MDBX_SAFE_NOSYNC: no flush at commit, the last flushed (steady) commit kept intact; a system crash "
               "can't corrupt the database but loses the transactions since the last steady commit"),
    Durability("utterly_nosync", {"sync": False, "options": "utterly_nosync"}, "none",
               "MDBX_UTTERLY_NOSYNC (LMDB's MDB_NOSYNC): no flush at commit, older steady commits not kept; a "
               "system crash can corrupt the database or lose the last transactions"),
)

# The versions `kvlab engines build mdbx@VERSION` makes: libmdbx 0.14.4, which the mdbx-sys crate 14.4.0 compiles
# from its amalgamated source (checksum from the crates.io index, checked before the build)
VERSIONS = {
    "0.14.4": Recipe("crate", "mdbx-sys", pin="14.4.0",
                     sha256="1f7c4502adb435d9aee303b3675aafa3f2f70465fff32c64c37859ccf340fd48",
                     include="libmdbx", library="mdbx", minutes=1.0,
                     rust="1.71")   # its build dependency bindgen 0.73's rust-version,
}



def assertions(path: str) -> bool | None:
    """Whether libmdbx was built with its assertions: the flags it was compiled with, which it keeps as a string
    (mdbx_build.flags; the mdbx-sys crate's build passes -DNDEBUG=1 to a release build and MDBX_FORCE_ASSERTIONS=1
    with debug assertions).  It always links glibc's __assert_fail (its runtime checks, on in every build), so
    kvlab's usual probe says nothing here."""
    got = holds(path, b"-DMDBX_FORCE_ASSERTIONS=1", b"-DNDEBUG=1")
    if got is None:
        return None
    if b"-DMDBX_FORCE_ASSERTIONS=1" in got:
        return True
    return False if b"-DNDEBUG=1" in got else None


NO_DIRECT_IO = "it reads and writes through its memory map and the OS page cache, which has no direct I/O"

DESCRIPTOR = Descriptor(
    "mdbx", title="libmdbx", rank=65, build=BUILD,
    configs=(EngineConfig(
        "mdbx", "mdbx", "libmdbx B+tree, memory-mapped, copy-on-write, single writer (loaded at run time)",
        honours=frozenset({"sync", "map_size", "options"}),
        defaults={"map_size": 64 << 30}, capacity="map_size",   # the upper bound of its file's geometry (64 GiB)
        notes="sync: MDBX_SYNC_DURABLE, else MDBX_SAFE_NOSYNC; options: comma list of nometasync, safe_nosync, "
              "utterly_nosync (one sync mode), writemap, liforeclaim, nordahead, nomeminit, log_notice (libmdbx's "
              "own log at NOTICE to stderr: its recovery's choices); reads renew a read "
              "txn per get; the OS page cache is the cache",
        # libmdbx's documentation: MDBX_NORDAHEAD "may help random read performance when the DB is larger than RAM"
        larger_than_ram={"options": "nordahead"},
        colour="#F0E442", aliases=("libmdbx",), durability=DURABILITY,
        # mdbx_env_get_maxkeysize_ex at the default 4 KiB page: 2022 bytes; a longer key is MDBX_BAD_VALSIZE
        max_key_size=2022),),
    format=AdapterFormat(remembered=("map_size",)),
    events=events.EVENTS,
    counters=Absent("libmdbx counts pages made, copied and spilled and write operations (its events), not bytes "
                    "written or read: no engine figure"),
    own_config=own_config.own_config,
    cache=Absent("libmdbx has no cache of its own: reads go through the OS page cache (its map)"),
    memory=Absent("no cache of its own: the OS page cache (its map), bounded by the memory cgroup"),
    facts=BuildFacts(assertions_of_library=assertions),
    dbbench=DbBench(refusals={flag: NO_DIRECT_IO for flag in ("use_direct_reads",
                                                              "use_direct_io_for_flush_and_compaction")}),
    versions=VERSIONS,
)
