"""The worker's side: its output to a log of its own, the caller's folder, environment and path, then the job; a
`Link` back to the caller (messages out, a stop in)."""
from __future__ import annotations

import ctypes
import importlib
import os
import signal
import sys
import threading

from ... import errors
from . import channel

HOOK = "KVLAB_WORKER_HOOK"


class Link:
    """The target's end of the channel: send() a message to the caller; `stopped` is set by the caller's stop
    (or its going away); `fds` are the descriptors the caller handed over."""

    def __init__(self, fd: int, reader: channel.Reader, fds: list):
        self.fd, self.fds = fd, fds
        self.stopped = threading.Event()
        self._reader = reader
        self._on_stop: list = []
        self._send_lock = threading.Lock()

    def send(self, message) -> None:
        with self._send_lock:
            channel.send(self.fd, message)

    def on_stop(self, callback) -> None:
        self._on_stop.append(callback)
        if self.stopped.is_set():
            callback()

    def _listen(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:   # the caller is gone: the worker goes with it at once, as one process would have
                os.kill(os.getpid(), signal.SIGKILL)
            for message in self._reader.feed(chunk):
                if message[0] == "stop" and not self.stopped.is_set():
                    self.stopped.set()
                    for callback in self._on_stop:
                        callback()


def worker_main(fd: int, extra: list) -> int:
    """In the new worker: its output to its log, the caller's folder, environment and path, then the job."""
    log, fds = extra[0], extra[1:]
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    _close_inherited({fd, *fds})
    reader = channel.Reader()
    got: list = []
    while not got:
        chunk = os.read(fd, 1 << 20)
        if not chunk:   # the caller went away before it sent the job
            return 0
        got = reader.feed(chunk)
    job, early = got[0][1], got[1:]
    tunables = os.environ.get("GLIBC_TUNABLES")
    os.environ.clear()
    os.environ.update(job["env"])
    if tunables is not None:   # glibc read the server's at its start: the record says what the process has
        os.environ["GLIBC_TUNABLES"] = tunables
    sys.path[:] = job["sys_path"]
    try:
        os.chdir(job["cwd"])
    except OSError:
        pass
    hook = os.environ.get(HOOK)
    if hook:   # instrumentation that must run inside the worker (a test's spy): "module:function", called first
        module, _, name = hook.partition(":")
        getattr(importlib.import_module(module), name)()
    link = Link(fd, reader, fds)
    if any(m[0] == "stop" for m in early):
        link.stopped.set()
    threading.Thread(target=link._listen, name="kvlab-worker-channel", daemon=True).start()
    module, _, name = job["target"].partition(":")
    try:
        value = getattr(importlib.import_module(module), name)(link, *job["args"])
        message = ("done", value)
    except BaseException as exc:   # everything goes back to the caller, which raises it
        message = ("error", exc)
    try:
        _flush()
        try:
            link.send(message)
        except Exception:   # an error that does not pickle: its text does
            if message[0] == "done":
                raise
            link.send(("error", errors.KvlabError(f"{type(message[1]).__name__}: {message[1]}")))
    finally:
        _flush()
    return 0


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        ctypes.CDLL(None).fflush(None)   # the engines' C stdio
    except (OSError, AttributeError):
        pass


def _close_inherited(keep) -> None:
    for name in os.listdir("/proc/self/fd"):
        n = int(name)
        if n > 2 and n not in keep:
            try:
                os.close(n)
            except OSError:   # the listing's own descriptor, gone already
                pass


def own_log(lines: int = 20) -> list:
    """The last lines this worker wrote to its log (its standard output and error: the engines' libraries' lines)."""
    _flush()
    try:
        size = os.fstat(1).st_size
        text = os.pread(1, min(size, 64 << 10), max(0, size - (64 << 10))).decode(errors="replace")
    except OSError:
        return []
    return [ln for ln in text.splitlines() if ln.strip()][-lines:]


def echo(link, value=None):
    """A target that does nothing but answer (benchmarks/worker_cost.py: what a worker itself costs)."""
    return value
