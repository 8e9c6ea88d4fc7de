"""kvlab's harness cost: kvlab's driver against a bare C loop making the same engine calls.

For each engine and 1 and 2 threads, alternately: the bare loop (fillseq on a fresh db, then
readrandom) and kvlab (the same, through kvlab.run with the same seed).  Prints median ops/sec
of each and kvlab's cost in percent.  Target: under 3%.

    python benchmarks/harness_overhead.py [--num 200000] [--rounds 3] [--engines lmdb,rocksdb]
"""
import argparse

from _common import bare, build_bare, engines, fresh_dir, kvlab, median, rm


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default=None)
    args = ap.parse_args()
    build_bare()
    names = args.engines.split(",") if args.engines else [
        r["engine"] for r in kvlab.list_engines() if r["built"] and r["stores_data"] and r["engine"] != "rocksdb-tuned"]
    print(f"harness cost: kvlab vs bare C loop, num={args.num}, median of {args.rounds} alternating rounds")
    print(f"{'engine':<18} {'workload':<11} {'thr':>3} {'bare ops/s':>12} {'kvlab ops/s':>12} {'cost %':>7}")
    worst = 0.0
    for name in names:
        cfg = engines.get(name)
        for threads in (1, 2):
            got = {"fillseq": ([], []), "readrandom": ([], [])}
            for r in range(args.rounds):
                seed = 1000 + r
                d = fresh_dir("bare")
                b = bare(cfg.adapter, cfg.variant, d, "fillseq,readrandom", args.num, args.num, threads, seed)
                b_fill, b_read = b["fillseq"], b["readrandom"]
                rm(d)
                k = kvlab.run(name, "fillseq,readrandom", num=args.num, threads=threads, seed=seed)
                got["fillseq"][0].append(b_fill["ops_per_sec"])
                got["fillseq"][1].append(k.by_workload("fillseq").ops_per_sec)
                got["readrandom"][0].append(b_read["ops_per_sec"])
                got["readrandom"][1].append(k.by_workload("readrandom").ops_per_sec)
            for wl, (b, kv) in got.items():
                cost = (1 - median(kv) / median(b)) * 100
                worst = max(worst, cost)
                print(f"{name:<18} {wl:<11} {threads:>3} {median(b):>12,.0f} {median(kv):>12,.0f} {cost:>7.1f}")
    print(f"worst harness cost: {worst:.1f}% (target < 3%)")


if __name__ == "__main__":
    main()
