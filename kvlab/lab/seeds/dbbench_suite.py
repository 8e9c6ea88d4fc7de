"""Seed 002: db_bench's suite, fillseq; fillrandom then compact; overwrite; readrandom (notebook
03_dbbench_suite)."""
from __future__ import annotations

import shutil

from ... import engines as engine_registry
from .common import tmpdb
from .plan import Step, attempt, by_engine, execute

# (the seed's test name, the workload run, whether it runs on the database the step before left, its compression:
# None for the suite's).  readrandom reads a database of its own, as the seed's script made it: a sequential load,
# uncompressed ("The RocksDB version of this test is based on a LSM tree generated with a sequential load"; "the
# readrandom test produces larger databases because compression is disabled"); WiredTiger's script let it settle
# with a compact first (SETTLE).  The table's row is the last workload's.
STEPS = (("fillseq", "fillseq", False, None), ("fillrandom", "fillrandom", False, None),
         ("compact", "compact", True, None), ("overwrite", "overwrite", True, None),
         ("readrandom", "fillseq,readrandom", False, "none"))
SETTLE = {"wiredtiger-lsm": "fillseq,compact,readrandom", "wiredtiger-btree": "fillseq,compact,readrandom"}
BLOOM_BITS = 10   # the seed's --bloom_bits, for every engine that has bloom filters
# the seed's --mmap_read=0 where it is not the engine's default: WiredTiger maps its files unless told not to ("WiredTiger
# matches the RocksDB configuration of disabling mmap support"; RocksDB reads with pread by default)
NO_MMAP = {"wiredtiger-lsm": {"options": "mmap=false"}, "wiredtiger-btree": {"options": "mmap=false"}}
# RocksDB's tuning in the seed's scripts (the RocksDB wiki's, as the seed copied them), per test: the bulk load's
# (fillrandom, then compact: two levels, no automatic compaction, a vector memtable) and the others' (six levels,
# L0 triggers 4/8/12, 10 MB level base: the settings under which its overwrite stalled).  Every script ran with
# --disable_wal=1.
_ROCKSDB_COMMON = ("--disable_seek_compaction=1 --target_file_size_base=67108864 --max_write_buffer_number=3 "
                   "--max_background_compactions=20 --level0_file_num_compaction_trigger=4 "
                   "--level0_slowdown_writes_trigger=8 --level0_stop_writes_trigger=12 --num_levels=6 "
                   "--delete_obsolete_files_period_micros=300000000 --min_level_to_compress=2 "
                   "--max_grandparent_overlap_factor=10 --max_bytes_for_level_base=10485760")
_ROCKSDB_BULK = ("--disable_seek_compaction=1 --target_file_size_base=1073741824 --max_write_buffer_number=30 "
                 "--max_background_compactions=20 --level0_file_num_compaction_trigger=10000000 "
                 "--level0_slowdown_writes_trigger=10000000 --level0_stop_writes_trigger=10000000 --num_levels=2 "
                 "--delete_obsolete_files_period_micros=300000000 --min_level_to_compress=2 "
                 "--max_grandparent_overlap_factor=10 --max_bytes_for_level_base=10485760 --memtablerep=vector "
                 "--disable_auto_compactions=1 --source_compaction_factor=10000000")
ROCKSDB_SEED = {"fillseq": (_ROCKSDB_COMMON, 134217728), "fillrandom": (_ROCKSDB_BULK, 268435456),
                "compact": (_ROCKSDB_BULK, 268435456), "overwrite": (_ROCKSDB_COMMON, 134217728),
                "readrandom": (_ROCKSDB_COMMON, 134217728)}
# The scripts' --block_size per engine and test ("RocksDB uses block_size 65536, WiredTiger 4096"; RocksDB's
# readrandom load 4096): a table keeps the size it was made with, so WiredTiger's compact and overwrite run on the
# table its fillrandom made, whose script gave no --block_size (None: the engine's default).
BLOCK_SIZE = {"rocksdb": {"fillseq": 65536, "fillrandom": 65536, "compact": 65536, "overwrite": 65536,
                          "readrandom": 4096},
              "wiredtiger-lsm": {"fillseq": 4096, "readrandom": 4096},
              "wiredtiger-btree": {"fillseq": 4096, "readrandom": 4096}}
# The scripts' --compression_ratio: RocksDB's gave 50, which db_bench's generator caps at all-random bytes (values
# snappy cannot shrink); WiredTiger's gave none, db_bench's 0.5 (values that halve).  The seed's engines wrote
# different data; kvlab writes what each script made.
COMPRESSION_RATIO = {"rocksdb": 50.0}
DEFAULT_RATIO = 0.5


def seed_settings(name: str, test: str, compression: str) -> dict:
    """The settings seed 002's script for `test` gave engine `name` beyond the suite's: bloom filters, no WAL,
    WiredTiger without mmap, the block size (BLOCK_SIZE), RocksDB's tuning (ROCKSDB_SEED: its options string and
    memtable size).  The values' compressibility is a run's, not an engine's: COMPRESSION_RATIO."""
    from ...model.dbbench_flags import translate_rocksdb_flags
    cfg, base = engine_registry.get(name), engine_registry.unversioned(name)   # a version runs as its configuration
    out = {"bloom_bits": BLOOM_BITS} if "bloom_bits" in cfg.honours else {}
    if "disable_wal" in cfg.honours:
        out["disable_wal"] = True
    out.update(NO_MMAP.get(base, {}))
    block = BLOCK_SIZE.get(base, {}).get(test)
    if block is not None and "block_size" in cfg.honours:
        out["block_size"] = block
    if base == "rocksdb":
        flags, memtable = ROCKSDB_SEED[test]
        out["options"] = translate_rocksdb_flags(f"{flags} --compression_type={compression}".split()).options
        out["write_buffer_size"] = memtable
    return out


def dbbench_suite_plan(engines, num, reads, threads, value_size=800, compression="snappy", seed=1,
                       memory=None, cache_size=None) -> list:
    """Per engine, from disk as seed 002 ran: STEPS in one database (readrandom in one of its own, made for it),
    with the engine's compression where it has it (else none), each within the memory budget `memory` (None: the
    engines' defaults); `cache_size` (bytes) where given, for every engine, as the seed gave both engines 1 GB
    (it wins over the budget's split; the budget then holds the data in the OS page cache, as the seed's RAM did)."""
    steps = []
    cache = {"cache_size": cache_size} if cache_size is not None else {}
    for name in engines:
        cfg, base = engine_registry.get(name), engine_registry.unversioned(name)
        comp = compression if compression in cfg.compressions else "none"
        for test, workload, existing, own in STEPS:
            if test == "readrandom":
                workload = SETTLE.get(base, workload)
            steps.append(Step(name, test, dict(
                workload=workload, num=num, reads=reads, threads=threads if test == "readrandom" else 1,
                value_size=value_size, use_existing_db=existing, seed=seed, compression=own or comp,
                compression_ratio=COMPRESSION_RATIO.get(base, DEFAULT_RATIO), interval=0, memory=memory, **cache,
                **seed_settings(name, test, own or comp)),
                seed_db=test != "readrandom",
                in_memory=False))
    return steps


def dbbench_suite(engines, num, reads, threads, value_size=800, compression="snappy", seed=1, memory=None,
                  cache_size=None):
    """fillseq; fillrandom then compact; overwrite; readrandom over a sequential load of its own, per engine, as
    seed 002 ran them."""
    import pandas as pd
    rows, results = [], []
    for _, steps in by_engine(dbbench_suite_plan(engines, num, reads, threads, value_size, compression, seed,
                                                 memory, cache_size)):
        db = tmpdb()
        try:
            for step in steps:
                r = attempt(step, db if step.seed_db else None)   # None: over its memory budget (reproduce)
                if r is None:
                    continue
                b = r.by_workload(step.name)
                results.append(b)
                lat = b.latency_us
                rows.append({"engine": step.engine, "benchmark": step.name, "ops_per_sec": b.ops_per_sec,
                             "micros_per_op": b.micros_per_op, "mb_per_sec": b.mb_per_sec, "p99_us": lat["p99"],
                             "p9999_us": lat["p9999"], "max_us": lat["max"],
                             "db_size_gb": (b.accounting["db_size_bytes"] or 0) / 1e9,
                             "compression": step.run["compression"], "phase_s": b.seconds, "phase_ops": b.ops})
        finally:
            shutil.rmtree(db, ignore_errors=True)
    return pd.DataFrame(rows), results


def dbbench_timelines_plan(engines, num, value_size, interval, seed=1, memory=None, cache_size=None) -> list:
    """Per engine: fillrandom then overwrite of `num` keys, sampled every `interval` s (the notebook's
    timelines: flushes and compactions over time), with `cache_size` as the suite's."""
    cache = {"cache_size": cache_size} if cache_size is not None else {}
    return [Step(name, "timeline", dict(workload="fillrandom,overwrite", num=num, value_size=value_size, seed=seed,
                                        interval=interval, compression_ratio=0.5, memory=memory, **cache),
                 in_memory=False)
            for name in engines]


def dbbench_timelines(engines, num, value_size, interval, seed=1, memory=None, cache_size=None):
    """(engine, its timeline run) as each ends (dbbench_timelines_plan)."""
    for step in dbbench_timelines_plan(engines, num, value_size, interval, seed, memory, cache_size):
        yield step.engine, execute(step)


def notebook_plan(p, engines) -> list:
    """Notebook 03_dbbench_suite's runs: the suite, then the timelines."""
    return (dbbench_suite_plan(engines, p["num"], p["reads"], p["threads"], value_size=p["value_size"],
                               memory=p.get("memory"), cache_size=p.get("cache_size"))
            + dbbench_timelines_plan(engines, p["timeline_num"], p["value_size"], p["timeline_interval"],
                                     memory=p.get("memory"), cache_size=p.get("cache_size")))


def engine_ratio(df, value="ops_per_sec", by="benchmark", base=None):
    """Each engine's figure relative to `base` (default: the first engine), per `by`."""
    engines_ = list(dict.fromkeys(df.engine))
    base = base or engines_[0]
    piv = df.pivot_table(index=by, columns="engine", values=value)
    return piv.div(piv[base], axis=0)
