"""The fault campaign (issue 48): for each engine configuration with sync on, rounds in which forgetfs makes one call
fail, the writer tells the first transaction its engine fails, reads it back and tries --go-on more (as a caller that
retries would), and the power is cut: fsync-eio with the failed pages kept in the cache (ext4), evicted once the file
is closed, and with the file reverted (btrfs-like), write-eio, and a full disk (enospc).  --restart: before the cut, a
new process reopens the database through the page cache (the application restarts, as in Rebello et al.'s study).  Entries are made durable by any fsync (--names ext4), so that what a round loses is the
fault's, not LevelDB's known missing directory fsync (docs/crashtest.md, finding 1).  Prints one table (the columns:
kvlab.execution.crash.crashtest._fault_table) and each round's error where --verbose.

    python benchmarks/fault_campaign.py [--rounds 3] [--engines lmdb,leveldb,...] [--fault-at 3] [--seed 1]
                                        [--faults fsync-eio,fsync-eio-evict,fsync-eio-late,fsync-eio-drop,write-eio,enospc]
                                        [--go-on 20] [--restart] [--json faults.json]

Needs FUSE and root, as the power-loss tests do.
"""
import argparse
import json
import time

from _common import kvlab  # noqa: F401  (sets up the path)

from kvlab import errors
from kvlab.execution import native
from kvlab.execution.crash import forgetfs
from kvlab.execution.crash.crashtest import crashtest, format_table

ENGINES = ("lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb", "sqlite", "mdbx", "redb",
           "fjall")
FAULTS = ("fsync-eio", "fsync-eio-evict", "fsync-eio-drop", "write-eio", "enospc")


def fault_of(name: str, at: int, enospc_bytes: int) -> forgetfs.Fault:
    if name.startswith("fsync-eio-"):
        return forgetfs.Fault("fsync-eio", at=at, after=name.removeprefix("fsync-eio-"))
    if name == "enospc":
        return forgetfs.Fault("enospc", enospc_bytes=enospc_bytes)
    return forgetfs.Fault(name, at=at)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--fault-at", type=int, default=3)
    ap.add_argument("--enospc-bytes", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--go-on", type=int, default=20)
    ap.add_argument("--restart", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    forgetfs.require()
    reports, t0 = [], time.time()
    for name in args.engines.split(","):
        try:
            native.require_built(name)
        except errors.EngineNotBuilt as exc:
            print(f"{name}: not built, skipped ({exc})")
            continue
        for f in args.faults.split(","):
            fault = fault_of(f, args.fault_at, args.enospc_bytes)
            try:
                r = crashtest(name, args.rounds, sync=True, seed=args.seed, fault=fault, names="ext4", min_s=0.3,
                              max_s=0.6, keep_damaged=1, go_on=args.go_on, restart=args.restart)
            except errors.KvlabError as exc:
                print(f"{name} {fault.words()}: the campaign could not run it: {exc}")
                continue
            reports.append(r)
            if args.verbose:
                for i, k in enumerate(r.kills):
                    said = (f"{k.writer_error['error']} ({k.writer_error.get('during', 'write')}): "
                            f"{k.writer_error['message'][:140]}" if k.writer_error else "no error")
                    print(f"  {name} {fault.words()} round {i + 1}: fault on {(k.fault or {}).get('file') or '-'} "
                          f"({(k.fault or {}).get('errors', 0)} errors); the writer saw {said}; "
                          f"{k.lost_writes} acked writes lost; {k.reopen_error or 'reopened'}"
                          + (f"; kept in {k.kept_at}" if k.kept_at else ""), flush=True)
    print(format_table(reports))
    print(f"({time.time() - t0:.0f} s; {args.rounds} rounds each, fsync/write #{args.fault_at}, enospc after "
          f"{args.enospc_bytes:,} bytes, sync on, entries durable with any fsync, {args.go_on} transactions tried "
          f"after the failed one{', a restart before each cut' if args.restart else ''})")
    if args.json:
        with open(args.json, "w") as out:
            json.dump([r.to_dict() for r in reports], out, indent=1)


if __name__ == "__main__":
    main()
