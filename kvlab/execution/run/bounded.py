"""A memory-bounded run in a child process of its own, so that going over the budget ends the run, not the command.

The `kvlab` command holds a run with a memory budget in a memory cgroup of that size, page cache included
(runner._held_to).  Were the command's own process in it, the kernel's OOM killer would end the whole command: a
`kvlab reproduce` campaign would lose every step after the one that ran over.  Here the command makes the cgroup,
forks, and only the child joins it and runs the trials; each result comes back over a pipe as it ends (the
command prints and stores it), then the trials.  A child the OOM killer ends is a RunOutOfMemory error naming the
budget, the peak and the likely cause; what it left (a temporary database) is removed, and the command goes on.

Signals: the child runs in a process group of its own, so that a terminal's Ctrl-C reaches the command alone; the
command forwards each stop signal to the child (whose run stops as an unbounded run does, with a partial result)
and keeps it, so the command's exit status says it was stopped.  A command that is killed takes the child with it
at once (PR_SET_PDEATHSIG, SIGKILL), as one process would have gone: what is left is `kvlab clean`'s.  The child
closes the files it inherited (but the pipe, the standard streams and those it is told to keep, a trace being
recorded): a lock the command holds (a compare's job folder) is the command's alone, and goes with it.
"""
from __future__ import annotations

import ctypes
import os
import pickle
import select
import signal
import struct
import sys
from typing import Callable

from ... import _signals as signals
from ... import errors
from ..dbfiles import leftovers
from ..host import cgroup

_HEAD = struct.Struct("<Q")
_PR_SET_PDEATHSIG = 1


class RunOutOfMemory(errors.KvlabError):
    """A bounded run that the kernel's OOM killer ended: the engine, with its page cache, needed more than its
    memory budget."""


def run(body: Callable[[Callable], list], on_result: Callable | None, budget: dict, keep=()) -> tuple[list, list]:
    """`body(send)` (the trials; `send` takes each result as it ends) in a child held to `budget["bytes"]` in a
    memory cgroup, with the files `keep` (descriptors) besides its pipe and standard streams; returns (the trials'
    results, the stop signals that arrived, by name).  `budget` gets the cgroup's fields.  Raises what the child
    raised, or RunOutOfMemory."""
    cg = cgroup.MemoryCgroup(budget["bytes"]).__enter__()
    try:
        budget.update(cgroup=str(cg.path), cgroup_version=cg.version, cgroup_limit_bytes=cg.limit_set(),
                      covers="engine and page cache (the run in a child process of its own)")
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:   # the child: never returns
            os.close(read_end)
            _child(body, write_end, cg, (write_end, *keep))
        os.close(write_end)
        arrived: list[str] = []
        try:
            messages, status = _collect(pid, read_end, on_result, arrived)
        finally:
            os.close(read_end)
        budget["cgroup_peak_bytes"] = cg.peak()
        return _outcome(pid, messages, status, cg, budget), arrived
    finally:
        cg.__exit__(None, None, None)


def _child(body, fd: int, cg, keep) -> None:
    code = 0
    try:
        os.setpgid(0, 0)
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        _close_inherited(keep)
        cg.join()
        with signals.stopping():
            trials = body(lambda b: _send(fd, ("result", b)))
        _send(fd, ("trials", trials))
    except BaseException as exc:   # everything goes back to the command, which raises it
        code = 1
        try:
            _send(fd, ("error", exc))
        except Exception:
            _send(fd, ("error", errors.KvlabError(f"{type(exc).__name__}: {exc}")))
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _close_inherited(keep) -> None:
    for name in os.listdir("/proc/self/fd"):
        n = int(name)
        if n > 2 and n not in keep:
            try:
                os.close(n)
            except OSError:   # the listing's own descriptor, gone already
                pass


def _send(fd: int, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEAD.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _collect(pid: int, fd: int, on_result, arrived: list) -> tuple[list, int]:
    """The child's messages until it closes the pipe (each result to on_result as it comes), then its wait
    status.  Stop signals that arrive meanwhile are forwarded to the child and kept in `arrived`."""
    buf = bytearray()
    messages = []
    forwarded = 0
    with signals.held(arrived):
        while True:
            for signum in signals.pending()[forwarded:]:
                forwarded += 1
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    pass
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            buf += chunk
            while len(buf) >= _HEAD.size and len(buf) >= _HEAD.size + _HEAD.unpack_from(buf)[0]:
                n = _HEAD.unpack_from(buf)[0]
                message = pickle.loads(bytes(buf[_HEAD.size:_HEAD.size + n]))
                del buf[:_HEAD.size + n]
                if message[0] == "result" and on_result is not None:
                    on_result(message[1])
                messages.append(message)
        _, status = os.waitpid(pid, 0)
    return messages, status


def _outcome(pid: int, messages: list, status: int, cg, budget: dict) -> list:
    for kind, payload in messages:
        if kind == "trials":
            return payload
        if kind == "error":
            raise payload
    _remove_left(pid)
    peak = budget.get("cgroup_peak_bytes")
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL and (cg.oom_kills() or 0) > 0:
        raise RunOutOfMemory(
            f"the run went over its memory budget of {_mib(budget['bytes'])} (peak {_mib(peak)}) and the kernel's "
            "OOM killer ended it (its memory cgroup counts the engine's own memory and its page cache); "
            + _likely_cause(budget))
    how = (f"signal {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
           else f"exit status {os.WEXITSTATUS(status)}")
    raise errors.KvlabError(f"the memory-bounded run's process ended by {how} before it finished (budget "
                            f"{_mib(budget['bytes'])}, peak {_mib(peak)})")


def _likely_cause(budget: dict) -> str:
    given = budget.get("given_wins") or {}
    if given:
        over = ", ".join(f"{k} {v['given']} (the budget gave {_mib(v['budget'])})" for k, v in given.items())
        return (f"settings given win over the budget's split: {over}; leave them to the budget, or give a larger "
                "--memory")
    split = ", ".join(f"{k} {_mib(v)}" for k, v in (budget.get("split") or {}).items())
    return (f"the engine needed more than the budget beside {'its split (' + split + ')' if split else 'its data'}; "
            "give a larger --memory")


def _remove_left(pid: int) -> None:
    """The temporary databases a killed child left (kvlab's own, named by its pid); a --db is the user's."""
    for left in leftovers.orphans():
        if left.pid == str(pid) and left.what == "temporary database":
            leftovers.remove(left)


def _mib(n) -> str:
    return "?" if n is None else f"{n / 2**20:,.0f} MiB"
