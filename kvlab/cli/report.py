"""`kvlab report [SELECTION ...] [--tag T] [--sweep S] --out report.html`: stored results as one
self-contained HTML page (kvlab.lab.report): tables, figures, each run's warnings and provenance, and B
against A when two groups are given."""
from __future__ import annotations

import time

from ..lab import report
from ..results import compare
from ..results.store import Store
from .common import check_output_file
from .parsing import UsageError, add_store_option, amount
from .results import SIDE_HELP

NAME = "report"
HELP = "stored results as one self-contained HTML page: tables, figures, provenance, a comparison"
DESCRIPTION = HELP + """.  Each SELECTION, --tag and --sweep is a group; the page covers them all.  With
exactly two groups (or --compare A B) B is also compared against A, as `kvlab results compare A B` does.
Figures are inline SVG, the style sheet inline, no script: the file opens anywhere, offline."""


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=DESCRIPTION)
    r.add_argument("selection", nargs="*", metavar="SELECTION",
                   help="what to report, each a group: " + SIDE_HELP)
    r.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="the results stored with this --tag, as a group (repeatable)")
    r.add_argument("--sweep", default=None, metavar="NAME",
                   help="a sweep's stored points, as a group, with the sweep's figures")
    r.add_argument("--where", default=None, metavar="TERMS",
                   help="terms every group must also satisfy (engine=lmdb,phase=run)")
    r.add_argument("--compare", nargs=2, default=None, metavar="SIDE",
                   help="compare the second SIDE (B) against the first (A), each a selection as above; both are "
                        "added to the report")
    r.add_argument("--no-compare", action="store_true",
                   help="do not compare, even when exactly two groups are given")
    r.add_argument("--threshold", type=amount(0, 1000), default=compare.THRESHOLD_PCT, metavar="PCT",
                   help=f"the comparison's noise floor in percent (default {compare.THRESHOLD_PCT:g})")
    r.add_argument("--title", default=None, metavar="TEXT", help="the page's title (default: what was selected)")
    r.add_argument("--out", required=True, metavar="FILE", help="the HTML file to write")
    add_store_option(r)
    return r


def handle(args) -> int:
    if not args.out.strip():
        raise UsageError("report: --out is empty; allowed: a file name (report.html)")
    check_output_file(args.out, "--out")
    if args.compare and args.no_compare:
        raise UsageError("report: --compare and --no-compare contradict each other; give one")
    started = time.perf_counter()
    page = report.build(*args.selection, tag=args.tag, sweep=args.sweep, where=args.where,
                        compare=list(args.compare) if args.compare else (False if args.no_compare else None),
                        out=args.out, store=Store(args.store), title=args.title, threshold=args.threshold)
    path = page.write(args.out)
    for note in page.notes:
        print(f"note: {note}")
    print(f"report written to {path}: {page.runs:,} run{'s' if page.runs != 1 else ''}, {page.benchmarks:,} "
          f"benchmark{'s' if page.benchmarks != 1 else ''}, {page.figures} figure{'s' if page.figures != 1 else ''}"
          f"{', B compared against A' if page.compared else ''} ({len(page.html.encode()) / 1024:,.0f} KB, "
          f"{time.perf_counter() - started:.1f} s)")
    return 0
