"""`--profile`: the trial's worker samples its own threads with `perf` while each measured phase runs.

One `perf record` per trial, started (disabled) when the worker starts its phases, attached to the worker's
process (every thread: the loop's and the engine's own, those started later too), enabled over each measured
phase through perf's control fifo and disabled after (`perf` acknowledges each, so nothing is missed or extra);
samples on CLOCK_MONOTONIC, so that each phase keeps only those between its warm-up's end and its end.  The event
is the software cpu-clock (this VM has no hardware counters; a machine that has them gives the same figures), at
RATE_HZ a thread, with DWARF unwinding of STACK_BYTES of each sampled stack: Debian's libraries have no frame
pointers, so walking frames would stop at the first of their functions.  The stacks are read back with
`perf script` after the trial and folded (kvlab.results.profile); the record keeps them (params["profile"]).
The cost is measured by benchmarks/profile_cost.py and stated in docs/profile.md.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ... import errors

# samples a second on each thread (a prime, so as not to beat with periodic work); $KVLAB_PROFILE_HZ for another
# (benchmarks/profile_cost.py measures the cost at each)
RATE_HZ = int(os.environ.get("KVLAB_PROFILE_HZ") or 99)
STACK_BYTES = 8192       # of each sampled stack, copied for DWARF unwinding
EVENT = "cpu-clock"
UNWIND = f"DWARF unwinding of {STACK_BYTES // 1024} KiB of stack"
ACK_TIMEOUT_S = 10.0


def check() -> None:
    """Before anything runs: perf is there and may sample this user's processes."""
    if shutil.which("perf") is None:
        raise errors.SpecError("profile=True (--profile) needs perf, which is not on PATH: scripts/setup.sh installs "
                               "it (Debian package linux-perf)")
    try:
        level = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    except (OSError, ValueError):
        level = 2
    if os.geteuid() != 0 and level > 1:
        raise errors.SpecError(f"profile=True (--profile): kernel.perf_event_paranoid is {level}, which lets perf "
                               "sample only as root; run as root or lower it to 1 (sysctl kernel.perf_event_paranoid=1)")


class Profiler:
    """perf record on this process, enabled around each measured phase."""

    def __init__(self, pid: int | None = None):
        self.pid = pid or os.getpid()
        self.folder = Path(tempfile.mkdtemp(prefix="kvlab-profile-"))
        self.data = self.folder / "perf.data"
        ctl, ack = self.folder / "ctl", self.folder / "ack"
        os.mkfifo(ctl)
        os.mkfifo(ack)
        self.log = open(self.folder / "perf.log", "wb")
        self.proc = subprocess.Popen(
            ["perf", "record", "-e", EVENT, "-F", str(RATE_HZ), "--call-graph", f"dwarf,{STACK_BYTES}", "-k", "mono",
             "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-p", str(self.pid), "-o", str(self.data), "-q"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self._ack = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
        deadline = time.monotonic() + ACK_TIMEOUT_S
        while True:   # the control fifo opens for writing once perf has opened it to read
            try:
                self._ctl = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.close()
                    raise errors.KvlabError(f"perf record did not start: {self._log_tail()}") from None
                time.sleep(0.005)
        self.windows: dict = {}

    def _say(self, word: str) -> None:
        os.write(self._ctl, word.encode() + b"\n")
        deadline = time.monotonic() + ACK_TIMEOUT_S
        got = b""
        while b"ack" not in got:
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise errors.KvlabError(f"perf did not acknowledge '{word}': {self._log_tail()}")
            ready, _, _ = select.select([self._ack], [], [], min(left, 0.5))
            if ready:
                got += os.read(self._ack, 64)

    def enable(self) -> None:
        self._say("enable")

    def disable(self) -> None:
        self._say("disable")

    def keep(self, name: str, start_ns: int, end_ns: int) -> None:
        """A measured phase's window on CLOCK_MONOTONIC."""
        self.windows[name] = (start_ns / 1e9, end_ns / 1e9)

    def stacks(self) -> dict:
        """perf stopped, its samples read back and folded per window: {name: {stack: samples}}."""
        from ...results import profile as prof
        self.stop()
        got = subprocess.run(["perf", "script", "-i", str(self.data), "-F", "comm,tid,time,ip,sym,dso"],
                             capture_output=True, text=True, errors="replace")
        if got.returncode != 0:
            raise errors.KvlabError(f"perf script failed: {got.stderr.strip()[-400:]}")
        return prof.fold(got.stdout, self.windows)


    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        for fd in (getattr(self, "_ctl", -1), getattr(self, "_ack", -1)):
            if fd >= 0:
                os.close(fd)
        self._ctl = self._ack = -1

    def close(self) -> None:
        if self.proc.poll() is None or getattr(self, "_ctl", -1) >= 0:
            self.stop()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)   # the folder this profiler made

    def _log_tail(self) -> str:
        try:
            self.log.flush()
            return (self.folder / "perf.log").read_text(errors="replace").strip()[-400:] or "no output"
        except OSError:
            return "no output"


def engine_libraries(pid: int | None = None) -> list:
    """The shared objects mapped into the worker that are neither libc's kin, Python's nor kvlab's extension: the
    engine's libraries and what they bring (compression), and an engine version kvlab built (its object)."""
    from ...results import profile as prof
    names = []
    try:
        maps = Path(f"/proc/{pid or os.getpid()}/maps").read_text()
    except OSError:
        return names
    for line in maps.splitlines():
        path = line.split(None, 5)[-1] if line.count(" ") >= 5 else ""
        if ".so" not in path or "site-packages" in path or "/lib-dynload/" in path:
            continue
        lib = prof.library_name(path)
        if prof.LIBC.match(lib) or prof.PYTHON.match(lib) or (prof.KVLAB.match(lib) and "_built" not in path):
            continue
        if lib not in names:
            names.append(lib)
    return names
