"""`kvlab reproduce SEED`: run a published benchmark's experiment at a scale, at the seed's configuration and within
the scale's memory budget, store the runs and the verdicts, and print the verdict of each of the seed's claims
(data/reference/claims.toml): reproduced, not reproduced, or cannot test here, with the published figure, the
measured one and the reason.  `--show` prints the verdict tables the store holds for the seed instead (each with
when, the scale, the kvlab version and the runs behind it), running nothing: the command that writes the verdicts
is the one that lists them, in the same formats."""
from __future__ import annotations

import json

from .. import errors
from ..lab import notebooks
from ..lab.seeds import claims
from ..lab.seeds.common import budget_line
from ..lab.seeds.verdict_text import counts, markdown, text
from ..results.store import Store
from . import output
from .parsing import add_format_option

NAME = "reproduce"
HELP = "run a seed's experiment and test its published claims: reproduced, not reproduced, or cannot test here"
SCALE_NAMES = notebooks.SCALES


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=HELP + ". The claims and their tests are data "
             "(data/reference/claims.toml, docs/reproduce.md); a claim whose preconditions this machine or run "
             "does not meet (cores, engines built, a cache that holds the data where the seed's did, sync) is "
             "'cannot test here', with the reason.  The verdicts are stored with the runs behind them; --show "
             "lists the stored ones.")
    r.add_argument("seed", choices=list(claims.SEEDS), metavar="SEED",
                   help=f"the seed: {', '.join(claims.SEEDS)} (../shared/seeds/)")
    r.add_argument("--scale", default="default", choices=SCALE_NAMES,
                   help="smoke: seconds; default: minutes; large: 10M keys where a seed had more; full: the seed's "
                        "own scale (hours); the presets are kvlab.lab.reproduce.SCALES")
    r.add_argument("--engines", default=None, metavar="LIST",
                   help="comma list (default: the seed's engines that are built)")
    r.add_argument("--memory", default=None, metavar="SIZE",
                   help="one memory budget for every engine (1GiB, 512MiB), or none for the engines' own defaults; "
                        "default: the scale's, as the notebook's (kvlab.lab.seeds.common.MEMORY: a cache that holds "
                        "the data where the seed's did)")
    r.add_argument("--store", default=None, metavar="PATH",
                   help="the results store the runs and verdicts go to (DuckDB; default $KVLAB_RESULTS, else the "
                        "per-user store); seed 000's sweep points already there are not run again")
    r.add_argument("--show", action="store_true",
                   help="run nothing: print the verdict tables stored for SEED, oldest first")
    add_format_option(r)
    return r


def handle(args) -> int:
    if args.show:
        return show(args)
    Store(args.store).check()   # before anything runs: the store opens for writing
    engines = [n.strip() for n in args.engines.split(",") if n.strip()] if args.engines else None
    memory = claims.PRESET if args.memory is None else (None if args.memory.lower() == "none" else args.memory)
    p = claims.parameters(args.seed, args.scale, memory)   # a bad size: refused before anything runs
    machine = claims.this_machine()
    for name in engines or ():
        claims.engine_registry.get(name)   # an unknown name: a SpecError listing the known ones, before the lines
    twice = sorted({n for n in engines or () if engines.count(n) > 1})
    if twice:
        raise errors.SpecError(f"--engines names {', '.join(twice)} more than once; allowed: each engine once")
    have = claims.built(engines or claims.RUNNERS[claims.seed_key(args.seed)].engines)
    ran = f" on {', '.join(have)}" if have else ""
    print(f"seed {claims.seed_key(args.seed)} at scale {args.scale}{ran}; this machine: {machine.cores} cores, "
          f"{(machine.memory_bytes or 0) / 2**30:.0f} GiB")
    print(budget_line(p["memory"], have, given=claims.given(args.seed, p)), flush=True)
    done = claims.reproduce(args.seed, args.scale, engines, store=args.store, memory=p["memory"])
    for step in (done.setup.get("over_budget") or {}).values():   # said once here; each claim's reason names it
        print(f"over the memory budget, its engine's later steps not run: {step}")
    _table(done.table, args.table_format)
    print(counts(done.table))
    return 0


def show(args) -> int:
    key = claims.seed_key(args.seed)
    store = Store(args.store)
    stored = store.verdicts(key)
    if stored.empty:
        print(f"no verdicts of seed {key} in {store.path} (kvlab reproduce {key} makes them)")
        return 0
    for rid, rows in stored.groupby("reproduction", sort=False):
        first = rows.iloc[0]
        setup = json.loads(first.setup) if isinstance(first.setup, str) else (first.setup or {})
        runs = list(first.run_ids)
        budget = setup.get("memory") or "engine defaults"
        print(f"== seed {key} at scale {first.scale or '?'}, stored {str(first.stored_at)[:19]} by kvlab "
              f"{first.kvlab_version} ({rid}); engines {', '.join(first.engines) or '-'}; memory {budget}; "
              f"runs {', '.join(runs) or 'none stored'}")
        table = rows[claims.logic.COLUMNS].reset_index(drop=True)
        _table(table, args.table_format)
        print(counts(table) + "\n")
    return 0


VERDICT_COLUMNS = [("claim", "claim", "<"), ("statement", "statement", "<"), ("published", "published", "<"),
                   ("measured", "measured", "<"), ("verdict", "verdict", "<"), ("reason", "reason", "<")]


def _table(table, fmt) -> None:
    if fmt == "text":
        print(text(table))
    elif fmt == "markdown":
        print(markdown(table))
    else:
        output.table(table.to_dict("records"), VERDICT_COLUMNS)

