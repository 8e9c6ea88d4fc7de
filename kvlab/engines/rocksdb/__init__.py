"""RocksDB: Meta's LSM tree, with its default options and with seed 001's tuning (engine_rocksdb.c)."""
from pathlib import Path

from ..._scan import holds
from ...model.dbbench_flags import rocksdb_options, translate_rocksdb_flags
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
from .crc32 import crc32_from_log

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring).
# `defines`: macros set from what the build found ({version}: the header's version; {libdir}: the library's
# folder); `initial_exec`: a second static library of the same source, built with the initial-exec TLS model, may
# be given as KVLAB_ROCKSDB_IE_PREFIX (`make engines`), and the module is linked a second time against it;
# `also`: packages scripts/setup.sh installs beside the library.
BUILD = {"header": "rocksdb/c.h", "library": "rocksdb", "package": "librocksdb-dev",
         "static_deps": ["stdc++", "snappy", "lz4", "zstd", "z", "bz2", "dl", "m"],
         "version": ["rocksdb/version.h", ["ROCKSDB_MAJOR", "ROCKSDB_MINOR", "ROCKSDB_PATCH"]],
         "defines": {"KV_ROCKSDB_VERSION": "{version}"}, "initial_exec": True,
         "also": ["rocksdb-tools"],   # db_bench itself, for comparing kvlab dbbench with it
         # C++ the adapter calls where RocksDB's C API has nothing (IOStatsContext: --engine-counters)
         "extra_sources": ["iostats.cc"]}

# Seed 001 (Symas, 2014) ran RocksDB with this 40-flag "pfx" tuning; kvlab maps it onto
# RocksDB 7.8's options through the same translation `kvlab dbbench` uses.
ROCKSDB_PFX_FLAGS = (
    "--num_levels=6 --key_size=16 --prefix_size=16 --keys_per_prefix=0 --block_size=4096 "
    "--cache_numshardbits=6 --compression_type=none --compression_ratio=1 --min_level_to_compress=-1 "
    "--disable_seek_compaction=1 --hard_rate_limit=2 --write_buffer_size=134217728 "
    "--max_write_buffer_number=2 --level0_file_num_compaction_trigger=8 --target_file_size_base=134217728 "
    "--max_bytes_for_level_base=1073741824 --sync=0 --disable_data_sync=1 --verify_checksum=1 "
    "--delete_obsolete_files_period_micros=314572800 --max_grandparent_overlap_factor=10 "
    "--max_background_compactions=4 --max_background_flushes=0 --level0_slowdown_writes_trigger=16 "
    "--level0_stop_writes_trigger=24 --statistics=0 --stats_per_interval=0 --histogram=0 "
    "--use_plain_table=1 --open_files=-1 --mmap_read=1 --mmap_write=0 --memtablerep=prefix_hash "
    "--bloom_bits=10 --bloom_locality=1 --perf_level=0"
)

DURABILITY = (
    Durability("wal+sync", {"sync": True}, "durable",
               "RocksDB WriteOptions.sync: the WAL is fsynced before the write returns"),
    Durability("wal", {"sync": False}, "prefix",
               "RocksDB without sync: a machine crash may lose the newest writes; recovery is to a point in time"),
    Durability("no wal", {"sync": False, "disable_wal": True}, "prefix",
               "RocksDB with the WAL disabled: writes since the last memtable flush are lost on a crash"),
)
_COMPRESSIONS = ("none", "snappy", "lz4", "zstd")


def memory(budget: int) -> dict:
    """A memory budget as RocksDB's settings, after its wiki ("Setup Options and Basic Tuning": a block cache of
    about a third of the memory for RocksDB; "Memory usage in RocksDB": the block cache, the memtables, the
    indexes and filters and the iterators' pinned blocks are where it goes).  A third of what the process leaves
    is the block cache (cache_size); a third the memtables: max_write_buffer_number (2 by default) of
    write_buffer_size each; the last third is for indexes and filters outside the block cache, and the page
    cache of the SST files."""
    third = engine_share(budget) // 3
    return {"cache_size": third, "write_buffer_size": max(1 << 20, third // 2)}

def assertions(path: str) -> bool | None:
    """Whether a built version's RocksDB has assertions compiled in: whether its own static library (kept beside
    the object in engine/, kvlab.execution.plugins.build.ENGINE_DIR) calls glibc's __assert_fail.  The object as a
    whole is no answer: the zstd the librocksdb-sys crate links beside it keeps an assert in its dictionary builder
    (divsufsort), which RocksDB's reads and writes never reach."""
    got = holds(Path(path).parent / "engine" / "librocksdb.a", b"__assert_fail")
    return None if got is None else bool(got)


DESCRIPTOR = Descriptor(
    "rocksdb", title="RocksDB", rank=30, build=BUILD,
    configs=(
        EngineConfig(
            "rocksdb", "rocksdb", "RocksDB LSM tree, default options", honours=LSM_SETTINGS,
            compressions=_COMPRESSIONS, options_separator=";",
            notes="options: a RocksDB options string, parsed by RocksDB's GetOptionsFromString",
            colour="#009E73", durability=DURABILITY),
        EngineConfig(
            "rocksdb-tuned", "rocksdb",
            "RocksDB with seed 001's 'pfx' tuning (plain table, prefix-hash memtable, mmap reads)",
            honours=LSM_SETTINGS, compressions=_COMPRESSIONS,
            defaults={"options": translate_rocksdb_flags(ROCKSDB_PFX_FLAGS.split()).options, "compression": "none"},
            ordered_scan=False, options_separator=";",
            notes="point lookups only: a plain table with a prefix-hash memtable has no total-order scan",
            colour="#56B4E9"),
    ),
    format=AdapterFormat(remembered=LSM_TABLE_FILES + ("table_options",)),
    events=events.EVENTS, counters=counters.COUNTERS, own_config=own_config.own_config,
    cache=Cache("cache_size", 8 << 20, "RocksDB 7.8 without a block cache makes an 8 MB LRU one: its LOG reports block_cache capacity 8388608 (tests/test_engine_config.py)"),
    memory=memory,
    facts=BuildFacts(crc32_in_db=crc32_from_log, thread_locals=True, assertions_of_library=assertions),
    # the table factory carries cache, block size and bloom: those db_bench flags go into the options string
    dbbench=DbBench(flag_kinds=frozenset({"rocksdb-option", "gone"}), in_options=frozenset({"cache_size", "block_size",
                                                                                       "bloom_bits"}),
                    options=lambda flags: rocksdb_options(flags).options, default_compression="snappy"),
    # the version Debian has, as an adapter loaded at run time (`kvlab engines build rocksdb@7.8.3`): the same library as
    # the compiled-in rocksdb, so the two differ only by the dispatch (benchmarks/harness_instructions.py --loaded)
    # and two newer ones from crates.io's librocksdb-sys, whose build compiles RocksDB (db/c.cc, its C API) with
    # snappy, lz4 and zstd as Debian's has them (snappy is what its default options compress with); checksums from the
    # crates.io index, checked before the build
    versions={"7.8.3": Recipe("debian", "librocksdb-dev", minutes=0.3),
              "8.10.0": Recipe("crate", "librocksdb-sys", pin="0.16.0+8.10.0",
                               sha256="ce3d60bc059831dc1c83903fb45c103f75db65c5a7bf22272764d9cc683e348c",
                               include="rocksdb/include", library="rocksdb", features=("snappy", "lz4", "zstd"),
                               link=("stdc++",), minutes=31),
              "10.4.2": Recipe("crate", "librocksdb-sys", pin="0.17.3+10.4.2",
                               sha256="cef2a00ee60fe526157c9023edab23943fae1ce2ab6f4abb2a807c1746835de9",
                               include="rocksdb/include", library="rocksdb", features=("snappy", "lz4", "zstd"),
                               link=("stdc++",), minutes=66),
              # RocksDB 11 is in rust-librocksdb-sys (a maintained fork of librocksdb-sys, the same build.rs shape),
              # which needs Rust 1.91
              "11.12.0": Recipe("crate", "rust-librocksdb-sys", pin="0.49.0+11.12.0",
                                sha256="14819e94e1e350905a17777ac54eb0d196d1bc271b844d664e461aaa7f885a4d",
                                include="rocksdb/include", library="rocksdb", features=("snappy", "lz4", "zstd"),
                                link=("stdc++",), minutes=70, rust="1.91"),
              # Debian's 7.8.3 built as the crates build theirs (-O3, NDEBUG, the x86-64 baseline: CMake Release,
              # PORTABLE), from Debian's own source package: the versions table's base with the build held equal
              # (`kvlab versions rocksdb@7.8.3+release rocksdb@8.10.0 rocksdb@11.12.0`); the library reports 7.8.3
              "7.8.3+release": Recipe("debian-source", "rocksdb", pin="7.8.3-2",
                                      sha256="b85408a374770897332bf15e51620a5f35720dd416a4749e3899057f9cfaf84d",
                                      include="include", library="rocksdb", targets=("rocksdb",),
                                      cmake=("-DPORTABLE=1", "-DWITH_GFLAGS=OFF", "-DWITH_TESTS=OFF",
                                             "-DWITH_BENCHMARK_TOOLS=OFF", "-DWITH_TOOLS=OFF", "-DWITH_CORE_TOOLS=OFF",
                                             "-DWITH_TRACE_TOOLS=OFF", "-DWITH_SNAPPY=ON", "-DWITH_LZ4=ON",
                                             "-DWITH_ZSTD=ON", "-DFAIL_ON_WARNINGS=OFF", "-DROCKSDB_BUILD_SHARED=OFF",
                                             "-DUSE_RTTI=1", "-DCMAKE_POSITION_INDEPENDENT_CODE=ON"),
                                      link=("snappy", "lz4", "zstd", "stdc++"), minutes=35)},
    op_counters="RocksDB's PerfContext (perf_context.h: blocks read, block cache hits, bloom checks, memtable and "
                "SST gets, key comparisons) through its C API and IOStatsContext (iostats_context.h: bytes read and "
                "written through its files) through a C++ shim (iostats.cc), its threads at perf level enable_count "
                "instead of kvlab's default disable: a thread-local counter bump on each of those events, 4.7% more "
                "instructions per get (11,276 against 11,809 on 50,000 keys; benchmarks/instrument_cost.py "
                "--instructions)",
)
