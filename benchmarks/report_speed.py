"""`kvlab report` over 200 runs (target: under 20 s).

Builds a store of --runs runs (default 200; each a load and a run phase, so twice as many benchmarks) from
real records: one small run per built engine (LMDB, RocksDB, LevelDB, WiredTiger; fillseq then readrandom,
whole histograms kept), copied and varied (threads, value size, throughput drawn around each engine's own
level, tags), their time series repeated until a record is --record-kb (default 32, the issue's budget for a
stored result), and appended through Store.append as points of one sweep (engine x threads x value size,
repeated).  Then times three reports as a user types them, each the whole command in a fresh process
(imports included):

  tag:    kvlab report --tag speed                      (every run: table, throughput, spectra, provenance)
  sweep:  kvlab report --sweep speed-sweep              (the same runs, with the sweep's two figures)
  groups: kvlab report tag:part-a tag:part-b            (two halves, compared: the comparison's tables and figure)

    python benchmarks/report_speed.py [--runs 200] [--record-kb 32] [--rounds 3] [--keep DIR]
"""
import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from _common import ROOT, kvlab, median

from kvlab.execution import native
from kvlab.results.result import BenchmarkResult, RunResult
from kvlab.results.store import Store

ENGINES = ("lmdb", "rocksdb", "leveldb", "wiredtiger-btree")
THREADS = (1, 2, 4, 8)
VALUE_SIZES = (100, 1000)
SWEEP = "speed-sweep"
TARGET_S = 20.0


def sources() -> dict:
    """engine -> its two real records (fillseq load phase, readrandom run phase), from one small run each."""
    built = {r["engine"] for r in native.describe() if r["built"]}
    out = {}
    for engine in ENGINES:
        if engine in built:
            r = kvlab.run(engine, "readrandom", num=20_000, seed=1)
            out[engine] = [b.to_dict() for b in r]
    if not out:
        raise SystemExit("no engine of " + ", ".join(ENGINES) + " is built")
    return out


def varied(d: dict, rng, threads: int, value_size: int, tags: list, record_kb: float) -> BenchmarkResult:
    d = json.loads(json.dumps(d))
    level = float(rng.lognormal(0, 0.08)) * (min(threads, 2) if d["phase"] == "run" else 1)
    d["seconds"] = d["seconds"] / level
    d["thread_seconds"] = d["thread_seconds"] / level * (threads if d["phase"] == "run" else 1)
    d["threads"] = threads
    d["params"] = {**d["params"], "threads": threads, "value_size": value_size}
    spec = (d.get("provenance") or {}).get("spec")
    if spec:
        spec.update(threads=threads, value_size=value_size)
    d["tags"] = list(tags)
    series = list(d.get("intervals") or [])
    while series and len(json.dumps(d)) < record_kb * 1024:
        d["intervals"].extend(series)
    return BenchmarkResult.from_dict(d)


def build(path: Path, runs: int, record_kb: float, seed: int = 7) -> int:
    rng = np.random.default_rng(seed)
    src = sources()
    engines = list(src)
    store = Store(path)
    axes = {"engine": engines, "threads": list(THREADS), "value_size": list(VALUE_SIZES)}
    settings = [(e, t, v) for e in engines for t in THREADS for v in VALUE_SIZES]
    store.define_sweep(SWEEP, {"name": SWEEP, "base": {"workload": "readrandom", "num": 20_000}, "axes": axes,
                               "repeats": -(-runs // len(settings))})
    benchmarks = 0
    for i in range(runs):
        engine, threads, value_size = settings[i % len(settings)]
        repeat = i // len(settings)
        tags = ["speed", "part-a" if i % 2 == 0 else "part-b"]
        result = RunResult([varied(d, rng, threads, value_size, tags, record_kb) for d in src[engine]])
        values = {"engine": engine, "threads": threads, "value_size": value_size}
        now = time.time()
        store.append(result, run_id=uuid.UUID(int=int(rng.integers(0, 2 ** 62))).hex[-12:],
                     point={"sweep_id": SWEEP, "point_id": f"p{i}", "repeat": repeat, "values": values,
                            "host": "synthetic", "worker": "synthetic", "started_at": now, "ended_at": now})
        benchmarks += len(result)
    return benchmarks


CASES = {
    "tag": ["--tag", "speed"],
    "sweep": ["--sweep", SWEEP],
    "groups": ["tag:part-a", "tag:part-b"],
}


def time_cli(store: Path, argv, out: Path) -> tuple:
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kvlab.cli", "report", *argv, "--store", str(store), "--out",
                           str(out)], capture_output=True, text=True, cwd=ROOT)
    took = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"kvlab report {' '.join(argv)} failed: {done.stderr.strip()}")
    return took, done.stdout.strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--record-kb", type=float, default=32.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", default=None, help="build the store in this folder and keep it (and the reports)")
    args = ap.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kvlab-report-speed-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "runs.duckdb"
    try:
        if not path.exists():
            t = time.perf_counter()
            n = build(path, args.runs, args.record_kb)
            print(f"built {path}: {args.runs:,} runs, {n:,} benchmarks, records ~{args.record_kb:g} KB, "
                  f"{path.stat().st_size / 2**20:,.1f} MiB, in {time.perf_counter() - t:.1f} s")
        print(f"kvlab report over {args.runs:,} runs, median of {args.rounds} (target: under {TARGET_S:g} s):")
        worst = 0.0
        for name, argv in CASES.items():
            out = folder / f"report-{name}.html"
            times, said = [], ""
            for _ in range(args.rounds):
                took, said = time_cli(path, argv, out)
                times.append(took)
            took = median(times)
            worst = max(worst, took)
            print(f"  {name:<6} kvlab report {' '.join(argv):<26} {took:5.1f} s  ({said.split(': ', 1)[-1]})")
        print(f"  slowest: {worst:.1f} s ({'within' if worst < TARGET_S else 'OVER'} the {TARGET_S:g} s target)")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
