"""`kvlab results list`: the stored benchmarks as a table, or one sweep's tidy frame (--sweep).  The filters and
the sweep's frame are export's too."""
from __future__ import annotations

from ... import errors
from ...results import store as stored
from ...results.formatting import missing
from .. import output
from ..parsing import add_store_option

NAME = "list"


def add_filters(p):
    g = p.add_argument_group("which results")
    g.add_argument("--engine", default=None, metavar="NAME", help="only this engine configuration")
    g.add_argument("--workload", default=None, metavar="NAME", help="only this workload")
    g.add_argument("--run-id", default=None, metavar="ID", help="only this run (the id `stored as run ...` printed)")
    g.add_argument("--tag", default=None, metavar="TAG", help="only results stored with this --tag")
    g.add_argument("--sweep", default=None, metavar="NAME",
                   help="one sweep's tidy frame instead: axes as columns, medians and intervals across repeats")


def filters_of(args, store) -> dict:
    """The filters given (engine, workload, run id), once the store is known to exist."""
    filters = {k: getattr(args, k) for k in ("engine", "workload", "run_id") if getattr(args, k)}
    if not store.path.exists():
        raise errors.ResultsError(f"no results store at {store.path}")
    return filters


def add_parser(actions, make):
    ls = make(actions, NAME, help="stored results as a table", description="stored results as a table")
    add_filters(ls)
    add_store_option(ls)
    return ls


def handle(store, args) -> int:
    if args.sweep:
        return sweep_frame(store, args)
    filters = filters_of(args, store)
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
    ("p999", "p99.9", ">"), ("unit", "latency", "<"), ("write_amp", "W-amp", ">"), ("read_amp", "R-amp", ">"),
    ("space_amp", "S-amp", ">"), ("settings", "settings", "<"), ("partial", "partial", "<"), ("tags", "tags", "<"),
]
LIST_LEGEND = ("  p50 ... p99.9 in microseconds per op (or per batch, where latency says so); W-amp: the process's "
               "storage writes / keys and values written; R-amp: device block reads per read op; S-amp: allocated "
               "size / live keys and values ('-': none); partial: stopped early")


def _listing(store, filters) -> list:
    """One row per stored benchmark, with what tells runs apart (num, value size, settings, tags)."""
    rows = []
    for r in store.frame(**filters).to_dict("records"):
        rows.append({**r, "stored": str(r["stored_at"])[:16], "p50": r["p50_us"], "p99": r["p99_us"],
                     "p999": r["p999_us"], "unit": f"us/{r['latency_unit'] or 'op'}",
                     "settings": r["engine_settings"] or "-", "partial": "PARTIAL" if r["partial"] else "",
                     "tags": ",".join(r["tags"] if r["tags"] is not None else ())})
    return rows




def sweep_frame(store, args) -> int:
    """`kvlab results list|export --sweep NAME`: the sweep's tidy frame, printed or written."""
    from ...results.sweeps import interval_columns, tidy
    df = tidy(store, args.sweep)
    if args.action == "export":
        path = stored.write_frame(df, args.out, args.format)
        print(f"exported the tidy frame of sweep {args.sweep} to {path}")
        return 0
    # the terminal gets throughput and p99 with the intervals of their medians; export has every metric
    shown = [m for m in ("ops_per_sec", "p99_us", "txn_per_sec") if m in df.columns]
    hidden = {c for m in df.columns for c in (m, *interval_columns(m))
              if f"{m}_ci95_lo" in df.columns and m not in shown} | \
             {c for m in shown for c in interval_columns(m)}
    keys = [c for c in df.columns if c not in hidden and c not in shown and c != "hosts"]
    rows, columns = [], [(c, c, "<" if df[c].map(lambda v: isinstance(v, str)).any() else ">") for c in keys]
    for m in shown:
        columns += [(m, m, ">"), (f"{m} interval", f"{m}: median's interval", ">")]
    columns.append(("hosts", "hosts", "<"))
    from ...results.stats import interval_text
    for rec in df.to_dict("records"):
        row = {c: rec[c] for c in keys + ["hosts"] + shown}
        for m in shown:
            lo, hi, level = (rec[c] for c in interval_columns(m))
            summary = {"n": rec["repeats"], "median_ci": None if missing(lo) else [lo, hi],
                       "median_ci_level": None if missing(level) else level}
            row[f"{m} interval"] = interval_text(summary, output.num)
        rows.append(row)
    output.table(rows, columns, legend="  medians across repeats; interval: the median's (exact order statistics: 95% "
                 "or more from 6 repeats; with 3-5 the min-max range, its confidence in brackets; none below 3)")
    return 0
