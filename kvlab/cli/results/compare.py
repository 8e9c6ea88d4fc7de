"""`kvlab results compare A B`: B against A, as benchstat does it (medians with the intervals of the medians,
Mann-Whitney U, a verdict per metric), over stored sides or, with --run, over sides run here (fair_trials.py)."""
from __future__ import annotations

from ... import errors
from ..parsing import UsageError, add_format_option, add_store_option, amount, count, given
from .comparison_table import print_comparison
from .fair_trials import RUN_REPEAT, run_sides
from .floors import StoredFloors

NAME = "compare"
COMPARE_HELP = "B against A: medians with intervals, change in %, Mann-Whitney p, a verdict per metric"
SIDE_HELP = ("a run id, tag:NAME, sweep:NAME, run:ID, or KEY=VALUE terms (engine=lmdb,workload=readrandom; "
             "'|' between alternatives: threads=1|2), joined by ','")


def add_parser(actions, make):
    from ...results import compare
    # argparse %-formats a help (`kvlab results --help` lists it): the '%' of 'change in %' doubled
    c = make(actions, NAME, help=COMPARE_HELP.replace("%", "%%"),
             description=COMPARE_HELP + ". Benchmarks are matched by workload, phase and threads; the repeats, "
             "trials and runs of one side with the same key are its samples. '~' means no significant change: "
             "p >= 0.05, fewer than 3 samples a side, or a change below the noise floor (--threshold, or the "
             "floor `kvlab noise` measured for the benchmark's host, engine, workload and threads, if larger). "
             "Sample sizes that cannot reach p < 0.05 (3 against 3: the smallest p is 0.1) are said on top, and so "
             "are sides that ran one after the other while the machine's load or frequency changed. "
             "With --run, A and B are run here first, interleaved A B, B A, A B ... (who starts alternates), "
             "and the comparison is over them.")
    c.add_argument("a", metavar="A", nargs="?", default=None, help="the baseline: " + SIDE_HELP)
    c.add_argument("b", metavar="B", nargs="?", default=None, help="compared against A: " + SIDE_HELP)
    c.add_argument("--where", default=None, metavar="TERMS",
                   help="terms both sides must also satisfy (engine=lmdb,workload=readrandom,phase=run)")
    c.add_argument("--threshold", type=amount(0, 1000), default=compare.THRESHOLD_PCT, metavar="PCT",
                   help=f"noise floor in percent: a smaller change is '~' whatever p says (default "
                        f"{compare.THRESHOLD_PCT:g})")
    c.add_argument("--metric", default=None, metavar="LIST",
                   help=f"only these metrics, comma list (default all: {', '.join(compare.BY_NAME)})")
    c.add_argument("--match", default=",".join(compare.MATCH), metavar="LIST",
                   help="the keys benchmarks are matched by, comma list (default workload,phase,threads; leave "
                        "threads out to compare 1 thread against 2)")
    c.add_argument("--json", default=None, metavar="FILE", help="also write the comparison's rows to FILE (JSON "
                   "records, one per benchmark and metric, and the geometric means)")
    c.add_argument("--loads", action="store_true",
                   help="compare load phases too (left out otherwise, unless a side or --where names phase=load); "
                        "each phase kind gets a geomean of its own")
    c.add_argument("--no-noise-floor", action="store_true",
                   help="ignore the floors `kvlab noise` stored: only --threshold is the noise floor")
    add_store_option(c)
    add_format_option(c)
    g = c.add_argument_group("fair trials: run A and B here, interleaved")
    g.add_argument("--run", nargs=2, default=None, metavar="SPEC",
                   help="A's spec, then B's, run here instead of stored sides: each a `kvlab run` argument string "
                        "('--engine lmdb --workload readrandom --num 100000') or a stored run id whose spec is "
                        "reused; A B, B A, A B ..., each trial in a fresh database unless the spec gives --db; a side "
                        "without --seed takes the other's seed (the same keys)")
    g.add_argument("--repeat", type=count(1, 1000), default=None, metavar="N",
                   help=f"trials a side with --run (default {RUN_REPEAT}; 4 or more a side can reach p < 0.05)")
    g.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="with --run: label both sides' stored trials (repeatable); each side also gets "
                        "compare:ID:A or compare:ID:B")
    g.add_argument("--no-store", action="store_true",
                   help="with --run: keep the trials out of the store (compared in hand)")
    g.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                   help="with --run: live progress bar on stderr (auto: when stderr is a terminal)")
    g.add_argument("--quiet", "-q", action="store_true",
                   help="with --run: print no header and no line per trial, only warnings and the comparison")
    return c


_RUN_ONLY = ("repeat", "tag", "no_store", "progress", "quiet")


def handle(store, args) -> int:
    from ...results import compare
    from ...results.result import write_json_atomic
    if args.run is None:
        if args.a is None or args.b is None:
            raise UsageError("results compare: A and B missing: give two sides (" + SIDE_HELP + "), or --run "
                             "SPEC_A SPEC_B to run them here")
        stray = [k for k in _RUN_ONLY if given(args, k) or (k == "tag" and args.tag)]
        if stray:
            raise UsageError(f"results compare: --{stray[0].replace('_', '-')} goes with --run SPEC_A SPEC_B (it "
                             "says how to run the sides); stored sides are compared as they are")
    elif args.a is not None:
        raise UsageError("results compare: give stored sides A B or --run SPEC_A SPEC_B, not both")
    if args.json:
        from ..common import check_output_file
        check_output_file(args.json, "--json")
    metrics = [m.strip() for m in args.metric.split(",") if m.strip()] if args.metric else None
    match = [k.strip() for k in args.match.split(",") if k.strip()]
    for m in metrics or ():   # before anything runs
        if m not in compare.BY_NAME:
            raise errors.SpecError(f"metric {m!r} is unknown; allowed: {', '.join(compare.BY_NAME)}")
    sides, code = (args.a, args.b), 0
    if args.run is not None:
        sides, code = run_sides(store, args)
    floors = None if args.no_noise_floor else StoredFloors(store)
    frame = compare.compare(*sides, where=args.where, store=store, threshold=args.threshold, metrics=metrics,
                            match=match, noise_floor=floors, loads=args.loads)
    if floors is not None:
        frame.attrs["notes"] = [*frame.attrs.get("notes", []), *floors.notes(frame)]
    if args.run is not None:
        print()
    print_comparison(frame)
    if args.json:
        write_json_atomic(args.json, compare.records(frame))
        print(f"comparison written to {args.json}")
    return code
