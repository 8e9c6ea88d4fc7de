"""`kvlab crashtest --engine E --kills N [--sync] [--db DIR]`: kill a writing process N times, reopen,
check that every acknowledged transaction is there (sync on) and none is half there; a table per
engine configuration."""
from __future__ import annotations

from .. import errors
from ..execution.crashtest import crashtest, format_table
from ..results.result import write_json_atomic
from ..model import engines
from .common import check_output_file
from ..results.store import Store
from .parsing import add_store_option, amount, count, tag_value


NAME = "crashtest"
HELP = "SIGKILL a writing process N times; check durability and atomicity after each reopen"


def add_parser(sub, make):
    c = make(sub, NAME, help=HELP, description=__doc__)
    c.add_argument("--engine", default="lmdb", metavar="NAMES",
                   help=f"one or a comma list of: {', '.join(n for n, e in engines.REGISTRY.items() if e.stores_data)}")
    c.add_argument("--kills", type=count(1, 100_000), default=10, metavar="N",
                   help="how many times to kill the writer (default 10)")
    c.add_argument("--sync", action="store_true",
                   help="fsync every commit: then no acknowledged write may be lost (without it, the loss is "
                        "measured and reported)")
    c.add_argument("--batch", type=count(1, 100_000), default=10, metavar="K",
                   help="puts and deletes per transaction (default 10; 1: single writes)")
    c.add_argument("--num", type=count(1, 10**9), default=10_000, metavar="N", help="key space (default 10,000)")
    c.add_argument("--value-size", type=count(1, 1 << 20), default=100, metavar="BYTES",
                   help="value size (default 100)")
    c.add_argument("--max-delay", type=amount(0.01, 3600), default=0.8, metavar="S",
                   help="kill at a random moment up to S seconds into each round (default 0.8)")
    c.add_argument("--verbose", action="store_true", help="a line per kill")
    g = c.add_argument_group("common to every running command")
    g.add_argument("--db", default=None, metavar="DIR",
                   help="a new or empty directory to write in, left for inspection (default: a temporary one)")
    g.add_argument("--seed", type=count(0, 2**63 - 1), default=None, metavar="N",
                   help="kill times and keys (default: random, printed)")
    g.add_argument("--json", default=None, metavar="FILE", help="write every kill's record here")
    add_store_option(g)
    g.add_argument("--no-store", action="store_true", help="do not append the report to the results store")
    g.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="label the stored report (repeatable)")
    return c


def handle(args) -> int:
    return cmd_crashtest(args)


def cmd_crashtest(args) -> int:
    names = [n.strip() for n in args.engine.split(",") if n.strip()]
    if args.db and len(names) > 1:
        raise errors.SpecError("crashtest: --db takes one engine (each needs its own directory)")
    for name in names:
        engines.get(name)
    if args.db:
        from ..execution import dbdir
        dbdir.check(args.db)
    if args.json:
        check_output_file(args.json, "--json")
    for t in args.tag:
        tag_value(t)
    if not args.no_store:
        Store(args.store).check()
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
        write_json_atomic(args.json, [r.to_dict() for r in reports])
    if not args.no_store:
        store = Store(args.store)
        ids = [store.append_crashtest(r.to_dict(), args.tag) for r in reports]
        print(f"stored as {', '.join(ids)} in {store.path} (table crashtests)")
    bad = [r.summary for r in reports
           if r.summary["reopen_failures"] or r.summary["torn_txns"] or (r.sync and r.summary["acked_writes_lost"])]
    for s in bad:
        print(f"FAILED: {s['engine']} (sync {'on' if s['sync'] else 'off'}): {s['reopen_failures']} reopen failures, "
              f"{s['torn_txns']} torn transactions, {s['acked_writes_lost']} acknowledged writes lost")
    return 1 if bad else 0
