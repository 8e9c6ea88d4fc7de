"""`kvlab results export`: stored results, or one sweep's tidy frame, to a CSV or Parquet file written by DuckDB."""
from __future__ import annotations

from ... import errors
from ...results import store as stored
from ..parsing import add_store_option
from .listing import add_filters, filters_of, sweep_frame

NAME = "export"


def add_parser(actions, make):
    ex = make(actions, NAME, help="stored results to a CSV or Parquet file (read back by pandas or DuckDB)",
              description="stored results to a CSV or Parquet file, written by DuckDB (no pyarrow needed)")
    ex.add_argument("--out", required=True, metavar="FILE", help="the file to write (.csv or .parquet)")
    ex.add_argument("--format", default=None, choices=tuple(stored.FORMATS),
                    help="file format (default: the one --out's suffix names)")
    ex.add_argument("--table", default="benchmarks", choices=("benchmarks", "intervals"),
                    help="benchmarks: one row per benchmark; intervals: the time series (default benchmarks)")
    add_filters(ex)
    add_store_option(ex)
    return ex


def handle(store, args) -> int:
    if args.sweep:
        return sweep_frame(store, args)
    filters = filters_of(args, store)
    fmt = args.format or stored.format_of(args.out)
    if fmt is None:
        raise errors.SpecError(f"--out {args.out}: the name says no format; give --format csv or --format "
                               "parquet, or a name ending in .csv or .parquet")
    path = store.export(args.out, fmt, args.table, **filters, tag=args.tag)
    print(f"exported to {path} ({fmt})")
    return 0
