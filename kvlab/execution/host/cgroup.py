"""Memory-bounded runs: a memory cgroup that kvlab creates, puts one benchmark process in, reads the
peak of, and removes.  The page cache a process faults in is charged to its cgroup, so the engine's
cache and the page cache together stay under the limit ("larger than RAM" on a machine with RAM).

cgroup v2 (memory.max, memory.peak, swap off with memory.swap.max) or v1 (memory.limit_in_bytes,
memory.max_usage_in_bytes, memory.memsw.limit_in_bytes where swap accounting is on), whichever the
machine has; the new group is made inside the caller's own, so the caller's limits still hold.
Where cgroups cannot be made (no controller, not root, a read-only /sys/fs/cgroup), a clear
error: a memory-bounded run never runs unbounded.
"""
from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from ... import errors
from ...engines.settings import size_in_bytes

ROOT = Path("/sys/fs/cgroup")
BASELINE = 64 << 20     # the benchmark process before any engine: Python, numpy, kvlab (~46 MiB measured)
MIN_LIMIT = 96 << 20    # below this the process and an engine do not fit


def parse_size(value) -> int:
    """Bytes from 536870912, '512M', '512MiB', '2G', '1.5g' (the model's size_in_bytes), at least MIN_LIMIT."""
    n = size_in_bytes(value)
    if n is None and isinstance(value, bool):
        raise errors.SpecError(f"memory_limit={value!r}: allowed: bytes, or a size such as 512M or 2G")
    if n is None:
        raise errors.SpecError(f"memory_limit={value!r} is not a size; allowed: bytes, or a number with K, M, G "
                               "or T (512M, 2G)")
    if n < MIN_LIMIT:
        raise errors.SpecError(f"memory_limit={value!r} is below {MIN_LIMIT >> 20} MiB; allowed: at least "
                               f"{MIN_LIMIT >> 20} MiB (the benchmark process itself needs that)")
    return n


def _version_and_parent() -> tuple[int, Path]:
    """(1 or 2, the directory of this process's own memory cgroup), or a clear error."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError as exc:
        raise errors.KvlabError(f"memory_limit: cannot read /proc/self/cgroup ({exc.strerror}); cgroups are not "
                                "available here, so a memory-bounded run is refused") from None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(",") and (ROOT / "memory").is_dir():
            return 1, ROOT / "memory" / path.lstrip("/")
    if (ROOT / "cgroup.controllers").exists():
        path = next((ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")), "/")
        parent = ROOT / path.lstrip("/")
        if "memory" not in (parent / "cgroup.subtree_control").read_text().split() and parent != ROOT:
            # v2: a child gets the memory controller only if the parent hands it down
            try:
                (parent / "cgroup.subtree_control").write_text("+memory")
            except OSError as exc:
                raise errors.KvlabError(f"memory_limit: cgroup v2 at {parent} does not delegate the memory "
                                        f"controller ({exc.strerror}); a memory-bounded run is refused") from None
        return 2, parent
    raise errors.KvlabError("memory_limit: this machine has no memory cgroup controller (neither cgroup v1's "
                            "memory hierarchy nor cgroup v2); a memory-bounded run is refused")


class MemoryCgroup:
    """A memory cgroup of `limit` bytes, made on entry and removed on exit (only the one made here)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.version, parent = _version_and_parent()
        self.parent = parent
        self.path = parent / f"kvlab-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.created = False

    def __enter__(self) -> "MemoryCgroup":
        try:
            self.path.mkdir()
            self.created = True
            if self.version == 1:
                (self.path / "memory.limit_in_bytes").write_text(str(self.limit))
                swap = self.path / "memory.memsw.limit_in_bytes"
                if swap.exists():   # memory + swap, so the limit cannot be met by swapping
                    swap.write_text(str(self.limit))
            else:
                (self.path / "memory.max").write_text(str(self.limit))
                if (self.path / "memory.swap.max").exists():
                    (self.path / "memory.swap.max").write_text("0")
        except OSError as exc:
            self._remove()
            raise errors.KvlabError(f"memory_limit: cannot make a memory cgroup at {self.path} ({exc.strerror}; "
                                    "kvlab needs root or a delegated cgroup); a memory-bounded run is "
                                    "refused") from None
        return self

    def join(self, pid: int | None = None):
        """Move a process (default: the caller) into the group; a preexec_fn for subprocess."""
        (self.path / "cgroup.procs").write_text(str(pid or os.getpid()))

    def leave(self, pid: int | None = None):
        """Move a process (default: the caller) back to the group it came from.  The memory it was charged
        while inside stays with this group until the group is removed (cgroup v1 and v2 move no charges)."""
        (self.parent / "cgroup.procs").write_text(str(pid or os.getpid()))

    def limit_set(self) -> int | None:
        """The limit as the kernel holds it (rounded down to whole pages)."""
        name = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
        try:
            return int((self.path / name).read_text())
        except (OSError, ValueError):
            return None

    def peak(self) -> int | None:
        return peak_of(self.path, self.version)

    def oom_kills(self) -> int | None:
        """How many processes the kernel's OOM killer ended in the group (v1 memory.oom_control, v2 memory.events:
        oom_kill); None where the kernel does not say."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        try:
            for line in (self.path / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return None

    def facts(self) -> dict:
        return {"memory_limit_bytes": self.limit, "cgroup_version": self.version, "cgroup_peak_bytes": self.peak(),
                "cgroup": str(self.path)}

    def _remove(self):
        if not self.created:
            return
        for _ in range(50):   # the process just left: the kernel may take a moment to let go
            try:
                self.path.rmdir()
                self.created = False
                return
            except OSError:
                time.sleep(0.05)

    def __exit__(self, *exc):
        self._remove()


def peak_of(path, version: int) -> int | None:
    """The peak a memory cgroup at `path` recorded (v1 memory.max_usage_in_bytes, v2 memory.peak); a trial's worker
    reads its own before it hands its records back."""
    name = "memory.max_usage_in_bytes" if version == 1 else "memory.peak"
    try:
        return int((Path(path) / name).read_text())
    except (OSError, ValueError):
        return None


def enclosing_limit() -> int | None:
    """The memory limit of the cgroup this process runs in (None: none, or none can be read)."""
    try:
        version, own = _version_and_parent()
    except (errors.KvlabError, OSError):
        return None
    name = "memory.limit_in_bytes" if version == 1 else "memory.max"
    try:
        text = (own / name).read_text().strip()
    except OSError:
        return None
    return None if text == "max" or not text.isdigit() or int(text) >= 1 << 60 else int(text)


def unavailable(limit: int = MIN_LIMIT) -> str | None:
    """Why a memory cgroup of `limit` bytes cannot be made here, or None if it can."""
    try:
        with MemoryCgroup(limit):
            return None
    except errors.KvlabError as exc:
        return str(exc)


def evict_page_cache(path) -> int:
    """Drop the page cache of every file under `path` (a database kvlab made), so a memory-bounded
    phase starts cold; returns the files advised."""
    n = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)   # dirty pages cannot be dropped
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            except OSError:
                pass
            finally:
                os.close(fd)
    return n
