"""The fork server: a fresh interpreter that forks one clean worker per trial.

The caller starts it once (spawn.Server, by exec, never by forking itself) with glibc's static TLS room in its
environment.  It imports kvlab's runner and the compiled extension (so a worker does not pay for them), opens no
engine, loads no engine at run time and starts no thread, so every worker it forks starts as clean as a new
process: no engine state, thread pool, signal handler or fork handler of an earlier trial.  It runs in a session of
its own, so a terminal's Ctrl-C reaches the caller alone, which forwards it to the worker.

The caller asks for a worker over the control socket: ("spawn",) with two descriptors, the worker's channel and a
status pipe.  The server forks; the worker runs `inside.worker_main` on its channel; the server writes the worker's
pid into the status pipe at once and its wait status when it ends (the caller is not the worker's parent, so this
is how it learns how the worker ended: a signal, an exit status), then closes the pipe.  End of file on the control
socket means the caller is gone: the server kills its workers and exits.  A worker dies with the server
(PR_SET_PDEATHSIG), so nothing of a killed session outlives it.
"""
from __future__ import annotations

import ctypes
import os
import select
import signal
import socket
import sys

from .channel import STATUS

_PR_SET_PDEATHSIG = 1


def _preload() -> None:
    """What every worker needs, imported once here: the runner and the extension (no engine is opened)."""
    from ..native import load
    from ..run import worker_trial  # noqa: F401
    from . import inside  # noqa: F401
    try:
        load()
    except Exception:   # an unbuilt extension: the worker's own load says how to build it
        pass


def main(control_fd: int, once: bool = False) -> None:
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)   # the caller forwards stops to the worker; the server never stops
    _preload()
    control = socket.socket(fileno=control_fd)
    if once:
        _once(control)
    workers: dict[int, int] = {}   # pid -> status pipe
    # a worker's end wakes the loop at once (its status reaches the caller without a polling delay)
    woken, wake = os.pipe()
    os.set_blocking(wake, False)
    signal.set_wakeup_fd(wake)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    while True:
        ready, _, _ = select.select([control, woken], [], [], 1.0)
        if woken in ready:
            os.read(woken, 4096)
        if control in ready:
            try:
                message, fds, _, _ = socket.recv_fds(control, 64, 8)
            except OSError:
                message, fds = b"", []
            if not message:   # the caller is gone
                break
            channel, status, *extra = fds
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.close(woken)
                os.close(wake)
                _worker(control, channel, status, extra)
            os.close(channel)
            for fd in extra:
                os.close(fd)
            try:
                os.write(status, STATUS.pack(pid))
            except OSError:   # the caller stopped listening (it is being killed): the worker goes too
                os.kill(pid, signal.SIGKILL)
            workers[pid] = status
        _reap(workers)
    for pid in workers:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os._exit(0)


def _once(control) -> None:
    """One worker, this very process (no fork): a server started under an instrument that cannot follow a fork
    (valgrind's gdbserver, which --count uses to mark phases, serves only the process valgrind started).  Its pid goes
    into the status pipe as a forked worker's does; its end status the caller reads from its own child, this one."""
    message, fds, _, _ = socket.recv_fds(control, 64, 8)
    if not message:
        os._exit(0)
    channel, status, *extra = fds
    os.write(status, STATUS.pack(os.getpid()))
    _worker(control, channel, status, extra)


def _reap(workers: dict) -> None:
    while workers:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = workers.pop(pid, None)
        if fd is not None:
            try:
                os.write(fd, STATUS.pack(status))
            except OSError:   # the caller stopped listening
                pass
            os.close(fd)


def _worker(control, channel: int, status: int, extra: list) -> None:
    code = 70
    try:
        control.close()
        os.close(status)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from .inside import worker_main
        code = worker_main(channel, extra)
    finally:
        os._exit(code)


if __name__ == "__main__":
    main(int(sys.argv[1]), once=len(sys.argv) > 2 and sys.argv[2] == "once")
