"""The crash-test campaign: for each engine configuration, N SIGKILLs of a writing process at random
moments, with sync on (no acknowledged write may be lost, no transaction torn, every reopen must
work) and with sync off (the loss is measured).  Prints one table; exits 1 if sync on lost or tore
anything.

    python benchmarks/crashtest_campaign.py [--kills 100] [--engines lmdb,leveldb,...] [--seed 1]
                                            [--json crashtest.json]

A SIGKILL ends the process, not the machine: the page cache survives, so sync off loses only what an
engine kept in its own memory (WiredTiger's and BerkeleyDB's log buffers, BDB's private cache).
"""
import argparse
import json
import time

from _common import kvlab  # noqa: F401  (sets up the path)

from kvlab import errors
from kvlab.execution import native
from kvlab.execution.crash.crashtest import crashtest, format_table

SIX = ("lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--engines", default=",".join(SIX))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--sync", choices=("both", "on", "off"), default="both")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    reports = []
    t0 = time.time()
    for name in args.engines.split(","):
        try:
            native.require_built(name)   # compiled in, or a version loaded at run time (mdbx, redb)
        except errors.EngineNotBuilt as exc:
            print(f"{name}: not built, skipped ({exc})")
            continue
        for sync in {"both": (True, False), "on": (True,), "off": (False,)}[args.sync]:
            r = crashtest(name, args.kills, sync=sync, seed=args.seed, batch=args.batch)
            s = r.summary
            print(f"{name:<17} sync {'on ' if sync else 'off'}: {s['kills']} kills, {s['reopen_failures']} reopen "
                  f"failures, {s['acked_writes_lost']:,} acked writes lost, {s['torn_txns']} torn "
                  f"({time.time() - t0:.0f} s so far)", flush=True)
            reports.append(r)
    print()
    print(format_table(reports))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.to_dict() for r in reports], f, indent=1)
    bad = [r for r in reports if r.sync and (r.summary["reopen_failures"] or r.summary["torn_txns"]
                                               or r.summary["acked_writes_lost"])]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
