"""`kvlab versions NAME@A NAME@B ...`: versions of one engine side by side, the first the base (1.00): each loaded
once, then every workload at every thread count, repeated round-robin; the Small Datum table per point
(kvlab.services.versions), each kind of warning once, every record in one JSON file and in the results store."""
from __future__ import annotations

import sys
import time

from .. import errors
from ..execution import native
from ..model import workloads as workload_registry
from ..model.spec import memory_bytes
from ..results import compare as results_compare
from ..results import stats
from ..results.result import RunResult
from ..results.store import kvlab_home
from ..services import maincompare
from ..services import versions as service
from . import common, compare, counted, output
from .parsing import (
    UsageError,
    add_format_option,
    add_metric_option,
    add_profile_option,
    add_running_options,
    amount,
    count,
)

NAME = "versions"
HELP = "versions of one engine side by side (NAME@VERSION ...; the first is the base, 1.00), repeated round-robin"


def add_parser(sub, make):
    v = make(sub, NAME, help=HELP,
             description=HELP + ": each version's throughput relative to the base with its interval and "
                                "significance, CPU and I/O per operation and write amplification, as Small Datum "
                                "reports show them. `kvlab engines` lists the versions; `kvlab engines build "
                                "NAME@VERSION` builds one")
    v.add_argument("names", nargs="+", metavar="NAME@VERSION",
                   help="the versions (the plain name, e.g. lmdb, is the one compiled into kvlab); the first is the base")
    v.add_argument("--workload", default=",".join(service.WORKLOADS), metavar="LIST",
                   help="comma list of db_bench workloads run on each loaded database, in this order "
                        f"(default {','.join(service.WORKLOADS)})")
    v.add_argument("--threads", default="1", metavar="LIST", help="comma list of thread counts (default 1)")
    v.add_argument("--num", type=count(1), default=200_000, metavar="N", help="keys loaded (default 200,000)")
    v.add_argument("--repeat", type=count(2, 1000), default=maincompare.REPEAT, metavar="N",
                   help=f"runs of each version at each point, round-robin (default {maincompare.REPEAT})")
    v.add_argument("--duration", type=amount(0.01, 3600), default=maincompare.DURATION_S, metavar="S",
                   help=f"seconds each point runs, its warm-up included (default {maincompare.DURATION_S:g})")
    v.add_argument("--warmup", type=amount(0, 3600), default=maincompare.WARMUP_S, metavar="S",
                   help=f"seconds cut from the start of each point (default {maincompare.WARMUP_S:g})")
    v.add_argument("--memory", default=compare.MEMORY, metavar="SIZE",
                   help=f"one memory budget for every version (default {compare.MEMORY}); 'none': the engine's "
                        "own defaults")
    v.add_argument("--explain", action="store_true",
                   help="print every warning in full (by default each kind is one line naming its rows)")
    add_format_option(v)
    add_profile_option(v, count=False)
    add_metric_option(v)
    add_running_options(v, db=False)
    return v


def _threads(text: str) -> tuple:
    try:
        got = tuple(dict.fromkeys(int(t) for t in text.split(",") if t.strip()))
    except ValueError:
        got = ()
    if not got or any(t < 1 or t > 1024 for t in got):
        raise UsageError(f"--threads {text!r}: a comma list of thread counts, each 1 to 1024")
    return got


def _workloads(text: str) -> tuple:
    names = tuple(dict.fromkeys(w.strip() for w in text.split(",") if w.strip()))
    unknown = [w for w in names if w not in workload_registry.REGISTRY]
    if not names or unknown:
        raise errors.SpecError(f"--workload {text!r}: {', '.join(unknown) or 'none given'} is no db_bench workload; "
                               f"allowed: {', '.join(workload_registry.REGISTRY)}")
    return names


def handle(args) -> int:
    names = service.check_versions(args.names)
    threads, workloads = _threads(args.threads), _workloads(args.workload)
    for n in names:                     # every version loaded (or its build command named) before anything runs
        native.require_built(n, load_now=False)
    memory = None if str(args.memory).strip().lower() in compare.NO_BUDGET else memory_bytes(args.memory)
    if args.warmup >= args.duration:
        raise UsageError(f"--warmup {args.warmup:g} must be shorter than --duration {args.duration:g}")
    args.json = args.json or str(kvlab_home() / f"versions-{time.strftime('%Y%m%d-%H%M%S')}.json")
    seed = args.seed if args.seed is not None else time.time_ns() & 0xFFFFFFFF
    common.preflight(args)
    plan = maincompare.Plan(engines=tuple(names), num=args.num, threads=threads, workloads=workloads,
                            repeat=args.repeat, duration=args.duration, warmup=args.warmup, seed=seed, memory=memory,
                            profile=args.profile, count="instructions" if args.metric == "instructions" else None,
                            count_reads=args.count_reads, label=f"versions:{maincompare.uuid.uuid4().hex[:8]}")
    args.tag = list(dict.fromkeys([*(args.tag or ()), plan.label]))
    estimate = maincompare.estimate_seconds(plan)
    common.say(args, f"kvlab versions: {', '.join(names)} (base {names[0]}); num={args.num:,}, seed={seed}",
               output.memory_line(memory, names),
               f"plan: each version loaded once (fillseq, {args.num:,} keys), then {', '.join(workloads)} at "
               f"{', '.join(map(str, threads))} thread{'s' if len(threads) > 1 or threads[0] > 1 else ''}, each "
               f"{args.duration:g} s with the first {args.warmup:g} s cut; {args.repeat} repeats, round-robin; "
               f"about {output.duration(estimate)}")
    cannot = stats.reach_text(args.repeat, args.repeat, results_compare.ALPHA)
    if cannot:
        print(f"warning: --repeat {args.repeat}: {cannot}", file=sys.stderr)
    started = time.monotonic()
    outcome = maincompare.run_plan(plan, control=common.progress_control(args))
    outcome.results = maincompare.finish(outcome.results)
    result = RunResult(outcome.results)
    if outcome.stopped:
        print(f"kvlab versions: stopped by {outcome.stopped}; what ended is kept", file=sys.stderr)
    else:
        common.say(args, f"took {output.duration(time.monotonic() - started)}")
    report(args, names[0], outcome.results)
    code = common.finish(result, args)
    return code if not outcome.stopped else 128 + 2


COLUMNS = [("version", "version", "<"), ("n", "n", ">"), ("median", "median ops/s", ">"),
           ("relative", "relative", ">"), ("interval", "its interval", "<"), ("p", "p vs base", ">"),
           ("verdict", "verdict", "<"), ("cpu", "CPU us/op", ">"), ("rkb", "read KB/op", ">"), ("wkb", "write KB/op", ">"),
           ("wamp", "write amp", ">")]


def report(args, base: str, results) -> None:
    rows = service.table(results, base)
    if not args.quiet and rows:
        for point in dict.fromkeys(r["point"] for r in rows):
            print()
            print(f"{point.label()}, relative to {base} (1.00):")
            output.table([_cells(r) for r in rows if r["point"] == point], COLUMNS)
        print(f"  relative: the Hodges-Lehmann ratio of ops/s to the base's, with its distribution-free interval "
              f"(the Mann-Whitney test's, at the first level the runs allow from {stats._percent(stats.LEVEL)} up, or "
              f"below it with too few runs); p: Mann-Whitney against the base; '{results_compare.BY_NAME['ops_per_sec'].words[0]}'/"
              f"'{results_compare.BY_NAME['ops_per_sec'].words[1]}' at p < {results_compare.ALPHA:g} and "
              f"{results_compare.THRESHOLD_PCT:g}% or more, else '~'; CPU, KB read and written per op and write "
              "amp: medians over the runs ('-': not measurable here)")
    built = service.builds(results)
    if not args.quiet and built:
        print()
        print("each version's build (its records' build facts):")
        output.table([{"version": r["engine"], "assertions": service.yes_no(r["assertions"]),
                       "flags": r["flags"] or "not known", "origin": r["origin"] or "not known"} for r in built],
                     [("version", "version", "<"), ("assertions", "assertions", "<"), ("flags", "compiler flags", "<"),
                      ("origin", "origin", "<")])
    difference = service.build_difference(built)
    if difference:
        print(f"warning: {difference}", file=sys.stderr)
    counted.report(args, results, maincompare.summarize(results))
    common.warnings_once(args, results)


def _cells(r) -> dict:
    interval = r["relative_interval"]
    level = r["relative_level"]
    return {"version": r["engine"], "n": r["n"], "median": r["median"],
            "relative": f"{r['relative']:.2f}" if r["relative"] is not None else "-",
            "interval": (f"{interval[0]:.2f} .. {interval[1]:.2f} ({stats._percent(level)})" if interval
                         else "base" if r["base"] else "-"),
            "p": f"{r['p']:.3f}" if r["p"] is not None else "-", "verdict": r["verdict"] or "",
            "cpu": _num(r["cpu_us_per_op"]), "rkb": _num(r["read_kb_per_op"]), "wkb": _num(r["write_kb_per_op"]),
            "wamp": _num(r["write_amp"])}


def _num(v) -> str:
    return "-" if v is None else f"{v:.3g}"
