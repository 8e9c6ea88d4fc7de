"""What each instrument kvlab turns on costs, per engine, at 1 and 2 threads: readrandom on one loaded database,
in rounds whose order rotates, each side the same reads on the same keys.

  bare      benchmarks/bare_loop.c: kvlab's adapter calls, no per-op clock, histogram or progress counter
  off       kvlab with every instrument it can turn off off (interval=0: no time series, no engine events;
            engine_stats=False: no statistics read; no engine counters)
  default   kvlab as it runs by default (a 1 s time series with its accounting, engine events at each sample
            and the engine's statistics after the phase where reading them costs nothing per op)
  counters  kvlab with --engine-counters, on an engine whose statistics cost every op (WiredTiger's
            statistics=(fast)) or that records its own per-op counters with it (RocksDB's PerfContext at perf
            level enable_count; SQLite's statement counters, free); the default leaves them off

The per-op latency clock's cost is off against bare (with the histogram record and the progress counter it
comes with: they are one path, loop.h's time_op); the sampler's, the events' and the statistics reads' is
default against off; the engine counters' is counters against default.  Printed: each side's median ops/s and
range, and each cost as the ratio of medians with the range of the per-round ratios.  Target: default within
1% of off and of bare on every engine; an instrument above it is off by default (engine counters) or named.
Wall time on this 2-core VM moves 7-10% between identical runs: the rounds are what resolve a few percent, and
`--instructions` counts the worker thread's instructions per get under callgrind instead (repeatable; the
sampler runs on another thread, so it shows the per-op instruments only).

    python benchmarks/instrument_cost.py [--engines lmdb,rocksdb,...] [--threads 1,2] [--num 500000]
                                         [--seconds 2] [--rounds 5] [--instructions]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from _common import build_bare, engines, kvlab, median, native, under_callgrind

SIDES = ("bare", "off", "default", "counters")
COSTS = (("latency clock (off vs bare)", "off", "bare"),
         ("time series, events, stats reads (default vs off)", "default", "off"),
         ("engine counters (counters vs default)", "counters", "default"))


def _kvlab(engine, db, num, reads, threads, seed, side) -> float:
    extra = {"off": {"interval": 0, "engine_stats": False}, "default": {},
             "counters": {"engine_counters": True}}[side]
    res = kvlab.run(engine, "readrandom", num=num, reads=reads, threads=threads, db=db, use_existing_db=True,
                    seed=seed, **extra)
    return res.by_workload("readrandom").ops_per_sec


def _bare(bare, cfg, db, num, reads, threads, seed) -> float:
    out = subprocess.run([str(bare), cfg.adapter, cfg.variant or "-", db, "readrandom", str(num), str(reads),
                          str(threads), str(seed)], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the bare loop failed on {cfg.name} ({out.returncode}): {out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])["ops_per_sec"]


def wall(args, bare):
    print(f"readrandom, {args.num:,} keys, about {args.seconds:g} s a run, {args.rounds} rounds in rotating order;"
          " ops/s median (range of rounds)")
    for name in args.engines:
        cfg = engines.get(name)
        sides = [s for s in SIDES if s != "counters" or engines.descriptor(cfg).asks_for_counters]
        if cfg.config({}, max_threads=4).get("options"):   # the bare loop opens an adapter's defaults only
            sides.remove("bare")
        base = tempfile.mkdtemp(prefix="kvlab-instr-", dir=os.environ.get("KVLAB_TMPDIR"))
        db = os.path.join(base, "db")
        try:
            kvlab.run(name, "fillseq", num=args.num, db=db, seed=1, interval=0)
            for threads in args.threads:
                # reads a thread for about args.seconds, from a short run
                probe = (_bare(bare, cfg, db, args.num, 50_000, threads, 1) if "bare" in sides
                         else _kvlab(name, db, args.num, 50_000, threads, 1, "off"))
                reads = max(20_000, int(probe / threads * args.seconds))
                got = {s: [] for s in sides}
                for r in range(args.rounds):
                    order = sides[r % len(sides):] + sides[:r % len(sides)]
                    for side in order:
                        rate = (_bare(bare, cfg, db, args.num, reads, threads, r + 2) if side == "bare"
                                else _kvlab(name, db, args.num, reads, threads, r + 2, side))
                        got[side].append(rate)
                _report(name, threads, reads, got)
        finally:
            shutil.rmtree(base, ignore_errors=True)


def _report(name, threads, reads, got):
    print(f"\n{name}, {threads} thread{'s' if threads > 1 else ''}, {reads:,} reads a thread:")
    for side, xs in got.items():
        print(f"  {side:<9} {median(xs):>12,.0f}  ({min(xs):,.0f} .. {max(xs):,.0f})")
    for label, a, b in COSTS:
        if a in got and b in got:
            paired = sorted(x / y for x, y in zip(got[a], got[b]))
            cost = (1 - median(got[a]) / median(got[b])) * 100
            print(f"  {label:<52} cost {cost:+6.1f}%  (per round {(1 - paired[-1]) * 100:+.1f}% .. "
                  f"{(1 - paired[0]) * 100:+.1f}%)")


def instructions(args):
    """Instructions per get in kvlab's worker thread with the engine counters off and on (N and 2N gets: the
    difference over N), for the engines whose counters cost per op."""
    if not shutil.which("valgrind"):
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    env = dict(os.environ, PYTHONMALLOC="malloc")
    for name in args.engines:
        cfg = engines.get(name)
        if not engines.descriptor(cfg).asks_for_counters:
            continue
        base = tempfile.mkdtemp(prefix="kvlab-instr-")
        db = os.path.join(base, "db")
        n = min(args.num, 100_000)
        try:
            kvlab.run(name, "fillseq", num=n, db=db, seed=1, interval=0)
            per = {}
            for counters in (False, True):
                runs = []
                for reads in (n, 2 * n):
                    code = (f"import kvlab; kvlab.run({name!r}, 'readrandom', num={n}, reads={reads}, db={db!r}, "
                            f"use_existing_db=True, seed=1, interval=0, engine_counters={counters})")
                    runs.append(under_callgrind(code, "worker", native.with_static_tls_room(env))[0])
                per[counters] = (runs[1] - runs[0]) / n
        finally:
            shutil.rmtree(base, ignore_errors=True)
        print(f"{name} readrandom, instructions per get in the worker thread (1 thread, {n:,} keys): counters off "
              f"{per[False]:,.1f}, on {per[True]:,.1f} ({(per[True] / per[False] - 1) * 100:+.1f}%)")


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default=None, help="comma list (default: every built engine that stores data)")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--num", type=int, default=500_000)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--instructions", action="store_true", help="callgrind instruction counts instead")
    args = ap.parse_args()
    built = [r["engine"] for r in native.describe() if r["built"] and r["stores_data"]]
    args.engines = [e.strip() for e in args.engines.split(",")] if args.engines else built
    args.threads = [int(t) for t in args.threads.split(",")]
    if args.instructions:
        instructions(args)
    else:
        # a copy of its own: another benchmark may rebuild build/bare_loop while this one runs
        with tempfile.TemporaryDirectory(prefix="kvlab-instr-bin-") as where:
            bare = shutil.copy(build_bare(), os.path.join(where, "bare_loop"))
            wall(args, bare)


if __name__ == "__main__":
    main()
