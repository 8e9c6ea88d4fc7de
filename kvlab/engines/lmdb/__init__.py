"""LMDB: a memory-mapped B+tree with a single writer (engine_lmdb.c)."""
from ..descriptor import Absent, AdapterFormat, DbBench, Descriptor, Durability, EngineConfig, Recipe
from . import counters, events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring)
BUILD = {"header": "lmdb.h", "library": "lmdb", "package": "liblmdb-dev"}

DURABILITY = (
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

# The versions `kvlab engines build lmdb@VERSION` makes (both in seconds; scripts/setup.sh builds them): Debian's, the
# library kvlab links (the adapter as a loaded object, the dispatch's own A/B), and mdb.master's 0.9.70, which the
# lmdb-master-sys crate compiles (checksum from the crates.io index, checked before the build).
VERSIONS = {
    "0.9.24": Recipe("debian", "liblmdb-dev", minutes=0.1),
    "0.9.70": Recipe("crate", "lmdb-master-sys", pin="0.2.6",
                     sha256="aaeb9bd22e73bd1babffff614994b341e9b2008de7bb73bf1f7e9154f1978f8b",
                     include="lmdb/libraries/liblmdb", library="lmdb", minutes=0.5),
}

DESCRIPTOR = Descriptor(
    "lmdb", title="LMDB", rank=10, build=BUILD,
    configs=(EngineConfig(
        "lmdb", "lmdb", "LMDB B+tree, memory-mapped, single writer",
        honours=frozenset({"sync", "map_size", "options"}),
        defaults={"map_size": 64 << 30}, capacity="map_size",   # the map its data file can grow to (64 GiB)
        notes="options: comma list of nosync, nometasync, writemap, mapasync, nordahead, nomeminit; "
              "reads renew a read txn per get; the OS page cache is the cache",
        # LMDB's documentation: MDB_NORDAHEAD "may help random read performance when the DB is larger than RAM";
        # with readahead, a 1M-node LinkBench in 384M read 13 MB per query
        larger_than_ram={"options": "nordahead"},
        colour="#0072B2", durability=DURABILITY,
        # mdb_env_get_maxkeysize: MDB_MAXKEYSIZE, 511 in LMDB 0.9's default build; a longer key is MDB_BAD_VALSIZE
        max_key_size=511),),
    format=AdapterFormat(remembered=("map_size",)),
    events=events.EVENTS, counters=counters.COUNTERS, own_config=own_config.own_config,
    cache=Absent("LMDB has no cache of its own: reads go through the OS page cache (its map)"),
    memory=Absent("no cache of its own: the OS page cache (its map), bounded by the memory cgroup"),
    dbbench=DbBench(refusals={flag: "it reads and writes through its memory map and the OS page cache, which has "
                                    "no direct I/O" for flag in ("use_direct_reads",
                                                                 "use_direct_io_for_flush_and_compaction")}),
    versions=VERSIONS,
)
