"""`kvlab results list|export|sweeps`: the results store, listed for a reader or exported for a tool."""
from __future__ import annotations

from .. import errors
from ..results import store as stored
from ..results.store import Store
from . import output
from .parsing import add_store_option

NAME = "results"
HELP = "list or export stored results, or list the stored sweeps"


def _filters(p):
    g = p.add_argument_group("which results")
    g.add_argument("--engine", default=None, metavar="NAME", help="only this engine configuration")
    g.add_argument("--workload", default=None, metavar="NAME", help="only this workload")
    g.add_argument("--run-id", default=None, metavar="ID", help="only this run (the id `stored as run ...` printed)")
    g.add_argument("--tag", default=None, metavar="TAG", help="only results stored with this --tag")
    g.add_argument("--sweep", default=None, metavar="NAME",
                   help="one sweep's tidy frame instead: axes as columns, medians and intervals across repeats")


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=HELP)
    actions = r.add_subparsers(dest="action", required=True, metavar="ACTION")
    ls = make(actions, "list", help="stored results as a table", description="stored results as a table")
    _filters(ls)
    add_store_option(ls)
    ex = make(actions, "export", help="stored results to a CSV or Parquet file (read back by pandas or DuckDB)",
              description="stored results to a CSV or Parquet file, written by DuckDB (no pyarrow needed)")
    ex.add_argument("--out", required=True, metavar="FILE", help="the file to write (.csv or .parquet)")
    ex.add_argument("--format", default=None, choices=tuple(stored.FORMATS),
                    help="file format (default: the one --out's suffix names)")
    ex.add_argument("--table", default="benchmarks", choices=("benchmarks", "intervals"),
                    help="benchmarks: one row per benchmark; intervals: the time series (default benchmarks)")
    _filters(ex)
    add_store_option(ex)
    sw = make(actions, "sweeps", help="the stored sweeps and how many of their points are done",
              description="the stored sweeps and how many of their points are done")
    add_store_option(sw)
    return r


def handle(args) -> int:
    store = Store(args.store)
    if args.action == "sweeps":
        if not store.path.exists():
            print(f"no results store at {store.path}")
            return 0
        from ..results import sweeps
        frame = sweeps.list_sweeps(store)
        print("no sweeps stored" if frame.empty else _frame_text(frame))
        return 0
    if args.sweep:
        return _sweep(store, args)
    filters = {k: getattr(args, k) for k in ("engine", "workload", "run_id") if getattr(args, k)}
    if not store.path.exists():
        raise errors.ResultsError(f"no results store at {store.path}")
    if args.action == "export":
        fmt = args.format or stored.format_of(args.out)
        if fmt is None:
            raise errors.SpecError(f"--out {args.out}: the name says no format; give --format csv or --format "
                                   "parquet, or a name ending in .csv or .parquet")
        path = store.export(args.out, fmt, args.table, **filters, tag=args.tag)
        print(f"exported to {path} ({fmt})")
        return 0
    if args.tag:
        filters["tag"] = args.tag
    rows = _listing(store, filters)
    if not rows:
        print("no stored results" + (" match" if filters else "") + f" in {store.path}")
        return 0
    output.table(rows, LIST_COLUMNS, legend=LIST_LEGEND)
    return 0


LIST_COLUMNS = [
    ("run_id", "run", "<"), ("stored", "stored", "<"), ("engine", "engine", "<"), ("workload", "workload", "<"),
    ("phase", "phase", "<"), ("num", "num", ">"), ("value_size", "value B", ">"), ("threads", "thr", ">"),
    ("trial", "trial", ">"), ("ops_per_sec", "ops/s", ">"), ("p50", "p50", ">"), ("p99", "p99", ">"),
    ("p999", "p99.9", ">"), ("unit", "latency", "<"), ("settings", "settings", "<"), ("partial", "partial", "<"),
    ("tags", "tags", "<"),
]
LIST_LEGEND = "  p50 ... p99.9 in microseconds per op (or per batch, where latency says so); partial: stopped early"


def _listing(store, filters) -> list:
    """One row per stored benchmark, with what tells runs apart (num, value size, settings, tags)."""
    rows = []
    for r in store.frame(**filters).to_dict("records"):
        rows.append({**r, "stored": str(r["stored_at"])[:16], "p50": r["p50_us"], "p99": r["p99_us"],
                     "p999": r["p999_us"], "unit": f"us/{r['latency_unit'] or 'op'}",
                     "settings": r["engine_settings"] or "-", "partial": "PARTIAL" if r["partial"] else "",
                     "tags": ",".join(r["tags"] if r["tags"] is not None else ())})
    return rows


def _frame_text(df) -> str:
    """A frame as a table of readable numbers: magnitudes, thousands separators, never scientific notation."""
    rows = df.to_dict("records")
    columns = [(c, c, "<" if any(isinstance(r[c], str) for r in rows) else ">") for c in df.columns]
    import io
    buf = io.StringIO()
    output.table(rows, columns, out=buf)
    return buf.getvalue().rstrip()


def _sweep(store, args) -> int:
    """`kvlab results list|export --sweep NAME`: the sweep's tidy frame, printed or written."""
    from ..results.sweeps import tidy
    df = tidy(store, args.sweep)
    if args.action == "export":
        path = stored.write_frame(df, args.out, args.format)
        print(f"exported the tidy frame of sweep {args.sweep} to {path}")
        return 0
    # the terminal gets throughput and p99 with their intervals; export has every metric
    shown = [c for c in df.columns if not c.startswith(("micros_per_op", "p50_us", "p999_us", "cpu_pct"))]
    print(_frame_text(df[shown]))
    return 0
