"""Per-phase accounting: CPU, context switches, I/O, sizes, memory, and the machine.

Everything here reads the kernel's counters from outside the native loop:
getrusage(RUSAGE_SELF), /proc/self/io, /proc/diskstats and /proc/self/status,
so measuring adds nothing to the hot loop.  Per-thread CPU (RUSAGE_THREAD) is
taken by the native threads themselves (kv_driver.h).

Units: seconds, bytes, KiB only where named `_kib`; per-op figures are per
operation of the phase.
"""
from __future__ import annotations

import os
import platform
import resource
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SECTOR = 512


def _proc_io() -> dict:
    try:
        out = {}
        for line in Path("/proc/self/io").read_text().splitlines():
            k, _, v = line.partition(":")
            out[k.strip()] = int(v)
        return out
    except OSError:
        return {}


def _status_kib(*names) -> dict:
    out = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in names:
                out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def reset_peak_rss() -> bool:
    """Reset VmHWM so the next peak is this phase's (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def block_device(path) -> tuple[str | None, str]:
    """(diskstats name, how it was found) of the device holding path, or (None, why not)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return None, f"cannot stat {path}: {exc}"
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    sys_dev = Path(f"/sys/dev/block/{major}:{minor}")
    if not sys_dev.exists():
        return None, (f"device {major}:{minor} under {path} is not a block device "
                      "(tmpfs, overlay or a virtual filesystem): no per-device I/O counters")
    name = sys_dev.resolve().name
    return name, f"/sys/dev/block/{major}:{minor}"


def _diskstats(name: str | None) -> dict | None:
    if not name:
        return None
    try:
        for line in Path("/proc/diskstats").read_text().splitlines():
            f = line.split()
            if len(f) >= 10 and f[2] == name:
                return {"reads": int(f[3]), "sectors_read": int(f[5]), "writes": int(f[7]),
                        "sectors_written": int(f[9])}
    except OSError:
        pass
    return None


@dataclass
class Snapshot:
    wall_ns: int
    utime: float
    stime: float
    nvcsw: int
    nivcsw: int
    io: dict
    disk: dict | None
    db_bytes: int | None = None   # the database's allocated size, where the caller asked (interval samples)


def snapshot(device: str | None = None, db_path=None) -> Snapshot:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    db_bytes = None
    if db_path is not None:
        from ..dbfiles.dbdir import size_on_disk
        db_bytes = size_on_disk(db_path)
    return Snapshot(time.monotonic_ns(), ru.ru_utime, ru.ru_stime, ru.ru_nvcsw, ru.ru_nivcsw, _proc_io(),
                    _diskstats(device), db_bytes)


def log_mark(path) -> tuple:
    """Where an engine's info log (RocksDB's and LevelDB's LOG) ends now: (inode, size), (None, 0) if absent."""
    try:
        st = os.stat(path)
        return st.st_ino, st.st_size
    except OSError:
        return None, 0


def log_since(path, mark: tuple) -> tuple[str, tuple]:
    """(the whole lines an engine's info log gained since `mark` (log_mark), the mark after them); a log replaced
    since (an engine reopened: the old one renamed LOG.old...) is read from its start.  ('', mark) when there is
    none."""
    inode, offset = mark
    try:
        with open(path, "rb") as f:
            now = os.fstat(f.fileno()).st_ino
            if now != inode:
                offset = 0
            f.seek(offset)
            data = f.read()
    except OSError:
        return "", mark
    end = data.rfind(b"\n") + 1
    return data[:end].decode("utf-8", "replace"), (now, offset + end)


def delta(before: Snapshot, after: Snapshot) -> dict:
    """Counter differences between two snapshots (process-wide: engine background
    threads included, as /usr/bin/time reports them in seed 001)."""
    wall = (after.wall_ns - before.wall_ns) / 1e9
    user, sys_ = after.utime - before.utime, after.stime - before.stime
    io = {k: after.io.get(k, 0) - before.io.get(k, 0) for k in ("rchar", "wchar", "read_bytes", "write_bytes",
                                                               "syscr", "syscw")}
    d = {"wall_s": wall, "cpu_user_s": user, "cpu_sys_s": sys_,
         "cpu_pct": (user + sys_) / wall * 100 if wall > 0 else None,
         "ctx_voluntary": after.nvcsw - before.nvcsw, "ctx_involuntary": after.nivcsw - before.nivcsw,
         "io_read_bytes": io["read_bytes"], "io_write_bytes": io["write_bytes"],
         "io_rchar": io["rchar"], "io_wchar": io["wchar"]}
    if before.disk is not None and after.disk is not None:
        d["disk_reads"] = after.disk["reads"] - before.disk["reads"]
        d["disk_writes"] = after.disk["writes"] - before.disk["writes"]
        d["disk_read_bytes"] = (after.disk["sectors_read"] - before.disk["sectors_read"]) * SECTOR
        d["disk_write_bytes"] = (after.disk["sectors_written"] - before.disk["sectors_written"]) * SECTOR
    return d


def mapped_resident(under) -> int:
    """Resident bytes of the process's mappings of files under `under` (/proc/self/smaps): the pages of the
    database's own files that the process maps (LMDB's map, LevelDB's and RocksDB's mmapped tables), which the
    database's size already counts.  A deleted file's mapping is not the database's any more (its size no longer
    counts it).  0 where smaps cannot be read."""
    root = os.path.realpath(under).rstrip("/") + "/"
    total, ours = 0, False
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                head = line.split(None, 5)
                if len(head) >= 5 and "-" in head[0] and not head[0].endswith(":"):   # a mapping's first line
                    name = head[5].rstrip("\n") if len(head) == 6 else ""
                    ours = name.startswith(root) and not name.endswith(" (deleted)")
                elif ours and head and head[0] == "Rss:":
                    total += int(head[1]) * 1024
    except (OSError, ValueError):
        return 0
    return total


def seed_total(db_bytes: int | None, process_bytes: int | None) -> int | None:
    """Seed 001's "Total Size" (RAM the benchmark used): the database's size plus the process's memory that the
    database's size does not already count (process_size_bytes).  For LMDB, whose data is the process's file-backed
    map, it comes to about the process's size, as the seed's table has it."""
    if db_bytes is None or process_bytes is None:
        return None
    return db_bytes + process_bytes


def phase_record(before: Snapshot, after: Snapshot, ops: int, db_path, device_note: str,
                 peak_scope: str) -> dict:
    """The seed-001 load row and the LinkBench per-query figures for one phase."""
    from ..dbfiles.dbdir import disk_usage
    d = delta(before, after)
    mem = _status_kib("VmRSS", "VmHWM", "RssAnon", "RssFile")
    db_size, preallocated = disk_usage(db_path) if db_path else (None, None)
    peak = mem.get("VmHWM", 0) * 1024
    # the process's own memory for seed 001's total: its peak less the resident pages of the database's files it
    # maps, which the DB size counts already (its libraries' pages stay: the seed's process size is /usr/bin/time's)
    process = max(peak - (mapped_resident(db_path) if db_path else 0), 0)
    d.update({
        "ops": ops,
        "db_size_bytes": db_size, "db_preallocated_bytes": preallocated,
        "process_peak_rss_bytes": peak, "process_peak_rss_scope": peak_scope,
        "process_rss_bytes": mem.get("VmRSS", 0) * 1024, "process_anon_rss_bytes": mem.get("RssAnon", 0) * 1024,
        "process_size_bytes": process,
        "total_size_bytes": seed_total(db_size, process),
        "io_kb_read_per_op": d["io_read_bytes"] / 1024 / ops if ops else None,
        "io_kb_written_per_op": d["io_write_bytes"] / 1024 / ops if ops else None,
    })
    if "disk_reads" in d:
        d["disk_reads_per_op"] = d["disk_reads"] / ops if ops else None
        d["disk_writes_per_op"] = d["disk_writes"] / ops if ops else None
        d["disk_kb_read_per_op"] = d["disk_read_bytes"] / 1024 / ops if ops else None
        d["disk_kb_written_per_op"] = d["disk_write_bytes"] / 1024 / ops if ops else None
        d["disk_note"] = f"device-wide counters of {device_note}: other processes' I/O on it counts too"
    else:
        d["disk_reads_per_op"] = d["disk_writes_per_op"] = None
        d["disk_note"] = f"unavailable: {device_note}"
    return d


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parents[3]  # the checkout: kvlab/execution/host/<this file>
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5)
        if out.returncode == 0:
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=5).stdout.strip()
            return out.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _mount_of(path) -> dict:
    """Filesystem type, source device and mount point holding path (longest mountinfo match)."""
    path = os.path.realpath(path)
    best = {}
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            mnt = left.split()[4]
            fstype, source = right.split()[:2]
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best.get("mount", "")):
                best = {"mount": mnt, "fstype": fstype, "source": source}
    except (OSError, IndexError):
        pass
    return best


_MACHINE = None


def machine() -> dict:
    """Facts about this machine, kept apart from the measurements."""
    global _MACHINE
    if _MACHINE is None:
        u = platform.uname()
        try:
            mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            mem = None
        _MACHINE = {"hostname": socket.gethostname(), "cpu_model": _cpu_model(), "cores": os.cpu_count(),
                    "memory_bytes": mem, "kernel": f"{u.system} {u.release}", "machine": u.machine,
                    "python": platform.python_version()}
    return dict(_MACHINE)


def storage(path) -> dict:
    dev, note = block_device(path)
    return {"path": str(path), **_mount_of(path), "block_device": dev, "block_device_note": note}


def kvlab_build() -> dict:
    from ..._version import __version__
    return {"kvlab": __version__, "git_commit": _git_commit()}
