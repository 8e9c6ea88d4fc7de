"""The runner: turns a RunSpec into native runs and results.

It prepares the database directory, compiles the spec into a plan of phases (execution.run.phases), opens the
engine once (a trial, execution.run.trial) in a worker process of its own (execution.worker: each trial's worker
starts clean, owns the conditions and hands back its records whole; one that dies is a record too, run.ended), runs
each phase through the native driver (GIL released for the
whole run, on a helper thread) and builds one BenchmarkResult per phase (execution.run.record).  While the native
threads run, the calling thread samples their counters every `interval` seconds without pausing them
(execution.run.sampler: the time series, the warm-up snapshot, Ctrl-C as a clean stop with a partial result).
A read workload on a fresh database first gets a load phase (fillseq in batches of 1000, or through the
engine's bulk path with load="bulk": execution.run.loads; reported with phase="load"; resume=True continues a
killed one).  A spec's `cpus` pins the trial's worker (execution.run.pinning).  A spec's `memory` is one budget:
its engine's descriptor splits it across the engine's settings the spec leaves unset, and each trial's worker runs
in a memory cgroup of that size (page cache included) where one can be made (execution.host.cgroup), from a
notebook as from the command line.
"""
from __future__ import annotations

import dataclasses
import os
import re
import shutil
from typing import Callable

from ... import _signals as signals
from ... import engines, errors
from ...engines.descriptor import MiB, defaults_line, memory_split
from ...model.spec import RunSpec, make_spec
from ...results import sanity, stats
from ...results.result import BenchmarkResult, RunResult
from .. import native
from ..dbfiles import dbdir, sizecheck
from ..host import cgroup
from ..progress import RunControl
from ..traces import recording
from ..worker import spawn
from . import counter, ended, limits, loads, phases, pinning, profiler, worker_trial


def run(engine: str = "lmdb", workload="fillseq,readrandom", *, control: RunControl | None = None,
        **params) -> RunResult:
    """Run `workload` (a name or comma list, in order) on `engine`; `params` are RunSpec fields
    and engine settings (see kvlab.model.spec.make_spec).  Progress reaches whoever watches
    through `control`'s observers: the runner knows only that protocol, and the faces
    (kvlab.run's progress=True, the CLI's bar) decide what to show."""
    return run_spec(make_spec(engine, workload, **params), control=control)


def run_spec(spec: RunSpec, on_result: Callable[[BenchmarkResult], None] | None = None,
             control: RunControl | None = None, load_only: bool = False) -> RunResult:
    """Run a spec: its trials, each in a worker process of its own (execution.worker), each phase reported to
    on_result as it ends.  `load_only` runs just the load phase of the first workload that needs data (YCSB's
    -load), into spec.db."""
    spec = counter.fitted(spec)   # --count: a map valgrind can reserve
    loads.check(spec, native.load(), key_hash=loads.hashed_keys(spec))
    dbdir.check(spec.db, spec.use_existing_db or spec.resume)
    pinning.check(spec.cpus)
    if spec.record_trace is not None:
        recording.check(spec, phases.plan(spec, loaded=spec.use_existing_db, load_only=load_only))
    budget = memory_budget(spec)
    limits.check(spec, budget)   # an impossible budget is refused before a worker starts
    if spec.profile:
        profiler.check()
    if spec.count:
        counter.check(spec.count)
    tracer = recording.open_for(spec)
    trials: list = []
    held = None   # a --db's directory, locked from the first trial's start to the last one's end
    try:
        with signals.stopping():   # SIGTERM and SIGHUP stop a run as Ctrl-C does (kvlab._signals)
            for trial in range(spec.repeat):
                got, held = _run_trial(spec, trial, on_result, control, load_only, held, budget, tracer,
                                       last=trial == spec.repeat - 1)
                trials.append(got)
                if any(b.partial or b.params.get("stopped_by") or b.params.get("ended") for b in got):
                    break
    finally:
        if held is not None:
            held.release()
        if tracer is not None:
            tracer.close()
    # the statistics across trials and the scaling notes are new records beside the workers' (never changed)
    if len(trials) > 1:
        trials = stats.with_repetitions(trials)
    return RunResult(sanity.with_scaling([b for t in trials for b in t]), spec)


def memory_budget(spec: RunSpec) -> dict:
    """What the spec's memory budget gives its engine: {"bytes", "split" (the settings applied), "given_wins"
    (settings the spec gave, which win over the split), "engine" (how the engine spends memory), "cgroup",
    "covers"}; without a budget, {"bytes": None, "covers": "engine defaults", "engine", "defaults": every
    engine's own}.  The cgroup's fields are added per trial, as its cgroup is made (`_cgroup_for`)."""
    cfg = engines.get(spec.engine)
    d = engines.descriptor(cfg)
    if spec.memory is None:
        own = (f"{d.title} cache {d.cache.default_bytes / MiB:g} MiB ({d.cache.source})" if d.cache
               else f"{d.title}: {d.cache.reason}")
        return {"bytes": None, "covers": "engine defaults", "engine": own,
                "defaults": defaults_line(engines.DESCRIPTORS.values())}
    split = memory_split(d, cfg, spec.memory)
    given = {k: {"given": spec.engine_settings[k], "budget": split[k]} for k in split
             if spec.engine_settings.get(k) is not None}
    # an options string (the configuration's own, or the spec's) that sets one is read after the settings
    options = " ".join(str(o) for o in (cfg.defaults.get("options"), spec.engine_settings.get("options")) if o)
    for k in split:
        m = re.search(rf"(?:^|[,;\s(]){k}\s*=\s*([^,;\s)]+)", options)
        if m and k not in given:
            given[k] = {"given": f"{k}={m.group(1)} in the options string", "budget": split[k]}
    how = " ".join((d.memory.__doc__ or "").split()) if d.memory else d.memory.reason
    return {"bytes": spec.memory, "split": {k: v for k, v in split.items() if k not in given}, "given_wins": given,
            "engine": f"{d.title}: {how}", "cgroup": None,
            "covers": "engine caches only (no memory cgroup entered yet)", **larger_than_memory(spec, cfg)}


def larger_than_memory(spec: RunSpec, cfg) -> dict:
    """{"advice": {setting: value}, "advice_text"} where the run's data (the disk check's estimate of its keys and
    values) exceeds its memory budget and the engine's descriptor names its own advice for that regime
    (`larger_than_ram`: LMDB's and libmdbx's nordahead); {} where not, or with advice="off".  The trial appends an
    option to the engine's options and sets any other setting the spec does not give (settings given win)."""
    if spec.memory is None or spec.advice == "off" or not cfg.larger_than_ram:
        return {}
    data = sizecheck.data_bytes(spec, cfg)
    if data <= spec.memory:
        return {}
    advice = {k: v for k, v in cfg.larger_than_ram.items()
              if k == "options" or spec.engine_settings.get(k) is None}
    if not advice:
        return {}
    words = ", ".join(f"{k}={v}" if k != "options" else f"{v} (appended to its options)" for k, v in advice.items())
    return {"advice": advice,
            "advice_text": f"the data (about {data / MiB:,.0f} MiB of keys and values) exceeds the {spec.memory / MiB:g} "
                           f"MiB budget: {cfg.name} runs with {words}, its own documentation's advice for a database "
                           "larger than memory (--advice off: not)"}


def before_run(spec, cfg=None, budget=None) -> list:
    """The warnings known before a run starts, which decide whether its figures stand (a command prints them before
    its results): settings the engine ignores, settings given over the memory budget's, a database that may not fit
    (sizecheck; one that cannot fit is refused here, NotEnoughDisk)."""
    cfg = cfg or native.require_built(spec.engine, load_now=False)
    budget = budget or memory_budget(spec)
    warnings = [f"{spec.engine} ignores {k} (it has no such setting)" for k in cfg.ignored(spec.engine_settings)]
    if budget["bytes"] is not None:
        warnings += [f"memory budget: {k}={v['given']} given wins over the budget's {v['budget']}"
                     for k, v in budget["given_wins"].items()]
    if budget.get("advice_text"):
        warnings.append(budget["advice_text"])
    warnings += counter.notes(spec)
    return warnings + sizecheck.check(counter.fitted(spec), cfg)


def _run_trial(spec, trial, on_result, control, load_only, held, budget, tracer, last):
    """One trial in a worker: the directory prepared and locked here, the memory cgroup made here, the rest in the
    worker (execution.run.worker_trial); returns (its records, the directory still held for the next trial)."""
    cfg = native.require_built(spec.engine, load_now=False)   # the worker loads it: the caller loads no engine
    lib = native.load()
    warnings = before_run(spec, cfg, budget)   # a run that cannot fit is refused before anything is written
    where = dbdir.prepare(spec.db, spec.engine, lib.KEY_ENCODING, spec.use_existing_db or spec.resume,
                          overwrite=spec.overwrite, holding=held)
    cg = None
    try:
        budget, cg = _cgroup_for(budget)
        if budget["bytes"] is not None and budget["cgroup"] is None:
            warnings.append(f"memory budget of {budget['bytes'] / MiB:g} MiB covers the {budget['covers']}")
        job = worker_trial.TrialJob(spec, trial, load_only, budget, _handed(where), warnings,
                                    tracer=(tracer.path, tracer.phases) if tracer is not None else None,
                                    every=control.every if control is not None else None, cold=spec.cold,
                                    count_folder=str(counter.folder(spec.count)) if spec.count else None)
        fds = (where.lock_fd,) + ((tracer.fd,) if tracer is not None else ())
        watch = _Watch(spec, trial, on_result, control)
        got = spawn.call("kvlab.execution.run.worker_trial:run", (job,), fds=fds, on_message=watch,
                         stop_requested=control and (lambda: control.stop_requested), started=watch.started,
                         prefix=counter.command(spec.count) if spec.count else None)
        peak = cg.peak() if cg is not None else None
        oom = (cg.oom_kills() or 0) > 0 if cg is not None else False
    except BaseException:
        _let_go(where, spec)
        raise
    finally:
        if cg is not None:
            cg.__exit__(None, None, None)
    if got.returned and got.error is not None:
        full = _disk_full(got.error, where, spec)   # said while the directory is still there
        _let_go(where, spec)
        raise full or got.error
    arrived = list(got.arrived)
    if got.returned:
        out = got.value
        results = out.results
        arrived += out.arrived
        if tracer is not None:
            tracer.phases = out.tracer_phases
    else:   # the worker died: what it sent so far, and a record of how it ended
        last_words = ended.record(spec, trial, watch.latest, got, budget, peak, oom, lib.KEY_ENCODING, warnings)
        results = watch.results + [last_words]
        if on_result is not None:
            on_result(last_words)
    if spec.db is not None and not where.temporary and not last and not arrived and got.returned:
        return results, where   # the next trial starts under the same lock
    _let_go(where, spec)
    if arrived and results:
        results = [*results[:-1], _stopped_after(results[-1], arrived[0])]
    return results, None


class _Watch:
    """What a worker sends while it runs: progress to the caller's observers, each phase's record to on_result
    (and kept, for a worker that dies)."""

    def __init__(self, spec, trial, on_result, control):
        self.spec, self.trial, self.on_result, self.control = spec, trial, on_result, control
        self.results: list = []
        self.latest = None

    def started(self, pid: int) -> None:
        if self.control is not None:
            self.control.worker_pid = pid

    def __call__(self, message) -> None:
        kind, payload = message
        if kind == "progress":
            self.latest = payload
            if self.control is not None:
                self.control.publish(payload)
        elif kind == "result":
            self.results.append(payload)
            if self.on_result is not None:
                self.on_result(payload)


def _cgroup_for(budget: dict):
    """(the budget as the worker gets it, the memory cgroup made for the trial or None): a cgroup of the budget's
    size wherever one can be made (the engine and its page cache), else the reason, said the same way in every
    face."""
    if budget["bytes"] is None:
        return budget, None
    try:
        cg = cgroup.MemoryCgroup(budget["bytes"]).__enter__()
    except errors.KvlabError as exc:
        return {**budget, "covers": f"engine caches only ({exc})"}, None
    return {**budget, "cgroup": str(cg.path), "cgroup_version": cg.version, "cgroup_limit_bytes": cg.limit_set(),
            "covers": "engine and page cache (the trial's worker process in a memory cgroup)"}, cg


def _handed(where):
    """The directory as the worker gets it: its lock's descriptor travels beside the job."""
    return dbdir.DbDir(where.path, where.temporary, where.existed, None, where.unclean, owner=os.getpid())


def _disk_full(error, where, spec):
    """An engine's "no space" (ENOSPC; not LMDB's map full) as one error that says what filled and what is left, and
    what became of the database; None for any other error."""
    text = str(error)
    if not isinstance(error, errors.EngineFull) or "ENOSPC" not in text and "No space left" not in text:
        return None
    try:
        free = shutil.disk_usage(where.path).free
    except OSError:
        free = None
    left = f"{free:,} bytes free there now" if free is not None else "its free space unknown"
    kept = ("the database there is removed with the run's temporary directory" if where.temporary and not spec.keep_db
            else f"the database in {where.path} is left as it is, to look at or remove yourself (a --db is never "
                 "deleted by kvlab)")
    return errors.EngineFull(f"the file system holding {where.path} filled up during the run ({left}): {text}; "
                             f"{kept}; phases that ended before it are in the results")


def _let_go(where, spec):
    """The end of a trial's hold on its directory: a temporary one is removed under its lock, unless kept."""
    if spec.keep_db:
        if where.temporary:
            dbdir.update_marker(where.path, temporary=False)   # kept: kvlab clean must not take it for an orphan
        where.release()
    else:
        where.cleanup()


def _stopped_after(b, name: str):
    """A signal that came after the phase `b` ended (between phases, or as the engine closed): a new record saying
    so (`b` as the worker built it is not changed)."""
    if b.params.get("stopped_by"):
        return b
    warnings = b.warnings if b.partial else [
        *b.warnings, f"the run was stopped by {name} after this phase ended: this phase is whole, the workloads "
                     "after it did not run"]
    return dataclasses.replace(b, params={**b.params, "stopped_by": name}, warnings=warnings)
