"""`kvlab engines`: the engine configurations, whether each is built, and against which library; the versions kvlab
can build (`kvlab engines build NAME@VERSION`)."""
from __future__ import annotations

import json

from .. import errors
from ..execution import native
from ..execution.plugins import build as plugin_build
from ..execution.plugins import where as plugin_where
from ..services import conformance
from . import output

NAME = "engines"
HELP = "list engine configurations, whether they are built, and the library each was built against"


def add_parser(sub, make):
    e = make(sub, NAME, help=HELP, description=HELP + "; `kvlab engines build NAME@VERSION` builds a version")
    e.add_argument("--json", action="store_true", help="print the list as JSON instead of a table")
    actions = e.add_subparsers(dest="action", metavar="{build,check}")
    b = actions.add_parser("build", help="build a version of an engine from its pinned recipe (the versions "
                                         "`kvlab engines` lists), as a shared object kvlab loads at run time",
                           description="build a version of an engine from its pinned recipe: a Debian package "
                                       "or a crates.io -sys crate (its checksum checked first), the engine's "
                                       "adapter compiled with it into a shared object in kvlab's engine folder "
                                       "($KVLAB_ENGINES_DIR, kvlab/engines/_built, or the per-user folder); then "
                                       "`--engine NAME@VERSION` runs it in every command")
    b.add_argument("names", nargs="+", metavar="NAME@VERSION", help="e.g. lmdb@0.9.70")
    b.add_argument("--skip-built", action="store_true",
                   help="leave a version that is already built as it is (scripts/setup.sh)")
    b.add_argument("--where-possible", action="store_true",
                   help="skip a version this machine's toolchain cannot build (no cargo, a Rust too old, no "
                        "cmake), one line each saying why and how to get it, and build the rest (scripts/setup.sh)")
    c = actions.add_parser("check", help="run the conformance checks the built-in engines pass on an engine",
                           description="run the conformance checks the built-in engines pass (" +
                                       ", ".join(conformance.CHECKS) + ") on an engine: a built-in one, a built "
                                       "version (NAME@VERSION) or your own (the path of its .so, docs/own-engine.md); "
                                       "exit status 1 when one fails")
    c.add_argument("engine", metavar="NAME_OR_PATH",
                   help="an engine name (lmdb), a built version (lmdb@0.9.70) or the path of your own engine's .so")
    c.add_argument("--only", default="", metavar="LIST", help="comma list of the checks to run (default: all)")
    return e


def handle(args) -> int:
    if getattr(args, "action", None) == "check":
        return _check(args)
    if getattr(args, "action", None) == "build":
        for name in args.names:   # every name checked before the first build starts
            plugin_build.recipe_of(name)
        for name in args.names:
            if args.skip_built and plugin_where.built(name) is not None:
                why = plugin_build.stale(name)
                if why is None:
                    print(f"{name}: built already ({plugin_where.built(name)})")
                    continue
                print(f"{name}: building again: {why}")
            why = plugin_build.cannot_build_here(name) if args.where_possible else None
            if why:
                print(f"{name}: skipped: building it {why}; {plugin_build.how_to_get(name)}")
                continue
            plugin_build.build(name)
        return 0
    rows = native.describe()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    shown = [{"engine": r["engine"], "built": "yes" if r["built"] else "no", "version": r["version"] or "-",
              "asserts": {True: "ON", False: "off", None: "-"}[r["assertions"]],
              "build": r["origin"] or (f"not obtainable here: {r['unobtainable']}" if r["unobtainable"]
                                       else f"not built: {r['build_command']} (about {r['build_minutes']:g} min)"
                                       if r.get("build_command") else f"not built: install {r['package']}"),
              "description": r["description"]}
             for r in rows]
    output.table(shown, [("engine", "engine", "<"), ("built", "built", "<"), ("version", "version", "<"),
                         ("asserts", "assertions", "<"), ("build", "library", "<"),
                         ("description", "description", "<")])
    return 0


def _check(args) -> int:
    only = tuple(c.strip() for c in args.only.split(",") if c.strip())
    unknown = [c for c in only if c not in conformance.CHECKS]
    if unknown:
        raise errors.SpecError(f"--only {args.only!r}: {', '.join(unknown)} is no check; allowed: "
                               f"{', '.join(conformance.CHECKS)}")
    outcomes = conformance.run_checks(args.engine, only)
    width = max(len(o.check) for o in outcomes)
    for o in outcomes:
        word = {True: "pass", False: "FAIL", None: "n/a"}[o.passed]
        what = conformance.CHECKS[o.check][2]
        print(f"{o.check:<{width}}  {word:<4}  {what}" + (f"\n{'':<{width}}        {o.detail}" if o.detail else ""))
    failed = [o.check for o in outcomes if o.passed is False]
    print(f"{args.engine}: {len(outcomes) - len(failed)} of {len(outcomes)} checks passed or do not apply"
          + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0
