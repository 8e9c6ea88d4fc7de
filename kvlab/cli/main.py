"""The `kvlab` command line: engines, run, dbbench, compare."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from .. import errors
from .._version import __version__
from ..execution import native
from ..execution.progress import RunControl
from ..execution.runner import run_spec
from ..lab import notebooks
from ..lab.display import TextBar
from ..model import engines, workloads
from ..model.spec import RunSpec, make_spec
from ..results.result import write_json_atomic
from ..results.store import Store, rescue_json
from . import crashtest as crashtest_cli
from . import linkbench as linkbench_cli
from . import dbbench
from . import sweep as sweep_cli


def cmd_engines(args) -> int:
    rows = native.describe()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'engine':<18} {'built':<6} {'version':<9} {'asserts':<8} {'build':<40} description")
    for r in rows:
        build = r["origin"] or f"not built: install {r['package']}"
        asserts = {True: "ON", False: "off", None: "-"}[r["assertions"]]
        print(f"{r['engine']:<18} {'yes' if r['built'] else 'no':<6} {r['version'] or '-':<9} {asserts:<8} "
              f"{build:<40} {r['description']}")
    return 0


def _print_result(b):
    print(dbbench.format_line(b), flush=True)
    if b.mix:
        m = b.mix
        print(f"  {m['transactions']:,} transactions, {m['txn_per_sec']:,.0f} txn/s; reads {m['reads_per_sec']:,.0f}/s, "
              f"writes {m['writes_per_sec']:,.0f}/s, keys read {m['keys_per_sec']:,.0f}/s; retries {m['retries']}, "
              f"aborts {m['aborts']}", flush=True)
        for name, t in m["templates"].items():
            lat = t["latency_us"]
            print(f"    {name:<16} {t['share']:6.1%}  p50 {lat['p50'] or 0:9.2f} us  p99 {lat['p99'] or 0:9.2f} us  "
                  f"max {lat['max'] or 0:10.2f} us", flush=True)
        if any(kind != "none" for kind in m.get("template_txn", {}).values()):
            print(f"  isolation: {m['isolation']}", flush=True)
    if b.partial:
        print(f"  PARTIAL: stopped after {b.ops} ops in {b.seconds:.2f} s; the figures above cover only that",
              flush=True)
    facts = b.versions.get("engine_build") or {}
    if facts.get("assertions") and b.phase == "run":
        print(f"  WARNING: {b.engine}'s library has assertions compiled in ({facts.get('origin')}); "
              "benchmarks unnecessarily slow", flush=True)
    if b.writer:
        w = b.writer
        print(f"{'  writer':<12} : {w['ops_per_sec']:.0f} writes/sec, {w['ops']} writes, "
              f"p99 {w['latency_us']['p99'] or 0:.2f} us (not counted in the line above)", flush=True)


def _engine_settings(args) -> dict:
    keys = ("cache_size", "sync", "compression", "map_size", "options", "table_options")
    settings = {k: getattr(args, k) for k in keys if getattr(args, k) not in (None, False)}
    settings.update(engines.parse_setting(item, "--set") for item in args.set or ())
    return settings


def spec_from_args(args) -> RunSpec:
    """The RunSpec a `kvlab run` command line describes."""
    if args.txn is not None and args.workload is not None:
        raise errors.SpecError("give --workload or --txn, not both (--txn SPEC is the workload txn:SPEC)")
    workload = f"txn:{args.txn}" if args.txn is not None else (args.workload or "fillseq,readrandom")
    if args.clients is not None and args.threads is not None:
        raise errors.SpecError("give --clients or --threads, not both (a client is a thread on an embedded engine)")
    threads = args.clients if args.clients is not None else (args.threads or 1)
    return make_spec(
        args.engine, workload, num=args.num, reads=args.reads, threads=threads,
        distribution=args.distribution, target_rate=args.target_rate, cpus=args.cpus,
        duration=args.duration, value_size=args.value_size, key_size=args.key_size, batch=args.batch,
        seed=args.seed, db=args.db, use_existing_db=args.use_existing_db, keep_db=args.db is not None,
        writes_per_second=args.writes_per_second, seek_nexts=args.seek_nexts, interval=args.interval,
        warmup=args.warmup, repeat=args.repeat, **_engine_settings(args))


def cmd_run(args) -> int:
    spec = spec_from_args(args)
    print(f"kvlab run: {spec.engine}, {','.join(spec.workloads)}, num={spec.num}, threads={spec.threads}, "
          f"seed={spec.seed}", flush=True)
    return _execute(spec, args)


def _execute(spec, args) -> int:
    """Run a spec from the command line: lines as results come, warnings, accounting, --json, the store."""
    _preflight(args)
    result = run_spec(spec, on_result=_print_result, control=_progress_control(args.progress))
    _print_accounting(_report(result, args))
    return _finish(result, args)


def _report(result, args):
    for w in sorted({w for b in result for w in b.warnings}):
        print(f"warning: {w}", file=sys.stderr)
    return result


def _finish(result, args) -> int:
    """--json and the store, then the exit code (130 for a run stopped part-way)."""
    _save(result, args, say=True)
    return 130 if any(b.partial for b in result) else 0


def _preflight(args):
    """Before anything is measured: the results store opens for writing and --json's folder takes files."""
    if args.json:
        folder = Path(args.json).expanduser().resolve().parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise errors.ResultsError(f"--json {args.json}: cannot create {folder} ({exc.strerror or exc})") from None
        if not os.access(folder, os.W_OK):
            raise errors.ResultsError(f"--json {args.json}: {folder} is not writable")
    if not getattr(args, "no_store", False):
        Store(args.store).check()


def _save(result, args, say=False):
    """--json, then the store; a failure of either leaves the run saved somewhere the error names."""
    failed = []
    if args.json:
        try:
            result.write_json(args.json)
            if say:
                print(f"results written to {args.json}")
        except OSError as exc:
            saved = rescue_json(result.to_list(), Path(args.json).name)
            failed.append(f"--json {args.json} could not be written ({exc.strerror or exc}); the run is saved in "
                          f"{saved}")
    try:
        _store(result, args)
    except errors.ResultsError as exc:
        failed.append(str(exc))
    if failed:
        raise errors.ResultsError("; ".join(failed))


def _progress_control(mode: str):
    """A RunControl with a progress bar on stderr, or None (auto: only on a terminal)."""
    if mode == "off" or (mode == "auto" and not sys.stderr.isatty()):
        return None
    return RunControl([TextBar(sys.stderr)], every=0.5)


def _print_accounting(result):
    print(f"\n{'workload':<16} {'phase':<5} {'wall s':>8} {'user s':>8} {'sys s':>7} {'CPU %':>6} "
          f"{'DB MiB':>8} {'proc MiB':>9} {'vol cs':>8} {'invol cs':>8} {'KB w/op':>8}")
    for b in result:
        a = b.accounting or {}
        mib = lambda v: f"{v / 1048576:.1f}" if v is not None else "-"  # noqa: E731
        kb = a.get("io_kb_written_per_op")
        print(f"{b.workload:<16} {b.phase:<5} {a.get('wall_s', 0):>8.2f} {a.get('cpu_user_s', 0):>8.2f} "
              f"{a.get('cpu_sys_s', 0):>7.2f} {a.get('cpu_pct') or 0:>6.0f} {mib(a.get('db_size_bytes')):>8} "
              f"{mib(a.get('process_peak_rss_bytes')):>9} {a.get('ctx_voluntary', 0):>8} "
              f"{a.get('ctx_involuntary', 0):>8} {kb if kb is None else round(kb, 3)!s:>8}")
        if b.repetitions and b.repetitions["ops_per_sec"]["ci95"][0] is not None:
            r = b.repetitions["ops_per_sec"]
            lo, hi = r["ci95"]
            print(f"  {b.workload}: {r['n']} trials, median {r['median']:,.0f} ops/s, 95% CI [{lo:,.0f}, {hi:,.0f}]")


def _store(result, args):
    if getattr(args, "no_store", False):
        return
    store = Store(args.store)
    run_id = store.append(result)
    print(f"stored as run {run_id} in {store.path}")


def cmd_ycsb(args) -> int:
    """`kvlab ycsb -P workloada [-p name=value ...]`: a YCSB workload file run as is, on a kvlab engine."""
    from ..model.workloads.ycsb import from_ycsb
    mix = from_ycsb(args.P or (), args.p or ())
    for note in mix.notes:
        print(f"note: {note}", file=sys.stderr)
    clients = args.threads or 1
    ops = mix.operation_count or mix.record_count
    spec = make_spec(args.engine, mix.name, num=mix.record_count, reads=-(-ops // clients), threads=clients,
                     duration=args.duration, seed=args.seed, db=args.db, keep_db=args.db is not None,
                     target_rate=args.target, mixes={mix.name: mix})
    print(f"kvlab ycsb: {spec.engine}, {mix.describe()}; recordcount={mix.record_count}, "
          f"operationcount={ops}, clients={clients}, seed={spec.seed}", flush=True)
    return _execute(spec, args)


def cmd_workloads(args) -> int:
    rows = workloads.catalog()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        print(f"{r['name']:<{width}}  {r['kind']:<8}  {r['description']}")
    return 0


def cmd_results(args) -> int:
    store = Store(args.store)
    filters = {k: getattr(args, k) for k in ("engine", "workload", "run_id") if getattr(args, k)}
    if args.action == "sweeps":
        return sweep_cli.cmd_sweep(argparse.Namespace(action="list", store=args.store))
    if args.sweep:
        return _sweep_results(store, args)
    if args.action == "list":
        import pandas as pd
        df = store.frame(**filters)
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(df[["id", "run_id", "stored_at", "engine", "workload", "phase", "threads", "trial", "ops_per_sec",
                      "p50_us", "p99_us", "p999_us", "cpu_pct", "db_size_bytes"]].to_string(index=False))
    else:
        if not args.out:
            raise errors.SpecError("export needs --out FILE")
        path = store.export(args.out, args.format, args.table, **filters)
        print(f"exported to {path}")
    return 0


def _sweep_results(store, args) -> int:
    """`kvlab results list|export --sweep NAME`: the sweep's tidy frame, printed or written."""
    import pandas as pd
    from ..results.sweeps import tidy
    df = tidy(store, args.sweep)
    if args.action == "export":
        if not args.out:
            raise errors.SpecError("export needs --out FILE")
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out, index=False) if args.format == "csv" else df.to_parquet(out, index=False)
        print(f"exported the tidy frame of sweep {args.sweep} to {out}")
        return 0
    # the terminal gets throughput and p99 with their intervals; export has every metric
    shown = [c for c in df.columns if not c.startswith(("micros_per_op", "p50_us", "p999_us", "cpu_pct"))]
    with pd.option_context("display.width", 250, "display.max_columns", 40, "display.float_format", "{:,.4g}".format):
        print(df[shown].to_string(index=False))
    return 0


def cmd_notebooks(args) -> int:
    if args.action == "list":
        print("\n".join(notebooks.available()))
        return 0
    folder = notebooks.run(args.scale, args.only, args.out)
    figures = sorted(p.name for p in folder.rglob("*.svg"))
    print(f"executed notebooks and {len(figures)} figures (SVG, PNG, PDF) in {folder}")
    return 0


def cmd_dbbench(args, rest) -> int:
    if args.help_flags:
        print(dbbench.help_flags())
        return 0
    plan = dbbench.plan(args.engine, rest)
    for w in plan.warnings:
        print(w, file=sys.stderr, flush=True)
    cfg = native.require_built(plan.spec.engine)
    lib = native.load()
    print(dbbench.header(plan, lib.adapters()[cfg.adapter], lib.KEY_ENCODING), flush=True)

    def show(b):
        _print_result(b)
        if plan.histogram:
            print(dbbench.format_histogram(b), flush=True)

    _preflight(args)
    result = run_spec(plan.spec, on_result=show)
    for b in result:
        b.params["command_line"] = dbbench.command_line(args.engine, rest)
    _save(result, args)
    return 130 if any(b.partial for b in result) else 0


def cmd_compare(args) -> int:
    """The main job: every built engine on the same small fillseq + readrandom."""
    built = [r["engine"] for r in native.describe() if r["built"] and r["stores_data"]]
    names = args.engines.split(",") if args.engines else built
    for n in names:
        native.require_built(n)
    out = Path(args.out) / f"compare-{time.strftime('%Y%m%d-%H%M%S')}.json"
    seed = args.seed if args.seed is not None else time.time_ns() & 0xFFFFFFFF
    print(f"kvlab compare: {', '.join(names)}; num={args.num}, threads 1..{args.threads}, seed={seed}", flush=True)
    if not args.no_store:
        Store(args.store).check()
    rows, records = [], []
    for name in names:
        for threads in sorted({1, args.threads}):
            spec = RunSpec(engine=name, workloads=("fillseq", "readrandom"), num=args.num, threads=threads,
                           seed=seed)
            result = run_spec(spec)
            if not args.no_store:
                Store(args.store).append(result)
            records += result.to_list()
            for b in result:
                rows.append((name, b.workload, threads, b.ops_per_sec, b.micros_per_op,
                             b.latency_us["p50"], b.latency_us["p99"], b.latency_us["p999"],
                             b.found if b.found is not None else ""))
    print(f"\n{'engine':<18} {'workload':<11} {'thr':>3} {'ops/sec':>12} {'us/op':>8} {'p50 us':>8} "
          f"{'p99 us':>8} {'p99.9 us':>9} {'found':>9}")
    for r in rows:
        print(f"{r[0]:<18} {r[1]:<11} {r[2]:>3} {r[3]:>12,.0f} {r[4]:>8.3f} {r[5]:>8.2f} {r[6]:>8.2f} "
              f"{r[7]:>9.2f} {r[8]!s:>9}")
    write_json_atomic(out, records)
    print(f"\nresults written to {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kvlab", description="Key-value engine benchmarks at native speed.")
    p.add_argument("--version", action="version", version=f"kvlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("engines", help="list engine configurations and whether they are built")
    e.add_argument("--json", action="store_true")

    w = sub.add_parser("workloads", help="list every named workload (db_bench loops, YCSB A-F, seed 003's tests)")
    w.add_argument("--json", action="store_true")

    r = sub.add_parser("run", help="run workloads on one engine")
    r.add_argument("--engine", default="lmdb", help=f"one of: {', '.join(engines.REGISTRY)}")
    r.add_argument("--workload", default=None,
                   help="name or comma list, run in order (default fillseq,readrandom); `kvlab workloads` lists "
                        "them: db_bench's, ycsb-a..f, seed 003's fdb-*, txn:<mako spec>")
    r.add_argument("--txn", default=None, metavar="SPEC", help="a mako transaction spec as the workload, e.g. g9u1")
    r.add_argument("--num", type=int, default=1_000_000)
    r.add_argument("--reads", type=int, default=None,
                   help="reads per thread (default: num); for a mix, transactions per client")
    r.add_argument("--threads", type=int, default=None, help="worker threads (default 1)")
    r.add_argument("--clients", type=int, default=None, help="a mix's clients (threads on an embedded engine)")
    r.add_argument("--distribution", default=None,
                   help="a mix's key distribution instead of its own: uniform, zipfian, zipfian-plain, latest, "
                        "hotspot, sequential, exponential")
    r.add_argument("--cpus", default=None, help="pin the run, engine threads included, to CPUs: 0, 0-1, 0,2")
    r.add_argument("--target-rate", type=float, default=0.0, metavar="OPS_PER_SEC",
                   help="a mix in open loop at this many transactions/s in total (0: closed loop)")
    r.add_argument("--duration", type=float, default=0.0, help="seconds; > 0 runs by time")
    r.add_argument("--value-size", type=int, default=100)
    r.add_argument("--key-size", type=int, default=16)
    r.add_argument("--batch", type=int, default=1, help="puts per batch/transaction")
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--seek-nexts", type=int, default=0)
    r.add_argument("--writes-per-second", type=float, default=0.0)
    r.add_argument("--db", default=None, help="database directory (kept); default: a temporary one")
    r.add_argument("--use-existing-db", action="store_true")
    r.add_argument("--cache-size", type=int, default=None)
    r.add_argument("--sync", action="store_true")
    r.add_argument("--compression", default=None, help="none, snappy, lz4, zstd (where the engine has it)")
    r.add_argument("--map-size", type=int, default=None, help="LMDB map size in bytes")
    r.add_argument("--options", default=None, help="engine-native option string")
    r.add_argument("--table-options", default=None, help="WiredTiger table config")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help=f"any engine setting: {', '.join(engines.ENGINE_SETTINGS)}")
    r.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                   help="live progress bar on stderr (auto: when stderr is a terminal)")
    r.add_argument("--interval", type=float, default=1.0, help="time-series interval in s (0: off)")
    r.add_argument("--warmup", type=float, default=0.0, help="seconds left out of each run phase's summary")
    r.add_argument("--repeat", type=int, default=1, help="trials; adds median and 95%% CI")
    r.add_argument("--json", default=None, metavar="FILE")
    r.add_argument("--store", default=None, metavar="PATH", help="results store (default results/kvlab.duckdb)")
    r.add_argument("--no-store", action="store_true", help="do not append to the results store")

    y = sub.add_parser("ycsb", help="run a YCSB workload file as is: kvlab ycsb -P workloada -p recordcount=100000")
    y.add_argument("-P", action="append", metavar="FILE", help="a YCSB workload (properties) file; repeatable. workloada ... "
                   "workloadf with no such file here: YCSB 0.17.0's own")
    y.add_argument("-p", action="append", metavar="NAME=VALUE", help="a property, over the files; repeatable")
    y.add_argument("--engine", default="lmdb", help=f"one of: {', '.join(engines.REGISTRY)}")
    y.add_argument("-threads", "--threads", "--clients", dest="threads", type=int, default=1,
                   help="client threads (YCSB's -threads)")
    y.add_argument("-target", "--target", dest="target", type=float, default=0.0,
                   help="transactions/s in total, open loop (YCSB's -target; 0: closed loop)")
    y.add_argument("--duration", type=float, default=0.0, help="seconds; > 0 runs by time, not operationcount")
    y.add_argument("--seed", type=int, default=None)
    y.add_argument("--db", default=None, help="database directory (kept); default: a temporary one")
    y.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    y.add_argument("--json", default=None, metavar="FILE")
    y.add_argument("--store", default=None, metavar="PATH")
    y.add_argument("--no-store", action="store_true")

    s = sub.add_parser("results", help="list or export stored results")
    s.add_argument("action", choices=("list", "export", "sweeps"),
                   help="list or export runs (with --sweep NAME: that sweep's tidy frame); sweeps: the stored sweeps")
    s.add_argument("--store", default=None, metavar="PATH")
    s.add_argument("--sweep", default=None, metavar="NAME",
                   help="one sweep: axes as columns, medians and 95%% CI across repeats")
    s.add_argument("--engine", default=None)
    s.add_argument("--workload", default=None)
    s.add_argument("--run-id", default=None)
    s.add_argument("--format", default="csv", choices=("csv", "parquet"))
    s.add_argument("--table", default="benchmarks", choices=("benchmarks", "intervals"))
    s.add_argument("--out", default=None)

    d = sub.add_parser("dbbench", help="run a db_bench command line (binary replaced by kvlab)",
                       description="Accepts db_bench's flags with db_bench's meanings; "
                                   "--help-flags lists them.", allow_abbrev=False)
    d.add_argument("--engine", default="lmdb")
    d.add_argument("--json", default=None, metavar="FILE")
    d.add_argument("--help-flags", action="store_true")
    d.add_argument("--store", default=None, metavar="PATH")
    d.add_argument("--no-store", action="store_true")

    sweep_cli.add_parser(sub)
    crashtest_cli.add_parser(sub)
    linkbench_cli.add_parser(sub)

    n = sub.add_parser("notebooks", help="run every notebook with papermill into a dated folder")
    n.add_argument("action", choices=("run", "list"))
    n.add_argument("--scale", default="default", choices=("smoke", "default", "full"))
    n.add_argument("--only", default=None, help="comma list of notebook names")
    n.add_argument("--out", default=None)

    c = sub.add_parser("compare", help="the main job: every built engine, small fillseq + readrandom")
    c.add_argument("--num", type=int, default=200_000)
    c.add_argument("--threads", type=int, default=2)
    c.add_argument("--engines", default=None, help="comma list (default: every built engine)")
    c.add_argument("--seed", type=int, default=None)
    c.add_argument("--out", default="results")
    c.add_argument("--store", default=None, metavar="PATH")
    c.add_argument("--no-store", action="store_true")
    return p


def main(argv=None, reexec: bool = False) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    try:
        if reexec and argv:
            _reexec_with_static_tls_room(argv[0])
        if argv[:1] == ["dbbench"]:
            args, rest = parser.parse_known_args(argv)
            return cmd_dbbench(args, rest)
        args = parser.parse_args(argv)
        return {"engines": cmd_engines, "run": cmd_run, "compare": cmd_compare,
                "results": cmd_results, "notebooks": cmd_notebooks, "workloads": cmd_workloads,
                "ycsb": cmd_ycsb, "sweep": sweep_cli.cmd_sweep,
                "crashtest": crashtest_cli.cmd_crashtest,
                "linkbench": lambda a: (_preflight(a), linkbench_cli.cmd_linkbench(a, lambda r, a: _finish(_report(r, a), a)))[1]}[args.command](args)
    except errors.KvlabError as exc:
        print(f"kvlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kvlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head and the like
        sys.stderr.close()
        return 0


def entry():
    """The `kvlab` command (main() is also called in-process, by tests, where it must not re-execute)."""
    sys.exit(main(reexec=True))


# commands that run an engine: started without room in glibc's static TLS for a library linked into kvlab
# (kvlab.execution.native), the command re-executes itself once with it, since glibc reads it only at start
_RUNS_ENGINES = {"run", "compare", "dbbench", "ycsb", "sweep", "crashtest", "linkbench", "notebooks"}
_REEXECUTED = "KVLAB_REEXECUTED"   # set in the re-executed process: never twice, whatever its environment


def _reexec_with_static_tls_room(command: str) -> None:
    if command not in _RUNS_ENGINES or os.environ.get(_REEXECUTED) or not native.needs_static_tls_room():
        return
    try:   # the interpreter started again exactly as it was (its flags, the script or -m, the arguments)
        os.execve(sys.executable, sys.orig_argv, {**native.with_static_tls_room(os.environ), _REEXECUTED: "1"})
    except OSError:
        pass   # carry on as started: a run's build facts and warnings say so


if __name__ == "__main__":
    entry()
