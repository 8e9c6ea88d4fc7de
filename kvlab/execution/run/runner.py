"""The runner: turns a RunSpec into native runs and results.

It prepares the database directory, compiles the spec into a plan of phases (execution.run.phases), opens the
engine once (a trial, execution.run.trial), runs each phase through the native driver (GIL released for the
whole run, on a helper thread) and builds one BenchmarkResult per phase (execution.run.record).  While the native
threads run, the calling thread samples their counters every `interval` seconds without pausing them
(execution.run.sampler: the time series, the warm-up snapshot, Ctrl-C as a clean stop with a partial result).
A read workload on a fresh database first gets a load phase (fillseq in batches of 1000, or through the
engine's bulk path with load="bulk": execution.run.loads; reported with phase="load"; resume=True continues a
killed one).  A spec's `cpus` pins the process for each trial (execution.run.pinning).  A spec's `memory` is
one budget: its engine's descriptor splits it across the engine's settings the spec leaves unset, and the trials
run in a memory cgroup of that size (page cache included) where one can be made (execution.host.cgroup).
"""
from __future__ import annotations

import contextlib
import re
from typing import Callable

from ... import _signals as signals
from ... import engines, errors
from ...engines.descriptor import MiB, defaults_line, memory_split
from ...model.spec import RunSpec, make_spec
from ...results import sanity, stats
from ...results.result import BenchmarkResult, RunResult
from .. import native
from ..dbfiles import dbdir, sizecheck
from ..host import accounting, cgroup
from ..progress import RunControl
from ..traces import recording
from . import bounded, loads, phases
from .pinning import pin, unpin
from .trial import Trial


def run(engine: str = "lmdb", workload="fillseq,readrandom", *, control: RunControl | None = None,
        **params) -> RunResult:
    """Run `workload` (a name or comma list, in order) on `engine`; `params` are RunSpec fields
    and engine settings (see kvlab.model.spec.make_spec).  Progress reaches whoever watches
    through `control`'s observers: the runner knows only that protocol, and the faces
    (kvlab.run's progress=True, the CLI's bar) decide what to show."""
    return run_spec(make_spec(engine, workload, **params), control=control)


def run_spec(spec: RunSpec, on_result: Callable[[BenchmarkResult], None] | None = None,
             control: RunControl | None = None, load_only: bool = False) -> RunResult:
    """Run a spec: its trials, each phase reported to on_result as it ends.  `load_only` runs just
    the load phase of the first workload that needs data (YCSB's -load), into spec.db."""
    loads.check(spec, native.load(), key_hash=loads.hashed_keys(spec))
    dbdir.check(spec.db, spec.use_existing_db or spec.resume)
    if spec.record_trace is not None:
        recording.check(spec, phases.plan(spec, loaded=spec.use_existing_db, load_only=load_only))
    holding = [None]   # a --db's lock, held from the first trial's start to the last one's end
    budget = memory_budget(spec)
    tracer = recording.open_for(spec)

    def trials_of(report) -> list:
        trials: list = []
        try:
            for trial in range(spec.repeat):
                trials.append(_run_trial(spec, trial, report, control, load_only, holding,
                                         last=trial == spec.repeat - 1, budget=budget, tracer=tracer))
                if any(b.partial or b.params.get("stopped_by") for b in trials[-1]):
                    break
        finally:
            if holding[0] is not None:
                holding[0].release()
                holding[0] = None
        return trials

    try:
        with signals.stopping():   # SIGTERM and SIGHUP stop a run as Ctrl-C does (kvlab._signals)
            if _in_child_process(budget):   # the command's own process stays out of the memory cgroup
                keep = (tracer.fd,) if tracer is not None else ()
                trials, _ = bounded.run(trials_of, on_result, budget, keep)   # a stop: the child's results say so
            else:
                with _held_to(budget):
                    trials = trials_of(on_result)
    finally:
        if tracer is not None:
            tracer.close()
    results = [b for t in trials for b in t]
    for b in results:   # with the cgroup's peak, read as it was left
        b.params["memory_budget"] = _recorded(budget)
    if len(trials) > 1:
        stats.attach_repetitions(trials)
    sanity.annotate_scaling(results)
    return RunResult(results, spec)


def memory_budget(spec: RunSpec) -> dict:
    """What the spec's memory budget gives its engine: {"bytes", "split" (the settings applied), "given_wins"
    (settings the spec gave, which win over the split), "engine" (how the engine spends memory), "cgroup",
    "covers"}; without a budget, {"bytes": None, "covers": "engine defaults", "engine", "defaults": every
    engine's own}.  The cgroup's fields are filled in as the run enters one (`_held_to`)."""
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
            "covers": "engine caches only (no memory cgroup entered yet)"}


def _recorded(budget: dict) -> dict:
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in budget.items()}


# Whether this process may hold itself in a memory cgroup: only the `kvlab` command (cli.main, for the command's
# length).  In a Python session (a notebook's kernel, a test runner) going over the limit would kill the interpreter,
# which kvlab never does: there the budget covers the engines' caches, and the result says so.
_WHOLE_PROCESS_BOUNDED = False


@contextlib.contextmanager
def whole_process_bounded():
    """Within it, a run with a memory budget enters a memory cgroup of that size (the `kvlab` command's process:
    an overrun ends the command, never a Python session)."""
    global _WHOLE_PROCESS_BOUNDED
    before, _WHOLE_PROCESS_BOUNDED = _WHOLE_PROCESS_BOUNDED, True
    try:
        yield
    finally:
        _WHOLE_PROCESS_BOUNDED = before


def _in_child_process(budget: dict) -> bool:
    """Whether the run goes to a child process held in a memory cgroup (execution.run.bounded): the `kvlab`
    command's run with a budget, where a memory cgroup can be made."""
    return budget["bytes"] is not None and _WHOLE_PROCESS_BOUNDED and cgroup.unavailable(budget["bytes"]) is None


@contextlib.contextmanager
def _held_to(budget: dict):
    """The run inside a memory cgroup of the budget's size, left and removed after; where none can be made, or in
    a Python session (see _WHOLE_PROCESS_BOUNDED), the budget says it covers the engine's caches only, and why."""
    if budget["bytes"] is None:
        yield
        return
    if not _WHOLE_PROCESS_BOUNDED:
        budget["covers"] = ("engine caches only (a Python session is not held in a memory cgroup: going over it "
                            "would kill the interpreter; `kvlab run --memory` bounds the page cache too)")
        yield
        return
    try:
        cg = cgroup.MemoryCgroup(budget["bytes"]).__enter__()
    except errors.KvlabError as exc:
        budget["covers"] = f"engine caches only ({exc})"
        yield
        return
    try:
        cg.join()
    except OSError as exc:
        cg.__exit__(None, None, None)
        budget["covers"] = f"engine caches only (cannot join the memory cgroup {cg.path}: {exc.strerror})"
        yield
        return
    budget.update(cgroup=str(cg.path), cgroup_version=cg.version, cgroup_limit_bytes=cg.limit_set(),
                  covers="engine and page cache")
    try:
        yield
    finally:
        budget["cgroup_peak_bytes"] = cg.peak()
        try:
            cg.leave()
        finally:
            cg.__exit__(None, None, None)


def _run_trial(spec, trial, on_result, control=None, load_only=False, holding=None, last=True, budget=None,
               tracer=None):
    saved = pin(spec.cpus)
    try:
        return _run_trial_pinned(spec, trial, on_result, control, load_only, holding, last, budget, tracer)
    finally:
        if saved is not None:
            unpin(saved)


def _run_trial_pinned(spec, trial, on_result, control, load_only, holding, last, budget=None, tracer=None):
    cfg = native.require_built(spec.engine)
    lib = native.load()
    warnings = [f"{spec.engine} ignores {k} (it has no such setting)" for k in cfg.ignored(spec.engine_settings)]
    if budget is not None and budget["bytes"] is not None:
        warnings += [f"memory budget: {k}={v['given']} given wins over the budget's {v['budget']}"
                     for k, v in budget["given_wins"].items()]
        if budget["cgroup"] is None:
            warnings.append(f"memory budget of {budget['bytes'] / MiB:g} MiB covers the {budget['covers']}")
    warnings += sizecheck.check(spec, cfg)   # a run that cannot fit is refused before anything is written
    where = dbdir.prepare(spec.db, spec.engine, lib.KEY_ENCODING, spec.use_existing_db or spec.resume,
                          overwrite=spec.overwrite, holding=holding[0])
    holding[0] = None
    try:
        session = Trial(spec, cfg, lib, where, warnings, trial, control, budget=budget, tracer=tracer)
    except BaseException:
        _let_go(where, spec)
        raise
    arrived = []
    try:
        _phases(spec, session, on_result, load_only)
    except KeyboardInterrupt as exc:   # a stop outside a measured phase: the phases that ended are kept
        if not session.results:
            raise
        arrived.append(signals.name_of(exc))
    finally:
        with signals.held(arrived):   # closing and cleaning up finish whatever signal comes
            session.close()
            # engines that keep data in their cache until close (WiredTiger without a checkpoint)
            # show their real size only now; seed 001 measured after the process ended
            if session.results and session.results[-1].accounting is not None:
                acct = session.results[-1].accounting
                acct["db_size_after_close_bytes"] = dbdir.size_on_disk(where.path)
                # seed 001's total: the database after close + the process (accounting.seed_total)
                acct["total_size_bytes"] = accounting.seed_total(acct["db_size_after_close_bytes"],
                                                                 acct.get("process_size_bytes"))
            if spec.db is not None and not where.temporary and not last and not arrived:
                holding[0] = where   # the next trial starts under the same lock
            else:
                _let_go(where, spec)
    if arrived and session.results:
        _stopped_after(session.results[-1], arrived[0])
    return session.results


def _phases(spec, session, on_result, load_only):
    for phase in session.plan(load_only):
        done = session.run_one(phase)
        if done is not None:
            session.add(done, on_result)
            if done.partial:
                return
    if not session.results and session.resume_note:   # nothing ran: say why, as an error (exit 2)
        raise errors.SpecError(f"{session.resume_note}; nothing is left to run (its other workloads run on it "
                               "with use_existing_db)")


def _let_go(where, spec):
    """The end of a trial's hold on its directory: a temporary one is removed under its lock, unless kept."""
    if spec.keep_db:
        if where.temporary:
            dbdir.update_marker(where.path, temporary=False)   # kept: kvlab clean must not take it for an orphan
        where.release()
    else:
        where.cleanup()


def _stopped_after(b, name: str):
    """A signal that came after the phase `b` ended (between phases, or as the engine closed)."""
    if b.params.get("stopped_by"):
        return
    b.params["stopped_by"] = name
    if not b.partial:
        b.warnings.append(f"the run was stopped by {name} after this phase ended: this phase is whole, the "
                          "workloads after it did not run")

