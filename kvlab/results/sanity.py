"""Sanity checks on results: figures a researcher should not trust without a second look, each said as one
plain sentence with its likely cause, carried in the result's `warnings` (and so in --json and the store).

Pure functions over BenchmarkResults.  The runner calls `annotate` as each phase ends (the phase on its
own, and its place after the phases before it in the run) and `annotate_scaling` across a run's results;
whoever holds results of several runs with different thread counts (`kvlab compare`, a sweep) calls
`annotate_scaling` over all of them, since a thread-scaling step needs both points.
"""
from __future__ import annotations

import json
import os

from ..model.spec import cpu_set
from . import stats

MIN_SECONDS = 1.0          # a run phase shorter than this ...
MIN_OPS = 10_000           # ... or with fewer ops is not a stable figure
MIN_OPEN_LOOP_RATIO = 0.99  # an open loop that achieved less of its target rate was overloaded
# a single run's ops/s moves by more than this on a shared machine: a step within it of the cores' bound is noise
SUPERLINEAR_MARGIN = 0.02
# a point whose worker threads were on a CPU less than this share of the wall time did not have its cores
MIN_CPU_SHARE = 0.85
# loops that write the key space a read workload then reads: a load, whatever the phase says
_LOADING_LOOPS = ("fillseq", "fillrandom", "graphload")
# What the bare C loop showed on the 2-core VM of issue 28 (benchmarks/bare_loop.c, the same engine calls, database
# and key streams; benchmarks/scaling_vs_bare.py, 9 rounds in rotating order): its two vCPUs are not equally fast
# (pinned with taskset, LMDB readrandom ran 1.12-1.13M ops/s on CPU 0 and 1.37-1.40M on CPU 1, every time), so a
# 1-thread point is fast or slow by where the scheduler put it, for the bare loop and kvlab alike; the step to 2
# threads (both CPUs) ranged 1.54-2.00x for the bare loop and 1.59-1.99x for kvlab over the same rounds.
BARE_LOOP_STEP = ("the CPUs may not be equally fast: on a 2-core VM a bare C loop making the same engine calls "
                  "(benchmarks/bare_loop.c, pinned with taskset) ran 19% slower on CPU 0 than on CPU 1, so its "
                  "1-thread point depended on the CPU it ran on and its 1-to-2-thread step ranged 1.54-2.00x, "
                  "kvlab's 1.59-1.99x (benchmarks/scaling_vs_bare.py); pin both points to the same CPUs "
                  "(--cpus) or repeat them alternately and compare medians")


def result_warnings(b, earlier=()) -> list:
    """What is suspicious in result `b` on its own, and in its place after `earlier` (the results its run
    produced before it, in order)."""
    out = []
    short = too_short(b)
    if short:
        out.append(short)
    overload = open_loop_overload(b)
    if overload:
        out.append(overload)
    cold = after_load_without_warmup(b, earlier)
    if cold:
        out.append(cold)
    return out


def annotate(b, earlier=()) -> list:
    """Add `result_warnings` to b.warnings (each once); returns the ones added."""
    return _add(b, result_warnings(b, earlier))


def too_short(b) -> str | None:
    """A run phase under MIN_SECONDS or MIN_OPS: start-up, caches warming and clock changes weigh on it."""
    if b.phase != "run" or (b.params or {}).get("native_loop") == "compact":   # compact: one operation, a time
        return None
    # a run timed to exactly MIN_SECONDS measures a hair less (its threads stop at the deadline's tick)
    if b.seconds >= MIN_SECONDS * 0.99 and b.ops >= MIN_OPS:
        return None
    short = [f"under {MIN_SECONDS:g} s" for _ in [0] if b.seconds < MIN_SECONDS * 0.99] + \
        [f"under {MIN_OPS:,} ops" for _ in [0] if b.ops < MIN_OPS]
    return (f"too short to be a stable figure: {b.engine} {b.workload} at {_threads(b.threads)} ran {_num(b.ops)} "
            f"ops in {_seconds(b.seconds)}, {' and '.join(short)}, where a stable figure needs at least "
            f"{MIN_SECONDS:g} s and {MIN_OPS:,} ops (in less, thread start-up, caches warming and CPU frequency "
            "changes weigh on it); give it more work (more reads or keys, or a duration)")


def open_loop_overload(b) -> str | None:
    """An open-loop mix that achieved less than MIN_OPEN_LOOP_RATIO of its target: transactions queued."""
    pacing = (b.mix or {}).get("pacing") or {}
    ratio = pacing.get("achieved_ratio")
    if pacing.get("mode") != "open" or ratio is None or ratio >= MIN_OPEN_LOOP_RATIO:
        return None
    lag = pacing.get("start_lag_us") or {}
    response: dict | None = (b.latency_by_op or {}).get("response")
    if not response:   # the first template's, when the run has no overall response histogram
        response = next((t["response_latency_us"] for t in (b.mix.get("templates") or {}).values()
                         if t.get("response_latency_us")), {})
    return (f"open loop overloaded: {b.engine} {b.workload} achieved {_num(pacing.get('achieved_rate'))} txn/s of "
            f"its target {_num(pacing.get('target_rate'))} ({100 * ratio:.1f}%); start lag p50 {_num(lag.get('p50'))} "
            f"us, p99 {_num(lag.get('p99'))} us; response p50 {_num(response.get('p50'))} us, p99 "
            f"{_num(response.get('p99'))} us. The {b.threads} client{'s' if b.threads != 1 else ''} could not start "
            "transactions on schedule, so they queued: response latency measures that queue, which the service "
            "latency hides; lower the target rate or add clients")


def after_load_without_warmup(b, earlier=()) -> str | None:
    """A 1-thread reading phase measured right after its run loaded the database, with no warm-up."""
    if b.phase != "run" or b.threads != 1 or b.found is None or (b.warmup or {}).get("excluded") or not earlier:
        return None
    before = list(earlier)[-1]
    if not _is_load(before) or before.engine != b.engine or before.trial != b.trial:
        return None
    what = "load phase" if before.phase == "load" else before.workload
    return (f"{b.engine} {b.workload} at 1 thread was measured right after the {what}, with no warm-up: it ran "
            "while the engine settled (background flushes and compactions, dirty pages written back) on caches "
            "holding what the load touched, so as the 1-thread base of a scaling figure it can read low; add a "
            "warm-up (--warmup 1) or measure it on the loaded database (--db DIR, then --use-existing-db)")


def scaling_warnings(results) -> list:
    """(result, warning) for each thread-scaling step above what the cores allow: the same engine, workload
    and shape (num, sizes, settings, mix) at two thread counts, the higher one more than
    min(threads, cores) / min(threads, cores) times faster (medians where a thread count has several
    results; with enough on both sides for the medians' intervals, the higher one's interval wholly above the
    lower one's times that bound, so the VM's noise alone does not say it).  The warning goes to the higher
    thread count's results."""
    results = list(results)
    groups: dict[tuple, dict[int, list[int]]] = {}
    for i, b in enumerate(results):
        key = _scaling_key(b)
        if key is not None:
            groups.setdefault(key, {}).setdefault(b.threads, []).append(i)
    out = []
    for by_threads in groups.values():
        counts = sorted(by_threads)
        for lo, hi in zip(counts, counts[1:]):
            low = [results[i] for i in by_threads[lo]]
            high = [results[i] for i in by_threads[hi]]
            rate_lo, rate_hi = _median([b.ops_per_sec for b in low]), _median([b.ops_per_sec for b in high])
            cores_lo, cores_hi = _median([_cores(b) for b in low]), _median([_cores(b) for b in high])
            bound = min(hi, cores_hi) / min(lo, cores_lo)
            if rate_lo <= 0 or rate_hi / rate_lo <= bound * (1 + SUPERLINEAR_MARGIN):
                continue
            # with repeats on both sides, the step must exceed the bound beyond their noise: the high side's
            # median interval lies wholly above the low side's times the bound
            lo_ci = stats.median_interval([b.ops_per_sec for b in low])
            hi_ci = stats.median_interval([b.ops_per_sec for b in high])
            if lo_ci and hi_ci and hi_ci[0] <= lo_ci[1] * bound * (1 + SUPERLINEAR_MARGIN):
                continue
            text = _superlinear_text(results, by_threads[lo], low, high, lo, hi, rate_lo, rate_hi, bound,
                                     cores_lo, cores_hi)
            out += [(b, text) for b in high]
    return out


def with_scaling(results) -> list:
    """The results again, those a thread-scaling warning concerns as new records with it added (each once)."""
    import dataclasses
    texts: dict = {}
    for b, text in scaling_warnings(results):
        texts.setdefault(id(b), []).append(text)
    out = []
    for b in results:
        new = [t for t in dict.fromkeys(texts.get(id(b), [])) if t not in b.warnings]
        out.append(dataclasses.replace(b, warnings=[*b.warnings, *new]) if new else b)
    return out


def annotate_scaling(results) -> list:
    """Add `scaling_warnings` to the results they concern (each once); returns the warnings added."""
    added = []
    for b, text in scaling_warnings(results):
        added += _add(b, [text])
    return list(dict.fromkeys(added))


def _superlinear_text(results, low_idx, low, high, lo, hi, rate_lo, rate_hi, bound, cores_lo, cores_hi) -> str:
    b = high[0]
    us_lo, us_hi = _median([x.micros_per_op for x in low]), _median([x.micros_per_op for x in high])
    cores = _cores_text(cores_hi) if cores_lo == cores_hi else \
        f"{_cores_text(cores_lo)} at {_threads(lo)} and {_cores_text(cores_hi)} at {hi}"
    causes = []
    share = _median([_cpu_share(x) for x in low if _cpu_share(x) is not None] or [None])
    if share is not None and share < MIN_CPU_SHARE:
        causes.append(f"its worker thread(s) were on a CPU only {100 * share:.0f}% of the time (other processes, "
                      "or waiting for I/O, took the rest)")
    if lo == 1 and any(not (x.warmup or {}).get("excluded") and _follows_load(results, i)
                       for x, i in zip(low, low_idx)):
        causes.append("it ran right after the load, with no warm-up, while the engine settled and on caches "
                      "holding what the load touched (add --warmup, or measure on the loaded database)")
    causes.append(BARE_LOOP_STEP)
    return (f"superlinear thread scaling: {b.engine} {b.workload} ran {_num(rate_hi)} ops/s at {hi} threads against "
            f"{_num(rate_lo)} at {lo} ({rate_hi / rate_lo:.2f}x), more than the {bound:g}x that {cores} allow: per "
            f"thread an op took {us_lo:.3f} us at {_threads(lo)} and {us_hi:.3f} us at {hi}, so the {lo}-thread "
            f"point ran slow rather than the {hi}-thread one fast. Probably: " + "; or ".join(causes) +
            ". Compare per-op times rather than the speedup, and repeat both points alternately on one loaded "
            "database")


def _is_load(b) -> bool:
    return b.phase == "load" or (b.params or {}).get("native_loop") in _LOADING_LOOPS


def _follows_load(results, i) -> bool:
    """results[i] came right after a load of the same run (the list in run order, as a run or the store
    gives it)."""
    if i == 0:
        return False
    b, before = results[i], results[i - 1]
    same_run = (before.engine == b.engine and before.trial == b.trial and
                (before.provenance or {}).get("spec") == (b.provenance or {}).get("spec"))
    return same_run and _is_load(before)


def _scaling_key(b):
    """What must be equal for two results to be points of one scaling figure; None: not a scaling point."""
    if b.phase != "run" or b.partial or b.ops <= 0 or b.seconds <= 0:
        return None
    p = b.params or {}
    if p.get("native_loop") == "compact" or ((b.mix or {}).get("pacing") or {}).get("mode") == "open":
        return None   # one operation; a rate fixed in advance
    spec = (b.provenance or {}).get("spec") or {}
    shape = {k: p.get(k) for k in ("num", "key_size", "value_size", "batch", "seek_nexts", "writes_per_second",
                                   "compression_ratio", "native_loop")}
    shape.update(engine_settings=spec.get("engine_settings"), distribution=spec.get("distribution"),
                 mix=(b.mix or {}).get("definition"), timed=bool(p.get("duration")))
    return b.engine, b.workload, json.dumps(shape, sort_keys=True, default=str)


def _cores(b) -> int:
    """The CPUs the run could use: its --cpus, else the machine's."""
    prov = b.provenance or {}
    cpus = (prov.get("spec") or {}).get("cpus")
    if cpus:
        try:
            return len(cpu_set(cpus))
        except Exception:   # a record from another version: fall back to the machine's count
            pass
    return (prov.get("machine") or {}).get("cores") or os.cpu_count() or 1


def _cpu_share(b) -> float | None:
    """The share of the wall time the worker threads were on a CPU, per thread that had a core."""
    pct = (b.accounting or {}).get("workers_cpu_pct")
    if pct is None:
        return None
    return pct / 100 / min(b.threads, _cores(b))


def _add(b, texts) -> list:
    added = []
    for t in texts:
        if t not in b.warnings:
            b.warnings.append(t)
            added.append(t)
    return added


def _median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def _cores_text(n) -> str:
    return f"{n:g} core{'s' if n != 1 else ''}"


def _threads(n) -> str:
    return f"{n} thread{'s' if n != 1 else ''}"


def _seconds(s) -> str:
    return f"{s:.3f} s" if s >= 0.01 else f"{s * 1000:.2f} ms"


def _num(v) -> str:
    """A number at a glance: 1,234,567 / 123.4 / 1.23 / 0.0123; '-' for none."""
    if v is None:
        return "-"
    a = abs(v)
    if isinstance(v, int) or a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.4f}"
