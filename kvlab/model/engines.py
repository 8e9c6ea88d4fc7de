"""The engine-configuration registry.

An engine configuration is an adapter (one C file in cython_ext/src) plus a
fixed variant and default settings: "rocksdb" and "rocksdb-tuned" share an
adapter, as do "wiredtiger-btree" and "wiredtiger-lsm".  Nothing in kvlab
branches on engine names; what differs between engines lives here as data.
Which adapters this build compiled in is the execution layer's business
(kvlab.execution.native), so this module imports without the extension.

An engine is one checklist (ARCHITECTURE.md, "A new engine"): an ADAPTERS row (what setup.py
builds it against, and the package it comes from), a register() row per configuration, its
adapter file, its reopen rules (kvlab.model.dbformat.FORMATS).  tests/test_engine_checklist.py
lists what a row lacks.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .. import errors
from .dbbench_flags import translate_rocksdb_flags

# The generic settings an adapter may honour (kv_config in kv_engine.h).
ENGINE_SETTINGS = ("cache_size", "sync", "disable_wal", "compression", "map_size", "block_size",
                   "bloom_bits", "write_buffer_size", "max_open_files", "options", "table_options")


def parse_setting(item: str, where: str) -> tuple:
    """One engine setting written as KEY=VALUE (`kvlab run --set`, the run builder's options):
    integers and true/false become such, anything else stays a string.  `where` names the
    input in the error."""
    key, sep, value = item.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or key not in ENGINE_SETTINGS:
        raise errors.SpecError(f"{where} ({item!r}): expected KEY=VALUE; allowed keys: {', '.join(ENGINE_SETTINGS)}")
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    try:
        return key, int(value)
    except ValueError:
        return key, value

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


# One row per C adapter, cython_ext/src/engine_<adapter>.c (exporting kv_engine_<adapter>, the contract of
# kv_engine.h).  setup.py reads this assignment with `ast`, since it runs before kvlab can be imported: keep
# it a literal (no names, no calls).
#   header, library   what the build looks for under a prefix (/usr, or KVLAB_<ADAPTER>_PREFIX); an adapter
#                     without them needs no library and is compiled into every build
#   extra_libraries   linked beside the library; static_deps: beside a static one (a `make engines` build)
#   package           where the library comes from: the Debian package scripts/setup.sh installs
#   planned           the adapter is not written: why the engine cannot be had here.  Its configurations are
#                     listed (PLANNED: `kvlab engines`, the engine reference) with this reason, never offered
#                     (REGISTRY: --engine, help, choices); nothing builds or tests it
ADAPTERS = {
    "lmdb": {"header": "lmdb.h", "library": "lmdb", "package": "liblmdb-dev"},
    "leveldb": {"header": "leveldb/c.h", "library": "leveldb", "package": "libleveldb-dev",
                "static_deps": ["stdc++", "snappy"]},
    "rocksdb": {"header": "rocksdb/c.h", "library": "rocksdb", "package": "librocksdb-dev",
                "static_deps": ["stdc++", "snappy", "lz4", "zstd", "z", "bz2", "dl", "m"]},
    "wiredtiger": {"header": "wiredtiger.h", "library": "wiredtiger", "package": "libwiredtiger-dev"},
    "bdb": {"header": "db.h", "library": "db", "package": "libdb5.3-dev"},
    "null": {"package": "nothing (built into every kvlab)"},
    "fdb": {"package": "libfdb_c (FoundationDB client; no reachable registry ships it)",
            "planned": "no reachable package registry ships FoundationDB's libfdb_c, and kvlab has no adapter for it"},
}


@dataclass(frozen=True)
class EngineConfig:
    name: str
    adapter: str
    description: str
    debian_package: str = ""                  # "": its adapter's package (ADAPTERS)
    variant: str | None = None
    defaults: Mapping[str, object] = field(default_factory=dict)
    honours: frozenset = frozenset()          # which ENGINE_SETTINGS mean something here
    compressions: tuple = ("none",)
    ordered_scan: bool = True                 # full-range iteration in key order works
    notes: str = ""
    options_separator: str = ","              # joins default and given option strings
    stores_data: bool = True                  # False: the null engine (measures the harness, stores nothing)
    larger_than_ram: Mapping[str, object] = field(default_factory=dict)   # the engine's own advice for a
    #                                           database larger than memory (memory-bounded runs use it)
    capacity: str | None = None               # the setting that bounds the database's size (LMDB's map_size),
    #                                           its value in `defaults`: a run that cannot fit is refused first

    def __post_init__(self):
        if not self.debian_package:
            object.__setattr__(self, "debian_package", ADAPTERS.get(self.adapter, {}).get("package", ""))

    def config(self, settings: Mapping[str, object], max_threads: int) -> dict:
        """The adapter config: defaults, then the caller's settings on top."""
        cfg = dict(self.defaults)
        for key, value in settings.items():
            if value is None:
                continue
            if key in ("options", "table_options") and cfg.get(key) and value:
                cfg[key] = f"{cfg[key]}{self.options_separator}{value}"
            else:
                cfg[key] = value
        cfg["variant"] = self.variant
        cfg["max_threads"] = max_threads
        return cfg

    def ignored(self, settings: Mapping[str, object]) -> list[str]:
        """Settings the caller gave that this engine cannot honour."""
        return [k for k, v in settings.items() if v not in (None, "", 0, False) and k not in self.honours]


_LSM = frozenset({"cache_size", "sync", "disable_wal", "compression", "block_size", "bloom_bits",
                  "write_buffer_size", "max_open_files", "options"})


# The configurations kvlab offers (--engine, every command's help, kvlab.run, the run builder): those whose
# adapter is written.  A configuration of a planned adapter (ADAPTERS' `planned`) goes to PLANNED instead: listed
# with the reason it cannot be had, never offered, and an --engine naming it is an unknown engine.
REGISTRY: dict[str, EngineConfig] = {}
PLANNED: dict[str, EngineConfig] = {}


def register(cfg: EngineConfig) -> EngineConfig:
    (PLANNED if unobtainable(cfg) else REGISTRY)[cfg.name] = cfg
    return cfg


def unobtainable(cfg: EngineConfig) -> str | None:
    """Why configuration `cfg` cannot be had in any build here (its adapter's `planned` reason), or None."""
    row = ADAPTERS.get(cfg.adapter)
    return row.get("planned") if isinstance(row, dict) else None


def listed() -> dict[str, EngineConfig]:
    """Every configuration kvlab knows of, in registry order: the offered ones (REGISTRY), then the planned."""
    return {**REGISTRY, **PLANNED}


register(EngineConfig(
    "lmdb", "lmdb", "LMDB B+tree, memory-mapped, single writer",
    honours=frozenset({"sync", "map_size", "options"}),
    defaults={"map_size": 64 << 30}, capacity="map_size",   # the map its data file can grow to (64 GiB)
    notes="options: comma list of nosync, nometasync, writemap, mapasync, nordahead, nomeminit; "
          "reads renew a read txn per get; the OS page cache is the cache",
    # LMDB's documentation: MDB_NORDAHEAD "may help random read performance when the DB is larger than RAM";
    # with readahead, a 1M-node LinkBench in 384M read 13 MB per query
    larger_than_ram={"options": "nordahead"}))
register(EngineConfig(
    "leveldb", "leveldb", "LevelDB LSM tree", honours=_LSM - {"disable_wal"},
    compressions=("none", "snappy"),
    notes="options: key=value list of write_buffer_size, block_size, max_open_files, max_file_size, "
          "paranoid_checks, block_restart_interval, bloom_bits"))
register(EngineConfig(
    "rocksdb", "rocksdb", "RocksDB LSM tree, default options", honours=_LSM,
    compressions=("none", "snappy", "lz4", "zstd"), options_separator=";",
    notes="options: a RocksDB options string, parsed by RocksDB's GetOptionsFromString"))
register(EngineConfig(
    "rocksdb-tuned", "rocksdb",
    "RocksDB with seed 001's 'pfx' tuning (plain table, prefix-hash memtable, mmap reads)",
    honours=_LSM, compressions=("none", "snappy", "lz4", "zstd"),
    defaults={"options": translate_rocksdb_flags(ROCKSDB_PFX_FLAGS.split()).options, "compression": "none"},
    ordered_scan=False, options_separator=";",
    notes="point lookups only: a plain table with a prefix-hash memtable has no total-order scan"))
register(EngineConfig(
    "wiredtiger-btree", "wiredtiger", "WiredTiger row-store B-tree (table:)", variant="btree",
    honours=frozenset({"cache_size", "sync", "disable_wal", "compression", "block_size", "options",
                       "table_options"}),
    compressions=("none", "snappy"),
    notes="options: appended to wiredtiger_open config; table_options: appended to the table config"))
register(EngineConfig(
    "wiredtiger-lsm", "wiredtiger", "WiredTiger LSM tree (lsm:)", variant="lsm",
    honours=frozenset({"cache_size", "sync", "disable_wal", "compression", "block_size", "bloom_bits",
                       "write_buffer_size", "options", "table_options"}),
    compressions=("none", "snappy"),
    notes="write_buffer_size maps to lsm chunk_size, bloom_bits to lsm bloom_bit_count"))
register(EngineConfig(
    "bdb", "bdb", "Berkeley DB 5.3 B-tree, transactional environment with the log on (as seed 001)",
    variant="txn", honours=frozenset({"cache_size", "sync"}),
    notes="cache_size defaults to 64 MiB; deadlocks are detected and retried"))
register(EngineConfig(
    "bdb-notxn", "bdb", "Berkeley DB 5.3 B-tree, no transactions or log (Concurrent Data Store)",
    variant="notxn", honours=frozenset({"cache_size"}),
    notes="a batch is buffered and applied at commit: abort discards it, a crash mid-commit is not atomic"))
register(EngineConfig(
    "null", "null", "no storage: every get finds a value, writes are dropped (YCSB's BasicDB); the harness alone",
    stores_data=False,
    notes="for measuring kvlab's own cost; never a claim about a storage engine"))
register(EngineConfig(
    "fdb", "fdb", "FoundationDB through libfdb_c (needs a running cluster)",
    honours=frozenset({"options"}), notes="adapter not written yet; loads libfdb_c at run time"))


def get(name: str) -> EngineConfig:
    """The configuration called `name`, or a SpecError listing the known ones."""
    try:
        cfg = REGISTRY[name]
    except KeyError:
        planned = PLANNED.get(name)
        note = f"; {name} is not obtainable here: {unobtainable(planned)}" if planned is not None else ""
        raise errors.SpecError(f"engine {name!r} is unknown; allowed: {', '.join(REGISTRY)}{note}") from None
    return cfg
