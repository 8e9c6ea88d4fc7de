"""What every running command does around its run: check the command line's paths before anything is
written, show progress, print each result as it comes, save (--json, the store, tags), pick the exit code."""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from .. import _signals as signals
from .. import errors
from ..execution.dbfiles import dbdir
from ..execution.progress import RunControl
from ..results.store import Store, rescue_json
from ..services import maincompare
from ..services.progress import TextBar
from . import output
from .parsing import tag_value


def preflight(args, db=None, use_existing=False) -> None:
    """Before anything is loaded or measured: --db is usable, --json's folder takes files, the results
    store opens for writing, the tags are well formed.  Nothing is written if any of them is wrong."""
    for t in getattr(args, "tag", None) or ():
        tag_value(t)
    dbdir.check(db, use_existing)
    if getattr(args, "json", None):
        check_output_file(args.json, "--json")
    if not getattr(args, "no_store", False):
        Store(args.store).check()


check_output_file = dbdir.check_output_file   # --json, --out: one rule (kvlab.execution.dbfiles.dbdir)


def progress_control(args):
    """A RunControl with a progress bar on stderr, or None (auto: only on a terminal)."""
    mode = getattr(args, "progress", "off")
    if mode == "off" or (mode == "auto" and not sys.stderr.isatty()):
        return None
    return RunControl([TextBar(sys.stderr)], every=0.5)


def say(args, *lines) -> None:
    """A line that --quiet leaves out."""
    if not getattr(args, "quiet", False):
        for line in lines:
            print(line, flush=True)


def print_result(b, args=None) -> None:
    """One result as it ends: db_bench's line, then latency percentiles and what the line leaves out."""
    print(output.format_line(b), flush=True)
    unit = "us per batch" if b.latency_unit == "batch" else "us"
    if b.mix:
        m = b.mix
        print(f"  {num(m['transactions'])} transactions, {num(m['txn_per_sec'])} txn/s; reads "
              f"{num(m['reads_per_sec'])}/s, writes {num(m['writes_per_sec'])}/s, keys read "
              f"{num(m['keys_per_sec'])}/s; retries {m['retries']}, aborts {m['aborts']}", flush=True)
        pacing = m.get("pacing") or {}
        if pacing.get("mode") == "open":
            lag = (pacing.get("start_lag_us") or {})
            ratio = pacing.get("achieved_ratio")
            print(f"  open loop: target {num(pacing.get('target_rate'))} txn/s, achieved "
                  f"{num(pacing.get('achieved_rate'))} txn/s ({num(100 * ratio) if ratio is not None else '-'}%), "
                  f"start lag p50 {num(lag.get('p50'))} us, p99 {num(lag.get('p99'))} us", flush=True)
        width = max((len(n) for n in m["templates"]), default=8)
        for name, t in m["templates"].items():
            line = f"    {name:<{width}} {t['share']:6.1%}  service {output.percentiles(t['latency_us'])}"
            if t.get("response_latency_us"):
                line += f"; response {output.percentiles(t['response_latency_us'])}"
            print(line, flush=True)
        if any(kind != "none" for kind in m.get("template_txn", {}).values()):
            print(f"  isolation: {m['isolation']}", flush=True)
    elif b.ops:
        print(f"  latency: {output.percentiles(b.latency_us, unit)}", flush=True)
    if b.partial:
        by = f" by {b.params['stopped_by']}" if (b.params or {}).get("stopped_by") else ""
        print(f"  PARTIAL: stopped{by} after {num(b.ops)} ops in {b.seconds:.2f} s; the figures above cover only "
              "that", flush=True)
    if b.writer:
        w = b.writer
        print(f"  writer: {num(w['ops_per_sec'])} writes/s, {num(w['ops'])} writes, latency "
              f"{output.percentiles(w['latency_us'])} (not counted in the line above)", flush=True)


num = output.num


def report(result, args) -> None:
    """After the run: each warning once, then the accounting table (unless --quiet)."""
    output.warnings_once(result, said=getattr(args, "warned", ()))
    if getattr(args, "quiet", False):
        return
    print()
    output.table(output.accounting_rows(result), output.ACCOUNTING_COLUMNS, output.ACCOUNTING_LEGEND)
    budget_held(result)
    profiles(result)
    instructions(result)
    op_counters(result)
    from ..results.stats import interval_phrase
    for b in result:
        r = (b.repetitions or {}).get("ops_per_sec")
        if r and r.get("n", 0) > 1 and "median_ci" in r:
            print(f"  {b.workload}: {r['n']} trials, median {num(r['median'])} ops/s; {interval_phrase(r, num)}")


def budget_held(result) -> None:
    """What held the memory budget, once: a memory cgroup (its version, the trial's peak against its limit), or the
    engine's caches alone and why."""
    budgets = [(b.params or {}).get("memory_budget") or {} for b in result]
    held = [m for m in budgets if m.get("bytes")]
    if not held:
        return
    m = held[-1]
    if m.get("cgroup"):
        peaks = [x.get("cgroup_peak_bytes") for x in held if x.get("cgroup_peak_bytes")]
        peak = f"; peak {max(peaks) / 1048576:.0f} MiB (page cache included)" if peaks else ""
        rss = max(((b.accounting or {}).get("process_peak_rss_bytes") or 0) for b in result)
        over = ("; the peak RSS above it counts the pages of mapped files, which the cgroup counts once, as page "
                "cache" if rss > m["bytes"] else "")
        print(f"  memory budget: held by a memory cgroup (v{m.get('cgroup_version')}) of "
              f"{m['bytes'] / 1048576:.0f} MiB around each trial's worker{peak}{over}")
    else:
        print(f"  memory budget: {m['bytes'] / 1048576:.0f} MiB covers the {m.get('covers')}")


def profiles(result, folder=None) -> list:
    """--profile: per measured phase, the CPU an op costs by component and the top functions, and a flame graph
    (SVG) written to `folder` (default: profiles/ in kvlab's per-user folder); returns the files written."""
    from ..lab.plots.flame import flame
    from ..results import profile as prof
    from ..results.store import kvlab_home
    profiled = [b for b in result if (b.params or {}).get("profile")]
    if not profiled:
        return []
    folder = Path(folder or kvlab_home() / "profiles")
    folder.mkdir(parents=True, exist_ok=True)
    rows, written, tops = [], [], []
    for b in profiled:
        p = b.params["profile"]
        o = prof.per_op(p)
        tops.append(o["functions"][:5])
        rows.append({"phase": f"{b.engine} {b.workload} {b.threads} thr", "samples": p["samples"],
                     "total": o["total_us"], **o["components"],
                     "wall": b.micros_per_op * b.threads if b.micros_per_op else None})
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{b.engine}-{b.workload}-{b.threads}thr-t{b.trial}.svg"
        path = folder / name.replace("/", "_")
        path.write_text(flame(p, f"{b.engine} {b.workload} at {b.threads} thread{'s' if b.threads > 1 else ''}"))
        written.append(path)
    print()
    output.table(rows, PROFILE_COLUMNS, legend=PROFILE_LEGEND)
    for b, top in zip(profiled, tops):
        print(f"  {b.engine} {b.workload} {b.threads} thr, top functions by self CPU us/op: " +
              "; ".join(f"{f['function']} {num(f['self_us'])}" for f in top))
    for b in profiled:
        p = b.params["profile"]
        if p["samples"] < PROFILE_FEW:
            print(f"  note: {b.engine} {b.workload} {b.threads} thr: {p['samples']} samples, a rough profile "
                  f"(at {p['rate_hz']} Hz a thread a measured phase of S seconds gives about {p['rate_hz']}·S per busy "
                  "thread): run it longer, or merge repeats with kvlab results why")
    for path in written:
        print(f"  flame graph: {path}")
    return written


def instructions(result) -> None:
    """--count: per counted phase, instructions per op in kvlab's loop threads by component, in the engine's own
    threads apart, and the functions with the most (self)."""
    from ..results import instructions as ins
    counted = [b for b in result if (b.params or {}).get("instructions")]
    if not counted:
        return
    rows = []
    for b in counted:
        rec = b.params["instructions"]
        comps = ins.components_per_op(rec)
        rows.append({"phase": f"{b.engine} {b.workload} {b.threads} thr", "ops": rec["ops"],
                     "total": ins.per_op(rec), **comps, "background": ins.per_op(rec, "background"),
                     **({"d1": ins.per_op(rec, event="D1mr"), "ll": ins.per_op(rec, event="DLmr")}
                        if rec.get("cache_simulated") else {})})
    cache = any(b.params["instructions"].get("cache_simulated") for b in counted)
    print()
    output.table(rows, INSTRUCTION_COLUMNS + (CACHE_COLUMNS if cache else []),
                 legend=INSTRUCTION_LEGEND + (CACHE_LEGEND if cache else ""))
    for b in counted:
        top = ins.top_functions(b.params["instructions"], most=5)
        print(f"  {b.engine} {b.workload} {b.threads} thr, top functions by self instructions/op: " +
              "; ".join(f"{f} {v:,.0f}" for f, v in top))
    print(f"  {ins.WHAT_IT_CANNOT_SEE}")


def op_counters(result) -> None:
    """--engine-counters: the engine's own counters per op, a line per phase, where it keeps them."""
    from ..results import engine_counters as ec
    kept = [b for b in result if (b.params or {}).get("engine_op_counters")]
    if not kept:
        return
    print()
    for b in kept:
        print(f"  {b.engine} {b.workload} {b.threads} thr, {ec.summary_line(b.params['engine_op_counters'])}")
    print(f"  from {kept[0].params['engine_op_counters']['source']}")


INSTRUCTION_COLUMNS = [("phase", "counted phase", "<"), ("ops", "ops", ">"), ("total", "instr/op", ">"),
                       ("engine", "engine", ">"), ("kvlab", "kvlab", ">"), ("libc+alloc", "libc+alloc", ">"),
                       ("python", "python", ">"), ("other", "other", ">"),
                       ("background", "engine threads", ">")]
CACHE_COLUMNS = [("d1", "L1d read miss/op", ">"), ("ll", "LL read miss/op", ">")]
INSTRUCTION_LEGEND = ("  instr/op: callgrind's count of the instructions kvlab's loop threads executed over every "
                      "operation of the phase (its warm-up's too), user space only, by component (each function's "
                      "own); engine threads: the instructions of the engine's own threads (flushes, compactions, "
                      "checkpoints) per op of the phase, apart (docs/profile.md)")
CACHE_LEGEND = ("; misses per op: callgrind's simulated caches (--count cache), kvlab's loop threads, not the "
                "machine's own")


PROFILE_FEW = 200   # fewer samples than this: a rough profile (each is 1/99 s of one thread's CPU)


PROFILE_COLUMNS = [("phase", "profiled phase", "<"), ("samples", "samples", ">"), ("total", "CPU us/op", ">"),
                   ("engine", "engine", ">"), ("kvlab", "kvlab", ">"), ("libc+alloc", "libc+alloc", ">"),
                   ("kernel", "kernel", ">"), ("python", "python", ">"), ("other", "other", ">"),
                   ("wall", "wall us/op x threads", ">")]
PROFILE_LEGEND = ("  CPU us/op: perf's cpu-clock samples (99 Hz a thread, DWARF stacks) over the measured phase, per "
                  "operation, every thread of the worker; by component: each sample's innermost frame (self time). "
                  "wall us/op x threads: the phase's wall time per op times its threads, what the CPU figure is "
                  "at most when the threads never wait (docs/profile.md)")


WORKER_DIED = 3   # the exit code of a command whose trial's worker died (execution.run.ended)


def finish(result, args) -> int:
    """Tags, --json and the store (a stop signal waits for them), then the exit code: 3 where a trial's worker
    died (its record says how), 128 + the number of the signal that stopped a run part-way (130 for Ctrl-C), else
    0."""
    given = getattr(args, "tag", None) or ()
    if given:   # the user's labels on new records (a record is never changed once built)
        result.benchmarks = [dataclasses.replace(b, tags=list(dict.fromkeys([*b.tags, *given])))
                             for b in result.benchmarks]
    with signals.held():
        save(result, args)
    if any((b.params or {}).get("ended") for b in result):
        return WORKER_DIED
    stopped = [b for b in result if b.partial or (b.params or {}).get("stopped_by")]
    return signals.exit_code((stopped[0].params or {}).get("stopped_by")) if stopped else 0


def save(result, args) -> None:
    """--json, then the store; a failure of either leaves the run saved somewhere the error names."""
    failed = []
    if getattr(args, "json", None):
        try:
            result.write_json(args.json)
            say(args, f"results written to {args.json}")
        except OSError as exc:
            saved = rescue_json(result.to_list(), Path(args.json).name)
            failed.append(f"--json {args.json} could not be written ({exc.strerror or exc}); the run is saved in "
                          f"{saved}")
    if not getattr(args, "no_store", False):
        try:
            store = Store(args.store)
            run_id = store.append(result)
            say(args, f"stored as run {run_id} in {store.path}")
        except errors.ResultsError as exc:
            failed.append(str(exc))
    if failed:
        raise errors.ResultsError("; ".join(failed))


def execute(spec, args, load_only: bool = False) -> int:
    """Run a spec from the command line: lines as results come, warnings, accounting, --json, the store."""
    from ..execution.run.runner import before_run, run_spec
    preflight(args, spec.db, spec.use_existing_db)
    early = before_run(spec)   # what decides whether the figures stand, said before them
    for w in early:
        print(f"warning: {w}", file=sys.stderr, flush=True)
    args.warned = early
    result = run_spec(spec, on_result=lambda b: print_result(b, args), control=progress_control(args),
                      load_only=load_only)
    if any(b.partial or (b.params or {}).get("stopped_by") for b in result):
        code = finish(result, args)   # a stopped run is saved before anything more is printed
        report(result, args)
        return code
    report(result, args)
    return finish(result, args)


def warnings_once(args, benchmarks) -> None:
    """Each kind once, in one line naming its rows; --explain: every text in full, with its rows."""
    kinds = maincompare.collapse_warnings(benchmarks)
    if not kinds:
        return
    every = maincompare.rows_of(benchmarks)
    for k in sorted(kinds, key=lambda k: (k.build, not k.machine)):
        print(f"{'note' if k.build else 'warning'}: {k.line(every, len(benchmarks))}", file=sys.stderr)
    if not args.explain:
        print("  (each warning kind once; --explain prints them in full, and every record keeps its own in the "
              "JSON)", file=sys.stderr)
        return
    print(file=sys.stderr)
    for k in kinds:
        for text, names in k.texts.items():
            print(f"warning ({', '.join(names)}): {text}", file=sys.stderr)
