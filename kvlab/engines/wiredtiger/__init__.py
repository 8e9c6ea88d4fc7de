"""WiredTiger: MongoDB's engine, as a row-store B-tree and as an LSM tree (engine_wiredtiger.c)."""
import re

from ..descriptor import (
    AdapterFormat,
    Cache,
    DbBench,
    Descriptor,
    Durability,
    EngineConfig,
    Recipe,
    RecoveryLog,
    engine_share,
)
from . import counters, events, own_config

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring).
# `defines`: the folder of its snappy extension, which wiredtiger_open loads for a snappy table.
BUILD = {"header": "wiredtiger.h", "library": "wiredtiger", "package": "libwiredtiger-dev",
         "defines": {"KV_WT_EXTDIR": "{libdir}"}}

_LOG_ON = r"(^|[,(])\s*log\s*=\s*\(\s*enabled\s*=\s*(true|1|on)\b"
_LOG_OFF = r"(^|[,(])\s*log\s*=\s*\(\s*enabled\s*=\s*(false|0|off)\b"


def log_on_for(settings) -> bool:
    """Whether engine_wiredtiger.c's wt_open opens with the log on for these settings: with sync (and the WAL not
    disabled), or when the options turn it on; options that turn it off win."""
    opts = str(settings.get("options") or "")
    if re.search(_LOG_OFF, opts):
        return False
    return bool(settings.get("sync") and not settings.get("disable_wal")) or bool(re.search(_LOG_ON, opts))


DURABILITY = (
    Durability("log+sync", {"sync": True}, "durable",
               "WiredTiger with its log and transaction_sync=(enabled=true): a commit is durable when it returns"),
    Durability("log", {"sync": False, "options": "log=(enabled=true)"}, "prefix",
               "WiredTiger's log without transaction_sync: commits are written to the log, flushed in the "
               "background; a crash loses the newest, recovery replays the rest"),
    Durability("no log", {"sync": False}, "prefix",
               "WiredTiger without a log: durable as of the last checkpoint"),
)

def memory(budget: int) -> dict:
    """A memory budget as WiredTiger's settings: its cache is the one knob (WiredTiger's "Cache and eviction
    tuning": cache_size bounds the memory it keeps for its B-tree pages; the LSM's chunks live in that cache too),
    so cache_size is the budget less a margin.  The margin is the process itself (descriptor.PROCESS_BYTES) and a
    quarter of the rest: WiredTiger reads its files through the OS, so their page cache, and what it allocates
    beyond the cache (eviction lets the cache run past its target; allocator overhead), need room in the same
    memory.  MongoDB, which embeds WiredTiger, keeps half of memory less 1 GB for it for the same reason, but
    shares the machine with a server: a benchmark gives it more."""
    return {"cache_size": engine_share(budget) * 3 // 4}


def direct_io(flags) -> str:
    """db_bench's direct I/O flags as WiredTiger's: direct_io=[data] (O_DIRECT for its data files), which covers
    both the reads (--use_direct_reads) and the checkpoints' and merges' writes
    (--use_direct_io_for_flush_and_compaction): WiredTiger cannot have one without the other."""
    on = flags.get("use_direct_reads") or flags.get("use_direct_io_for_flush_and_compaction")
    return "direct_io=[data]" if on else ""


# the CMake build of a PyPI sdist (scripts/build_engines.sh's options, as a static library); its targets
# CC_OPTIMIZE_LEVEL: WiredTiger 11's CMake strips Release's -O3 and puts its own level, -O2 by default; -O3 keeps
# every release build of a version table at one level (RocksDB's crates' and 3.2.1+release's -O3)
_WT_CMAKE = ("-DENABLE_PYTHON=0", "-DENABLE_SNAPPY=1", "-DHAVE_DIAGNOSTIC=0", "-DENABLE_STRICT=0",
             "-DENABLE_COLORIZE_OUTPUT=0", "-DENABLE_STATIC=1", "-DENABLE_SHARED=0", "-DWITH_PIC=1",
             "-DHAVE_UNITTEST=0", "-DENABLE_LLVM=0", "-DCC_OPTIMIZE_LEVEL=-O3")
_WT_TARGETS = ("wiredtiger_static", "wiredtiger_snappy")

DESCRIPTOR = Descriptor(
    "wiredtiger", title="WiredTiger", rank=40, build=BUILD,
    configs=(
        EngineConfig(
            "wiredtiger-btree", "wiredtiger", "WiredTiger row-store B-tree (table:)", variant="btree",
            honours=frozenset({"cache_size", "sync", "disable_wal", "compression", "block_size", "options",
                               "table_options"}),
            compressions=("none", "snappy"),
            notes="options: appended to wiredtiger_open config; table_options: appended to the table config",
            colour="#CC79A7", aliases=("wiredtiger",), durability=DURABILITY),
        EngineConfig(
            "wiredtiger-lsm", "wiredtiger", "WiredTiger LSM tree (lsm:)", variant="lsm",
            honours=frozenset({"cache_size", "sync", "disable_wal", "compression", "block_size", "bloom_bits",
                               "write_buffer_size", "options", "table_options"}),
            compressions=("none", "snappy"),
            notes="write_buffer_size maps to lsm chunk_size, bloom_bits to lsm bloom_bit_count",
            colour="#D55E00", durability=DURABILITY,
            least={"cache_size": 32 << 20}),   # wiredtiger_open refuses less: "LSM cache size too small"
    ),
    format=AdapterFormat(fixed=("compression", "block_size", "bloom_bits", "write_buffer_size", "table_options"),
                         log=RecoveryLog(files="WiredTigerLog.*", on_option="log=(enabled=true)",
                                         on_pattern=_LOG_ON, off_pattern=_LOG_OFF, on_for=log_on_for)),
    events=events.EVENTS, counters=counters.COUNTERS, own_config=own_config.own_config,
    cache=Cache("cache_size", 100 << 20, "wiredtiger_open's cache_size default, 100MB"), memory=memory,
    counter_cost="WiredTiger's statistics=(fast): counters every operation updates, which cost 17% of a "
                 "2-thread readrandom here (benchmarks/instrument_cost.py)",
    # db_bench_wiredtiger's --use_lsm (default 1) picks the LSM or the B-tree configuration
    dbbench=DbBench(special=frozenset({"use_lsm"}), alias="wiredtiger",
                    pick=lambda flags: "wiredtiger-lsm" if flags.get("use_lsm", True) else "wiredtiger-btree",
                    own_flags={"use_direct_reads": direct_io, "use_direct_io_for_flush_and_compaction": direct_io},
                    refusals={"compaction_style": "its LSM merges chunks by its own rules, with no compaction "
                                                  "styles to choose"}),
    # the version Debian has, as an adapter loaded at run time (`kvlab engines build wiredtiger@3.2.1`): the same library as
    # the compiled-in wiredtiger, so the two differ only by the dispatch (benchmarks/harness_instructions.py --loaded)
    # and two newer ones from the sdists WiredTiger publishes on PyPI (its whole source; sha256 as PyPI has it, checked
    # before the build): a CMake Release build as scripts/build_engines.sh's, static and position-independent so
    # that it links into the object beside Debian's 3.2.1, with its snappy compressor as a module kept beside it.
    # 3.2.1+release: 3.2.1 built as the newer ones are (-O3, NDEBUG, no -march; Debian's is -O2 with its hardening
    # flags), from the 3.2.1 sdist (autotools: Debian's source package's tarball is not served here), so that the
    # versions table holds the build equal
    versions={"3.2.1": Recipe("debian", "libwiredtiger-dev", minutes=0.2),
              "3.2.1+release": Recipe("pypi", "wiredtiger", pin="3.2.1",
                                      sha256="094f2a00e13942a021bc2c376037b21dfda2c6b11284502171840e1749010b31",
                                      include=".", library="wiredtiger", link=("dl",),
                                      configure=("--enable-static", "--enable-shared", "--with-pic",
                                                 "--enable-snappy", "--disable-python"),
                                      targets=("libwiredtiger.la", "ext/compressors/snappy/libwiredtiger_snappy.la"),
                                      minutes=4),
              "11.0.0": Recipe("pypi", "wiredtiger", pin="11.0.0",
                               sha256="1307cafbed9ce727b6e85bb8963ee5c39060fa7fe54d4c12e09d5ba48619fa61",
                               include="include", library="wiredtiger", link=("dl",), cmake=_WT_CMAKE,
                               targets=_WT_TARGETS, minutes=21),
              "11.3.1": Recipe("pypi", "wiredtiger", pin="11.3.1",
                               sha256="95052d1b6fc06921dd617aafa1ba2a773d8dbbbf2eb74f77147290a630e598d0",
                               include="include", library="wiredtiger", link=("dl",), cmake=_WT_CMAKE,
                               targets=_WT_TARGETS, minutes=19)},
    op_counters="WiredTiger's connection statistics with statistics=(fast) (its counter_cost): cursor calls, pages "
                "and bytes read into its cache, pages requested from it, blocks read",
    op_counter_names={"cursor: cursor search calls": "cursor_search", "cursor: cursor insert calls": "cursor_insert",
                      "cursor: cursor update calls": "cursor_update", "cursor: cursor next calls": "cursor_next",
                      "cache: pages read into cache": "pages_read_into_cache",
                      "cache: bytes read into cache": "bytes_read_into_cache",
                      "cache: pages requested from the cache": "pages_requested",
                      "block-manager: blocks read": "blocks_read",
                      "transaction: transaction begins": "txn_begins"},
)
