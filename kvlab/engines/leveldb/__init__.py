"""LevelDB: Google's LSM tree (engine_leveldb.c)."""
from ..descriptor import AdapterFormat, BuildFacts, Cache, Descriptor, Durability, EngineConfig
from ..settings import LSM_SETTINGS, LSM_TABLE_FILES
from . import counters, events
from .crc32 import crc32_of_library

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring)
BUILD = {"header": "leveldb/c.h", "library": "leveldb", "package": "libleveldb-dev",
         "static_deps": ["stdc++", "snappy"], "also": ["libsnappy-dev"]}   # `also`: installed beside it

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
    events=events.EVENTS, counters=counters.COUNTERS,
    cache=Cache("cache_size", 8 << 20, "LevelDB's options.h: without a block cache it makes an 8 MB one"),
    facts=BuildFacts(crc32_of_library=crc32_of_library),
)
