"""`kvlab reproduce SEED`: run a published benchmark's experiment at a scale, at the seed's configuration, store
the runs, and print the verdict of each of the seed's claims (data/reference/claims.toml): reproduced, not
reproduced, or cannot test here, with the published figure, the measured one and the reason."""
from __future__ import annotations

import textwrap

from ..lab import notebooks
from ..lab.seeds import claims
from ..results.store import Store

NAME = "reproduce"
HELP = "run a seed's experiment and test its published claims: reproduced, not reproduced, or cannot test here"
SCALE_NAMES = notebooks.SCALES
FORMATS = ("text", "markdown")


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=HELP + ". The claims and their tests are data "
             "(data/reference/claims.toml, docs/reproduce.md); a claim whose preconditions this machine or run "
             "does not meet (cores, engines built, a cache that holds the data where the seed's did, sync) is "
             "'cannot test here', with the reason.")
    r.add_argument("seed", choices=list(claims.SEEDS), metavar="SEED",
                   help=f"the seed: {', '.join(claims.SEEDS)} (../shared/seeds/)")
    r.add_argument("--scale", default="default", choices=SCALE_NAMES,
                   help="smoke: seconds; default: minutes; large: 10M keys where a seed had more; full: the seed's "
                        "own scale (hours); the presets are kvlab.lab.reproduce.SCALES")
    r.add_argument("--engines", default=None, metavar="LIST",
                   help="comma list (default: the seed's engines that are built)")
    r.add_argument("--store", default=None, metavar="PATH",
                   help="the results store the runs go to (DuckDB; default $KVLAB_RESULTS, else the per-user "
                        "store); seed 000's sweep points already there are not run again")
    r.add_argument("--format", default="text", choices=FORMATS, help="text (default) or a markdown table")
    return r


def handle(args) -> int:
    Store(args.store).check()   # before anything runs: the store opens for writing
    engines = [n.strip() for n in args.engines.split(",") if n.strip()] if args.engines else None
    done = claims.reproduce(args.seed, args.scale, engines, store=args.store)
    machine = claims.this_machine()
    ran = f" on {', '.join(done.engines)}" if done.engines else ""
    print(f"seed {done.seed} at scale {done.scale}{ran}; this machine: {machine.cores} cores, "
          f"{(machine.memory_bytes or 0) / 2**30:.0f} GiB")
    (markdown if args.format == "markdown" else text)(done.table)
    counts = done.table.verdict.value_counts()
    print(", ".join(f"{counts.get(v, 0)} {v}" for v in claims.logic.VERDICTS))
    return 0


def text(table) -> None:
    wrap = textwrap.TextWrapper(width=118, initial_indent="    ", subsequent_indent="      ")
    for r in table.itertuples():
        print(f"\n{r.claim}: {r.verdict.upper()}")
        print(wrap.fill(r.statement))
        for label, value in (("published", r.published), ("measured", r.measured), ("why", r.reason)):
            if value:
                print(wrap.fill(f"{label}: {value}"))


def markdown(table) -> None:
    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")
    print("| claim | statement | published | measured | verdict | reason |")
    print("|---|---|---|---|---|---|")
    for r in table.itertuples():
        print("| " + " | ".join(cell(v) for v in (r.claim, r.statement, r.published, r.measured, r.verdict,
                                                  r.reason)) + " |")
