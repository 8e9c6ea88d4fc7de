"""`kvlab clean`: remove what killed runs left behind (kvlab.execution.dbfiles.leftovers): temporary databases whose run
is gone, and, with --db, a lock file nobody holds.  Nothing else: never a --db database, never a directory kvlab
did not make."""
from __future__ import annotations

from ..execution.dbfiles import leftovers

NAME = "clean"
HELP = "remove the temporary databases killed runs left behind (and stale locks in --db directories)"


def add_parser(sub, make):
    c = make(sub, NAME, help=HELP, description=HELP + ". A run removes its own temporary database whatever "
             "signal ends it; only SIGKILL or a crash leaves one. A database a run holds is never touched.")
    c.add_argument("--db", action="append", default=[], metavar="DIR",
                   help="also look for a stale lock in this --db directory (repeatable); its database is kept")
    c.add_argument("--dry-run", action="store_true", help="list what would be removed, remove nothing")
    return c


def handle(args) -> int:
    found = leftovers.orphans() + [s for s in (leftovers.stale_lock(d) for d in args.db) if s is not None]
    if not found:
        print("nothing left behind by killed runs")
        return 0
    for left in found:
        print(f"would remove {left.describe()}" if args.dry_run else leftovers.remove(left))
    return 0
