"""`kvlab notebooks list|run`: the shipped notebooks, executed with papermill into a dated folder."""
from __future__ import annotations

from pathlib import Path

from .. import errors
from ..execution.dbfiles import dbdir
from ..lab import notebooks
from ..results.store import Store, kvlab_home

NAME = "notebooks"
HELP = "list the notebooks, or run them with papermill into a dated folder (figures as SVG, PNG, PDF)"


def add_parser(sub, make):
    n = make(sub, NAME, help=HELP, description=HELP)
    actions = n.add_subparsers(dest="action", required=True, metavar="ACTION")
    make(actions, "list", help="the notebooks kvlab ships", description="the notebooks kvlab ships")
    r = make(actions, "run", help="execute notebooks with papermill", description="execute notebooks with papermill")
    r.add_argument("--scale", default="default", choices=notebooks.SCALES,
                   help="smoke: seconds each; default: minutes; large: 10M keys where a seed had more, minutes "
                        "where it ran hours (an evening on 2 cores); full: the seeds' published scale (hours to days)")
    r.add_argument("--only", default=None, metavar="NAMES", help="comma list of notebook names (default: all)")
    r.add_argument("--out", default=None, metavar="DIR",
                   help="folder for the executed notebooks and figures (default notebooks-<time>-<scale> in "
                        "kvlab's per-user folder, $XDG_DATA_HOME/kvlab or ~/.local/share/kvlab)")
    r.add_argument("--dry-run", action="store_true",
                   help="print what the run will cost (runs, keys, time, disk, memory, free space) and stop; "
                        "nothing runs or is written")
    r.add_argument("--store", default=None, metavar="PATH",
                   help="the results store whose measured rates and database sizes the estimate uses (default "
                        "$KVLAB_RESULTS, else the per-user store: docs/results.md); the notebooks keep their own")
    return n


def handle(args) -> int:
    if args.action == "list":
        names = notebooks.available()
        print("\n".join(names))
        return 0
    store = Store(args.store) if args.store else None
    if args.dry_run:
        print("\n".join(notebooks.dry_run(args.scale, args.only, args.out, store)))
        return 0
    check_out(args.out)
    folder = notebooks.run(args.scale, args.only, args.out, store=store)
    figures = sorted(p.name for p in folder.rglob("*.svg"))
    print(f"executed notebooks and {len(figures)} figures (SVG, PNG, PDF) in {folder}")
    return 0


def check_out(out) -> None:
    """Before any notebook runs: --out (or the default folder, kvlab's per-user folder) is a folder the run can
    make or write in."""
    path = Path(out if out is not None else kvlab_home()).resolve()
    what = f"--out {out}" if out is not None else f"the default output folder {path}"
    if path.exists() and not path.is_dir():
        raise errors.SpecError(f"{what}: {path} exists and is not a directory; allowed: a new or existing folder")
    dbdir.check_can_make(path, what, errors.SpecError)
