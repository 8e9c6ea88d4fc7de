"""SIGINT, SIGTERM and SIGHUP end a run alike.

Within `stopping()` each of them raises `Stop` (a KeyboardInterrupt, as Ctrl-C's is) in the main thread, so the
one path a Ctrl-C already takes covers all three: the sampler asks the native threads to stop (within about
0.1 s) and keeps a partial result marked with the signal's name, the session closes the engine, the directory's
lock is let go and a temporary database is removed; the command line then exits 128 + the signal's number.
Within `held()` (a store transaction, a results file being written) a signal waits until the block ends.
Elsewhere than the main thread (a background run) nothing is installed: Python delivers signals there only.
It sits in the base layer because the results store needs `held()` too (DuckDB's import).
"""
from __future__ import annotations

import signal
import sys
import threading
import warnings
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_held = 0
_pending: list[int] = []
_ENDING = (signal.SIGTERM, signal.SIGHUP)
_before_end: dict = {}        # signal -> the handler that was there before end_of_process() put its own
_at_end: list = []            # what end_of_process() calls first


class Stop(KeyboardInterrupt):
    """A stop signal arrived."""

    def __init__(self, signum: int):
        self.signum = signum
        self.name = signal.Signals(signum).name
        super().__init__(self.name)


def name_of(exc: BaseException) -> str:
    """The signal that stopped a run; a plain KeyboardInterrupt is SIGINT (Python's own handler, a kernel's
    interrupt)."""
    return getattr(exc, "name", "SIGINT")


def exit_code(name: str | None) -> int:
    """128 + the signal's number, as a shell reports a process that a signal ended."""
    return 128 + int(getattr(signal, name or "SIGINT", signal.SIGINT))


_received: list[int] = []   # every stop signal the handler saw, since forget()


def received() -> str | None:
    """The first stop signal that arrived since forget(), by name, or None."""
    return signal.Signals(_received[0]).name if _received else None


def forget() -> None:
    _received.clear()


def _handler(signum, frame):
    _received.append(signum)
    if signum == signal.SIGHUP:
        _tolerate_lost_terminal()
    # a stop abandons what was in flight: a library's coroutine it cut short (papermill's cell) is not awaited, and
    # Python's warning about it would be a second line after the one a stop prints
    warnings.filterwarnings("ignore", message=r"coroutine .* was never awaited", category=RuntimeWarning)
    if _held:
        _pending.append(signum)
        return
    raise Stop(signum)


class _LostTerminalTolerant:
    """A stream whose writes and flushes go on failing quietly once its terminal is gone (a hang-up: EIO), so a
    run that SIGHUP stopped still stores its result."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError:
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except OSError:
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _tolerate_lost_terminal():
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, _LostTerminalTolerant):
            setattr(sys, name, _LostTerminalTolerant(stream))


@contextmanager
def stopping():
    """Stop signals raise Stop for the duration (the previous handlers come back after).  A signal ignored when
    it starts (nohup's SIGHUP, SIGINT of a shell's background job) stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    try:
        for s in STOP_SIGNALS:
            if signal.getsignal(s) is not signal.SIG_IGN:
                previous[s] = signal.signal(s, _handler)
    except ValueError:   # not the main interpreter's main thread after all
        for s, h in previous.items():
            signal.signal(s, h)
        previous = {}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def pending() -> list:
    """The stop signals waiting for a held() block's end, in order of arrival (a caller forwards them)."""
    return list(_pending)


@contextmanager
def held(arrived: list | None = None):
    """A stop signal that arrives within waits for the block's end, then raises Stop, or, given a list `arrived`,
    is put in it by name (the caller marks its result); a block already ending with an exception of its own goes
    on as it was."""
    global _held
    _held += 1
    failed = False
    try:
        yield
    except BaseException:
        failed = True
        raise
    finally:
        _held -= 1
        if not _held and _pending:
            signum = _pending[0]
            _pending.clear()
            if arrived is not None:
                arrived.append(signal.Signals(signum).name)
            elif not failed:
                raise Stop(signum)


def end_of_process(stop_all) -> None:
    """For runs on other threads (kvlab.start), which no signal reaches: SIGTERM and SIGHUP first call
    `stop_all()` (they stop, close their engines and remove their temporary databases), then go on to the
    handler that was there before (by default the process ends, as it was told).  Installed from the main
    thread, once; an ignored signal stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    if stop_all not in _at_end:
        _at_end.append(stop_all)
    for s in _ENDING:
        current = signal.getsignal(s)
        if current in (_end_handler, _handler, signal.SIG_IGN):
            continue
        try:
            _before_end[s] = current
            signal.signal(s, _end_handler)
        except ValueError:
            return


def _end_handler(signum, frame):
    for stop_all in _at_end:
        stop_all()
    before = _before_end.pop(signum, signal.SIG_DFL)
    signal.signal(signum, before if before is not None else signal.SIG_DFL)
    signal.raise_signal(signum)
