"""`kvlab crashtest --engine E --kills N [--sync] [--db DIR]`: kill a writing process N times, reopen,
check that every acknowledged transaction is there (sync on) and none is half there; a table per
engine configuration."""
from __future__ import annotations

import json

from .. import errors
from ..execution.crashtest import crashtest, format_table
from ..model import engines


def add_parser(sub):
    c = sub.add_parser("crashtest", help="SIGKILL a writing process N times; check durability and atomicity")
    c.add_argument("--engine", default="lmdb",
                   help=f"one or a comma list of: {', '.join(n for n, e in engines.REGISTRY.items() if e.stores_data)}")
    c.add_argument("--kills", type=int, default=10, help="how many times to kill the writer (default 10)")
    c.add_argument("--sync", action="store_true",
                   help="fsync every commit: then no acknowledged write may be lost (without it, the loss is "
                        "measured and reported)")
    c.add_argument("--db", default=None, metavar="DIR",
                   help="a new or empty directory to write in, left for inspection (default: a temporary one)")
    c.add_argument("--seed", type=int, default=None, help="kill times and keys (default: random, printed)")
    c.add_argument("--batch", type=int, default=10, help="puts and deletes per transaction (1: single writes)")
    c.add_argument("--num", type=int, default=10_000, help="key space")
    c.add_argument("--value-size", type=int, default=100)
    c.add_argument("--max-delay", type=float, default=0.8, metavar="S",
                   help="kill at a random moment up to S seconds into each round (default 0.8)")
    c.add_argument("--json", default=None, metavar="FILE", help="write every kill's record here")
    c.add_argument("--verbose", action="store_true", help="a line per kill")
    return c


def cmd_crashtest(args) -> int:
    names = [n.strip() for n in args.engine.split(",") if n.strip()]
    if args.db and len(names) > 1:
        raise errors.SpecError("crashtest: --db takes one engine (each needs its own directory)")
    reports = []
    for name in names:
        def show(i, k, name=name):
            if args.verbose:
                state = k.reopen_error or ("TORN" if k.torn else f"recovered to txn {k.recovered_to}")
                print(f"  {name} kill {i + 1}: after {k.after_s:.2f} s, {k.acked} acked, {state}, "
                      f"{k.lost_txns} acked txns lost, reopen {k.recovery_ms or 0:.1f} ms", flush=True)
        r = crashtest(name, args.kills, sync=args.sync, db=args.db, seed=args.seed, batch=args.batch, num=args.num,
                      value_size=args.value_size, max_s=args.max_delay, on_kill=show)
        print(f"{name}: seed {r.seed}, {args.kills} kills, {args.batch} writes a transaction, keys 0..{args.num - 1}",
              flush=True)
        reports.append(r)
    print(format_table(reports))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.to_dict() for r in reports], f, indent=1)
    bad = [r.summary for r in reports
           if r.summary["reopen_failures"] or r.summary["torn_txns"] or (r.sync and r.summary["acked_writes_lost"])]
    for s in bad:
        print(f"FAILED: {s['engine']} (sync {'on' if s['sync'] else 'off'}): {s['reopen_failures']} reopen failures, "
              f"{s['torn_txns']} torn transactions, {s['acked_writes_lost']} acknowledged writes lost")
    return 1 if bad else 0
