"""`kvlab workloads`: every named workload (db_bench's loops, YCSB A-F, seed 003's tests)."""
from __future__ import annotations

import json

from ..model import workloads as registry
from . import output

NAME = "workloads"
HELP = "list every named workload (db_bench loops, YCSB A-F, seed 003's tests)"


def add_parser(sub, make):
    w = make(sub, NAME, help=HELP, description=HELP + "; `kvlab run --workload` also takes txn:SPEC, mako:SPEC, "
             "a TOML mix file or a YCSB properties file")
    w.add_argument("--json", action="store_true", help="print the list as JSON instead of a table")
    return w


def handle(args) -> int:
    rows = registry.catalog()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    output.table(rows, [("name", "name", "<"), ("kind", "kind", "<"), ("description", "description", "<")])
    return 0
