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

from ... import _signals as signals
from ...model.spec import RunSpec
from ...results.result import BenchmarkResult, RunResult
from ..progress import RunControl
from ..run.runner import run_spec

_LIVE: "weakref.WeakSet[BackgroundHandle]" = weakref.WeakSet()


class BackgroundHandle:
    """Work on a background thread, watched through `control` (a RunControl or SweepControl):
    `progress`, `done()`, `result(timeout)`, `stop()`, `await handle`, `add_done_callback`.
    Subclasses give `_work()`, `_thread_name` and `_describe()`; `STOP_TIMEOUT` is how long
    `stop()` waits for the work to end, `EXIT_TIMEOUT` how long interpreter exit does."""
    STOP_TIMEOUT = 10.0     # stop(): how long to wait for the work to end
    EXIT_TIMEOUT = 30.0     # at interpreter exit
    KIND = "handle"

    def __init__(self, control):
        self.control = control
        self.future: concurrent.futures.Future = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._main, name=self._thread_name(), daemon=True)

    def _thread_name(self) -> str:
        return "kvlab-background"

    def _work(self):
        raise NotImplementedError

    def _describe(self) -> str:
        return ""

    def _start(self):
        _LIVE.add(self)
        signals.end_of_process(_stop_for_signal)   # a process told to end stops its runs first
        self.future.set_running_or_notify_cancel()
        self._thread.start()
        return self

    def _main(self):
        try:
            result = self._work()
        except BaseException as exc:  # delivered to whoever awaits the handle
            self.future.set_exception(exc)
        else:
            self.future.set_result(result)

    @property
    def progress(self):
        return self.control.latest

    def done(self) -> bool:
        return self.future.done()

    def result(self, timeout: float | None = None):
        """Wait for the work (up to `timeout` s) and return its result; raises what the work raised."""
        return self.future.result(timeout)

    def stop(self, wait: bool = True, timeout: float | None = None):
        """Ask the work to stop; with `wait`, return its (partial) result."""
        self.control.stop()
        return self.future.result(self.STOP_TIMEOUT if timeout is None else timeout) if wait else None

    def add_done_callback(self, fn):
        """fn(handle) once the work ends, on its thread (or at once if it already has)."""
        self.future.add_done_callback(lambda _f: fn(self))

    def __await__(self):
        return asyncio.wrap_future(self.future).__await__()

    def __repr__(self):
        state = "finished" if self.done() else ("stopping" if self.control.stop_requested else "running")
        p = self.progress
        return f"<kvlab {self.KIND} {self._describe()}: {state}" + (f"; {p.describe()}>" if p else ">")


class RunHandle(BackgroundHandle):
    """A run executing on a background thread."""
    KIND = "RunHandle"

    def __init__(self, spec: RunSpec, control: RunControl | None = None):
        self.spec = spec
        self.finished_results: list[BenchmarkResult] = []   # each workload as it completes
        super().__init__(control or RunControl())

    def _thread_name(self) -> str:
        return f"kvlab-{self.spec.engine}"

    def _work(self) -> RunResult:
        return run_spec(self.spec, on_result=self.finished_results.append, control=self.control)

    def _describe(self) -> str:
        return f"{self.spec.engine} {','.join(self.spec.workloads)}"


def start_spec(spec: RunSpec, control: RunControl | None = None) -> RunHandle:
    """Start `spec` on a background thread and return its RunHandle at once.  What shows
    progress is the caller's choice, made through `control`'s observers (kvlab.start's
    progress=True attaches a widget or a bar)."""
    return RunHandle(spec, control or RunControl())._start()


@atexit.register
def _stop_live_handles():
    for handle in list(_LIVE):
        if not handle.done():
            handle.control.stop()
            try:
                handle.future.result(handle.EXIT_TIMEOUT)
            except BaseException:  # exiting anyway; the engine was closed by the runner's finally
                pass


def stop_all() -> None:
    """Ask every running handle to stop, without waiting (a kernel's interrupt: kvlab.lab.api)."""
    for handle in list(_LIVE):
        if not handle.done():
            handle.control.stop()


def _stop_for_signal():
    """SIGTERM or SIGHUP for a process with runs in the background: each stops and cleans up (within its
    STOP_TIMEOUT) before the process ends."""
    live = [h for h in list(_LIVE) if not h.done()]
    for handle in live:
        handle.control.stop()
    for handle in live:
        try:
            handle.future.result(handle.STOP_TIMEOUT)
        except BaseException:  # ending anyway
            pass
