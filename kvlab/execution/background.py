"""Runs in the background: the kernel stays free while the native threads work.

    handle = kvlab.start(engine="lmdb", workload="fillseq,readrandom", num=1_000_000, threads=2)
    handle.progress          # the latest Progress
    handle.stop()            # ends the run within a second; the result is marked partial
    result = await handle    # or handle.result(timeout=...), or poll handle.done()

The run executes on one Python thread that spends nearly all its time in the native driver
with the GIL released, so other cells keep executing.  At interpreter exit, running handles
are stopped and joined so their engines close their databases cleanly.
"""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
import weakref

from .progress import Progress, RunControl
from ..model.spec import RunSpec
from ..results.result import BenchmarkResult, RunResult
from .runner import run_spec

_LIVE: "weakref.WeakSet[RunHandle]" = weakref.WeakSet()


class RunHandle:
    """A run executing on a background thread."""

    def __init__(self, spec: RunSpec, control: RunControl | None = None):
        self.spec = spec
        self.control = control or RunControl()
        self.future: concurrent.futures.Future = concurrent.futures.Future()
        self.finished_results: list[BenchmarkResult] = []   # each workload as it completes
        self._thread = threading.Thread(target=self._main, name=f"kvlab-{spec.engine}", daemon=True)

    def _start(self) -> "RunHandle":
        _LIVE.add(self)
        self.future.set_running_or_notify_cancel()
        self._thread.start()
        return self

    def _main(self):
        try:
            result = run_spec(self.spec, on_result=self.finished_results.append, control=self.control)
        except BaseException as exc:  # delivered to whoever awaits the handle
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)

    @property
    def progress(self) -> Progress | None:
        return self.control.latest

    def done(self) -> bool:
        return self.future.done()

    def result(self, timeout: float | None = None) -> RunResult:
        """Wait for the run (up to `timeout` s) and return its RunResult; raises what the run raised."""
        return self.future.result(timeout)

    def stop(self, wait: bool = True, timeout: float = 10.0) -> RunResult | None:
        """Ask the native threads to stop; with `wait`, return the (partial) result."""
        self.control.stop()
        return self.future.result(timeout) if wait else None

    def add_done_callback(self, fn):
        """fn(handle) once the run ends, on the run's thread (or at once if it already has)."""
        self.future.add_done_callback(lambda _f: fn(self))

    def __await__(self):
        return asyncio.wrap_future(self.future).__await__()

    def __repr__(self):
        state = "finished" if self.done() else ("stopping" if self.control.stop_requested else "running")
        p = self.progress
        return f"<kvlab RunHandle {self.spec.engine} {','.join(self.spec.workloads)}: {state}" + \
            (f"; {p.describe()}>" if p else ">")


def start_spec(spec: RunSpec, control: RunControl | None = None) -> RunHandle:
    """Start `spec` on a background thread and return its RunHandle at once.  What shows
    progress is the caller's choice, made through `control`'s observers (kvlab.start's
    progress=True attaches a widget or a bar)."""
    return RunHandle(spec, control or RunControl())._start()


@atexit.register
def _stop_live_runs():
    for handle in list(_LIVE):
        if not handle.done():
            handle.control.stop()
            try:
                handle.future.result(30)
            except BaseException:  # exiting anyway; the engine was closed by the runner's finally
                pass
