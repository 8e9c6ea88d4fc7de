"""The cost of one key draw per distribution, in ns, from the native generator the hot loop uses
(kvlab.keys fills a numpy array from kv_dist.h with the GIL released).  The reference, measured in
the same rounds, is the bare RNG: a uniform draw.  Rounds alternate the distributions; medians and
ranges over rounds.

    python benchmarks/distributions.py [--draws 2000000] [--rounds 7] [--keyspace 1000000]

Target (issue "Workloads as data"): a zipfian draw (YCSB's scrambled zipfian) at most 25 ns.
"""
import argparse
import statistics
import time

from _common import kvlab

NAMES = ("uniform", "zipfian", "zipfian-plain", "latest", "hotspot", "sequential", "exponential")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--keyspace", type=int, default=1_000_000)
    args = ap.parse_args()
    for name in NAMES:  # warm the allocator and the page cache of the output arrays
        kvlab.keys(name, args.draws, keyspace=args.keyspace)
    ns = {name: [] for name in NAMES}
    for r in range(args.rounds):
        order = NAMES if r % 2 == 0 else NAMES[::-1]
        for name in order:
            t0 = time.perf_counter_ns()
            kvlab.keys(name, args.draws, keyspace=args.keyspace, seed=r)
            ns[name].append((time.perf_counter_ns() - t0) / args.draws)
    base = statistics.median(ns["uniform"])
    print(f"ns per key draw, {args.draws:,} draws over {args.keyspace:,} keys, {args.rounds} rounds "
          "(median, range; the array store included)")
    for name in NAMES:
        m = statistics.median(ns[name])
        note = "  (target <= 25 ns)" if name == "zipfian" else ""
        print(f"  {name:<14} {m:6.1f} ns  ({min(ns[name]):.1f}-{max(ns[name]):.1f})  "
              f"{m - base:+6.1f} ns over a uniform draw{note}")


if __name__ == "__main__":
    main()
