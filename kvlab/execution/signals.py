"""SIGINT, SIGTERM and SIGHUP end a run alike.

Within `stopping()` each of them raises `Stop` (a KeyboardInterrupt, as Ctrl-C's is) in the main thread, so the
one path a Ctrl-C already takes covers all three: the sampler asks the native threads to stop (within about
0.1 s) and keeps a partial result marked with the signal's name, the session closes the engine, the directory's
lock is let go and a temporary database is removed; the command line then exits 128 + the signal's number.
Within `held()` (a store transaction, a results file being written) a signal waits until the block ends.
Elsewhere than the main thread (a background run) nothing is installed: Python delivers signals there only.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_held = 0
_pending: list[int] = []


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


def _handler(signum, frame):
    if _held:
        _pending.append(signum)
        return
    raise Stop(signum)


@contextmanager
def stopping():
    """Stop signals raise Stop for the duration (the previous handlers come back after)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    try:
        for s in STOP_SIGNALS:
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


@contextmanager
def held():
    """A stop signal that arrives within waits for the block's end, then raises Stop."""
    global _held
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending:
            signum = _pending[0]
            _pending.clear()
            raise Stop(signum)
