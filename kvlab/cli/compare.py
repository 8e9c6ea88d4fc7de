"""`kvlab compare`: the main job. Every built engine on the same small fillseq + readrandom, at 1 thread
and at --threads; one table, every record in one JSON file and in the results store."""
from __future__ import annotations

import time

from ..execution import native
from ..execution.run.runner import run_spec
from ..model.spec import RunSpec, memory_bytes
from ..results import sanity
from ..results.result import RunResult
from ..results.store import kvlab_home
from . import common, output
from .parsing import add_running_options, count

NAME = "compare"
HELP = "the main job: every built engine (LMDB first) on the same small fillseq + readrandom"


def add_parser(sub, make):
    c = make(sub, NAME, help=HELP, description=HELP + ", at 1 thread and at --threads")
    c.add_argument("--num", type=count(1), default=200_000, metavar="N", help="keys (default 200,000)")
    c.add_argument("--threads", type=count(1, 1024), default=2, metavar="N",
                   help="the second thread count (default 2; the first is 1)")
    c.add_argument("--engines", default=None, metavar="LIST", help="comma list (default: every built engine)")
    c.add_argument("--memory", default=None, metavar="SIZE",
                   help="one memory budget for every engine, e.g. 1GiB: split across each engine's own cache and "
                        "write buffers as its documentation advises, each run held to it in a memory cgroup (page "
                        "cache included) where one can be made (default: each engine's own defaults, printed)")
    add_running_options(c, db=False)
    for a in c._actions:
        if a.dest == "json":
            a.help = "write every record to FILE (default compare-<date>-<time>.json in kvlab's per-user folder, " \
                     "$XDG_DATA_HOME/kvlab or ~/.local/share/kvlab)"
    return c


def handle(args) -> int:
    built = [r["engine"] for r in native.describe() if r["built"] and r["stores_data"]]
    names = [n.strip() for n in args.engines.split(",") if n.strip()] if args.engines else built
    for n in names:
        native.require_built(n)
    memory = None if args.memory is None else memory_bytes(args.memory)   # refused before anything is written
    args.json = args.json or str(kvlab_home() / f"compare-{time.strftime('%Y%m%d-%H%M%S')}.json")
    seed = args.seed if args.seed is not None else time.time_ns() & 0xFFFFFFFF
    common.preflight(args)
    common.say(args, f"kvlab compare: {', '.join(names)}; num={args.num:,}, threads 1 and {args.threads}, seed={seed}",
               output.memory_line(memory, names))
    rows, benchmarks = [], []
    for name in names:
        for threads in sorted({1, args.threads}):
            spec = RunSpec(engine=name, workloads=("fillseq", "readrandom"), num=args.num, threads=threads,
                           seed=seed, memory=memory)
            result = run_spec(spec, control=common.progress_control(args))
            benchmarks += list(result)
            for b in result:
                lat = b.latency_us
                rows.append({"engine": name, "workload": b.workload, "threads": threads, "ops_per_sec": b.ops_per_sec,
                             "us_per_op": b.micros_per_op, "p50": lat["p50"], "p99": lat["p99"],
                             "p999": lat["p999"], "max": lat["max"],
                             "found": "" if b.found is None else f"{b.found:,}"})
    # a thread-scaling step needs both points: checked across the runs, the warning stored with the higher one
    sanity.annotate_scaling(benchmarks)
    print()
    output.table(rows, [("engine", "engine", "<"), ("workload", "workload", "<"), ("threads", "threads", ">"),
                        ("ops_per_sec", "ops/s", ">"), ("us_per_op", "us/op", ">"), ("p50", "p50 us", ">"),
                        ("p99", "p99 us", ">"), ("p999", "p99.9 us", ">"), ("max", "max us", ">"),
                        ("found", "found", ">")],
                 legend="  us/op: summed thread time per op (db_bench's figure); p50 ... max: latency per op")
    output.warnings_once(benchmarks)
    return common.finish(RunResult(benchmarks), args)
