"""The cost of full accounting with 1 s intervals: LMDB readrandom with 2 threads, with the
time series on (interval=1) against off (interval=0), alternately (target: at most 2%).

    python benchmarks/accounting_cost.py [--num 1000000] [--duration 5] [--rounds 5]
"""
import argparse
import shutil
import tempfile

from _common import kvlab, median


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--engine", default="lmdb")
    args = ap.parse_args()
    db = tempfile.mkdtemp(prefix="kvlab-acct-")
    shutil.rmtree(db)
    kvlab.run(args.engine, "fillseq", num=args.num, db=db, seed=1, interval=0)
    on, off = [], []
    for r in range(args.rounds):
        for interval, into in ((1.0, on), (0.0, off)):
            res = kvlab.run(args.engine, "readrandom", num=args.num, threads=2, duration=args.duration, db=db,
                            use_existing_db=True, seed=r, interval=interval)
            into.append(res.by_workload("readrandom").ops_per_sec)
    shutil.rmtree(db)
    cost = (1 - median(on) / median(off)) * 100
    print(f"{args.engine} readrandom, 2 threads, {args.duration:g} s, median of {args.rounds}:")
    print(f"  intervals off: {median(off):>12,.0f} ops/s")
    print(f"  intervals 1 s: {median(on):>12,.0f} ops/s")
    print(f"  cost of accounting with intervals: {cost:.2f}% (target <= 2%)")


if __name__ == "__main__":
    main()
