"""`kvlab dbbench`: db_bench's command line, db_bench's meanings, kvlab's engines.

A seed's db_bench line runs with only the binary replaced by
`kvlab dbbench --engine E`.  Every flag is in one table, with what kvlab does with it:
kvlab.model.dbbench_flags, shared with the engine registry (rocksdb-tuned).

A flag in no db_bench is an error.  Flags that cannot be honoured for the chosen
engine are named in one warning line, never dropped silently.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..model import engines, workloads
from ..model.dbbench_flags import FLAGS, _rocksdb_options, parse_argv, translate_rocksdb_flags  # noqa: F401
from ..model.spec import RunSpec


@dataclass
class DbBenchPlan:
    spec: RunSpec
    histogram: bool
    warnings: list
    seed_was_time: bool


def plan(engine: str, argv) -> DbBenchPlan:
    flags = parse_argv(argv)
    if engine == "wiredtiger" or (engine.startswith("wiredtiger") and "use_lsm" in flags):
        # db_bench_wiredtiger's default is use_lsm=1
        engine = "wiredtiger-lsm" if flags.get("use_lsm", True) else "wiredtiger-btree"
    cfg = engines.get(engine)
    is_rocks = cfg.adapter == "rocksdb"
    run_args, settings, not_honoured = {}, {}, []
    for name, value in flags.items():
        f = FLAGS[name]
        if f.kind == "spec":
            run_args[f.target] = value
        elif f.kind == "setting":
            if is_rocks and f.target in ("cache_size", "block_size", "bloom_bits"):
                continue  # in the RocksDB options string, with the table factory
            settings[f.target] = value
        elif f.kind == "rocksdb" and not is_rocks:
            not_honoured.append(f"--{name} (RocksDB only)")
        elif f.kind == "gone":
            not_honoured.append(f"--{name} ({f.note})" if is_rocks else f"--{name} (RocksDB only; {f.note})")
        elif f.kind == "ignored":
            not_honoured.append(f"--{name}" + (f" ({f.note})" if f.note else ""))
        elif name == "use_lsm" and cfg.adapter != "wiredtiger":
            not_honoured.append("--use_lsm (WiredTiger only)")
        elif name == "verify_checksum" and not value:
            not_honoured.append("--verify_checksum=0 (kvlab always verifies)")
        elif name == "perf_level" and value > 1:
            not_honoured.append(f"--perf_level={value} (kvlab keeps RocksDB's perf counters off, level 1)")
    if is_rocks:
        extra = _rocksdb_options(flags).options
        if extra:
            settings["options"] = extra
        if "compression_type" not in flags:
            settings["compression"] = "snappy"   # db_bench's default compression_type
    elif "compression_type" not in flags and "snappy" in cfg.compressions:
        settings["compression"] = "snappy"
    for k in cfg.ignored(settings):
        flag = next((n for n, f in FLAGS.items() if f.target == k and f.kind == "setting"), k)
        not_honoured.append(f"--{flag} (no such setting in {engine})")
    if "benchmark_write_rate_limit" in flags and flags["benchmark_write_rate_limit"] > 0:
        per_write = run_args.get("key_size", 16) + run_args.get("value_size", 100)
        run_args["writes_per_second"] = flags["benchmark_write_rate_limit"] / per_write
    benchmarks = flags.get("benchmarks", "fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq")
    names = [b.strip() for b in benchmarks.split(",") if b.strip()]
    for b in names:
        workloads.get(b)
    seed = flags.get("seed", 0)
    spec = RunSpec(engine=engine, workloads=tuple(names), seed=seed or None, auto_load=False,
                   keep_db=bool(run_args.get("db")), engine_settings=settings, **run_args)
    warnings = []
    if not_honoured:
        warnings.append(f"warning: accepted but not honoured for {engine}: " + ", ".join(not_honoured))
    return DbBenchPlan(spec, flags.get("histogram", False), warnings, seed_was_time=not seed)


def format_line(b) -> str:
    """db_bench's result line: `name : X micros/op Y ops/sec; Z MB/s (F of N found)`."""
    line = (f"{b.workload:<12} : {b.micros_per_op:11.3f} micros/op {b.ops_per_sec:.0f} ops/sec;"
            f" {b.mb_per_sec:6.1f} MB/s")
    if b.found is not None and b.workload != "deleterandom" and not getattr(b, "mix", None):
        line += f" ({b.found} of {b.ops} found)"
    if b.phase == "load":
        line += " [load phase]"
    if b.partial:
        line += " [stopped early: partial]"
    return line


def format_histogram(b) -> str:
    lat = b.latency_us
    unit = "batch" if b.latency_unit == "batch" else "op"
    return (f"Microseconds per {unit}:\n"
            f"Count: {lat['count']} Average: {lat['mean']:.4f}  StdDev: {lat['stddev']:.2f}\n"
            f"Min: {lat['min']:.4f}  Median: {lat['p50']:.4f}  Max: {lat['max']:.4f}\n"
            f"Percentiles: P50: {lat['p50']:.2f} P75: {lat['p75']:.2f} P99: {lat['p99']:.2f} "
            f"P99.9: {lat['p999']:.2f} P99.99: {lat['p9999']:.2f}\n")


def header(p: DbBenchPlan, version: str, key_encoding: str) -> str:
    s = p.spec
    comp = s.engine_settings.get("compression", "none")
    after = int(s.value_size * s.compression_ratio + 0.5)
    lines = [
        f"kvlab dbbench: {s.engine} (library {version}), key encoding {key_encoding}",
        f"Keys:       {s.key_size} bytes each",
        f"Values:     {s.value_size} bytes each ({after} bytes after compression)",
        f"Entries:    {s.num}",
        f"Compression: {comp}",
        f"Seed:       {s.seed}" + (" (from the clock; pass --seed to repeat)" if p.seed_was_time else ""),
        "------------------------------------------------",
    ]
    return "\n".join(lines)


def help_flags() -> str:
    rows = [f"--{n:<40} {f.kind:<8} {f.note}" for n, f in sorted(FLAGS.items())]
    return "\n".join(rows)


def command_line(engine: str, argv) -> str:
    return "kvlab dbbench --engine " + shlex.quote(engine) + " " + " ".join(shlex.quote(a) for a in argv)
