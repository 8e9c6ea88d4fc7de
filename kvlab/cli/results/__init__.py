"""`kvlab results list|export|sweeps|compare|diff`: the results store, listed for a reader, exported for a tool,
or two groups of its results compared (medians, intervals of the medians, Mann-Whitney U, a verdict) or told
apart by their settings (diff).

One module per action, each with add_parser(actions, make) and handle(store, args), as kvlab.cli.main has one
per command: listing.py (list), export.py, sweeps.py, compare.py, diff.py; compare's parts are floors.py (the noise
floors `kvlab noise` stored), comparison_table.py (benchstat's layout) and fair_trials.py (--run: A and B run
here, interleaved)."""
from __future__ import annotations

from ...results.store import Store
from . import compare, diff, export, listing, sweeps, why
from .compare import COMPARE_HELP, SIDE_HELP
from .comparison_table import print_comparison
from .fair_trials import RUN_REPEAT, _side_spec, print_trial_warnings
from .floors import StoredFloors
from .listing import LIST_COLUMNS, LIST_LEGEND
from .sweeps import print_sweeps

__all__ = ["NAME", "HELP", "add_parser", "handle", "COMPARE_HELP", "SIDE_HELP", "RUN_REPEAT", "LIST_COLUMNS",
           "LIST_LEGEND", "StoredFloors", "print_comparison", "print_sweeps", "print_trial_warnings", "_side_spec"]

NAME = "results"
HELP = "list, export, compare, diff or explain (why) stored results, or list the stored sweeps"

# in the order `kvlab results --help` lists them
ACTIONS = (listing, export, sweeps, compare, diff, why)
BY_ACTION = {a.NAME: a for a in ACTIONS}


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=HELP)
    actions = r.add_subparsers(dest="action", required=True, metavar="ACTION")
    for action in ACTIONS:
        action.add_parser(actions, make)
    return r


def handle(args) -> int:
    return BY_ACTION[args.action].handle(Store(args.store), args)
