"""`kvlab sla [run options] --p99 2ms`: the highest open-loop rate whose response-time percentile stays under a
bound (kvlab.services.sla: the capacity, then bisection with repeats; the walk printed, stored and drawn)."""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from .. import _signals as signals
from .. import errors
from ..model.spec import RUN_FLAGS
from ..results.result import RunResult
from ..services import maincompare
from ..services import sla as service
from . import common, output, run
from .parsing import add_running_options, count

NAME = "sla"
HELP = "find the highest open-loop rate whose latency percentile stays under a bound"
DESCRIPTION = f"""Find the highest rate a mix sustains under a latency bound ("max sustainable throughput for a
given SLA"): the database loaded once, one closed-loop run (the capacity: the top of the range unless --max-rate),
then bisection on the open loop's target rate until the bracket is within --tolerance.  At each rate, --repeat
runs; a rate passes when the interval of the median of their percentile (response time, from each transaction's
intended start) is under the bound, fails when it is above, is undecided when it holds the bound (then run
--repeat more times once; still undecided counts as not shown to pass), and is overloaded when the achieved rate
falls more than {service.SHORTFALL_PCT:g}% short of the target.  Prints the walk and the answer; every run is
stored, tagged sla and the search's label.  The run options are `kvlab run`'s; each probe runs by time
(--duration, default {service.DURATION_S:g} s)."""
# the search decides these itself
_NOT_HERE = ("target_rate", "repeat")
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def _latency(text):
    try:
        return service.parse_latency(text)
    except errors.SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _percentile(text):
    try:
        return service.parse_percentile(text)
    except errors.SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _rate(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate; allowed: transactions/s, more than 0") from None
    if not 0 < value <= 1e9:
        raise argparse.ArgumentTypeError(f"{text} is out of range: allowed more than 0, up to 1e9 transactions/s")
    return value


def _percent(text):
    try:
        value = float(str(text).strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage; allowed: 0.1 to 100, such as 5 or "
                                         "5%") from None
    if not 0.1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is out of range: allowed 0.1 to 100 (%)")
    return value


def add_parser(sub, make):
    p = make(sub, NAME, help=HELP, description=DESCRIPTION)
    g = p.add_argument_group("the bound and the search")
    g.add_argument("--p99", type=_latency, default=None, metavar="LATENCY",
                   help="the bound on the 99th percentile: 500us, 2ms, 0.5s")
    g.add_argument("--bound", type=_latency, default=None, metavar="LATENCY",
                   help="the bound on --percentile's latency (the same as --p99 at 99)")
    g.add_argument("--percentile", type=_percentile, default=None, metavar="Q",
                   help=f"the percentile --bound holds, such as 99.9 (default {service.PERCENTILE:g})")
    g.add_argument("--min-rate", type=_rate, default=None, metavar="OPS_PER_SEC",
                   help=f"the bottom of the range (default {100 * service.MIN_RATE_FRACTION:g}%% of its top)")
    g.add_argument("--max-rate", type=_rate, default=None, metavar="OPS_PER_SEC",
                   help="the top of the range (default: a closed-loop run's throughput, measured first)")
    g.add_argument("--repeat", dest="sla_repeat", type=count(1, service.MAX_REPEAT), default=service.REPEAT,
                   metavar="N", help=f"runs at each probed rate (default {service.REPEAT}; 3 give a 75%% "
                   "interval, 5 a 94%% one, 6 and more 95%%)")
    g.add_argument("--tolerance", type=_percent, default=service.TOLERANCE_PCT, metavar="PCT",
                   help=f"stop when the bracket's ends are within this %% (default {service.TOLERANCE_PCT:g})")
    g.add_argument("--max-probes", type=count(2, 100), default=service.MAX_PROBES, metavar="N",
                   help=f"rates to probe at most (default {service.MAX_PROBES})")
    g.add_argument("--plot", default=None, metavar="FILE",
                   help="draw the walk, the bound and the answer into FILE (.png, .svg or .pdf)")
    groups: dict = {None: p}
    for f in RUN_FLAGS:   # `kvlab run`'s flags, but the rate and the repeats, which the search decides
        if f.shared or f.name in _NOT_HERE:
            continue
        if f.group not in groups:
            groups[f.group] = p.add_argument_group(f.group)
        run._add(groups[f.group], f)
    settings = groups[next(f.group for f in RUN_FLAGS if f.setting)]
    settings.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                          help="any engine setting (repeatable), as `kvlab run --set`")
    add_running_options(p)
    return p


def bound_of(args) -> service.Bound:
    if args.p99 is not None and args.bound is not None:
        raise errors.SpecError("give --p99 LATENCY or --bound LATENCY (with --percentile), not both")
    if args.p99 is not None:
        if args.percentile is not None and args.percentile != service.PERCENTILE:
            raise errors.SpecError(f"--p99 bounds the 99th percentile; for --percentile {args.percentile:g} give "
                                   "--bound LATENCY")
        return service.Bound(args.p99, service.PERCENTILE)
    if args.bound is None:
        raise errors.SpecError("the latency bound is missing: give --p99 LATENCY (such as 2ms), or --bound LATENCY "
                               "with --percentile Q")
    return service.Bound(args.bound, args.percentile if args.percentile is not None else service.PERCENTILE)


def _check_plot(path) -> None:
    if Path(path).suffix.lower() not in PLOT_SUFFIXES:
        raise errors.SpecError(f"--plot {path}: allowed: a file ending {', '.join(PLOT_SUFFIXES)}")
    common.check_output_file(path, "--plot")
    from .._optional import require
    require("matplotlib", "kvlab sla --plot")


def handle(args) -> int:
    bound = bound_of(args)
    if args.workload is None and args.txn is None:
        raise errors.SpecError("the mix to search is missing: give --workload, such as ycsb-a (a mix: ycsb-a..f, "
                               "txn:SPEC, a TOML or YCSB file)")
    spec = run.spec_from_args(args)
    if not spec.duration and args.duration is None:
        spec = spec.replace(duration=service.DURATION_S)
    service.check_spec(spec)
    if args.min_rate is not None and args.max_rate is not None and args.min_rate >= args.max_rate:
        raise errors.SpecError(f"--min-rate {args.min_rate:g} is not below --max-rate {args.max_rate:g}; allowed: "
                               "--min-rate < --max-rate")
    if args.plot:
        _check_plot(args.plot)
    common.preflight(args, spec.db, spec.use_existing_db)
    most = args.max_probes + 1   # an undecided probe runs twice
    common.say(args, f"kvlab sla: {spec.engine}, {spec.workloads[0]}, num={spec.num:,}, threads={spec.threads}, "
                     f"seed={spec.seed}; bound {bound.text()} on the response time (from the intended start)",
               f"  {args.sla_repeat} run(s) of {spec.duration:g} s a rate, up to {args.max_probes} rates (about "
               f"{_minutes(most * args.sla_repeat * (spec.duration + 0.5))} at most), bracket within "
               f"{args.tolerance:g}%")
    try:
        outcome = service.search(spec, bound, repeat=args.sla_repeat, min_rate=args.min_rate,
                                 max_rate=args.max_rate, tolerance_pct=args.tolerance, max_probes=args.max_probes,
                                 on_result=lambda b: _on_result(b, args), on_probe=lambda p: _on_probe(p, args),
                                 control=common.progress_control(args))
    except service.SlaError as exc:
        if exc.outcome.records:   # what ran is kept
            common.finish(RunResult(exc.outcome.records, spec), args)
        raise
    print()
    print_walk(outcome)
    _warnings(outcome.records)
    code = common.finish(RunResult(outcome.records, spec), args)
    if args.plot and outcome.probes:
        write_plot(outcome, args.plot)
        common.say(args, f"figure written to {args.plot}")
    if outcome.stopped:
        print(f"kvlab: stopped by {outcome.stopped}: the walk above is what ran", file=sys.stderr)
        return code or signals.exit_code(outcome.stopped)
    return code


def _warnings(records) -> None:
    """Each kind of warning once (as kvlab compare says them: the runs of a search repeat the same ones); every
    record keeps its own in full in the store and --json."""
    kinds = maincompare.collapse_warnings(records)
    every = maincompare.rows_of(records)
    for k in sorted(kinds, key=lambda k: (k.build, not k.machine)):
        print(f"{'note' if k.build else 'warning'}: {k.line(every, len(records))}", file=sys.stderr)


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _on_result(b, args) -> None:
    if getattr(args, "quiet", False):
        return
    where = (b.provenance or {}).get("sla", {})
    role = where.get("role")
    if role == "load":
        print(f"  load: {output.format_line(b)}", flush=True)
    elif role == "capacity":
        rate = (b.mix or {}).get("txn_per_sec") or b.ops_per_sec
        print(f"  capacity (closed loop): {output.num(rate)} txn/s", flush=True)


def _on_probe(p, args) -> None:
    if getattr(args, "quiet", False):
        return
    print(f"  {output.num(p.target_rate)} txn/s: {p.verdict} ({p.reason})", flush=True)


def print_walk(outcome, out=None) -> None:
    """The probes in the order walked, the notes, then the answer."""
    out = out or sys.stdout
    name = service.percentile_name(outcome.bound.percentile)
    rows = []
    for i, p in enumerate(outcome.probes, 1):
        ratio = p.achieved_ratio
        s = p.latency
        rows.append({"i": str(i), "target": p.target_rate, "achieved": p.achieved["median"],
                     "ratio": "-" if ratio is None else f"{100 * ratio:.1f}%",
                     "median": "-" if s["median"] is None else service.latency_text(s["median"]),
                     "interval": _interval(s), "runs": str(s["n"]), "verdict": p.verdict})
    columns = [("i", "#", ">"), ("target", "target txn/s", ">"), ("achieved", "achieved txn/s", ">"),
               ("ratio", "achieved", ">"), ("median", f"{name} median", ">"), ("interval", "interval", "<"),
               ("runs", "runs", ">"), ("verdict", "verdict", "<")]
    output.table(rows, columns, out=out,
                 legend=f"  {name}: of the response time, from each transaction's intended start; interval: of the "
                        f"median across the runs; pass: the interval under the bound, overloaded: achieved more "
                        f"than {service.SHORTFALL_PCT:g}% short of the target")
    if outcome.capacity:
        print(f"closed-loop capacity: {output.num(outcome.capacity)} txn/s", file=out)
    for note in outcome.notes:
        print(f"note: {note}", file=out)
    print(f"{outcome.answer_text()}; {outcome.walk.ended}", file=out)


def _interval(s: dict) -> str:
    if not s.get("median_ci"):
        return f"n={s.get('n', 0)}: none"
    lo, hi = s["median_ci"]
    return f"{service.latency_text(lo)} .. {service.latency_text(hi)} ({s['median_ci_level']:.0%})"


def write_plot(outcome, path) -> None:
    """plots.sla's figure into `path` whole or not at all (a file beside it, renamed)."""
    import matplotlib.pyplot as plt

    from ..lab import plots
    fig = plots.sla(outcome)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent or ".")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=150, bbox_inches="tight")
        os.replace(tmp, target)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
