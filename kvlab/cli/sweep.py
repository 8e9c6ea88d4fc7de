"""`kvlab sweep show|run FILE` and `kvlab sweep list`: a sweep TOML file expanded, run here or on Dask."""
from __future__ import annotations

import sys

from ..execution import sweep as execution
from ..lab.display import SweepTextBar
from ..lab.sweeps import Sweep
from ..model.sweep import load_toml
from ..results import sweeps as stored
from ..results.store import Store

EXAMPLE = '''name = "engines-threads-values"    # the sweep's id in the results store
repeats = 2

[base]                             # any kvlab run parameter or engine setting
workload = "fillseq,readrandom"
num = 100000

[axes]                             # RunSpec fields, engine settings, mix.<field>; the grid is their product
engine = ["lmdb", "leveldb"]
threads = [1, 2]
value_size = [100, 1000]'''


def add_parser(sub):
    s = sub.add_parser("sweep", help="a parameter grid from a TOML file: show its points, run them (resumable)",
                       description="A sweep file:\n\n" + EXAMPLE, formatter_class=_raw())
    s.add_argument("action", choices=("show", "run", "list"))
    s.add_argument("file", nargs="?", help="the sweep's TOML file (show, run)")
    s.add_argument("--store", default=None, metavar="PATH", help="results store (default results/kvlab.duckdb)")
    s.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run the points on this Dask scheduler's workers (tcp://host:8786); default: here, one "
                        "after another")
    s.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                   help="live progress on stderr (auto: when stderr is a terminal)")
    return s


def _raw():
    import argparse
    return argparse.RawDescriptionHelpFormatter


def cmd_sweep(args) -> int:
    from .. import errors
    store = Store(args.store)
    if args.action == "list":
        if not store.path.exists():
            print(f"no results store at {store.path}")
            return 0
        print(stored.list_sweeps(store).to_string(index=False))
        return 0
    if not args.file:
        raise errors.SpecError(f"kvlab sweep {args.action} needs the sweep's TOML file")
    sweep = Sweep(load_toml(args.file), store)
    print(f"kvlab {sweep.describe()}", flush=True)
    if args.action == "show":
        done = stored.finished_points(store, sweep.id)
        for p in sweep.points():
            print(f"  [{p.index + 1}] {p.id} {'done   ' if p.id in done else 'pending'} {p.label()}")
        return 0
    control = execution.SweepControl(on_point=[_point_line])
    if args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty()):
        control.observers.append(SweepTextBar(sys.stderr))
    outcome = sweep.run(scheduler=args.scheduler, control=control)
    print(outcome.describe(), flush=True)
    if outcome.stopped:
        return 130
    return 1 if outcome.failed else 0


def _point_line(point, result, error):
    if error is not None:
        print(f"[point {point.index + 1}] FAILED {point.label()}: {error}", flush=True)
        return
    runs = [b for b in result if b.phase == "run"]
    host = (runs[-1].provenance or {}).get("machine", {}).get("hostname") if runs else None
    figures = "; ".join(f"{b.workload} {b.ops_per_sec:,.0f} ops/s p99 {b.latency_us.get('p99') or 0:.2f} us"
                        for b in runs)
    print(f"[point {point.index + 1}] done {point.id} {point.label()}: {figures} (on {host})", flush=True)
