"""db_bench's flags as data: every flag kvlab accepts, what it maps to, and the one
translation of RocksDB's tuning flags into a RocksDB options string.

It sits in the model because two users need it: the engine registry (`rocksdb-tuned` is
seed 001's flag set, translated here) and `kvlab dbbench` (the face that runs a db_bench
command line).  The kinds of flag:

  spec      sets a RunSpec field (num, reads, threads, ...)
  setting   sets a generic engine setting (cache_size, sync, compression, ...)
  rocksdb-option  becomes part of a RocksDB options string (RocksDB; or an engine's own options: own_flags)
  special   handled by `kvlab dbbench` (benchmarks, histogram, use_lsm, ...)
  mixgraph  a parameter of the mixgraph benchmark (kvlab.model.workloads.mixgraph); named in the warning
            line when no mixgraph runs; one kvlab cannot honour is refused (mixgraph.REFUSED)
  gone      accepted, but RocksDB 7.8 no longer has it: named in the warning line
  ignored   accepted, not honoured by kvlab (yet): named in the warning line

A flag marked `measured` changes what is measured (compaction_style, direct I/O): given a value other than
db_bench's default to an engine that cannot honour it, it is refused with an error naming the engines that do,
never named in a warning and run anyway.  An engine's descriptor may honour a RocksDB flag in its own options
(kvlab.engines.descriptor.DbBench.own_flags: WiredTiger's direct_io) or say why it cannot (DbBench.refusals).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

from .. import errors
from .workloads.mixgraph import DEFAULTS as MIXGRAPH_DEFAULTS


def _bool(v):
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "t", "y"):
        return True
    if s in ("0", "false", "no", "f", "n"):
        return False
    raise ValueError(f"expected 0/1/true/false, got {v!r}")


def _int(v):
    return int(float(v)) if "e" in str(v).lower() else int(v)


_COMPRESSION = {"none": "none", "snappy": "snappy", "lz4": "lz4", "zstd": "zstd"}


def _compression(v):
    if v not in _COMPRESSION:
        raise ValueError(f"allowed: {', '.join(_COMPRESSION)}")
    return _COMPRESSION[v]


# db_bench's --compaction_style: its integers, and RocksDB's names for them (options strings take the names)
COMPACTION_STYLES = {0: "kCompactionStyleLevel", 1: "kCompactionStyleUniversal", 2: "kCompactionStyleFIFO"}


def _compaction_style(v):
    n = _int(v)
    if n not in COMPACTION_STYLES:
        raise ValueError("allowed: 0 (level), 1 (universal), 2 (fifo), as db_bench")
    return n


_MIXGRAPH_NOTES = {
    "mix_get_ratio": "mixgraph: the share of gets (db_bench's default 1)",
    "mix_put_ratio": "mixgraph: the share of puts",
    "mix_seek_ratio": "mixgraph: the share of seeks (a seek, then a Pareto-long scan)",
    "keyrange_dist_a": "mixgraph: key ranges' shares a*exp(b*x) + c*exp(d*x) (the paper's 14.18)",
    "keyrange_num": "mixgraph: key ranges (the paper's 30)",
    "key_dist_a": "mixgraph: power law a*x^b within a range (0: uniform keys; the paper's 0.002312)",
    "key_dist_b": "mixgraph: power law a*x^b within a range (the paper's 0.3467)",
    "value_k": "mixgraph: value sizes, a generalized Pareto (k, sigma, theta)",
    "iter_k": "mixgraph: seek lengths, a generalized Pareto (k, sigma, theta)",
    "sine_mix_rate": "mixgraph: an open loop at sine_a*sin(sine_b*t + sine_c) + sine_d queries/s in total",
    "sine_mix_rate_noise": "mixgraph: refused unless 0 (kvlab's rate schedules are exact)",
}


@dataclass(frozen=True)
class Flag:
    kind: str             # spec | setting | rocksdb | special | gone | ignored
    parse: Callable[[str], Any] = str
    target: str = ""      # spec field / setting name / RocksDB option name
    note: str = ""
    measured: bool = False   # changes what is measured: refused where not honoured (unless given its default)
    default: Any = None      # db_bench's default (a measured flag given it changes nothing anywhere)


FLAGS: dict[str, Flag] = {
    # the common ones
    "benchmarks": Flag("special", str),
    "num": Flag("spec", _int, "num"),
    "reads": Flag("spec", _int, "reads"),
    "threads": Flag("spec", _int, "threads"),
    "duration": Flag("spec", float, "duration"),
    "value_size": Flag("spec", _int, "value_size"),
    "key_size": Flag("spec", _int, "key_size"),
    "compression_ratio": Flag("spec", float, "compression_ratio"),
    "seed": Flag("special", _int),
    "db": Flag("spec", str, "db"),
    "use_existing_db": Flag("spec", _bool, "use_existing_db"),
    "writes_per_second": Flag("spec", float, "writes_per_second"),
    "seek_nexts": Flag("spec", _int, "seek_nexts"),
    "entries_per_batch": Flag("spec", _int, "batch"),
    "batch_size": Flag("spec", _int, "batch", note="multireadrandom's keys per MultiGet (db_bench's --batch_size); "
                       "writes per batch elsewhere, as --entries_per_batch"),
    "readwritepercent": Flag("spec", _int, "readwritepercent", note="readrandomwriterandom: of each 100 ops, the "
                             "reads (default 90)"),
    "cache_size": Flag("setting", _int, "cache_size"),
    "sync": Flag("setting", _bool, "sync"),
    "disable_wal": Flag("setting", _bool, "disable_wal"),
    "compression_type": Flag("setting", _compression, "compression"),
    "block_size": Flag("setting", _int, "block_size"),
    "bloom_bits": Flag("setting", _int, "bloom_bits"),
    "write_buffer_size": Flag("setting", _int, "write_buffer_size"),
    "open_files": Flag("setting", _int, "max_open_files"),
    "histogram": Flag("special", _bool),
    "use_lsm": Flag("special", _bool, note="WiredTiger only: 1 = lsm:, 0 = table: (btree)"),
    "benchmark_write_rate_limit": Flag("special", _int, note="bytes/s, converted to writes/s"),
    "stats_interval": Flag("ignored", _int, note="per-interval reporting arrives with the measurement work"),
    "report_interval_seconds": Flag("ignored", float, note="per-interval reporting arrives with the measurement work"),
    "statistics": Flag("ignored", _bool, note="engine statistics arrive with the measurement work"),
    "stats_per_interval": Flag("ignored", _int),
    "perf_level": Flag("special", _int, note="kvlab runs RocksDB at perf level 1 (counters off), db_bench's default"),
    "verify_checksum": Flag("special", _bool, note="kvlab always reads with checksums verified"),
    "keys_per_prefix": Flag("ignored", _int, note="kvlab uses one key encoding for every engine"),
    "use_existing_keys": Flag("ignored", _bool),
    "max_num_range_tombstones": Flag("ignored", _int),
    "deletepercent": Flag("ignored", _int, note="randomwithverify's, a benchmark kvlab does not run"),
    # what is measured: RocksDB's options; WiredTiger honours direct I/O in its own (its descriptor's own_flags)
    "compaction_style": Flag("rocksdb-option", _compaction_style, "compaction_style", measured=True, default=0,
                             note="level=0, universal=1, fifo=2 (RocksDB only; refused elsewhere)"),
    "use_direct_reads": Flag("rocksdb-option", _bool, "use_direct_reads", measured=True, default=False,
                             note="O_DIRECT reads (RocksDB; WiredTiger direct_io=[data]; refused elsewhere)"),
    "use_direct_io_for_flush_and_compaction": Flag(
        "rocksdb-option", _bool, "use_direct_io_for_flush_and_compaction", measured=True, default=False,
        note="O_DIRECT flush and compaction writes (RocksDB; WiredTiger direct_io=[data]; refused elsewhere)"),
    # RocksDB tuning, mapped onto RocksDB 7.8's options
    "num_levels": Flag("rocksdb-option", _int, "num_levels"),
    "max_write_buffer_number": Flag("rocksdb-option", _int, "max_write_buffer_number"),
    "min_write_buffer_number_to_merge": Flag("rocksdb-option", _int, "min_write_buffer_number_to_merge"),
    "level0_file_num_compaction_trigger": Flag("rocksdb-option", _int, "level0_file_num_compaction_trigger"),
    "level0_slowdown_writes_trigger": Flag("rocksdb-option", _int, "level0_slowdown_writes_trigger"),
    "level0_stop_writes_trigger": Flag("rocksdb-option", _int, "level0_stop_writes_trigger"),
    "target_file_size_base": Flag("rocksdb-option", _int, "target_file_size_base"),
    "target_file_size_multiplier": Flag("rocksdb-option", _int, "target_file_size_multiplier"),
    "max_bytes_for_level_base": Flag("rocksdb-option", _int, "max_bytes_for_level_base"),
    "max_bytes_for_level_multiplier": Flag("rocksdb-option", float, "max_bytes_for_level_multiplier"),
    "max_background_compactions": Flag("rocksdb-option", _int, "max_background_compactions"),
    "max_background_flushes": Flag("rocksdb-option", _int, "max_background_flushes"),
    "max_background_jobs": Flag("rocksdb-option", _int, "max_background_jobs"),
    "delete_obsolete_files_period_micros": Flag("rocksdb-option", _int, "delete_obsolete_files_period_micros"),
    "disable_auto_compactions": Flag("rocksdb-option", _bool, "disable_auto_compactions"),
    "mmap_read": Flag("rocksdb-option", _bool, "allow_mmap_reads"),
    "mmap_write": Flag("rocksdb-option", _bool, "allow_mmap_writes"),
    "bloom_locality": Flag("rocksdb-option", _int, "bloom_locality"),
    "prefix_size": Flag("rocksdb-option", _int, "prefix_extractor"),
    "memtablerep": Flag("rocksdb-option", str, "memtable"),
    "use_plain_table": Flag("rocksdb-option", _bool, "table_factory"),
    "cache_numshardbits": Flag("rocksdb-option", _int, "block_cache"),
    "min_level_to_compress": Flag("rocksdb-option", _int, "compression_per_level"),
    "max_grandparent_overlap_factor": Flag("gone", _int, note="removed in RocksDB 5"),
    "hard_rate_limit": Flag("gone", float, note="removed in RocksDB 5"),
    "soft_rate_limit": Flag("gone", float, note="removed in RocksDB 5"),
    "disable_seek_compaction": Flag("gone", _bool, note="removed in RocksDB 3"),
    "disable_data_sync": Flag("gone", _bool, note="removed in RocksDB 5"),
    "source_compaction_factor": Flag("gone", _int, note="removed in RocksDB 5"),
    # mixgraph (Meta's model; kvlab.model.workloads.mixgraph), db_bench's names and defaults
    **{name: Flag("mixgraph", _bool if name == "sine_mix_rate" else
                  _int if name in ("keyrange_num", "mix_max_scan_len", "mix_max_value_size",
                                   "sine_mix_rate_interval_milliseconds") else float, default=default,
                  note=_MIXGRAPH_NOTES.get(name, ""))
       for name, default in MIXGRAPH_DEFAULTS.items()},
}

@dataclass
class RocksTranslation:
    options: str


def parse_argv(argv) -> dict:
    """{flag: parsed value} from db_bench-style arguments; unknown flags raise."""
    out = {}
    i = 0
    argv = list(argv)
    while i < len(argv):
        tok = argv[i]
        if not tok.startswith("--"):
            raise errors.SpecError(f"unexpected argument {tok!r}; db_bench flags look like --name=value")
        name, eq, value = tok[2:].partition("=")
        if not eq:
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                value = argv[i + 1]
                i += 1
            elif name.startswith("no") and name[2:] in FLAGS:
                name, value = name[2:], "0"
            else:
                value = "1"
        if name not in FLAGS:
            close = difflib.get_close_matches(name.replace("-", "_"), list(FLAGS), n=3, cutoff=0.6)
            hint = f" (did you mean {' or '.join('--' + c for c in close)}?)" if close else ""
            raise errors.SpecError(
                f"--{name} is not a db_bench flag kvlab knows{hint}; see `kvlab dbbench --help-flags` for the "
                "accepted ones")
        try:
            out[name] = FLAGS[name].parse(value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise errors.SpecError(f"--{name}={value}: {exc}") from None
        i += 1
    return out


def translate_rocksdb_flags(argv) -> RocksTranslation:
    """The RocksDB options string for db_bench flags (the tuning flags plus the
    table-level cache/block/bloom settings), used by dbbench and by rocksdb-tuned."""
    return rocksdb_options(parse_argv(argv) if not isinstance(argv, dict) else argv)


def rocksdb_options(flags: dict) -> RocksTranslation:
    parts = []
    key_size = flags.get("key_size", 16)
    bloom = flags.get("bloom_bits", -1)
    for name, value in flags.items():
        f = FLAGS[name]
        if f.kind != "rocksdb-option":
            continue
        if name == "prefix_size":
            if value > 0:
                parts.append(f"prefix_extractor=rocksdb.FixedPrefix.{value}")
        elif name == "memtablerep":
            reps = {"skip_list": "skip_list", "vector": "vector", "prefix_hash": "prefix_hash:1000000",
                    "hash_linkedlist": "hash_linkedlist:1000000"}
            if value not in reps:
                raise errors.SpecError(f"--memtablerep={value}; allowed: {', '.join(reps)}")
            parts.append(f"memtable={reps[value]}")
            if value != "skip_list":
                parts.append("allow_concurrent_memtable_write=false")
        elif name == "use_plain_table":
            if value:
                parts.append("table_factory=PlainTable")
                bits = bloom if bloom >= 0 else 10
                parts.append(f"plain_table_factory={{user_key_len={key_size};bloom_bits_per_key={bits};"
                             "hash_table_ratio=0.75}")
        elif name == "compaction_style":
            parts.append(f"compaction_style={COMPACTION_STYLES[value]}")
        elif name == "cache_numshardbits":
            continue  # folded into the block cache below
        elif name == "min_level_to_compress":
            if value >= 0:
                comp = {"none": "kNoCompression", "snappy": "kSnappyCompression", "lz4": "kLZ4Compression",
                        "zstd": "kZSTD"}[flags.get("compression_type", "snappy")]
                levels = flags.get("num_levels", 7)
                per = ["kNoCompression" if i < value else comp for i in range(levels)]
                parts.append("compression_per_level=" + ":".join(per))
        elif isinstance(value, bool):
            parts.append(f"{f.target}={'true' if value else 'false'}")
        else:
            parts.append(f"{f.target}={value}")
    if not flags.get("use_plain_table"):
        table = []
        if flags.get("block_size"):
            table.append(f"block_size={flags['block_size']}")
        if flags.get("cache_size") or "cache_numshardbits" in flags:
            cache = [f"capacity={flags.get('cache_size', 8 << 20)}"]
            if "cache_numshardbits" in flags:
                cache.append(f"num_shard_bits={flags['cache_numshardbits']}")
            table.append("block_cache={" + ";".join(cache) + "}")
        if bloom > 0:
            table.append(f"filter_policy=bloomfilter:{bloom}:false")
        if table:
            parts.append("block_based_table_factory={" + ";".join(table) + "}")
    return RocksTranslation(";".join(parts))
