"""kvlab's 1-to-2-thread step against the bare C loop's, on the same database with the same key streams.

One database is filled once (kvlab fillseq).  Then, in alternating rounds (the order of the four cells
rotates every round, so neither side always runs first or always runs warm), readrandom on that database:
the bare loop (benchmarks/bare_loop.c: the same adapter calls and RNG streams as kvlab's driver, no timing,
histograms or counters) and kvlab.run(use_existing_db=True), each at 1 and 2 threads, READS per thread.
Prints each cell's median ops/s with its range, each side's step (2 threads / 1 thread, the ratio of
medians, with the range of per-round ratios), and the difference of the steps.

    python benchmarks/scaling_vs_bare.py [--engine lmdb] [--num 1000000] [--reads 2000000] [--rounds 7]
                                         [--json FILE]

What the step means: on a machine with 2 idle cores, 2 threads can give at most 2x unless each thread also
gets faster when both cores are busy.  Where the bare loop's step is above 2x too, that part is the machine's
(this VM runs each thread faster with both vCPUs busy); kvlab's step should equal it within the noise.
"""
import argparse
import json
import statistics

from _common import bare, build_bare, engines, fresh_dir, kvlab, rm

CELLS = (("bare", 1), ("kvlab", 1), ("bare", 2), ("kvlab", 2))


def run_cell(side, threads, cfg, name, db, num, reads, seed):
    if side == "bare":
        return bare(cfg.adapter, cfg.variant, db, "readrandom", num, reads, threads, seed)["readrandom"]["ops_per_sec"]
    res = kvlab.run(name, "readrandom", num=num, reads=reads, threads=threads, db=db, use_existing_db=True,
                    seed=seed)
    return res.by_workload("readrandom").ops_per_sec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="lmdb")
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--reads", type=int, default=2_000_000, help="reads per thread")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    build_bare()
    cfg = engines.get(args.engine)
    db = fresh_dir("scaling")
    rm(db)
    kvlab.run(args.engine, "fillseq", num=args.num, db=db, seed=1)
    got = {cell: [] for cell in CELLS}
    try:
        for r in range(args.rounds):
            order = CELLS[r % 4:] + CELLS[:r % 4]
            if r % 2:
                order = order[::-1]
            for side, threads in order:
                got[(side, threads)].append(run_cell(side, threads, cfg, args.engine, db, args.num, args.reads,
                                                     seed=100 + r))
    finally:
        rm(db)
    print(f"{args.engine} readrandom on one database: num={args.num:,}, reads={args.reads:,} per thread, "
          f"{args.rounds} rounds in rotating order")
    print(f"{'side':<6} {'thr':>3} {'median ops/s':>13} {'range':>25} {'us/op/thread':>13}")
    for (side, threads), xs in got.items():
        m = statistics.median(xs)
        print(f"{side:<6} {threads:>3} {m:>13,.0f} {min(xs):>12,.0f}-{max(xs):<12,.0f} {threads / m * 1e6:>13.3f}")
    steps = {}
    for side in ("bare", "kvlab"):
        ratios = [b / a for a, b in zip(got[(side, 1)], got[(side, 2)])]
        steps[side] = dict(step=statistics.median(got[(side, 2)]) / statistics.median(got[(side, 1)]),
                           low=min(ratios), high=max(ratios), rounds=ratios)
        s = steps[side]
        print(f"{side:<6} step 1->2 threads: {s['step']:.2f}x (per-round {s['low']:.2f}-{s['high']:.2f})")
    diff = steps["kvlab"]["step"] - steps["bare"]["step"]
    print(f"kvlab's step minus the bare loop's: {diff:+.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(engine=args.engine, num=args.num, reads=args.reads, rounds=args.rounds,
                           cells={f"{s}-{t}": xs for (s, t), xs in got.items()}, steps=steps), f, indent=1)


if __name__ == "__main__":
    main()
