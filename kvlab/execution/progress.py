"""Live progress of a native run, and the controls that watch and stop it.

The native threads publish one counter each (ops done, its op type) with a relaxed
atomic store; the runner's sampling thread reads them every `every` seconds without
pausing anything and hands a `Progress` to each observer.  Observers run on the
thread that called the runner, never on a native thread.  `RunControl.stop()` asks
the native threads to stop; each checks the flag after every operation (a rate-paced
writer sleeps in slices of at most 100 ms), so a run ends well within a second and
comes back as a partial result.
"""
from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from . import native


def expected_ops(native_loop: str, params: dict) -> int | None:
    """Ops a count-bounded run will do in total (None when it is bounded by time or is one call); the
    C core says which loops split `num` keys over their threads (native.native_loop)."""
    if params.get("duration", 0) > 0 or native_loop == "compact":
        return None
    if native.native_loop(native_loop).ops_are_num:
        return int(params["num"]) - int(params.get("first_key", 0))   # a resumed load: the rest
    return int(params["reads"]) * int(params["threads"])


@dataclass(frozen=True)
class Progress:
    """One look at a running workload."""
    engine: str
    workload: str
    phase: str                  # "load" or "run"
    elapsed_s: float
    ops: dict                   # op type -> ops done so far (workers)
    ops_per_sec: dict           # op type -> rate over the last sampling window
    writer_ops: dict = field(default_factory=dict)
    writer_ops_per_sec: dict = field(default_factory=dict)
    total_ops: int | None = None     # count-bounded runs
    duration_s: float | None = None  # time-bounded runs
    finished: bool = False
    stopping: bool = False

    @property
    def done_ops(self) -> int:
        return sum(self.ops.values())

    @property
    def fraction(self) -> float | None:
        if self.finished:
            return 1.0
        if self.duration_s:
            return min(1.0, self.elapsed_s / self.duration_s)
        if self.total_ops:
            return min(1.0, self.done_ops / self.total_ops)
        return None

    @property
    def remaining_s(self) -> float | None:
        if self.finished:
            return 0.0
        if self.duration_s:
            return max(0.0, self.duration_s - self.elapsed_s)
        rate = sum(self.ops_per_sec.values())
        if self.total_ops and rate > 0:
            return max(0.0, (self.total_ops - self.done_ops) / rate)
        return None

    def describe(self) -> str:
        """One line: what the widget and the CLI bar both show."""
        rates = ", ".join(f"{op} {_si(r)}/s" for op, r in self.ops_per_sec.items()) or "starting"
        if self.writer_ops_per_sec:
            rates += ", writer " + ", ".join(f"{op} {_si(r)}/s" for op, r in self.writer_ops_per_sec.items())
        left = self.remaining_s
        total = f"/{_si(self.total_ops)}" if self.total_ops else ""
        state = " (stopping)" if self.stopping and not self.finished else ""
        return (f"{self.engine} {self.workload}{' [load]' if self.phase == 'load' else ''}: "
                f"{_si(self.done_ops)}{total} ops, {rates}, {self.elapsed_s:.1f} s elapsed"
                f"{f', {left:.1f} s left' if left is not None else ''}{state}")


def _si(x) -> str:
    x = float(x)
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.0f}"


class ProgressTracker:
    """Turns successive counter reads of one run into Progress records (rates per window)."""

    def __init__(self, run, engine: str, workload: str, phase: str, native_loop: str, params: dict):
        self.run, self.engine, self.workload, self.phase = run, engine, workload, phase
        self.total = expected_ops(native_loop, params)
        self.duration = float(params.get("duration") or 0) or None
        self.t0 = time.monotonic()
        self.last_t, self.last_workers, self.last_writer = self.t0, {}, {}

    def read(self, finished=False, stopping=False) -> Progress:
        now = time.monotonic()
        workers, writer = self.run.progress_ops()
        dt = now - self.last_t
        rate = lambda cur, prev: {op: (n - prev.get(op, 0)) / dt for op, n in cur.items()} if dt > 0 else {}  # noqa: E731
        p = Progress(self.engine, self.workload, self.phase, now - self.t0, workers, rate(workers, self.last_workers),
                     writer, rate(writer, self.last_writer), self.total, self.duration, finished, stopping)
        self.last_t, self.last_workers, self.last_writer = now, workers, writer
        return p


Observer = Callable[[Progress], None]


def notify(observers, what: str, *args):
    """Call every observer with args; one that fails is reported on stderr and the rest still run
    (a broken display must not end a benchmark or a sweep)."""
    for observe in observers:
        try:
            observe(*args)
        except Exception as exc:
            print(f"kvlab: {what} {observe!r} failed: {exc}", file=sys.stderr)


class RunControl:
    """Watch and stop a run: pass one to `kvlab.run(..., control=...)` or get one from `kvlab.start`.

    `observers` are called with a Progress every `every` seconds while a workload runs and once
    when it ends.  `stop()` may be called from any thread (a widget button, a signal handler)."""

    def __init__(self, observers=(), every: float = 0.25):
        if not every > 0:
            raise ValueError(f"progress interval every={every!r} must be > 0 seconds")
        self.observers: list[Observer] = list(observers)
        self.every = float(every)
        self._stop = threading.Event()
        self.latest: Progress | None = None
        self.worker_pid: int | None = None   # the running trial's worker process (execution.worker)

    def stop(self):
        self._stop.set()

    @property
    def stop_requested(self) -> bool:
        return self._stop.is_set()

    def publish(self, progress: Progress):
        self.latest = progress
        notify(self.observers, "progress observer", progress)
