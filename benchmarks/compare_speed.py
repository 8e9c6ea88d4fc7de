"""`kvlab results compare` over a big results store (target: under 2 s for 10,000 runs).

Builds a synthetic store of --runs runs (each a load and a run phase, so twice as many benchmarks) whose
records are real ones from one small LMDB run, varied (engines, workloads, threads, tags, sweeps, the
figures drawn around each engine's own level) and padded to --record-kb (default 32, the issue's budget
for a stored result with its histograms), then times three comparisons as a user types them, each as the
whole command in a fresh process (imports included) and as kvlab.compare in this one:

  narrow: two tags of 100 runs each;
  wide:   engine=lmdb against engine=rocksdb, --where workload=readrandom;
  widest: engine=lmdb against engine=rocksdb, every benchmark of both (a quarter of the store each).

    python benchmarks/compare_speed.py [--runs 10000] [--record-kb 32] [--rounds 3] [--keep DIR]
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from _common import ROOT, kvlab, median

from kvlab.results.store import Store, _duckdb

ENGINES = {"lmdb": 4.0e6, "rocksdb": 1.4e6, "leveldb": 1.1e6, "wiredtiger-btree": 1.6e6}
WORKLOADS = ("readrandom", "readseq", "readwhilewriting", "fillrandom")
THREADS = (1, 2, 4)
COLUMNS = ("id", "run_id", "engine", "workload", "phase", "threads", "ops", "seconds", "ops_per_sec", "micros_per_op",
           "found", "seed", "record", "trial", "partial", "p50_us", "p99_us", "p999_us", "p9999_us", "max_us",
           "cpu_pct", "db_size_bytes", "engine_library", "git_commit", "num", "value_size", "key_size",
           "latency_unit", "engine_settings", "tags", "sweep_id", "point_id")


SLOTS = {"engine": "@ENGINE@", "workload": "@WORKLOAD@", "threads": "@THREADS@", "ops_per_sec": "@OPS@",
         "tags": "@TAGS@"}
ACCOUNTING_SLOTS = {"cpu_user_s": "@CPUU@", "cpu_sys_s": "@CPUS@", "io_write_bytes": "@IOW@"}
_DECIMAL = re.compile(r'(?<![\w."@])(\d+\.\d+)(?![\w"@])')


class Template:
    """A real record as text, padded to record_kb (its time series repeated), with slots for the fields that
    tell records apart and every decimal number drawn afresh per record (so the store compresses as real
    records do, not as 20,000 copies of one)."""

    def __init__(self, d: dict, record_kb: float):
        d = dict(d, **SLOTS)
        d["accounting"] = {**(d.get("accounting") or {}), **ACCOUNTING_SLOTS}
        series = d.get("intervals") or [{"t_start_s": 0.5, "t_end_s": 1.5, "workers": {}}]
        d["intervals"] = list(series)
        while len(json.dumps(d)) < record_kb * 1024:
            d["intervals"].extend(series)
        parts = _DECIMAL.split(json.dumps(d))
        self.literals, self.numbers = parts[0::2], np.array(parts[1::2], dtype=float)
        self.ops = d["ops"]

    def render(self, rng, **values) -> str:
        drawn = np.char.mod("%.6g", self.numbers * rng.lognormal(0, 0.1, len(self.numbers)))
        text = "".join(x for pair in zip(self.literals, [*drawn, ""]) for x in pair)
        for key, slot in {**SLOTS, **ACCOUNTING_SLOTS}.items():
            text = text.replace(json.dumps(slot), json.dumps(values[key]))
        return text


def templates(record_kb: float) -> dict:
    """A real load record and a real run record from one small LMDB run, as Templates."""
    r = kvlab.run("lmdb", "readrandom", num=20_000, seed=1)
    return {b.phase: Template(b.to_dict(), record_kb) for b in r}


def build(path: Path, runs: int, record_kb: float, seed: int = 7):
    import pandas as pd
    rng = np.random.default_rng(seed)
    tpl = templates(record_kb)
    Store(path).check()   # the schema, at the current store version
    rows, bid = [], 0
    for i in range(runs):
        run_id = uuid.UUID(int=int(rng.integers(0, 2 ** 62))).hex[-12:]
        engine = list(ENGINES)[i % len(ENGINES)]
        workload = WORKLOADS[(i // len(ENGINES)) % len(WORKLOADS)]
        threads = THREADS[(i // (len(ENGINES) * len(WORKLOADS))) % len(THREADS)]
        tags = [f"batch-{i % 100}"]
        sweep = f"sweep-{i % 20}" if i % 3 == 0 else None
        for phase in ("load", "run"):
            bid += 1
            t = tpl[phase]
            level = ENGINES[engine] * (threads if phase == "run" else 1) * float(rng.lognormal(0, 0.05))
            name = "fillseq" if phase == "load" else workload
            record = t.render(rng, engine=engine, workload=name, threads=threads, ops_per_sec=level, tags=tags,
                              cpu_user_s=float(rng.lognormal(-5, 0.1)), cpu_sys_s=float(rng.lognormal(-7, 0.1)),
                              io_write_bytes=int(rng.integers(0, 3_000_000)))
            ops = t.ops
            p50 = 1e6 / level * float(rng.lognormal(0, 0.05))
            rows.append({"id": bid, "run_id": run_id, "engine": engine, "workload": name, "phase": phase,
                         "threads": threads, "ops": ops, "seconds": ops / level, "ops_per_sec": level,
                         "micros_per_op": 1e6 / level, "found": ops, "seed": 1, "record": record, "trial": 0,
                         "partial": False, "p50_us": p50, "p99_us": p50 * 4, "p999_us": p50 * 9,
                         "p9999_us": p50 * 20, "max_us": p50 * 100, "cpu_pct": 99.0, "db_size_bytes": 3_000_000,
                         "engine_library": "synthetic", "git_commit": "synthetic", "num": 20_000, "value_size": 100,
                         "key_size": 16, "latency_unit": "op", "engine_settings": "", "tags": tags,
                         "sweep_id": sweep, "point_id": f"p{i}" if sweep else None})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    con = _duckdb().connect(str(path))
    try:
        con.register("synthetic", frame)
        con.execute(f"INSERT INTO benchmarks ({', '.join(COLUMNS)}) SELECT {', '.join(COLUMNS)} FROM synthetic")
        con.execute(f"SELECT max(nextval('benchmark_ids')) FROM range({bid})")   # later appends get new ids
    finally:
        con.close()
    return bid


CASES = {
    "narrow": (["tag:batch-3", "tag:batch-7"], {}),
    "wide": (["engine=lmdb", "engine=rocksdb"], {"where": "workload=readrandom"}),
    "widest": (["engine=lmdb", "engine=rocksdb"], {}),
}


def time_cli(store: Path, argv) -> float:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "kvlab.cli", "results", "compare", *argv, "--store", str(store)],
                         capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f"kvlab results compare {' '.join(argv)} failed: {out.stderr.strip()}")
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--record-kb", type=float, default=32.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", default=None, help="build the store in this folder and keep it")
    args = ap.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kvlab-cmp-speed-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "big.duckdb"
    try:
        if not path.exists():
            t = time.perf_counter()
            n = build(path, args.runs, args.record_kb)
            print(f"built {path}: {args.runs:,} runs, {n:,} benchmarks, records ~{args.record_kb:g} KB, "
                  f"{path.stat().st_size / 2**20:,.0f} MiB, in {time.perf_counter() - t:.1f} s")
        print(f"kvlab results compare over {args.runs:,} runs, median of {args.rounds} (target: under 2 s):")
        worst = 0.0
        for name, (sides, options) in CASES.items():
            argv = sides + [x for k, v in options.items() for x in (f"--{k}", v)]
            cli = median([time_cli(path, argv) for _ in range(args.rounds)])
            inproc = []
            for _ in range(args.rounds):
                t = time.perf_counter()
                frame = kvlab.compare(*sides, store=path, **options)
                inproc.append(time.perf_counter() - t)
            worst = max(worst, cli)
            print(f"  {name:<7} {' '.join(argv):<58} command {cli:5.2f} s, kvlab.compare {median(inproc):5.2f} s "
                  f"({frame.attrs['a_benchmarks']:,} + {frame.attrs['b_benchmarks']:,} benchmarks, "
                  f"{int((frame.workload != 'geomean').sum())} rows)")
        print(f"  slowest command: {worst:.2f} s ({'within' if worst < 2 else 'OVER'} the 2 s target)")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
