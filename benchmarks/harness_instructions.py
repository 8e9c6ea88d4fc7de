"""kvlab's harness cost in instructions, which are repeatable where wall time on a shared
2-core VM is not: callgrind counts the instructions of kvlab's worker thread (driver loop,
latency clock, histogram, progress counter, plus the engine calls) and of the bare C loop's
thread making the same engine calls with the same keys, on the same database.

    python benchmarks/harness_instructions.py [--engine lmdb] [--num 100000]

LMDB readrandom is the worst case: its gets are the cheapest, so the harness's fixed
per-op cost is the largest fraction.  Target: under 3%.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from _common import build_bare, engines, kvlab


def collected(out: str) -> int:
    m = re.search(r"Collected : (\d+)", out)
    if not m:
        raise SystemExit(f"callgrind collected nothing:\n{out[-2000:]}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="lmdb")
    ap.add_argument("--num", type=int, default=100_000)
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    cfg = engines.get(args.engine)
    bare = build_bare()
    base = tempfile.mkdtemp(prefix="kvlab-ir-")
    db = os.path.join(base, "db")
    env = dict(os.environ, KV_MAP_SIZE=str(1 << 30), PYTHONMALLOC="malloc")
    try:
        # valgrind cannot map LMDB's default 64 GiB: both sides use a 1 GiB map
        kvlab.run(args.engine, "fillseq", num=args.num, db=db, map_size=1 << 30, seed=1, interval=0)
        vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no"]
        b = subprocess.run(vg + ["--toggle-collect=run", str(bare), cfg.adapter, cfg.variant or "-", db,
                                 "readrandom", str(args.num), str(args.num), "1", "1"],
                           capture_output=True, text=True, env=env)
        code = (f"import kvlab; kvlab.run({args.engine!r}, 'readrandom', num={args.num}, reads={args.num}, "
                f"db={db!r}, use_existing_db=True, map_size=1 << 30, seed=1, interval=0, engine_stats=False)")
        k = subprocess.run(vg + ["--toggle-collect=worker", sys.executable, "-c", code], capture_output=True,
                           text=True, env=env)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ib, ik = collected(b.stderr), collected(k.stderr)
    print(f"{args.engine} readrandom, {args.num:,} gets, 1 thread, instructions in the measuring thread:")
    print(f"  bare C loop : {ib:>14,} ({ib / args.num:,.0f} per op)")
    print(f"  kvlab       : {ik:>14,} ({ik / args.num:,.0f} per op)")
    print(f"  harness cost: {(ik / ib - 1) * 100:.2f}% (target < 3%)")


if __name__ == "__main__":
    main()
