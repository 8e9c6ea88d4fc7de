"""One trial in its worker process (execution.worker): the worker owns the conditions, then runs the trial.

The caller (runner.run_spec) prepared the database directory under its lock, made the memory cgroup and checked
the spec; the worker enters the cgroup, pins itself (every thread it has and will start: the engines' pools among
them) to the spec's CPUs, drops the database's pages from the page cache for a cold start, opens the engine once
and runs the phases (execution.run.trial), each phase's record sent to the caller as it ends and its progress as
it runs.  It builds every record whole (the budget with the cgroup's peak, the database's size after close)
before it returns them: the caller changes none.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ... import _signals as signals
from ... import errors
from .. import native
from ..dbfiles import dbdir
from ..host import accounting, cgroup
from ..host.cgroup import evict_page_cache
from ..progress import RunControl
from ..traces.fileformat import TraceWriter
from ..worker import inside
from . import counter, profiler
from .phases import RUN
from .pinning import pin_process
from .trial import Trial


@dataclass
class TrialJob:
    """What a worker is handed for one trial (pickled; descriptors travel beside it, by index into link.fds)."""
    spec: object
    trial: int
    load_only: bool
    budget: dict                       # runner.memory_budget, with the cgroup's fields where one was made
    where: dbdir.DbDir                 # prepared and locked by the caller (lock_fd: link.fds[0])
    warnings: list = field(default_factory=list)
    tracer: tuple | None = None        # (path, phases so far): the trace's descriptor is link.fds[1]
    every: float | None = None         # the caller's progress interval (a RunControl's every)
    cold: bool = False                 # drop the database's pages from the page cache before the trial
    count_folder: str | None = None    # --count: where callgrind (this worker runs under it) writes its dumps


@dataclass
class TrialOut:
    results: list
    tracer_phases: int = 0
    arrived: list = field(default_factory=list)   # stop signals that came between phases


def run(link, job: TrialJob) -> TrialOut:
    with signals.stopping():
        budget = dict(job.budget)
        cgroup_path = budget.get("cgroup")
        if cgroup_path:
            try:
                (Path(cgroup_path) / "cgroup.procs").write_text("0")   # 0: the writing process, this one
            except OSError as exc:
                raise errors.KvlabError(f"the trial's worker cannot join the memory cgroup {cgroup_path}: "
                                        f"{exc.strerror}") from None
        pin_process(job.spec.cpus)
        warnings = list(job.warnings)
        where = job.where
        where.lock_fd = link.fds[0]
        tracer = None
        if job.tracer is not None:
            tracer = TraceWriter.reopened(job.tracer[0], link.fds[1], job.tracer[1])
        control = RunControl([lambda p: link.send(("progress", p))], every=job.every or 0.25)
        link.on_stop(control.stop)
        cfg = native.require_built(job.spec.engine)
        lib = native.load()
        session = Trial(job.spec, cfg, lib, where, warnings, job.trial, control, budget=budget, tracer=tracer)
        if job.spec.profile:
            session.profiler = profiler.Profiler()
        if job.spec.count:
            session.counter = counter.Counter(job.spec.count, Path(job.count_folder))
        arrived: list = []
        try:
            run_phases(job.spec, session, lambda b: link.send(("result", b)), job.load_only, cold=job.cold)
        except KeyboardInterrupt as exc:   # a stop outside a measured phase: the phases that ended are kept
            if not session.results:
                raise
            arrived.append(signals.name_of(exc))
        finally:
            with signals.held(arrived):   # closing finishes whatever signal comes
                session.close()
                close_out(session, where)
                peak = cgroup.peak_of(cgroup_path, budget.get("cgroup_version")) if cgroup_path else None
                log = inside.own_log()   # what the engine's library wrote (never the caller's terminal)
                if session.profiler is not None:
                    _attach_profiles(session)
                if session.counter is not None:
                    _attach_counts(session)
                allowed = sorted(os.sched_getaffinity(0))   # as pinning left the worker (all CPUs unpinned)
                for b in session.results:
                    b.params["cpus_allowed"] = allowed
                    b.params["memory_budget"]["cgroup_peak_bytes"] = peak
                    b.params["cold"] = job.cold
                    if log:
                        b.params["engine_log"] = log
        return TrialOut(session.results, tracer.phases if tracer is not None else 0, arrived)


def _attach_profiles(session) -> None:
    """Each measured phase's folded stacks into its record (params["profile"]); perf's failure is a warning on the
    records, never the run's end."""
    from ...results import profile as prof
    p = session.profiler
    try:
        libraries = profiler.engine_libraries()
        folded = p.stacks()
        for i, b in enumerate(session.results):
            got = folded.get(str(i))
            if got is None:
                continue
            b.params["profile"] = prof.record_profile(got, profiler.RATE_HZ, b.ops, b.seconds, libraries,
                                                      event=profiler.EVENT, unwind=profiler.UNWIND)
            if not got:
                b.warnings.append("profile: perf took no sample in the measured phase (too short at "
                                  f"{profiler.RATE_HZ} Hz, or perf could not sample this process)")
    except errors.KvlabError as exc:
        for b in session.results:
            b.warnings.append(f"profile: none, {exc}")
    finally:
        p.close()


def _attach_counts(session) -> None:
    """Each phase's instructions (counted as it ran: session.counted) into its record (params["instructions"])."""
    from ...results import instructions
    libraries = profiler.engine_libraries()
    version = counter.version()
    for i, b in enumerate(session.results):
        got = session.counted.get(i)
        if got is None:
            continue
        dumps, ops = got
        b.params["instructions"] = instructions.phase_record(dumps, ops, libraries, tool=counter.TOOL,
                                                             version=version, cache=session.counter.count == "cache")
        b.warnings.append(f"counted under {counter.TOOL} (its ops/s and latencies are valgrind's, which runs code "
                          "30-100x slower, not the engine's; its instructions per op are the engine's)")


def run_phases(spec, session, on_result, load_only, cold=False):
    for phase in session.plan(load_only):
        if cold and phase.kind == RUN:
            # a cold start: the engine closed (a map's pages are dropped only once unmapped), the database's pages
            # dropped from the page cache, the engine reopened by the phase
            session.close()
            evict_page_cache(session.where.path)
        done = session.run_one(phase)
        if done is not None:
            session.add(done, on_result)
            if done.partial:
                return
    if not session.results and session.resume_note:   # nothing ran: say why, as an error (exit 2)
        raise errors.SpecError(f"{session.resume_note}; nothing is left to run (its other workloads run on it "
                               "with use_existing_db)")


def close_out(session, where) -> None:
    """After the engine closed: the sizes that show only now (engines that keep data in their cache until close,
    WiredTiger without a checkpoint; seed 001 measured after the process ended)."""
    if session.results and session.results[-1].accounting is not None:
        acct = session.results[-1].accounting
        acct["db_size_after_close_bytes"] = dbdir.size_on_disk(where.path)
        # seed 001's total: the database after close + the process (accounting.seed_total)
        acct["total_size_bytes"] = accounting.seed_total(acct["db_size_after_close_bytes"],
                                                         acct.get("process_size_bytes"))
