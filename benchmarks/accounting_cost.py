"""The cost of full accounting with 1 s intervals: LMDB readrandom with 2 threads, with the
time series on (interval=1) against off (interval=0), alternately (target: at most 2%).
Then the cost of sampling engine events (issue 27: each interval's stats call and parse) on RocksDB, whose
stats text is the largest: events on (engine_stats=True) against off, both at interval=1, in alternating
rounds whose order also alternates (target: under 1%).  Medians, with the range of the rounds.

    python benchmarks/accounting_cost.py [--num 1000000] [--duration 5] [--rounds 5] [--events-engine rocksdb]
"""
import argparse
import shutil
import tempfile
import time

from _common import engines, kvlab, median, native

from kvlab.execution.run.events import reader_for


def _rate(engine, db, duration, seed, **params):
    res = kvlab.run(engine, "readrandom", num=params.pop("num"), threads=2, duration=duration, db=db,
                    use_existing_db=True, seed=seed, **params)
    return res.by_workload("readrandom").ops_per_sec


def _line(label, xs):
    return f"  {label}: {median(xs):>12,.0f} ops/s (range {min(xs):,.0f} .. {max(xs):,.0f})"


def intervals_cost(args):
    db = tempfile.mkdtemp(prefix="kvlab-acct-")
    shutil.rmtree(db)
    kvlab.run(args.engine, "fillseq", num=args.num, db=db, seed=1, interval=0)
    on, off = [], []
    for r in range(args.rounds):
        for interval, into in ((1.0, on), (0.0, off)):
            into.append(_rate(args.engine, db, args.duration, r, num=args.num, interval=interval))
    shutil.rmtree(db)
    cost = (1 - median(on) / median(off)) * 100
    print(f"{args.engine} readrandom, 2 threads, {args.duration:g} s, median of {args.rounds}:")
    print(_line("intervals off", off))
    print(_line("intervals 1 s", on))
    print(f"  cost of accounting with intervals: {cost:.2f}% (target <= 2%)")


def events_cost(args):
    engine = args.events_engine
    db = tempfile.mkdtemp(prefix="kvlab-events-")
    shutil.rmtree(db)
    kvlab.run(engine, "fillrandom", num=args.num, db=db, seed=1, interval=0)
    on, off = [], []
    for r in range(args.rounds):
        pair = [(True, on), (False, off)]
        for stats, into in (pair if r % 2 == 0 else pair[::-1]):   # who goes first alternates
            into.append(_rate(engine, db, args.duration, r, num=args.num, interval=1.0, engine_stats=stats))
    per_sample = _sample_seconds(engine, db)
    shutil.rmtree(db)
    cost = (1 - median(on) / median(off)) * 100
    print(f"{engine}: one event sample (stats call + parse) on this database: {per_sample * 1e3:.2f} ms, "
          f"{per_sample * 100:.3f}% of a core at 1 s intervals (the direct bound on its cost)")
    print(f"{engine} readrandom, 2 threads, {args.duration:g} s, intervals 1 s, median of {args.rounds}:")
    print(_line("events off", off))
    print(_line("events on ", on))
    print(f"  cost of sampling engine events: {cost:.2f}% (target < 1%; negative: within the noise)")


def _sample_seconds(engine, db, n=200) -> float:
    """Median wall time of one event sample on the database the rounds read (open, idle, after them)."""
    cfg = engines.get(engine)
    handle = native.load().Engine(cfg.adapter, db, cfg.config({}, max_threads=4))
    try:
        reader = reader_for(handle, cfg.adapter)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            reader.read()
            times.append(time.perf_counter() - t)
    finally:
        handle.close()
    return median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--engine", default="lmdb")
    ap.add_argument("--events-engine", default="rocksdb", help="the engine whose event sampling is measured")
    ap.add_argument("--only", choices=("intervals", "events"), help="measure one of the two costs")
    args = ap.parse_args()
    if args.only != "events":
        intervals_cost(args)
    if args.only != "intervals":
        events_cost(args)


if __name__ == "__main__":
    main()
