"""The caller's side of a worker, and the worker's first steps.

`call(target, args)` runs `target(link, *args)` (a "module:function" name) in a fresh worker forked by the fork
server (server.py), and returns an `Outcome`: the value the target returned, or the error it raised, or, where the
worker died, how (the signal's name, its exit status), and in every case the last lines the worker's libraries
wrote (its standard output and error go to a log of its own, never to the caller's terminal or a notebook cell).
While it runs, messages the target sends (progress, each phase's record) go to `on_message`; a stop signal that
reaches the caller is forwarded to the worker and kept, by name, in the outcome; a RunControl's stop() is sent to
it over the channel.  A worker that has not ended `grace_s` after a stop is killed, and the outcome says so.
"""
from __future__ import annotations

import atexit
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ... import _signals as signals
from ... import errors
from . import channel
from .channel import STATUS

PREFIX = "KVLAB_WORKER_PREFIX"   # a command line the fork server (and so every worker) runs under
GRACE_S = 20.0          # after a stop, how long a worker may take to close its engine before it is killed
LOG_TAIL_LINES = 20     # the worker's own output kept with an outcome
_LOG_TAIL_BYTES = 64 << 10


@dataclass
class Outcome:
    pid: int
    value: object = None
    error: BaseException | None = None
    returned: bool = False          # the target returned (value) or raised (error) and the worker said so
    status: int | None = None       # the worker's wait status
    arrived: list = field(default_factory=list)   # stop signals that reached the caller meanwhile, by name
    killed_after_grace: bool = False
    log: list = field(default_factory=list)       # the last lines the worker wrote (its libraries' output)
    seconds: float = 0.0            # from the request to the worker's end

    @property
    def signal_name(self) -> str | None:
        if self.status is not None and os.WIFSIGNALED(self.status):
            return signal.Signals(os.WTERMSIG(self.status)).name
        return None

    @property
    def exit_status(self) -> int | None:
        if self.status is not None and os.WIFEXITED(self.status):
            return os.WEXITSTATUS(self.status)
        return None

    def how(self) -> str:
        """How the worker ended, in words."""
        if self.signal_name:
            return f"signal {self.signal_name}" + (f" (killed {GRACE_S:g} s after a stop: it had not ended)"
                                                   if self.killed_after_grace else "")
        return f"exit status {self.exit_status}"


class _Server:
    """The fork server of this process, started on first use (and again if it died, or in a forked child)."""

    def __init__(self, prefix: tuple | None = None, once: bool = False):
        self.prefix = prefix   # the command line it runs under (None: $KVLAB_WORKER_PREFIX's)
        self.once = once       # a server per worker, which runs it in its own process (server._once)
        self.lock = threading.Lock()
        self.owner = None
        self.proc = None
        self.control = None

    def _start(self) -> None:
        from ..native import with_static_tls_room
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        root = str(Path(__file__).resolve().parents[3])   # the folder that holds this kvlab package
        code = (f"import sys; sys.path.insert(0, {root!r}); "
                "from kvlab.execution.worker import server; server.main(int(sys.argv[1]), len(sys.argv) > 2)")
        env = with_static_tls_room(os.environ)
        # an instrument around every worker (callgrind for instruction counts, a profiler): the server runs under it,
        # and each worker it forks stays under it (benchmarks/_common.py's under_callgrind)
        prefix = list(self.prefix) if self.prefix is not None else shlex.split(os.environ.get(PREFIX, ""))
        self.proc = subprocess.Popen([*prefix, sys.executable, "-c", code, str(theirs.fileno()),
                                      *(["once"] if self.once else [])],
                                     pass_fds=[theirs.fileno()],
                                     env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        theirs.close()
        self.control, self.owner = mine, os.getpid()

    def spawn(self, fds: list) -> tuple[int, int]:
        """A new worker holding `fds` (its channel first); returns (its pid, the status pipe to read its end)."""
        with self.lock:
            if self.once or self.owner != os.getpid() or self.proc is None or self.proc.poll() is not None:
                if self.once and self.proc is not None:
                    self.stop()
                self._start()
            status_r, status_w = os.pipe()
            try:
                socket.send_fds(self.control, [b"spawn"], [*fds[:1], status_w, *fds[1:]])
            except OSError as exc:
                os.close(status_r)
                raise errors.KvlabError(f"kvlab's worker server cannot be reached ({exc.strerror})") from None
            finally:
                os.close(status_w)
            pid = _read_status(status_r)
            if pid is None:
                os.close(status_r)
                raise errors.KvlabError("kvlab's worker server ended before it started a worker")
            return pid, status_r

    def ended(self) -> int | None:
        """A once-server's worker (itself) ended: its wait status, as a forked worker's comes through the pipe."""
        if not self.once or self.proc is None:
            return None
        rc = self.proc.wait()
        return (-rc) & 0x7F if rc < 0 else (rc & 0xFF) << 8

    def stop(self) -> None:
        if self.proc is not None and self.owner == os.getpid():
            self.control.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None


SERVER = _Server()
ACTIVE: set = set()   # the pids of this process's workers now running
atexit.register(SERVER.stop)
_UNDER: dict = {}     # fork servers that run under an instrument (a trial's --count: callgrind), by command line


def server_for(prefix) -> _Server:
    """The fork server whose workers run under `prefix` (None: the plain one), started on first use."""
    if prefix is None:
        return SERVER
    key = tuple(prefix)
    if key not in _UNDER:
        _UNDER[key] = _Server(key, once=True)
        atexit.register(_UNDER[key].stop)
    return _UNDER[key]


def _read_status(fd: int) -> int | None:
    data = b""
    while len(data) < STATUS.size:
        chunk = os.read(fd, STATUS.size - len(data))
        if not chunk:
            return None
        data += chunk
    return STATUS.unpack(data)[0]


def call(target: str, args: tuple = (), *, fds: tuple = (), on_message=None, stop_requested=None,
         grace_s: float = GRACE_S, started=None, prefix=None) -> Outcome:
    """Run `target(link, *args)` in a new worker (see the module's text).  `fds`: descriptors the worker gets too
    (link.fds, in order); `stop_requested()`: polled, True asks the worker to stop; `started(pid)`: told the
    worker's pid as it starts; `prefix`: a command line the worker runs under (its own fork server's)."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    log = tempfile.TemporaryFile(prefix="kvlab-worker-")
    t0 = time.monotonic()
    try:
        server = server_for(prefix)
        pid, status_fd = server.spawn([theirs.fileno(), log.fileno(), *fds])
    except BaseException:
        mine.close()
        log.close()
        raise
    finally:
        theirs.close()
    out = Outcome(pid)
    ACTIVE.add(pid)
    try:
        if started is not None:
            started(pid)
        job = {"target": target, "args": args, "cwd": os.getcwd(), "env": dict(os.environ),
               "sys_path": list(sys.path)}
        try:
            channel.send(mine.fileno(), ("job", job))
        except OSError:   # it died at once: its status says how
            pass
        _collect(mine, pid, out, on_message, stop_requested, grace_s)
        out.status = _read_status(status_fd)
        if out.status is None:   # a once-server's worker: its own end
            out.status = server.ended()
    finally:
        ACTIVE.discard(pid)
        os.close(status_fd)
        mine.close()
        out.log = _tail(log)
        log.close()
    out.seconds = time.monotonic() - t0
    return out


def _collect(sock, pid, out: Outcome, on_message, stop_requested, grace_s) -> None:
    reader = channel.Reader()
    forwarded, stop_sent, deadline = 0, False, None
    with signals.held(out.arrived):
        while True:
            for signum in signals.pending()[forwarded:]:
                forwarded += 1
                _kill(pid, signum)
                deadline = deadline or time.monotonic() + grace_s
            if not stop_sent and stop_requested is not None and stop_requested():
                stop_sent = True
                try:
                    channel.send(sock.fileno(), ("stop",))
                except OSError:
                    pass
                deadline = deadline or time.monotonic() + grace_s
            if deadline is not None and time.monotonic() > deadline and not out.killed_after_grace:
                out.killed_after_grace = True
                _kill(pid, signal.SIGKILL)
            ready, _, _ = select.select([sock], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = sock.recv(1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                return
            for message in reader.feed(chunk):
                kind = message[0]
                if kind == "done":
                    out.value, out.returned = message[1], True
                elif kind == "error":
                    out.error, out.returned = message[1], True
                elif on_message is not None:
                    try:
                        on_message(message)
                    except KeyboardInterrupt as exc:   # raised by an observer (a widget, a test): a Ctrl-C now
                        name = signals.name_of(exc) or "SIGINT"
                        if name not in out.arrived:
                            out.arrived.append(name)
                        _kill(pid, getattr(signal, name, signal.SIGINT))
                        deadline = deadline or time.monotonic() + grace_s


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _tail(log) -> list:
    try:
        size = log.seek(0, os.SEEK_END)
        log.seek(max(0, size - _LOG_TAIL_BYTES))
        text = log.read().decode(errors="replace")
    except OSError:
        return []
    return [ln for ln in text.splitlines() if ln.strip()][-LOG_TAIL_LINES:]
