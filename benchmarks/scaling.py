"""Thread scaling without the GIL: LMDB readrandom, 2 threads against 1 (target >= 1.9x on 2 cores).

    python benchmarks/scaling.py [--num 1000000] [--rounds 3] [--engine lmdb]
"""
import argparse

from _common import kvlab, median


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engine", default="lmdb")
    args = ap.parse_args()
    db = None
    import tempfile
    db = tempfile.mkdtemp(prefix="kvlab-scaling-")
    import shutil
    shutil.rmtree(db)
    kvlab.run(args.engine, "fillseq", num=args.num, db=db, seed=1)
    one, two = [], []
    for r in range(args.rounds):
        for threads, into in ((1, one), (2, two)):
            res = kvlab.run(args.engine, "readrandom", num=args.num, threads=threads, db=db,
                            use_existing_db=True, seed=r)
            into.append(res.by_workload("readrandom").ops_per_sec)
    shutil.rmtree(db)
    print(f"{args.engine} readrandom, num={args.num}, median of {args.rounds}:")
    print(f"  1 thread : {median(one):>12,.0f} ops/s")
    print(f"  2 threads: {median(two):>12,.0f} ops/s")
    print(f"  scaling  : {median(two) / median(one):.2f}x (target >= 1.9x)")


if __name__ == "__main__":
    main()
