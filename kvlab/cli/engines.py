"""`kvlab engines`: the engine configurations, whether each is built, and against which library."""
from __future__ import annotations

import json

from ..execution import native
from . import output

NAME = "engines"
HELP = "list engine configurations, whether they are built, and the library each was built against"


def add_parser(sub, make):
    e = make(sub, NAME, help=HELP, description=HELP)
    e.add_argument("--json", action="store_true", help="print the list as JSON instead of a table")
    return e


def handle(args) -> int:
    rows = native.describe()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    shown = [{"engine": r["engine"], "built": "yes" if r["built"] else "no", "version": r["version"] or "-",
              "asserts": {True: "ON", False: "off", None: "-"}[r["assertions"]],
              "build": r["origin"] or (f"not obtainable here: {r['unobtainable']}" if r["unobtainable"]
                                       else f"not built: install {r['package']}"),
              "description": r["description"]}
             for r in rows]
    output.table(shown, [("engine", "engine", "<"), ("built", "built", "<"), ("version", "version", "<"),
                         ("asserts", "assertions", "<"), ("build", "library", "<"),
                         ("description", "description", "<")])
    return 0
