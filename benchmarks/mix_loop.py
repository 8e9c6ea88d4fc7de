"""The generic loop's own cost: ns per transaction on the null engine (no storage, YCSB's BasicDB),
1 thread, for YCSB A-F, beside the db_bench readrandom loop's ns per op measured in the same
rounds (the reference: the specialised loop with a uniform key).  Rounds alternate; medians and
ranges.  Per-thread time from the driver (t_end - t_start), so thread start-up is left out.

    python benchmarks/mix_loop.py [--txns 3000000] [--rounds 5] [--threads 1]

With --threads 2 each thread's ns per transaction is averaged: what two threads that share nothing but the
process cost each other (per-thread counters on one cache line would show here; they have their own lines).

Target (issue "Workloads as data"): YCSB-C under 60 ns per operation.
"""
import argparse
import statistics
import tempfile

from _common import kvlab  # noqa: F401  (sets up the path)

from kvlab import _native, engines
from kvlab.execution.run.mixplan import compile_mix
from kvlab.model.workloads.presets import preset

NAMES = ("ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f")


def per_op_ns(threads, key):
    """ns per op of each worker thread (from its own clock), averaged over the threads."""
    workers = [t for t in threads if t.get("role", "worker") == "worker"]
    return statistics.mean((t["t_end_ns"] - t["t_start_ns"]) / t["ops"][key] for t in workers)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--txns", type=int, default=3_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    engine = _native.Engine("null", tempfile.mkdtemp(prefix="kvlab-null-"), engines.get("null").config({}, args.threads + 3))
    base = dict(num=1_000_000, reads=args.txns, threads=args.threads, duration=0.0, key_size=16, value_size=1000, batch=1,
                seed=1, compression_ratio=0.5, seek_nexts=0, writes_per_second=0.0)
    plans = {n: compile_mix(preset(n), 100) for n in NAMES}
    ns = {n: [] for n in ("readrandom",) + NAMES}
    for r in range(args.rounds):
        for name in (("readrandom",) + NAMES)[:: 1 if r % 2 == 0 else -1]:
            if name == "readrandom":
                ns[name].append(per_op_ns(_native.Run(engine, "readrandom", dict(base)).execute(), "read"))
            else:
                plan = plans[name]
                hashed = preset(name).insert_order == "hashed"   # as YCSB's buildKeyName: one more FNV hash
                run = _native.Run(engine, "mix", dict(base, value_size=plan["value_max"], key_hash=hashed), mix=plan)
                ns[name].append(per_op_ns(run.execute(), "txn"))
    engine.close()
    print(f"null engine, {args.threads} thread(s), {args.txns:,} transactions a thread, {args.rounds} rounds (median, range)")
    for name, vals in ns.items():
        m = statistics.median(vals)
        what = "db_bench readrandom loop, uniform keys (reference)" if name == "readrandom" else \
            preset(name).describe().split(";")[0]
        target = "  target < 60 ns" if name == "ycsb-c" else ""
        print(f"  {name:<11} {m:7.1f} ns/op ({min(vals):.1f}-{max(vals):.1f})  {what}{target}")


if __name__ == "__main__":
    main()
