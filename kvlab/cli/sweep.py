"""`kvlab sweep show|run FILE` and `kvlab sweep list`: a sweep TOML file expanded, run here or on Dask."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import errors
from ..execution.orchestration import sweep as execution
from ..model.sweep import SweepSpec, load_toml
from ..results import sweeps as stored
from ..results.store import Store
from ..services import estimate
from ..services.progress import SweepTextBar
from ..services.sweeps import Sweep
from .parsing import add_store_option

EXAMPLE = '''name = "engines-threads-values"    # the sweep's id in the results store
repeats = 2

[base]                             # any kvlab run parameter or engine setting
workload = "fillseq,readrandom"
num = 100000

[axes]                             # RunSpec fields, engine settings, mix.<field>; the grid is their product
engine = ["lmdb", "leveldb"]
threads = [1, 2]
value_size = [100, 1000]'''


NAME = "sweep"
HELP = ("a parameter grid from a TOML file: show its points and what they will cost, run them (resumable; refused "
        "if they cannot fit on the disk), list the stored sweeps")


def add_parser(sub, make):
    import argparse
    s = make(sub, NAME, help=HELP, description="A sweep file:\n\n" + EXAMPLE,
             formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = s.add_subparsers(dest="action", required=True, metavar="ACTION")
    show = make(actions, "show", help="the sweep's points, which are already stored, and the estimate",
                description="the sweep's points, which are already stored, and what the pending ones will cost: "
                            "time, disk and memory, beside the free space")
    run = make(actions, "run", help="run the points not yet stored (here, or on a Dask scheduler)",
               description="run the points not yet stored (here, or on a Dask scheduler); a stopped sweep "
                           "resumes where it stopped")
    for p in (show, run):
        p.add_argument("file", metavar="NAME|FILE", help="the sweep's TOML file, or the name of a sweep the store "
                                                         "holds (its stored definition)")
        add_store_option(p)
    run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="run the points on this Dask scheduler's workers (tcp://host:8786); default: here, one "
                          "after another")
    run.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                     help="live progress on stderr (auto: when stderr is a terminal)")
    ls = make(actions, "list", help="the stored sweeps (same as kvlab results sweeps)",
              description="the stored sweeps (same as kvlab results sweeps)")
    add_store_option(ls)
    return s


def handle(args) -> int:
    return cmd_sweep(args)


def cmd_sweep(args) -> int:
    store = Store(args.store)
    if args.action == "list":
        from .results import print_sweeps
        return print_sweeps(store)
    sweep = Sweep(_spec(args.file, store), store)
    print(f"kvlab {sweep.describe()}", flush=True)
    pending = sweep.pending()
    cost = estimate.sweep_cost(pending, store)
    if args.action == "show":
        done = stored.finished_points(store, sweep.id)
        for p in sweep.points():
            print(f"  [{p.index + 1}] {p.id} {'done   ' if p.id in done else 'pending'} {p.label()}")
        print(f"estimate for the {len(pending)} point(s) not yet stored:")
        print("\n".join([*estimate.describe_basis(store), *estimate.describe(cost),
                         *estimate.describe_total([cost], store.path.parent)]))
        return 0
    estimate.check_disk([cost], store.path.parent)   # before the first point, with the numbers
    control = execution.SweepControl(on_point=[_point_line])
    if args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty()):
        control.observers.append(SweepTextBar(sys.stderr))
    outcome = sweep.run(scheduler=args.scheduler, control=control)
    print(outcome.describe(), flush=True)
    _scaling(store, sweep.id)
    if outcome.stopped:
        return 130
    return 1 if outcome.failed else 0


def _spec(name_or_file: str, store: Store) -> SweepSpec:
    """A sweep TOML file, else the stored definition of the sweep of that name."""
    if Path(name_or_file).exists() or name_or_file.endswith(".toml"):
        return load_toml(name_or_file)
    try:
        defined = store.query("SELECT definition FROM sweeps WHERE sweep_id = ?", [name_or_file])
    except errors.ResultsError:
        defined = None
    if defined is None or defined.empty:
        raise errors.SpecError(f"sweep {name_or_file!r}: no such file, and no sweep of that name in {store.path}; "
                               "allowed: a sweep TOML file, or a name kvlab sweep list shows")
    d = json.loads(defined.definition.iloc[0])
    if d.get("mixes"):
        raise errors.SpecError(f"sweep {name_or_file!r} names custom mixes, which its stored definition cannot "
                               "rebuild; give its TOML file")
    return SweepSpec(d["name"], d.get("base", {}), d.get("axes", {}), d.get("repeats", 1))


def _point_line(point, result, error):
    if error is not None:
        print(f"[point {point.index + 1}] FAILED {point.label()}: {error}", flush=True)
        return
    runs = [b for b in result if b.phase == "run"]
    host = (runs[-1].provenance or {}).get("machine", {}).get("hostname") if runs else None
    figures = "; ".join(f"{b.workload} {b.ops_per_sec:,.0f} ops/s p99 {b.latency_us.get('p99') or 0:.2f} us"
                        for b in runs)
    print(f"[point {point.index + 1}] done {point.id} {point.label()}: {figures} (on {host})", flush=True)


def _scaling(store, sweep_id):
    """A threads axis that scales past the cores gets its warning once, over every stored point."""
    import json

    from ..results.result import BenchmarkResult
    from ..results.sanity import scaling_warnings
    rows = store.query("SELECT record FROM benchmarks WHERE sweep_id = ? AND phase = 'run'", [sweep_id])
    found = [BenchmarkResult.from_dict(json.loads(r)) for r in rows["record"]]
    for text in dict.fromkeys(w for _, w in scaling_warnings(found)):
        print(f"warning: {text}", file=sys.stderr)
