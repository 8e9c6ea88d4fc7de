"""`kvlab results list`: the stored benchmarks as a table, the latest --limit of them (20 by default) stored
since --since, under a line that names the store read and how many it holds; or one sweep's tidy frame (--sweep).
The filters and the sweep's frame are export's too (--limit and --since are list's alone)."""
from __future__ import annotations

import argparse
import datetime as dt
import re

from ... import errors
from ...results import store as stored
from ...results.formatting import missing
from .. import output
from ..parsing import UsageError, add_store_option, count, given

NAME = "list"
LIMIT = 20   # the stored results `results list` shows unless --limit says otherwise
AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
SINCE_HELP = ("an ISO date or date-time (2026-03-01, 2026-03-01T14:30, 2026-03-01 14:30:00+01:00; one without a "
              "zone is local time, as stored_at is), or an age back from now: a number and s, m, h, d or w (90m, "
              "2h, 3d, 1w)")


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
    ls = make(actions, NAME, help=f"stored results as a table (the latest {LIMIT}, oldest first)",
              description=f"stored results as a table: the latest {LIMIT} (--limit), oldest first, under a line "
              "that names the store read and how many results it holds (the per-user store is shared by every "
              "job that stores into it)")
    add_filters(ls)
    g = ls.add_argument_group("how many, how recent")
    g.add_argument("--limit", type=count(0), default=LIMIT, metavar="N",
                   help=f"show the latest N results that match (default {LIMIT}; 0: all of them)")
    g.add_argument("--since", type=since, default=None, metavar="WHEN",
                   help="only results stored since WHEN: " + SINCE_HELP)
    add_store_option(ls)
    return ls


def since(text: str) -> dt.datetime:
    """--since: the local time (naive, as the store's stored_at) an ISO date or date-time, or an age back from
    now (2h, 3d), names."""
    value = str(text).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhdw])", value)
    try:
        if m:
            return dt.datetime.now() - dt.timedelta(seconds=float(m.group(1)) * AGE_UNITS[m.group(2)])
        when = dt.datetime.fromisoformat(value) if re.match(r"\d{4}-\d{2}-\d{2}", value) else None
        if when is not None:
            return when.astimezone().replace(tzinfo=None) if when.tzinfo else when
    except ValueError:
        pass
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{text!r} reaches back before the year 1; allowed: {SINCE_HELP}") from None
    raise argparse.ArgumentTypeError(f"{text!r} is not a time; allowed: {SINCE_HELP}")


def handle(store, args) -> int:
    if args.sweep:
        for dest, flag in (("limit", "--limit"), ("since", "--since")):
            if given(args, dest):
                raise UsageError(f"results list: {flag} picks stored results; --sweep prints the sweep's frame "
                                 f"whole: give one of them")
        return sweep_frame(store, args)
    filters = filters_of(args, store)
    if args.tag:
        filters["tag"] = args.tag
    rows = _listing(store, filters)
    if args.since is not None:
        rows = [r for r in rows if r["stored_at"] is not None and r["stored_at"] >= args.since]
    shown = rows[-args.limit:] if args.limit else rows
    what = _matching(filters, args.since)
    if not rows:
        print("no stored results" + (f" {what}" if what else "") + f" in {store.path}")
        return 0
    print(_header(len(shown), len(rows), what, store.path))
    output.table(shown, LIST_COLUMNS, legend=LIST_LEGEND)
    return 0


def _matching(filters: dict, since_when) -> str:
    """'matching engine lmdb, tag baseline since 2026-03-01 14:30:00' ('' without filters)."""
    terms = ("matching " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in filters.items())) if filters else ""
    if since_when is not None:
        terms += f"{' ' if terms else ''}since {since_when:%Y-%m-%d %H:%M:%S}"
    return terms


def _header(shown: int, total: int, what: str, path) -> str:
    """The line above the listing: how many of how many, which store (every job shares the per-user one)."""
    noun = "stored result" + ("" if total == 1 else "s") + (f" {what}" if what else "")
    if shown < total:
        return f"the latest {shown} of {total} {noun} in {path}, oldest first; --limit N or --limit 0 for all"
    return f"all {total} {noun} in {path}, oldest first" if total > 1 else f"the one {noun} in {path}"


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
