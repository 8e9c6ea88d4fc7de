"""forgetfs: a FUSE file system that forgets what was never synced (cython_ext/tools/forgetfs.c), and
its launcher.  `Mount(backing)` mounts it over a directory; writes through the mount stay in the file
system's own buffers until fsync/fdatasync, created/renamed/removed entries stay pending until their
directory is fsynced; `cut()` is a power cut (every pending change lost, or `loss="random"`: a seeded
random half of the pending pages kept, or `"torn"`: the newest pending write torn at a 512-byte sector),
then the backing directory holds what a disk would hold after the power came back.  `close()` is a
clean unmount (everything made durable).  `names="ext4"`: an fsync of any file also makes every pending
entry durable, as ext4's journal does (the default, "posix", waits for the directory's fsync).

The helper is compiled on first use (gcc and libfuse3-dev, from scripts/setup.sh) into a cache folder
keyed by its source's hash.  The mount is always removed: the helper watches a pipe from this process
and unmounts itself when it is gone (a SIGKILLed parent included); `close()` lazily unmounts what a
killed helper left.  For crash tests only: it serialises every request and is no place for a benchmark
(`mounted_on_forgetfs(path)` says whether a path is on one).
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ... import errors
from . import toolbuild

SOURCE = toolbuild.TOOLS / "forgetfs.c"
LOSS_MODELS = ("all", "random", "torn")
NAME_MODELS = ("posix", "ext4")   # when a new, renamed or removed entry is durable (forgetfs.c)
FAULTS = ("fsync-eio", "write-eio", "enospc")   # what forgetfs can make fail (forgetfs.c's --fault)
AFTER_ERROR = ("keep", "evict", "late", "drop")   # fsync-eio: the failed pages stay in the cache until the cut
#     (ext4, XFS), or until the file is closed (the cache evicted them); late: as keep, the failing fsync returns success
#     and the next one EIO (ext4 data=journal); drop: the file reverts (btrfs)


@dataclass(frozen=True)
class Fault:
    """A fault forgetfs injects (forgetfs.c's header says what each does)."""
    kind: str
    at: int = 1                    # the at'th matching fsync (fsync-eio) or write (write-eio)
    on: str | None = None          # a POSIX extended regular expression the file's path must match (None: every file)
    after: str = "keep"            # fsync-eio: keep, evict, late or drop (AFTER_ERROR)
    enospc_bytes: int = 1 << 20    # enospc: the growth allowed before writes fail
    armed_later: bool = False      # no fault until Mount.arm() (the crash test: once the engine has opened)

    def __post_init__(self):
        if self.kind not in FAULTS:
            raise errors.SpecError(f"fault {self.kind!r} is unknown; allowed: {', '.join(FAULTS)}")
        if self.at < 1:
            raise errors.SpecError(f"fault_at must be 1 or more (the first matching call is 1), got {self.at}")
        if self.after not in AFTER_ERROR:
            raise errors.SpecError(f"after_error {self.after!r} is unknown; allowed: {', '.join(AFTER_ERROR)}")
        if self.enospc_bytes < 0:
            raise errors.SpecError(f"enospc_bytes must be 0 or more, got {self.enospc_bytes}")
        if self.on is not None:
            said = posix_ere_error(self.on)
            if said:
                raise errors.SpecError(f"fault_on {self.on!r} is not a POSIX extended regular expression (forgetfs "
                                       f"matches it with regcomp against the file's path in the database directory, "
                                       f"as first opened): {said}")

    def argv(self) -> list:
        return (["--fault", self.kind, "--fault-at", str(self.at), "--after-error", self.after, "--enospc-bytes",
                 str(self.enospc_bytes)] + (["--fault-on", self.on] if self.on else [])
                + (["--fault-armed-later"] if self.armed_later else []))

    def words(self) -> str:
        where = f" on {self.on}" if self.on else ""
        if self.kind == "enospc":
            return f"ENOSPC after {self.enospc_bytes:,} bytes{where}"
        call = "fsync" if self.kind == "fsync-eio" else "write"
        return (f"EIO at {call} #{self.at}{where}" + (f", {self.after}" if self.kind == "fsync-eio" else ""))


def posix_ere_error(pattern: str) -> str | None:
    """Why `pattern` is no POSIX extended regular expression as glibc's regcomp takes it (forgetfs compiles it so),
    or None.  Python's \\d and \\D are refused: POSIX has none (glibc would read them as the letters)."""
    if re.search(r"(?<!\\)\\[dD]", pattern):
        return "\\d and \\D are Python's, not POSIX's: use [0-9] and [^0-9]"
    libc = ctypes.CDLL(None)
    regex = ctypes.create_string_buffer(256)    # a regex_t (64 bytes on glibc x86-64), with room
    rc = libc.regcomp(regex, pattern.encode(), 1 | 8)   # REG_EXTENDED | REG_NOSUB, as forgetfs.c
    if rc == 0:
        libc.regfree(regex)
        return None
    message = ctypes.create_string_buffer(200)
    libc.regerror(rc, regex, message, len(message))
    return message.value.decode(errors="replace")


FSTYPE = "fuse.forgetfs"


class ForgetfsUnavailable(errors.KvlabError):
    """FUSE or the helper's build tools are missing here: the message says what and how to get it."""


def unavailable_reason() -> str | None:
    """Why a forgetting mount cannot be made here, or None when it can."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing (no FUSE in this kernel or container: a container needs --device /dev/fuse)"
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        return "/dev/fuse is not readable and writable by this user (power-loss tests mount a file system: run as root)"
    if os.geteuid() != 0 and not shutil.which("fusermount3"):
        return "fusermount3 is missing: install Debian's fuse3 (scripts/setup.sh does)"
    try:
        executable()
    except ForgetfsUnavailable as exc:
        return str(exc)
    return None


def require() -> None:
    reason = unavailable_reason()
    if reason:
        raise ForgetfsUnavailable(f"power-loss tests need FUSE: {reason}")


_built: Path | None = None
_build_lock = threading.Lock()


def executable() -> Path:
    """The compiled helper, built from SOURCE on first use."""
    global _built
    with _build_lock:
        if _built is not None and _built.exists():
            return _built
        if not shutil.which("pkg-config"):
            raise ForgetfsUnavailable("pkg-config is missing (it finds libfuse3's headers): install Debian's "
                                      "pkg-config, libfuse3-dev and fuse3 (scripts/setup.sh does)")
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True, text=True)
        if flags.returncode != 0:
            raise ForgetfsUnavailable("libfuse3's headers are missing (pkg-config fuse3 failed): install Debian's "
                                      "libfuse3-dev and fuse3 (scripts/setup.sh does)")
        _built = toolbuild.compiled(SOURCE, "forgetfs", [*flags.stdout.split(), "-lpthread"], ForgetfsUnavailable)
        return _built


def mounted_on_forgetfs(path) -> bool:
    """Whether `path` lies on a forgetfs mount (a benchmark pointed there measures the helper)."""
    path = os.path.realpath(path)
    best, fstype = "", None
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                point = left.split()[4].encode().decode("unicode_escape")
                if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
                    best, fstype = point, right.split()[0]
    except OSError:
        return False
    return fstype == FSTYPE


def _is_mounted(point: str) -> bool:
    try:
        with open("/proc/self/mountinfo") as f:
            return any(line.split()[4].encode().decode("unicode_escape") == point for line in f)
    except OSError:
        return False


def _lazy_unmount(point: str) -> None:
    """Detach a mount whatever state its server is in (a killed helper leaves 'not connected')."""
    for cmd in (["fusermount3", "-u", "-z", "-q", point], ["umount", "-l", point]):
        if shutil.which(cmd[0]) and subprocess.run(cmd, capture_output=True).returncode == 0:
            return


class Mount:
    """A forgetting mount of `backing` on `mountpoint` (by default a new temporary directory).

    with Mount(backing, loss="torn", seed=3) as m:   # m.path: write here
        ...
        summary = m.cut()                            # the power cut; m.path is gone afterwards
    """

    def __init__(self, backing, mountpoint=None, loss: str = "all", seed: int = 0, log=None, names: str = "posix",
                 ready_s: float = 20.0, fault: Fault | None = None):
        if loss not in LOSS_MODELS:
            raise errors.SpecError(f"forgetfs: loss model {loss!r} is unknown; allowed: {', '.join(LOSS_MODELS)}")
        if names not in NAME_MODELS:
            raise errors.SpecError(f"forgetfs: names model {names!r} is unknown; allowed: {', '.join(NAME_MODELS)}")
        require()
        self.backing = Path(backing).resolve()
        if not self.backing.is_dir():
            raise errors.SpecError(f"forgetfs: {self.backing} is not a directory")
        self._own_point = mountpoint is None
        self.path = Path(tempfile.mkdtemp(prefix="kvlab-forgetfs-")) if mountpoint is None else Path(mountpoint)
        self.loss, self.seed, self.log = loss, seed, log
        self.summary: dict | None = None
        self._watch_r, self._watch_w = os.pipe()
        os.set_inheritable(self._watch_w, False)
        cmd = [str(executable()), "--loss", loss, "--names", names, "--seed", str(seed), "--watch-fd",
               str(self._watch_r)]
        if log:
            cmd += ["--log", str(log)]
        if fault is not None:
            cmd += fault.argv()
        cmd += [str(self.backing), str(self.path)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     pass_fds=(self._watch_r,), text=True)
        os.close(self._watch_r)
        ready = threading.Event()
        first: list = []

        def read_ready():
            first.append(self.proc.stdout.readline())
            ready.set()
        threading.Thread(target=read_ready, daemon=True).start()
        if not ready.wait(ready_s) or first[0].strip() != "ready":
            self._stop(signal.SIGTERM)
            err = self.proc.stderr.read().strip() if self.proc.poll() is not None else ""
            self._cleanup()
            raise ForgetfsUnavailable(f"forgetfs did not mount {self.backing} on {self.path}: {err or 'no answer'}")

    def arm(self) -> None:
        """A fault made with armed_later starts counting now: the signal, then a request forgetfs must answer (the
        lookup of a name that is not there), which it reads only once the signal has been handled."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR2)
            os.path.exists(self.path / f".kvlab-armed-{os.getpid()}-{time.monotonic_ns()}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _stop(self, sig) -> dict | None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self.stderr = err
        for line in out.splitlines():
            if line.startswith("{"):
                return json.loads(line)
        return None

    def cut(self) -> dict:
        """The power cut: pending state dropped (as the loss model says), unmounted.  Returns the helper's
        summary: pending files and pages, pages kept, the torn write, entries undone."""
        if self.summary is not None:
            raise errors.SpecError("forgetfs: this mount was already cut or closed")
        self.summary = self._stop(signal.SIGUSR1)
        self._cleanup()
        if not self.summary or self.summary.get("event") != "cut":
            raise errors.EngineError(f"forgetfs: the power cut did not complete (exit {self.proc.returncode}): "
                                     f"{(self.stderr or '').strip()[-800:]}")
        return self.summary

    def close(self) -> None:
        """A clean unmount: everything pending is made durable (nothing, after a cut)."""
        if self.summary is None:
            self.summary = self._stop(signal.SIGTERM) or {"event": "lost"}
        self._cleanup()

    def _cleanup(self):
        if self._watch_w is not None:
            os.close(self._watch_w)
            self._watch_w = None
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        point = os.path.join(os.path.realpath(self.path.parent), self.path.name)   # no stat of a dead mount
        if _is_mounted(point):
            _lazy_unmount(point)
        if self._own_point:
            try:
                self.path.rmdir()
            except OSError:
                pass
