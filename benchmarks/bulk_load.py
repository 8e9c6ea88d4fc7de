"""Bulk loads against today's batched load: each engine's load="bulk" (its bulk path: LMDB MDB_APPEND,
RocksDB SST ingestion, WiredTiger's bulk cursor, BerkeleyDB DB_MULTIPLE_KEY puts) against load="batched"
(fillseq in batches of 1000, what the seeds loaded with), NUM records of VALUE bytes into a fresh database each
time, in alternating rounds (who goes first alternates: A B, B A, ...), each trial starting with nothing dirty in
the page cache (sync).  Each load's time runs from its first
put to its last commit, and then the database is closed (close_s: WiredTiger and LMDB write what they still
hold, RocksDB waits for nothing), so a load that leaves work behind does not look faster than it is.

Prints, per engine, each side's median records/s with its range, the median load + close time, the size on
disk after close, and the speed-up (batched time / bulk time, the ratio of medians, with the range of
per-round ratios).

    python benchmarks/bulk_load.py [--engines lmdb,rocksdb,...] [--num 10000000] [--value-size 100]
                                   [--rounds 3] [--json FILE]
"""
import argparse
import json
import os
import statistics
import time

from _common import engines, fresh_dir, kvlab, native, rm

SIDES = ("batched", "bulk")


def load_once(engine, load, num, value_size, seed):
    """(records/s of the load phase, seconds of load + close, bytes on disk after close)."""
    db = fresh_dir(f"bulk-{engine}")
    rm(db)
    os.sync()   # nothing dirty from the last trial: its writeback would land in this one
    try:
        t0 = time.perf_counter()
        # batched: today's load, batches of 1000; bulk: its default chunks (about 256 MiB)
        batch = {"batch": 1000} if load == "batched" else {}
        r = kvlab.run(engine, "fillseq", num=num, value_size=value_size, load=load, db=db, keep_db=True, seed=seed,
                      interval=0, engine_stats=False, **batch)
        total = time.perf_counter() - t0
        b = r.benchmarks[0]
        return b.ops_per_sec, total, b.accounting.get("db_size_after_close_bytes") or 0
    finally:
        rm(db)


def main():
    have = native.load().bulk_loads()
    default = [n for n in ("lmdb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb")
               if engines.get(n).adapter in have]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default=",".join(default))
    ap.add_argument("--num", type=int, default=10_000_000)
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out = {}
    print(f"fillseq of {args.num:,} records x {args.value_size} B into a fresh database, {args.rounds} rounds, "
          "alternating who goes first")
    print(f"{'engine':<17} {'load':<8} {'median rec/s':>13} {'range':>25} {'load+close s':>13} {'MiB':>8}")
    for engine in args.engines.split(","):
        got = {side: [] for side in SIDES}
        for r in range(args.rounds):
            for side in (SIDES if r % 2 == 0 else SIDES[::-1]):
                got[side].append(load_once(engine, side, args.num, args.value_size, seed=1 + r))
        for side in SIDES:
            rates = [g[0] for g in got[side]]
            print(f"{engine:<17} {side:<8} {statistics.median(rates):>13,.0f} "
                  f"{min(rates):>12,.0f}-{max(rates):<12,.0f} {statistics.median(g[1] for g in got[side]):>13.2f} "
                  f"{statistics.median(g[2] for g in got[side]) / 2**20:>8,.0f}")
        ratios = [a[1] / b[1] for a, b in zip(got["batched"], got["bulk"])]
        speedup = statistics.median(g[1] for g in got["batched"]) / statistics.median(g[1] for g in got["bulk"])
        print(f"{engine:<17} speed-up (batched load+close time / bulk's): {speedup:.2f}x "
              f"(per-round {min(ratios):.2f}-{max(ratios):.2f})")
        out[engine] = dict(speedup=speedup, rounds=ratios, **{side: got[side] for side in SIDES})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(num=args.num, value_size=args.value_size, rounds=args.rounds, engines=out), f, indent=1)


if __name__ == "__main__":
    main()
