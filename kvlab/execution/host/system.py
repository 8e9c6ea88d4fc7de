"""The machine as a run starts, read the way pyperf's `system show` looks at it: the load average and the
other processes busy on the CPUs, the CPU frequency governor and turbo where the kernel exposes them, the
clocksource, memory pressure.

`snapshot()` reads it (from /proc and /sys; about 0.1 s, most of it the look at other processes' CPU);
every trial records it in its results' provenance (`provenance.machine.system`), and `warnings()` says
when the machine was busy or set up for noise.  A warning, never a refusal: a shared machine can still be
measured on, as long as its results say so.  What a machine does not expose (cpufreq on most VMs, PSI on
older kernels) is recorded as None with the reason, and is not warned about.
"""
from __future__ import annotations

import itertools
import math
import os
import platform
import resource
import time
from pathlib import Path

BUSY_CPU_PCT = 10.0      # another process using more than this share of one CPU during the look is busy
LOAD_PER_CORE = 0.5      # a 1-minute load average of other work above this per core: the machine was busy
WINDOW_S = 0.1           # how long the look at the other processes' CPU lasts
MAX_LISTED = 10          # busy processes kept in the record, busiest first
MEMORY_AVAILABLE_MIN = 0.10   # MemAvailable below this share of MemTotal: memory is short
PSI_MEMORY_MAX = 10.0    # % of the last 10 s in which some task stalled on memory: pressure
GOOD_GOVERNOR = "performance"
# clocksources whose reads are slow or coarse on any machine; on x86 anything but the TSC reads slower
SLOW_CLOCKSOURCES = ("hpet", "acpi_pm", "jiffies", "refined-jiffies", "pit")

_PROC = Path("/proc")
_CPU = Path("/sys/devices/system/cpu")
_CLOCKSOURCE = Path("/sys/devices/system/clocksource/clocksource0")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

# this process's CPU time at each earlier snapshot: (monotonic s, CPU s), to tell its own share of the
# load average from the rest of the machine's
_OWN: list = []


def snapshot(window: float = WINDOW_S) -> dict:
    """The machine now: load, other busy processes (their CPU over `window` seconds), CPU frequency and
    turbo, clocksource, memory.  Each part that cannot be read is None, with a note saying why."""
    cores = os.cpu_count() or 1
    busy, others, seconds, runnable = _look(window)
    return {
        "taken_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cores": cores,
        "load": _load(),
        "busy_processes": busy,
        "others_cpu_pct": round(others, 1),
        "look_s": round(seconds, 3),
        "others_runnable": runnable,     # other tasks runnable at the start; 0: no look was needed
        "cpu_pressure": _psi("cpu"),
        "cpufreq": _cpufreq(),
        "turbo": _turbo(),
        "clocksource": _clocksource(),
        "memory": _memory(),
    }


def _look(window: float) -> tuple:
    """(busy processes, their CPU %, the look's length, runnable tasks besides this one): other processes' CPU
    over `window` seconds.  Where no other task is runnable at the start (/proc/loadavg), nothing else is
    using a CPU now and the window is skipped: a quiet machine pays nothing per trial."""
    others_runnable = _runnable() - 1
    if others_runnable <= 0:
        return [], 0.0, 0.0, max(others_runnable, 0)
    first = _process_cpu()
    t0 = time.monotonic()
    time.sleep(window)
    second = _process_cpu()
    seconds = time.monotonic() - t0
    busy, others = _busy(first, second, seconds)
    return busy, others, seconds, others_runnable


def _runnable() -> int:
    """Tasks running or runnable now, this one included (the kernel's count in /proc/loadavg); 2 if unknown."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return 2


def warnings(state: dict | None) -> list:
    """What in a snapshot makes a measurement less trustworthy, one sentence each, every one starting
    "machine " (none for a quiet machine set up for benchmarks, or for what the machine does not expose)."""
    if not state:
        return []
    out = []
    busy = state.get("busy_processes") or []
    if busy:
        named = ", ".join(f"{p['name']} (pid {p['pid']}, {p['cpu_pct']:.0f}% of a CPU)" for p in busy[:4])
        more = f" and {len(busy) - 4} more" if len(busy) > 4 else ""
        out.append(f"machine busy at the start: other processes were using the CPUs: {named}{more}; they compete "
                   f"with the run, so its figures may be low and noisy")
    load, cores = state.get("load") or {}, state.get("cores") or 1
    others = load.get("others_1min")
    # the load average lags a minute: it is said only when another process is seen using a CPU now (the look),
    # so neither work that just ended (the last run of a sequence of kvlab processes) nor this process's own
    # threads (an engine's background work) make a quiet machine busy; a record without the look's count (an
    # older one) keeps the average's word
    runnable = state.get("others_runnable")
    running_now = bool(busy) or runnable is None
    if others is not None and others > LOAD_PER_CORE * cores and running_now:
        out.append(f"machine busy at the start: load average {load['avg_1min']:.2f} over the last minute "
                   f"({others:.2f} besides this process) on {cores} core{'s' if cores > 1 else ''}, above "
                   f"{LOAD_PER_CORE:g} per core")
    freq = state.get("cpufreq") or {}
    slow = {g: cpus for g, cpus in (freq.get("governors") or {}).items() if g != GOOD_GOVERNOR}
    if slow:
        said = "; ".join(f"{g} on CPU {_cpu_list(cpus)}" for g, cpus in slow.items())
        out.append(f"machine set up for noise: CPU frequency governor {said}, not '{GOOD_GOVERNOR}': the "
                   "frequency follows the load, so the same work takes varying time")
    clock = state.get("clocksource") or {}
    current = clock.get("current")
    if current and (current in SLOW_CLOCKSOURCES or (_x86() and current != "tsc")):
        out.append(f"machine set up for noise: clocksource {current}, not tsc: every clock read costs more (and "
                   "may leave the vDSO for a system call), which adds to each latency measured")
    mem = state.get("memory") or {}
    total, avail = mem.get("total_bytes"), mem.get("available_bytes")
    psi = (mem.get("pressure") or {}).get("some_avg10")
    short = total and avail is not None and avail < MEMORY_AVAILABLE_MIN * total
    if short or (psi is not None and psi > PSI_MEMORY_MAX):
        what = []
        if short:
            what.append(f"{avail / 2**30:.1f} GiB of {total / 2**30:.1f} GiB available")
        if psi is not None and psi > PSI_MEMORY_MAX:
            what.append(f"tasks stalled on memory {psi:.0f}% of the last 10 s")
        out.append(f"machine short of memory at the start: {', '.join(what)}; the page cache and the engine's "
                   "cache may be squeezed")
    return out


# --- the parts ------------------------------------------------------------------------------------

def _first_line(path) -> str | None:
    try:
        with open(path) as f:
            return f.readline().strip()
    except OSError:
        return None


def _process_cpu() -> dict:
    """pid -> (CPU seconds so far, start time, name): from the threads' schedstat (nanoseconds) where the
    kernel has it, else from stat's clock ticks."""
    out = {}
    for entry in os.listdir(_PROC):
        if not entry.isdigit():
            continue
        pid = int(entry)
        stat = _first_line(_PROC / entry / "stat")
        if not stat:
            continue
        name, _, rest = stat.partition(" (")[2].rpartition(") ")
        fields = rest.split()
        try:
            ticks = int(fields[11]) + int(fields[12])     # utime, stime of every thread
            started = int(fields[19])
        except (IndexError, ValueError):
            continue
        seconds = _schedstat_seconds(entry)
        out[pid] = (ticks / _TICK if seconds is None else seconds, started, name)
    return out


def _schedstat_seconds(pid: str) -> float | None:
    total = 0
    try:
        tasks = os.listdir(_PROC / pid / "task")
    except OSError:
        return None
    for tid in tasks:
        line = _first_line(_PROC / pid / "task" / tid / "schedstat")
        if not line:
            return None
        try:
            total += int(line.split()[0])
        except (IndexError, ValueError):
            return None
    return total / 1e9


def _busy(first: dict, second: dict, seconds: float) -> tuple:
    """(the processes, other than this one, that used more than BUSY_CPU_PCT of a CPU between the two
    looks, busiest first; the CPU all other processes used, in % of one CPU)."""
    me = os.getpid()
    busy, others = [], 0.0
    for pid, (cpu, started, name) in second.items():
        before = first.get(pid)
        if pid == me or before is None or before[1] != started or seconds <= 0:
            continue
        pct = max(cpu - before[0], 0.0) / seconds * 100
        others += pct
        if pct > BUSY_CPU_PCT:
            busy.append({"pid": pid, "name": name, "cpu_pct": round(pct, 1), "command": _command(pid)})
    busy.sort(key=lambda p: -p["cpu_pct"])
    return busy[:MAX_LISTED], others


def _command(pid: int) -> str | None:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    text = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()
    return text[:120] or None


def _load() -> dict:
    """The load averages, and the 1-minute one less this process's own share of it (estimated from its CPU
    time since it started: the kernel's average decays by e^(-t/60), so CPU used t seconds ago weighs that
    much), so a process that ran benchmarks for the last minute does not call itself busy."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return {"avg_1min": None, "note": "no load average (os.getloadavg failed)"}
    own = _own_load()
    return {"avg_1min": round(one, 2), "avg_5min": round(five, 2), "avg_15min": round(fifteen, 2),
            "own_1min": round(own, 2), "others_1min": round(max(one - own, 0.0), 2)}


def _own_load() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    now, cpu = time.monotonic(), ru.ru_utime + ru.ru_stime
    points = list(_OWN)
    if not points:   # the process's start, with no CPU used yet
        age = _process_age()
        points = [(now - age, 0.0)] if age is not None else []
    points.append((now, cpu))
    _OWN[:] = points[-32:]
    own = 0.0
    for (t0, c0), (t1, c1) in itertools.pairwise(points):
        if t1 > t0:
            rate = max(c1 - c0, 0.0) / (t1 - t0)   # CPUs this process kept busy meanwhile
            own += rate * (math.exp(-(now - t1) / 60.0) - math.exp(-(now - t0) / 60.0))
    return own


def _process_age() -> float | None:
    stat, uptime = _first_line(_PROC / "self" / "stat"), _first_line(_PROC / "uptime")
    try:
        started = int(stat.rpartition(") ")[2].split()[19]) / _TICK
        return max(float(uptime.split()[0]) - started, 0.0)
    except (AttributeError, IndexError, ValueError):
        return None


def _psi(resource_name: str) -> dict | None:
    """/proc/pressure/<resource>: the share of recent time in which some (or all) tasks stalled."""
    try:
        lines = (_PROC / "pressure" / resource_name).read_text().splitlines()
    except OSError:
        return None
    out = {}
    for line in lines:
        kind, *pairs = line.split()
        for pair in pairs:
            key, _, value = pair.partition("=")
            if key in ("avg10", "avg60"):
                out[f"{kind}_{key}"] = float(value)
    return out or None


def _cpufreq() -> dict:
    """The scaling driver, the governor of each CPU and its frequency range, where sysfs has cpufreq."""
    governors, ranges, drivers = {}, {}, set()
    for d in sorted(_CPU.glob("cpu[0-9]*/cpufreq"), key=lambda p: int(p.parent.name[3:])):
        cpu = int(d.parent.name[3:])
        governor = _first_line(d / "scaling_governor")
        if governor:
            governors.setdefault(governor, []).append(cpu)
        driver = _first_line(d / "scaling_driver")
        if driver:
            drivers.add(driver)
        lo, hi = _first_line(d / "scaling_min_freq"), _first_line(d / "scaling_max_freq")
        if lo and hi and lo.isdigit() and hi.isdigit():
            ranges.setdefault(f"{int(lo) // 1000}-{int(hi) // 1000} MHz", []).append(cpu)
    if not governors and not drivers:
        return {"governors": None, "note": f"no {_CPU}/cpu*/cpufreq: the kernel does not expose the CPU frequency "
                                           "(a VM, or no frequency scaling)"}
    return {"governors": governors, "drivers": sorted(drivers), "ranges": ranges}


def _turbo() -> dict | None:
    """Turbo boost: intel_pstate's no_turbo, else cpufreq's boost (acpi-cpufreq, amd-pstate)."""
    no_turbo = _first_line(_CPU / "intel_pstate" / "no_turbo")
    if no_turbo in ("0", "1"):
        return {"enabled": no_turbo == "0", "source": str(_CPU / "intel_pstate" / "no_turbo")}
    boost = _first_line(_CPU / "cpufreq" / "boost")
    if boost in ("0", "1"):
        return {"enabled": boost == "1", "source": str(_CPU / "cpufreq" / "boost")}
    return None


def _clocksource() -> dict:
    available = _first_line(_CLOCKSOURCE / "available_clocksource")
    return {"current": _first_line(_CLOCKSOURCE / "current_clocksource"),
            "available": available.split() if available else None}


def _memory() -> dict:
    info = {}
    try:
        for line in (_PROC / "meminfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("MemTotal", "MemAvailable", "SwapTotal", "SwapFree"):
                info[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return {"total_bytes": info.get("MemTotal"), "available_bytes": info.get("MemAvailable"),
            "swap_used_bytes": info["SwapTotal"] - info["SwapFree"] if "SwapTotal" in info and "SwapFree" in info
            else None, "pressure": _psi("memory")}


def _x86() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")


def _cpu_list(cpus) -> str:
    """0-3,6 for [0, 1, 2, 3, 6]."""
    cpus, parts, i = sorted(cpus), [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(parts)
