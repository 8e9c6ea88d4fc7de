"""`kvlab results diff A B`: the settings two runs or two selections differ in (kvlab.results.diff): the spec's,
the engine configuration kvlab gave and passed, the one the engine reported, the machine and the build."""
from __future__ import annotations

from .. import output
from ..parsing import add_store_option
from .compare import SIDE_HELP

NAME = "diff"
DIFF_HELP = "the settings A and B differ in: spec, engine config given, passed and reported, machine, build"


def add_parser(actions, make):
    d = make(actions, NAME, help=DIFF_HELP,
             description=DIFF_HELP + ". Only the settings that differ are listed, one row each with A's and B's "
             "values (a side whose benchmarks hold several values shows them joined by ' | '). The engine's "
             "reported configuration is what it wrote or returned after open (RocksDB's OPTIONS file, "
             "WiredTiger's base config, cache and table metadata, LMDB's environment info, ...).")
    d.add_argument("a", metavar="A", help="one side: " + SIDE_HELP)
    d.add_argument("b", metavar="B", help="the other side: " + SIDE_HELP)
    d.add_argument("--json", default=None, metavar="FILE",
                   help="also write the differing settings to FILE (JSON records: setting, a, b)")
    add_store_option(d)
    return d


def handle(store, args) -> int:
    from ...results import diff
    from ...results.result import write_json_atomic
    if args.json:
        from ..common import check_output_file
        check_output_file(args.json, "--json")
    frame = diff.diff(args.a, args.b, store=store)
    if frame.empty:
        print(f"A ({args.a}) and B ({args.b}) differ in no setting")
    else:
        output.table(frame.to_dict("records"), [("setting", "setting", "<"), ("a", f"A: {args.a}", "<"),
                                                ("b", f"B: {args.b}", "<")])
    if args.json:
        write_json_atomic(args.json, diff.records(frame))
        print(f"differences written to {args.json}")
    return 0
