"""Running a sweep: points one after another on this machine (the default), or on Dask workers
(kvlab.execution.orchestration.dask_sweep), every finished point appended to the results store at once.

Resumption comes from the store: a point whose `done` row is there is skipped, so running the
same sweep again runs only what is missing.  A point's benchmarks and its `done` row are one
transaction, so a sweep stopped anyhow (Ctrl-C, the kernel's interrupt, a kill, a crash) loses at
most the point in flight.  A point stopped part-way is not stored: its partial figures would
stand for a whole point.  A point that fails (an engine error, a worker that died) is recorded as
failed with the reason, reported at the end, and tried again by the next run of the sweep.

Progress is a SweepProgress (points done / total, the points in flight, the live Progress of the
current one, an ETA) handed to a SweepControl's observers on the thread that runs the sweep; the
faces decide what to show (kvlab.lab.display, the CLI's bar).
"""
from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ... import errors
from ...model import workloads
from ...model.sweep import SweepPoint, SweepSpec
from ...results import sweeps as sweep_store
from ...results.result import BenchmarkResult, RunResult
from ...results.store import Store
from ..progress import Progress, RunControl, expected_ops, notify
from ..run.runner import run_spec
from .background import BackgroundHandle

POINT_OVERHEAD_S = 0.3         # opening and closing an engine, accounting, storing: per point, measured roughly
# per thread, for a phase the store has never seen on that engine: conservative (below the seeds' published
# figures, e.g. RocksDB overwrite at 42k/s), so an estimate is an upper bound; kvlab.lab.estimate uses the same
ASSUMED_LOAD_OPS_PER_SEC = 100_000
ASSUMED_WRITE_OPS_PER_SEC = 40_000
ASSUMED_READ_OPS_PER_SEC = 100_000


def assumed_rate(workload, phase: str) -> int:
    """The assumed ops/s a thread of a phase the store has no rate for: a load, a writing run or a reading one."""
    if phase == "load":
        return ASSUMED_LOAD_OPS_PER_SEC
    return ASSUMED_WRITE_OPS_PER_SEC if workload.writes else ASSUMED_READ_OPS_PER_SEC


# --- one point ---------------------------------------------------------------------------------

def run_point(point: SweepPoint, control: RunControl | None = None) -> dict:
    """Run one point here; return what the store needs, plain data (it crosses to a Dask client)."""
    started = time.time()
    result = run_spec(point.spec, control=control)
    return {"results": result.to_list(), "partial": any(b.partial for b in result),
            "host": socket.gethostname(), "worker": f"pid {os.getpid()}", "started_at": started,
            "ended_at": time.time()}


def point_record(point: SweepPoint, payload: dict | None = None, **extra) -> dict:
    """The sweep_points row of a point (host, worker and times from the payload)."""
    rec = {"sweep_id": point.sweep, "point_id": point.id, "repeat": point.repeat,
           "values": {**point.values}}
    for k in ("host", "worker", "started_at", "ended_at"):
        if payload and k in payload:
            rec[k] = payload[k]
    rec.update(extra)
    return rec


# --- estimate ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Estimate:
    seconds: float
    measured: int       # workload phases whose rate came from runs in the store
    assumed: int        # phases whose rate was assumed (never seen on that engine)

    def describe(self) -> str:
        if not self.measured + self.assumed:
            return "nothing to run"
        basis = f"rates from the store for {self.measured} of {self.measured + self.assumed} phases" \
            if self.measured else (f"assumed rates (a thread: loads {ASSUMED_LOAD_OPS_PER_SEC:,} ops/s, writes "
                                   f"{ASSUMED_WRITE_OPS_PER_SEC:,}, reads {ASSUMED_READ_OPS_PER_SEC:,}): no "
                                   "similar runs stored")
        return f"about {format_seconds(self.seconds)} ({basis})"


def format_seconds(s: float | None) -> str:
    if s is None:
        return "?"
    s = int(round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _rates(store: Store | None) -> dict:
    """Median ops/s per thread by (engine, workload, phase), from finished runs in the store."""
    if store is None or not store.path.exists():
        return {}
    try:
        df = store.query("SELECT engine, workload, phase, median(ops_per_sec / threads) AS rate FROM benchmarks "
                         "WHERE NOT partial AND ops_per_sec > 0 GROUP BY engine, workload, phase")
    except errors.KvlabError:
        return {}
    return {(r.engine, r.workload, r.phase): float(r.rate) for r in df.itertuples()}


def point_seconds(point: SweepPoint, rates: dict) -> tuple:
    """(seconds, phases measured, phases assumed) for one point."""
    spec = point.spec
    total, measured, assumed = POINT_OVERHEAD_S, 0, 0
    loaded = False
    for name in spec.workloads:
        wl = workloads.get(name, spec.mixes)
        phases = []
        if wl.needs_data and not loaded and spec.auto_load:
            phases.append(("fillseq", "load", 1, {"num": spec.num, "duration": 0}))
        phases.append((wl.name, "run", spec.threads, {"num": spec.num, "reads": spec.reads_per_thread,
                                                       "threads": spec.threads, "duration": spec.duration}))
        for wname, phase, threads, params in phases:
            if phase == "run" and spec.duration > 0:
                total += spec.duration
                measured += 1
                continue
            phase_wl = workloads.get(wname, spec.mixes)
            ops = expected_ops(phase_wl.native, params) or spec.num
            rate = rates.get((spec.engine, wname, phase))
            if rate:
                measured += 1
            else:
                assumed += 1
                rate = assumed_rate(phase_wl, phase)
            total += ops / (rate * min(threads, os.cpu_count() or 1))
        loaded = loaded or wl.writes or wl.needs_data
    return total, measured, assumed


def estimate(points, store: Store | None = None) -> Estimate:
    rates = _rates(store)
    secs = meas = ass = 0
    for p in points:
        s, m, a = point_seconds(p, rates)
        secs, meas, ass = secs + s, meas + m, ass + a
    return Estimate(secs, meas, ass)


# --- progress ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class SweepProgress:
    """One look at a running sweep."""
    sweep: str
    total: int                  # points in the sweep
    done: int                   # finished, those stored before this run included
    skipped: int                # finished before this run started
    failed: int
    running: tuple = ()         # labels of the points in flight
    current: Progress | None = None   # live progress of the point in flight (the latest reported)
    current_point: str | None = None
    current_host: str | None = None
    elapsed_s: float = 0.0
    eta_s: float | None = None
    finished: bool = False
    stopping: bool = False

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    def describe(self) -> str:
        state = " (stopping)" if self.stopping and not self.finished else ""
        fail = f", {self.failed} failed" if self.failed else ""
        eta = f", ETA {format_seconds(self.eta_s)}" if self.eta_s is not None and not self.finished else ""
        where = f" on {self.current_host}" if self.current_host else ""
        now = f"; now{where}: {self.current_point}" if self.current_point and not self.finished else ""
        return (f"sweep {self.sweep}: {self.done}/{self.total} points{fail}, "
                f"{format_seconds(self.elapsed_s)} elapsed{eta}{now}{state}")


SweepObserver = Callable[[SweepProgress], None]


class SweepControl:
    """Watch and stop a sweep.  `observers` get a SweepProgress when a point starts, ends, and with
    each live progress report of the point in flight; `stop()` (any thread) stops the point in flight
    (it is not stored) and the sweep."""

    def __init__(self, observers=(), every: float = 0.5, on_point=()):
        self.observers: list[SweepObserver] = list(observers)
        # called as fn(point, result, error) once a point is stored (result) or recorded failed (error)
        self.on_point: list = list(on_point)
        self.every = float(every)
        self._stop = threading.Event()
        self.latest: SweepProgress | None = None
        self._points: list[RunControl] = []

    def stop(self):
        self._stop.set()
        for c in list(self._points):
            c.stop()

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def point_control(self, on_progress: Callable[[Progress], None]) -> RunControl:
        c = RunControl([on_progress], every=self.every)
        self._points.append(c)
        if self.stop_requested:
            c.stop()
        return c

    def release(self, control: RunControl):
        if control in self._points:
            self._points.remove(control)

    def point_ended(self, point, result, error=None):
        notify(self.on_point, "sweep observer", point, result, error)

    def publish(self, progress: SweepProgress):
        self.latest = progress
        notify(self.observers, "sweep observer", progress)


# --- the sweep ---------------------------------------------------------------------------------

@dataclass
class SweepOutcome:
    """What one run of a sweep did."""
    sweep: SweepSpec
    store: Store
    total: int
    skipped: int                        # finished before this run
    done: list = field(default_factory=list)      # point ids finished in this run
    failed: list = field(default_factory=list)    # (point label, point id, error)
    stopped: bool = False
    seconds: float = 0.0
    executor: str = "local"

    @property
    def complete(self) -> bool:
        return self.skipped + len(self.done) == self.total

    def describe(self) -> str:
        lines = [f"sweep {self.sweep.id}: {len(self.done)} points run ({self.executor}), {self.skipped} already "
                 f"stored, {len(self.failed)} failed; {self.skipped + len(self.done)}/{self.total} finished in "
                 f"{format_seconds(self.seconds)}{'; STOPPED' if self.stopped else ''}; store {self.store.path}"]
        lines += [f"  FAILED {label} [{pid}]: {err}" for label, pid, err in self.failed]
        return "\n".join(lines)

    def __repr__(self):
        return f"<kvlab SweepOutcome {self.describe()}>"

    def frame(self, **kw):
        return sweep_store.tidy(self.store, self.sweep.id, point_ids=[p.id for p in self.sweep.points()], **kw)


class Sink:
    """Where an executor reports: stores finished points, records failures, keeps the progress."""

    def __init__(self, sweep: SweepSpec, store: Store, points: list, skipped: int, control: SweepControl | None,
                 outcome: SweepOutcome):
        self.sweep, self.store, self.control, self.outcome = sweep, store, control, outcome
        self.total, self.skipped = len(points), skipped
        self.t0 = time.monotonic()
        self.rates = _rates(store)
        self.estimates = {p.id: point_seconds(p, self.rates)[0] for p in points}
        self.remaining = {p.id for p in points}
        self.est_done = 0.0
        self.running: dict = {}     # point id -> (label, host)
        self.current: Progress | None = None
        self.current_id: str | None = None

    @property
    def stop_requested(self) -> bool:
        return self.control is not None and self.control.stop_requested

    def started(self, point: SweepPoint, host: str | None = None):
        self.running[point.id] = (point.label(), host)
        self.current_id, self.current = point.id, None
        self._publish()

    def progress(self, point: SweepPoint, progress: Progress, host: str | None = None):
        self.running.setdefault(point.id, (point.label(), host))
        self.current_id, self.current = point.id, progress
        self._publish()

    def finished(self, point: SweepPoint, payload: dict):
        """A point's payload came back: store it (unless it was stopped part-way)."""
        self.running.pop(point.id, None)
        if payload.get("partial"):
            self.outcome.stopped = True
            self._publish()
            return
        result = RunResult([BenchmarkResult.from_dict(d) for d in payload["results"]], point.spec)
        self.store.append(result, point=point_record(point, payload))
        self.outcome.done.append(point.id)
        self._account(point)
        if self.control is not None:
            self.control.point_ended(point, result)

    def failed(self, point: SweepPoint, error: str, payload: dict | None = None):
        self.running.pop(point.id, None)
        self.store.record_point(point_record(point, payload), "failed", error)
        self.outcome.failed.append((point.label(), point.id, error))
        self._account(point)
        if self.control is not None:
            self.control.point_ended(point, None, error)

    def _account(self, point):
        self.remaining.discard(point.id)
        self.est_done += self.estimates[point.id]
        if self.current_id == point.id:
            self.current_id, self.current = None, None
        self._publish()

    def snapshot(self, finished=False) -> SweepProgress:
        elapsed = time.monotonic() - self.t0
        left = sum(self.estimates[i] for i in self.remaining)
        # the estimate, scaled by how the finished points compared with theirs
        eta = left * (elapsed / self.est_done) if self.est_done > 0 else left
        label, host = self.running.get(self.current_id, (None, None)) if self.current_id else (None, None)
        if label is None and self.running:
            label, host = next(iter(self.running.values()))
        return SweepProgress(self.sweep.id, self.total, self.skipped + len(self.outcome.done), self.skipped,
                             len(self.outcome.failed), tuple(v[0] for v in self.running.values()), self.current,
                             label, host, elapsed, eta, finished, self.stop_requested)

    def _publish(self, finished=False):
        if self.control is not None:
            self.control.publish(self.snapshot(finished))


class LocalExecutor:
    """Points one after another in this process: benchmarks never share the machine."""
    name = "local"

    def execute(self, points: list, sink: Sink):
        for point in points:
            if sink.stop_requested:
                return
            sink.started(point, socket.gethostname())
            control = sink.control.point_control(lambda p, pt=point: sink.progress(pt, p)) \
                if sink.control is not None else None
            try:
                payload = run_point(point, control)
            except errors.KvlabError as exc:   # this point cannot run here; the others may
                sink.failed(point, f"{type(exc).__name__}: {exc}")
                continue
            finally:
                if control is not None:
                    sink.control.release(control)
            sink.finished(point, payload)
            if payload.get("partial"):
                return


def run_sweep(sweep: SweepSpec, store: Store | None = None, control: SweepControl | None = None,
              executor=None) -> SweepOutcome:
    """Run the points of `sweep` not yet in `store`, with `executor` (LocalExecutor by default)."""
    store = store if store is not None else Store()
    executor = executor or LocalExecutor()
    points = sweep.points()
    done = sweep_store.finished_points(store, sweep.id)
    todo = [p for p in points if p.id not in done]
    outcome = SweepOutcome(sweep, store, len(points), len(points) - len(todo), executor=executor.name)
    store.define_sweep(sweep.id, sweep.to_dict())
    sink = Sink(sweep, store, todo, len(points) - len(todo), control, outcome)
    sink._publish()
    try:
        if todo:
            executor.execute(todo, sink)
    finally:
        outcome.seconds = time.monotonic() - sink.t0
        outcome.stopped = outcome.stopped or sink.stop_requested
        sink._publish(finished=True)
    return outcome


class SweepHandle(BackgroundHandle):
    """A sweep running on a background thread (kvlab.start for sweeps): `progress`, `stop()`,
    `done()`, `result(timeout)`, `await handle`."""
    KIND = "SweepHandle"
    STOP_TIMEOUT = 60.0
    EXIT_TIMEOUT = 60.0

    def __init__(self, sweep: SweepSpec, store: Store | None, control: SweepControl, executor=None):
        self.sweep, self.store, self.executor = sweep, store, executor
        super().__init__(control)

    def _thread_name(self) -> str:
        return f"kvlab-sweep-{self.sweep.id}"

    def _work(self) -> SweepOutcome:
        return run_sweep(self.sweep, self.store, self.control, self.executor)

    def _describe(self) -> str:
        return self.sweep.id

    def stop(self, wait: bool = True, timeout: float | None = None) -> SweepOutcome | None:
        """Stop the point in flight (not stored) and the sweep; with `wait`, return the outcome."""
        return super().stop(wait, timeout)


def start_sweep(sweep: SweepSpec, store: Store | None = None, control: SweepControl | None = None,
                executor=None) -> SweepHandle:
    return SweepHandle(sweep, store, control or SweepControl(), executor)._start()


