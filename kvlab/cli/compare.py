"""`kvlab compare`: the main job. Every built engine loaded once with the same keys, then readrandom at 1 thread
and at --threads, each point timed long enough to be a stable figure and repeated round-robin across the
engines; one table, a ranking per point with the significance of each gap, each kind of warning once; every
record in one JSON file and in the results store (kvlab.services.maincompare does the work)."""
from __future__ import annotations

import sys
import time

from .. import _signals as signals
from .. import engines
from ..execution import native
from ..lab.seeds.versions import SETUP_BUILDS
from ..model.spec import memory_bytes
from ..results import compare as results_compare
from ..results import sanity, stats
from ..results.result import RunResult
from ..results.store import Store, kvlab_home
from ..services import maincompare
from ..services.estimate import stored_rates
from . import common, counted, output
from .parsing import (
    UsageError,
    add_format_option,
    add_metric_option,
    add_profile_option,
    add_running_options,
    amount,
    count,
)

NAME = "compare"
HELP = "the main job: every built engine (LMDB first) loaded once, then readrandom, repeated round-robin and ranked"
MEMORY = maincompare.MEMORY
NO_BUDGET = ("none", "defaults")


def add_parser(sub, make):
    c = make(sub, NAME, help=HELP, description=HELP + " (at 1 thread and at --threads)")
    c.add_argument("--num", type=count(1), default=200_000, metavar="N", help="keys loaded (default 200,000)")
    c.add_argument("--threads", type=count(1, 1024), default=2, metavar="N",
                   help="the second thread count (default 2; the first is 1)")
    c.add_argument("--engines", default=None, metavar="LIST", help="comma list (default: every built engine)")
    c.add_argument("--repeat", type=count(2, 1000), default=maincompare.REPEAT, metavar="N",
                   help=f"runs of each engine at each point, round-robin (default {maincompare.REPEAT}; "
                        f"{stats.fewest_per_side(results_compare.ALPHA)} or more can tell engines apart at p < "
                        f"{results_compare.ALPHA:g})")
    c.add_argument("--duration", type=amount(0.01, 3600), default=maincompare.DURATION_S, metavar="S",
                   help=f"seconds each point runs, its warm-up included (default {maincompare.DURATION_S:g}: "
                        "the warm-up plus the 1 s a stable figure needs)")
    c.add_argument("--warmup", type=amount(0, 3600), default=maincompare.WARMUP_S, metavar="S",
                   help=f"seconds cut from the start of each point (default {maincompare.WARMUP_S:g})")
    c.add_argument("--memory", default=MEMORY, metavar="SIZE",
                   help=f"one memory budget for every engine (default {MEMORY}): split across each engine's own "
                        "cache and write buffers as its documentation advises, each run held to it in a memory "
                        "cgroup (page cache included) where one can be made; 'none': each engine's own defaults, "
                        "printed")
    c.add_argument("--loads", action="store_true",
                   help="rank the loads too (one load an engine: no significance test)")
    c.add_argument("--explain", action="store_true",
                   help="print every warning in full (by default each kind is one line naming its rows)")
    add_format_option(c)
    add_profile_option(c, count=False)
    add_metric_option(c)
    add_running_options(c, db=False)
    for a in c._actions:
        if a.dest == "json":
            a.help = "write every record to FILE (default, unless --no-store: compare-<date>-<time>.json in " \
                     "kvlab's per-user folder, $XDG_DATA_HOME/kvlab or ~/.local/share/kvlab)"
    return c


def handle(args) -> int:
    described = native.describe()
    built = list(dict.fromkeys(n for r in described if r["built"] and r["stores_data"]
                               for n in engines.runs_as(r["engine"])))
    names = [n.strip() for n in args.engines.split(",") if n.strip()] if args.engines else built
    for n in names:
        native.require_built(n, load_now=False)
    names = list(dict.fromkeys(names))
    memory = None if str(args.memory).strip().lower() in NO_BUDGET else memory_bytes(args.memory)
    if args.warmup >= args.duration:
        raise UsageError(f"--warmup {args.warmup:g} must be shorter than --duration {args.duration:g}")
    if not args.json and not args.no_store:   # --no-store writes no file unless --json asks for one (issue 46)
        args.json = str(kvlab_home() / f"compare-{time.strftime('%Y%m%d-%H%M%S')}.json")
    seed = args.seed if args.seed is not None else time.time_ns() & 0xFFFFFFFF
    common.preflight(args)
    plan = maincompare.Plan(engines=tuple(names), num=args.num, threads=tuple(sorted({1, args.threads})),
                            repeat=args.repeat, duration=args.duration, warmup=args.warmup, seed=seed,
                            memory=memory, profile=args.profile,
                            count="instructions" if args.metric == "instructions" else None,
                            count_reads=args.count_reads)
    args.tag = list(dict.fromkeys([*(args.tag or ()), plan.label]))
    aa = {v: base for v, base in maincompare.same_library(described).items() if v in names and base in names}
    estimate = maincompare.estimate_seconds(plan, _rates(args))
    runs = len(maincompare.schedule(plan))
    common.say(args, f"kvlab compare: {', '.join(names)}; num={args.num:,}, seed={seed}",
               output.memory_line(memory, names),
               f"plan: each engine loaded once (fillseq, {args.num:,} keys), then {_points_text(plan)}, each "
               f"{_s(args.duration)} with the first {_s(args.warmup)} cut as warm-up; {args.repeat} repeats, "
               "round-robin (each repeat runs every engine at every point, the first engine rotating)",
               f"that is {len(names)} load{'s' if len(names) > 1 else ''} + {runs} runs: about {output.duration(estimate)}")
    if not args.engines:
        unbuilt = [r["engine"] for r in described if not r["built"] and r["stores_data"] and not r["unobtainable"]
                   and (engines.VERSION_MARK not in r["engine"] or r["engine"] in SETUP_BUILDS)]
        if unbuilt:
            common.say(args, f"not built here, so not run: {', '.join(unbuilt)} (`kvlab engines` says how to build "
                             "each)")
    for version, base in aa.items():
        common.say(args, f"A/A noise check: {version} is the very library {base} links (the same Debian package), "
                         "loaded at run time: their gap is kvlab's noise and a loaded object's dispatch, not the "
                         "engine's; it is reported apart after the ranking")
    cannot = stats.reach_text(args.repeat, args.repeat, results_compare.ALPHA)
    if cannot:   # said before anything is spent
        print(f"warning: --repeat {args.repeat}: {cannot}; give --repeat "
              f"{stats.fewest_per_side(results_compare.ALPHA) + 1} or more for a verdict", file=sys.stderr)
    started = time.monotonic()
    state: dict = {}
    outcome = maincompare.run_plan(plan, on_result=lambda b: _progress(args, plan, b, started, state),
                                   control=common.progress_control(args))
    benchmarks = maincompare.finish(outcome.results)
    result = RunResult(benchmarks)
    if outcome.stopped:   # saved before anything more is printed
        print(f"kvlab compare: stopped by {outcome.stopped}; what ended is kept", file=sys.stderr)
        common.finish(result, args)
        _report(args, plan, benchmarks, aa)
        return signals.exit_code(outcome.stopped)
    common.say(args, f"took {output.duration(time.monotonic() - started)} (estimated {output.duration(estimate)})")
    _report(args, plan, benchmarks, aa)
    code = common.finish(result, args)
    if len(names) > 1:
        common.say(args, f"each engine's records are tagged {plan.label}:ENGINE: kvlab results compare "
                         f"tag:{plan.label}:{names[0]} tag:{plan.label}:{names[1]} sets two side by side"
                   + ("; kvlab results why (the same two sides) explains the gap from their profiles"
                      if args.profile else ""))
    return code


def _rates(args) -> dict:
    try:
        return stored_rates(Store(args.store))
    except Exception:   # an estimate only: a store that cannot be read gives the assumed rates
        return {}


def _points_text(plan) -> str:
    threads = " and ".join(str(t) for t in plan.threads)
    return f"{maincompare.READ} at {threads} thread{'s' if plan.threads[-1] > 1 else ''}"


def _s(seconds: float) -> str:
    return f"{seconds:g} s"


def _progress(args, plan, b, started, state) -> None:
    """A line per load, and one at the end of each repeat with the time left: the runs left at the pace of the
    runs so far (the loads, whose pace differs, left out)."""
    now = time.monotonic()
    if b.phase == "load":
        state["loaded_at"] = now
        if not args.quiet:
            short = ""
            if b.seconds < sanity.MIN_SECONDS:   # said in full once, then in a word
                short = (" (rough: under 1 s)" if state.get("rough_said") else
                         f" (a {b.seconds:.2f} s load: under the {sanity.MIN_SECONDS:g} s a stable rate needs, a rough "
                         "figure, not ranked)")
                state["rough_said"] = True
            print(f"  {b.engine} loaded: {output.num(b.ops)} keys in {b.seconds:.2f} s, "
                  f"{output.num(b.ops_per_sec)} ops/s{short}", flush=True)
        return
    state["runs"] = state.get("runs", 0) + 1
    order = ((b.provenance or {}).get("compare") or {}).get("order")
    per_repeat = len(plan.engines) * len(plan.points)
    if not args.quiet and order is not None and (order + 1) % per_repeat == 0:
        spent = now - started
        r = (order + 1) // per_repeat
        pace = (now - state.get("loaded_at", started)) / state["runs"]
        left = pace * (plan.repeat * per_repeat - state["runs"])
        print(f"  repeat {r}/{plan.repeat} done: {output.duration(spent)} so far, about {output.duration(max(left, 0))} left",
              flush=True)


COLUMNS = [("engine", "engine", "<"), ("point", "workload", "<"), ("n", "n", ">"), ("median", "median ops/s", ">"),
           ("interval", "interval", "<"), ("p50", "p50 us", ">"), ("p99", "p99 us", ">")]


def _report(args, plan, benchmarks, aa=None) -> None:
    """The table, the ranking per point, then each kind of warning once (all of them in full with --explain)."""
    rows = maincompare.summarize(benchmarks)
    levels = {round(r["summary"]["median_ci_level"], 6) for r in rows if r["summary"].get("median_ci")}
    level = levels.pop() if len(levels) == 1 else None
    cells = [{"engine": r["engine"], "point": r["point"].label(), "n": r["n"], "median": r["median"],
              "interval": _interval(r["summary"], level is None),
              # a load's latency is per batch of puts: not set beside the reads' per-op figures
              **({"p50": "-", "p99": "-"} if r["point"].phase == "load" else {"p50": r["p50"], "p99": r["p99"]})}
             for r in rows]
    if not args.quiet and cells:
        print()
        heading = [c if c[0] != "interval" else
                   ("interval", f"median's {stats._percent(level)} interval" if level else "median's interval", "<")
                   for c in COLUMNS]
        output.table(cells, heading,
                     legend="  n: runs (a load: one); median ops/s across them, with the median's interval (exact "
                            "order statistics; with 3 to 5 runs the min-max range, at the level it has); p50, p99: "
                            "the runs' median latency per op")
        ranking = maincompare.rank(rows, loads=args.loads)
        if ranking and getattr(args, "table_format", "text") != "text":
            print()
            output.table(ranking_rows(ranking), RANKING_COLUMNS, legend="  " + ranking_legend())
        elif ranking:
            print()
            print(ranking_legend())
            for point, entries in ranking:
                print(_ranking_line(point, entries))
                for e in entries:
                    print(_ranking_entry(e))
        for check in maincompare.aa_checks(rows, aa or {}):
            print(_aa_line(check))
    counted.report(args, benchmarks, rows)
    common.warnings_once(args, benchmarks)


def _aa_line(c) -> str:
    """The A/A noise check at a point: the same library twice, their paired ratio within repeats."""
    head = f"A/A noise check, {c['a']} over {c['b']} (the same library), {c['point'].label()}: "
    if c["ci"] is None:
        return head + f"{c['ratio']:.3f}x over {c['n']} repeats (no interval below 3)" if c["ratio"] else head + "-"
    lo, hi = c["ci"]
    holds = "1 inside: no difference shown" if lo <= 1.0 <= hi else \
        "1 outside: a difference where none can be, the harness's or the machine's noise; rerun before trusting gaps this size"
    resolves = max(hi / c["ratio"], c["ratio"] / lo) - 1.0 if c["ratio"] and lo > 0 else None
    said = f"; on this machine now, gaps under about {100 * resolves:.0f}% are within noise" if resolves else ""
    return head + f"{c['ratio']:.3f}x [{lo:.3f}, {hi:.3f}] over {c['n']} repeats ({holds}{said})"


RANKING_COLUMNS = [("point", "point", "<"), ("pairs", "pairs tested", ">"), ("engine", "engine", "<"),
                   ("median", "median ops/s", ">"), ("x_best", "x best", ">"), ("x_best_ci", "its 95% interval", "<"),
                   ("same_as", "indistinguishable from", "<")]


def ranking_rows(ranking) -> list:
    """The ranking as one table (--format markdown|latex|csv): a row per engine and point."""
    rows = []
    for point, entries in ranking:
        for e in entries:
            v = e["vs_best"]
            rows.append({"point": point.label(), "pairs": e["family"]["pairs"], "engine": e["row"]["engine"],
                         "median": e["row"]["median"], "x_best": None if v["ratio"] is None else round(v["ratio"], 4),
                         "x_best_ci": "-" if not v["ci"] else f"{v['ci'][0]:.3f} .. {v['ci'][1]:.3f}",
                         "same_as": ("fewer than 3 repeats: no test" if e["row"]["n"] < 3
                                     else ", ".join(e["same_as"]) or "none")})
    return rows


def _interval(s: dict, with_level: bool) -> str:
    if not s.get("median_ci"):
        return "-" if s["n"] <= 1 else f"n={s['n']}: none"
    lo, hi = s["median_ci"]
    text = f"{output.num(lo)} .. {output.num(hi)}"
    return text + (f" ({stats._percent(s['median_ci_level'])})" if with_level else "")


def ranking_legend() -> str:
    return ("ranking by the geometric mean of each engine's runs (the median ops/s is shown beside it); every pair of "
            "engines at a point compared within each repeat (paired ratios, "
            f"Student's t, Holm's correction over the point's pairs: at most {results_compare.ALPHA:g} chance of "
            f"calling any equal pair different), a difference also {results_compare.THRESHOLD_PCT:g}% or more; "
            "x best: the geometric mean of the per-repeat ratios to the best, with its 95% interval")


def _ranking_line(point, entries) -> str:
    """'readrandom 1 thr (3 pairs tested):', each engine's line below it."""
    n = entries[0]["family"]["pairs"]
    tested = f"{n} pair{'s' if n != 1 else ''} tested" if n else "no pair tested: fewer than 3 repeats"
    return f"{point.label()} ({tested}):"


def _ratio(v: dict) -> str:
    if v["ratio"] is None:
        return "-"
    if v["ci"] is None:
        return f"{v['ratio']:.3f}x (n={v['n']}: no interval)"
    return f"{v['ratio']:.3f}x [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}]"


def _ranking_entry(e) -> str:
    r = e["row"]
    best = e["vs_best"]["ratio"] == 1.0 and e["vs_best"]["ci"] in (None, [1.0, 1.0])
    same = e["same_as"]
    if r["n"] < 3:
        said = "fewer than 3 repeats: no test"
    elif same:
        said = "indistinguishable from " + ", ".join(same)
    else:
        said = "different from every other"
    ratio = "the best" if best else "x best " + _ratio(e["vs_best"])
    return f"  {r['engine']:<18} {output.num(r['median']):>12}  {ratio:<33} {said}"
