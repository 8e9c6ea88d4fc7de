"""LevelDB: Google's LSM tree (engine_leveldb.c)."""
from ..descriptor import (
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
from ..settings import LSM_SETTINGS, LSM_TABLE_FILES
from . import counters, events, own_config
from .crc32 import crc32_of_library

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring)
BUILD = {"header": "leveldb/c.h", "library": "leveldb", "package": "libleveldb-dev",
         "static_deps": ["stdc++", "snappy"], "also": ["libsnappy-dev"]}   # `also`: installed beside it

def memory(budget: int) -> dict:
    """A memory budget as LevelDB's settings, after its options.h: `block_cache` holds uncompressed blocks
    (cache_size), and "up to two write buffers may be held in memory at the same time" (write_buffer_size each);
    the table cache (max_open_files tables' indexes and filters) and the OS page cache of the table files take
    the rest.  As RocksDB's wiki advises for the same design: a third of what the process leaves for the block
    cache, a third for the two write buffers, a third for the table cache and the page cache."""
    third = engine_share(budget) // 3
    return {"cache_size": third, "write_buffer_size": max(1 << 20, third // 2)}


DESCRIPTOR = Descriptor(
    "leveldb", title="LevelDB", rank=20, build=BUILD,
    configs=(EngineConfig(
        "leveldb", "leveldb", "LevelDB LSM tree", honours=LSM_SETTINGS - {"disable_wal"},
        compressions=("none", "snappy"),
        notes="options: key=value list of write_buffer_size, block_size, max_open_files, max_file_size, "
              "paranoid_checks, block_restart_interval, bloom_bits",
        colour="#E69F00",
        durability=(
            Durability("sync", {"sync": True}, "durable",
                       "LevelDB WriteOptions.sync: the log is fsynced before the write returns"),
            Durability("nosync", {"sync": False}, "prefix",
                       "LevelDB without sync: a machine crash may lose the newest writes"),
        )),),
    format=AdapterFormat(remembered=LSM_TABLE_FILES),
    events=events.EVENTS, counters=counters.COUNTERS, own_config=own_config.own_config,
    cache=Cache("cache_size", 8 << 20, "LevelDB's options.h: without a block cache it makes an 8 MB one"),
    memory=memory,
    facts=BuildFacts(crc32_of_library=crc32_of_library),
    dbbench=DbBench(refusals={
        "compaction_style": "it has one compaction style, leveled, and no option to choose another",
        "use_direct_reads": "its Env reads through the OS page cache, with no direct I/O option",
        "use_direct_io_for_flush_and_compaction": "its Env writes through the OS page cache, with no direct I/O "
                                                  "option"}),
    # the version Debian has, as an adapter loaded at run time (`kvlab engines build leveldb@1.23`): the same library as
    # the compiled-in leveldb, so the two differ only by the dispatch (benchmarks/harness_instructions.py --loaded)
    versions={"1.23": Recipe("debian", "libleveldb-dev", minutes=0.1)},
)
