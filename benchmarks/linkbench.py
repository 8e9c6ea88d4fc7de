"""LinkBench's speed and memory targets (issue "LinkBench on the embedded engines"), each against a
reference measured in the same run:

1. harness cost: ns per LinkBench operation on the null engine (no storage: kvlab's id choice,
   encoding, payloads, mix, clocks, histograms) against ns per operation on each real engine, same
   graph and mix, 1 requester, alternating rounds; target: under 5% of the cheapest engine.
2. load time: maxid1 nodes with their links on each engine (LinkBench's load), target on LMDB:
   1M nodes in under 5 minutes.
3. harness memory: peak RSS of a load on the null engine as maxid1 grows (ids and payloads are made
   in C, nothing per node is kept): it should stay flat.

    python benchmarks/linkbench.py [--rounds 3] [--seconds 3] [--load-maxid1 1000001] [--engines lmdb,...]
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
import time

from _common import kvlab  # noqa: F401  (sets up the path)

from kvlab import engines
from kvlab.execution import native
from kvlab.execution.orchestration.linkbench import run_linkbench
from kvlab.model.workloads.linkbench import LinkBench


def per_op_ns(engine, lb, db):
    b = run_linkbench(engine, lb, "request", db=db)[-1]
    return b.seconds * 1e9 / b.ops if b.ops else float("nan")


def rss_of_load(maxid1):
    # the phase's own peak (VmHWM, reset at the phase's start), in a fresh process: ru_maxrss would carry
    # this script's peak across fork and exec
    code = ("from kvlab.execution.orchestration.linkbench import run_linkbench;"
            "from kvlab.model.workloads.linkbench import LinkBench;"
            f"r = run_linkbench('null', LinkBench(maxid1={maxid1}, loaders=2), 'load');"
            "print(r[0].accounting['process_peak_rss_bytes'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1048576


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--maxid1", type=int, default=100_001, help="graph for the harness-cost rounds")
    ap.add_argument("--load-maxid1", type=int, default=1_000_001)
    ap.add_argument("--engines", default=None)
    args = ap.parse_args()
    built = [n for n in engines.REGISTRY if engines.get(n).adapter in native.built_adapters()
             and engines.get(n).stores_data and n != "rocksdb-tuned"]
    names = args.engines.split(",") if args.engines else built
    lb = LinkBench(maxid1=args.maxid1, requesters=1, loaders=2, intervals=1, interval_seconds=args.seconds)

    print(f"== 1. harness cost: 1 requester, {args.seconds:g} s per round, {args.rounds} alternating rounds, "
          f"maxid1={args.maxid1:,}")
    with tempfile.TemporaryDirectory(prefix="kvlab-lb-bench-") as tmp:
        dbs = {}
        for name in ["null", *names]:
            dbs[name] = f"{tmp}/{name}"
            run_linkbench(name, lb, "load", db=dbs[name])
        times = {n: [] for n in dbs}
        for _ in range(args.rounds):
            for name in dbs:
                times[name].append(per_op_ns(name, lb, dbs[name]))
    null = statistics.median(times["null"])
    print(f"{'engine':<18} {'ns/op median':>13} {'range':>22} {'null/engine':>12}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:<18} {med:>13,.0f} {min(ts):>10,.0f}-{max(ts):<10,.0f} "
              f"{'' if name == 'null' else f'{null / med:.2%}':>12}")
    cheapest = min((statistics.median(ts), n) for n, ts in times.items() if n != "null")
    print(f"harness cost against the cheapest engine ({cheapest[1]}): {null / cheapest[0]:.2%} (target < 5%)")

    print(f"\n== 2. load: maxid1={args.load_maxid1:,} ({args.load_maxid1 - 1:,} nodes), 2 loaders")
    big = LinkBench(maxid1=args.load_maxid1, loaders=2)
    for name in names:
        with tempfile.TemporaryDirectory(prefix="kvlab-lb-load-") as tmp:
            t0 = time.monotonic()
            b = run_linkbench(name, big, "load", db=f"{tmp}/db")[0]
            wall = time.monotonic() - t0
            print(f"{name:<18} {wall:>7.1f} s  {b.graph['nodes_loaded']:,} nodes, {b.graph['links_loaded']:,} links, "
                  f"DB {b.accounting['db_size_bytes'] / 1048576:,.0f} MiB"
                  f"{'  (target on LMDB: < 300 s)' if name == 'lmdb' else ''}")

    print("\n== 3. harness memory: peak RSS of a load on the null engine as maxid1 grows")
    for maxid1 in (100_001, 1_000_001, 4_000_001):
        print(f"maxid1={maxid1:>10,}: peak RSS {rss_of_load(maxid1):7.1f} MiB")


if __name__ == "__main__":
    main()
