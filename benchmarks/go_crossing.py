"""What a call from kvlab's C into a Go engine costs, and so why db_bench's loops run inside Go for Pebble and Badger.

kvlab's Go engines (kvlab/engines/_goshim: Pebble, Badger) run db_bench's write and read loops inside Go
(kv_engine.h's own_loop: one call a phase); every other loop calls the engine from C, one cgo call an operation.
Here readrandom runs both ways on one database in one process, alternating (ABBA: own loop, C loop, C loop, own
loop, ...), each `--duration` seconds at each thread count: the C loop's extra time per get is what a crossing (and
the C adapter, and copying the value into C memory) costs.  Valgrind does not follow Go's runtime well enough for
instruction counts (its signal-driven preemption and stack switches), so this is wall time: medians and ranges.

    python benchmarks/go_crossing.py [--engines pebble,badger] [--num 200000] [--duration 2] [--rounds 4]
                                     [--threads 1,2]
"""
import argparse
import os
import tempfile

from _common import engines, kvlab, median, native, rm


def _params(num, threads, duration, seed):
    return dict(num=num, reads=0, threads=threads, duration=duration, key_size=16, value_size=100, batch=1, seed=seed,
                compression_ratio=0.5, seek_nexts=0, writes_per_second=0.0)


def _ops_per_sec(threads: list) -> float:
    ops = sum(sum(t["ops"].values()) for t in threads)
    secs = (max(t["t_end_ns"] for t in threads) - min(t["t_start_ns"] for t in threads)) / 1e9
    return ops / secs


def one_engine(name, args):
    cfg = engines.get(name)
    folder = tempfile.mkdtemp(prefix=f"go-crossing-{name}-")
    path = os.path.join(folder, "db")
    rows = []
    try:
        kvlab.run(name, "fillseq", num=args.num, batch=1000, db=path, seed=1, interval=0,
                  cache_size=args.cache_size)
        lib = native.load()
        db = lib.Engine(native.adapter_name(cfg), path, cfg.config({"cache_size": args.cache_size}, max_threads=8))
        try:
            lib.Run(db, "readrandom", {**_params(args.num, 1, 1.0, 7)}).execute()   # untimed: settle, warm
            for threads in args.threads:
                own, crossing = [], []
                for r in range(args.rounds):
                    for on in ((True, False) if r % 2 == 0 else (False, True)):
                        got = lib.Run(db, "readrandom", {**_params(args.num, threads, args.duration, 100 + r),
                                                         "own_loop": on}).execute()
                        assert all(t["own_loop"] == on for t in got), got
                        (own if on else crossing).append(_ops_per_sec(got))
                per_get = [threads * (1 / c - 1 / o) * 1e9 for o, c in zip(own, crossing)]
                row = {"engine": name, "threads": threads, "own": own, "crossing": crossing, "ns_per_get": per_get}
                rows.append(row)
                print(f"{name:<8} {threads:>3} {median(own):>12,.0f} ({min(own):,.0f}-{max(own):,.0f}) "
                      f"{median(crossing):>12,.0f} ({min(crossing):,.0f}-{max(crossing):,.0f}) "
                      f"{median(per_get):>8,.0f} ns ({min(per_get):,.0f} to {max(per_get):,.0f})", flush=True)
        finally:
            db.close()
    finally:
        rm(folder)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default="pebble,badger")
    ap.add_argument("--num", type=int, default=200_000)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--cache-size", type=int, default=256 << 20)
    args = ap.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",")]
    print("readrandom: the engine's own loop (inside Go) against kvlab's C loop calling the engine once a get "
          f"(num={args.num:,}, {args.duration:g} s a side, {args.rounds} rounds, ABBA)")
    print(f"{'engine':<8} {'thr':>3} {'own loop ops/s (range)':>30} {'C loop ops/s (range)':>30} "
          f"{'crossing per get, thread time (range)':>40}")
    rows = []
    for name in args.engines.split(","):
        rows += one_engine(name, args)
    return rows


if __name__ == "__main__":
    main()
