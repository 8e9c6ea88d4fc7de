"""`kvlab noise [run options] --repeat N`: the machine's noise floor, measured.

One spec runs N times (an A/A: nothing changes between the runs but the machine); per benchmark and metric
(ops/s, p50, p99, p99.9, CPU per op) the spread of the N figures is the range, max - min, in % of their
median: how far apart identical runs came out here.  It is stored in the results store (table `noise`, keyed
by host, engine, workload, phase and threads), and `kvlab results compare` takes the latest stored floor of
a matched benchmark's host, engine, workload and threads as its noise floor where it is above --threshold:
a change smaller than identical runs differ by is called '~', whatever p says.
"""
from __future__ import annotations

import dataclasses
import sys

from ..results import stats
from ..results.compare import result_samples
from ..results.store import NOISE_METRICS, Store
from . import common, output, run
from .parsing import UsageError
from .results import print_trial_warnings

NAME = "noise"
HELP = "run one spec N times and store the machine's spread per metric: compare's noise floor"
DESCRIPTION = """Run one spec N times (--repeat, default 5; at least 3) and store the machine's spread: per
benchmark and metric (ops/s, p50, p99, p99.9 latency, CPU per op), the range of the N figures (max - min) in %
of their median.  `kvlab results compare` uses the latest stored spread of a benchmark's host, engine,
workload and threads as its noise floor, where it is larger than --threshold.  The options are `kvlab run`'s."""

DEFAULT_REPEAT = 5
MIN_REPEAT = 3
METHOD = "range"   # (max - min) / median, in %
LABELS = {"ops_per_sec": "ops/s", "p50_us": "p50", "p99_us": "p99", "p999_us": "p99.9", "cpu_us_per_op": "CPU/op"}


def add_parser(sub, make):
    p = make(sub, NAME, help=HELP, description=DESCRIPTION)
    run.add_parser(None, lambda _sub, _name, **_kwargs: p)   # every `kvlab run` option, on this parser
    for action in p._actions:
        if action.dest == "repeat":
            action.help = f"identical runs (default {DEFAULT_REPEAT}, at least {MIN_REPEAT})"
    return p


def handle(args) -> int:
    repeat = args.repeat or DEFAULT_REPEAT
    if repeat < MIN_REPEAT:
        raise UsageError(f"noise: --repeat {repeat}: a spread needs at least {MIN_REPEAT} runs (5 to 10 say more)")
    spec = run.spec_from_args(args).replace(repeat=repeat)
    common.preflight(args, spec.db, spec.use_existing_db)
    common.say(args, f"kvlab noise: {spec.engine}, {','.join(spec.workloads)}, num={spec.num:,}, threads="
                     f"{spec.threads}, seed={spec.seed}: {repeat} identical runs")
    from ..execution.run.runner import run_spec
    result = run_spec(spec, on_result=lambda b: print(f"{b.trial + 1}/{repeat}  {output.format_line(b)}",
                                                      flush=True),
                      control=common.progress_control(args))
    print_trial_warnings(list(result))
    result.benchmarks = [dataclasses.replace(b, tags=list(dict.fromkeys([*b.tags, *args.tag, "noise"])))
                         for b in result]   # new records: the workers' are never changed
    partial = any(b.partial for b in result)
    rows = spreads(result, repeat)
    print()
    print_spreads(rows)
    run_id = _save(result, args)
    if partial:
        print("kvlab: stopped part-way: no noise floor stored (the spread of the runs that ended is above)",
              file=sys.stderr)
        return 130
    if run_id is None:
        common.say(args, "no noise floor stored (--no-store)")
        return 0
    store = Store(args.store)
    for row in rows:
        store.append_noise({**row, "run_id": run_id, "tags": list(args.tag), "spec": spec.to_dict()})
    host = rows[0]["host"] if rows else "-"
    common.say(args, f"stored as the noise floor of {spec.engine} on {host} ({len(rows)} benchmark"
                     f"{'s' if len(rows) != 1 else ''}) in {store.path}; kvlab results compare uses it")
    return 0


def spreads(result, repeat: int) -> list:
    """One row per benchmark (workload, phase, threads) of a run of N trials: each metric's spread in % of
    its median (METHOD), and in `detail` each metric's median, min, max, the half-width of its median's
    interval in % with that interval's confidence, and the values."""
    frame = result_samples(list(result))
    frame = frame[~frame.partial.fillna(False).astype(bool)]
    warnings = sorted({w for b in result for w in b.warnings if w.startswith("machine ")})
    rows = []
    for (workload, phase, threads), part in frame.groupby(["workload", "phase", "threads"], sort=False):
        row = {"host": part.host.iloc[0], "engine": part.engine.iloc[0], "workload": workload, "phase": phase,
               "threads": int(threads), "n": len(part), "method": METHOD}
        detail = {"runs": repeat, "machine_warnings": warnings}
        for m in NOISE_METRICS:
            s = stats.summarize(part[m])
            values = s["values"]
            if len(values) < MIN_REPEAT or not s["median"]:
                row[f"{m}_pct"] = None
                continue
            median = s["median"]
            row[f"{m}_pct"] = (max(values) - min(values)) / abs(median) * 100
            lo, hi = s["median_ci"] or (None, None)
            detail[m] = {"median": median, "min": min(values), "max": max(values),
                         "median_ci_halfwidth_pct": (hi - lo) / 2 / abs(median) * 100 if lo is not None else None,
                         "median_ci_level": s["median_ci_level"], "values": values}
        row["detail"] = detail
        rows.append(row)
    return rows


def print_spreads(rows, out=None) -> None:
    table = []
    for r in rows:
        ops = r["detail"].get("ops_per_sec") or {}
        line = {"benchmark": f"{r['workload']} {r['phase']} {r['threads']} thr", "n": r["n"],
                "ops": output.num(ops.get("median"))}
        for m in NOISE_METRICS:
            line[f"{m}_pct"] = "-" if r.get(f"{m}_pct") is None else f"{r[f'{m}_pct']:.1f}%"
        table.append(line)
    columns = [("benchmark", "benchmark", "<"), ("n", "n", ">"), ("ops", "ops/s median", ">")]
    for m in NOISE_METRICS:
        columns.append((f"{m}_pct", f"{LABELS[m]} spread", ">"))
    output.table(table, columns, out=out,
                 legend="  spread: (max - min) / median of the n identical runs, in %: the change between two runs "
                        "that means nothing here (kvlab results compare's noise floor)")


def _save(result, args):
    """--json and the store, as kvlab run saves; the run id, or None with --no-store."""
    if getattr(args, "json", None):
        result.write_json(args.json)
        common.say(args, f"results written to {args.json}")
    if args.no_store:
        return None
    store = Store(args.store)
    run_id = store.append(result)   # a failure saves the run as JSON elsewhere and says where
    common.say(args, f"stored as run {run_id} in {store.path}")
    return run_id
