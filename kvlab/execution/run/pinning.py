"""CPU pinning for a trial (a spec's `cpus`): its worker process whole, the engines' own threads included."""
from __future__ import annotations

import os

from ... import errors
from ...model.spec import cpu_set


def check(cpus) -> set | None:
    """The CPUs a spec's "0-1" names, or a SpecError naming those this process may not use."""
    if cpus is None:
        return None
    wanted, allowed = cpu_set(cpus), os.sched_getaffinity(0)
    if not wanted <= allowed:
        raise errors.SpecError(f"cpus={cpus!r}: CPU(s) {', '.join(map(str, sorted(wanted - allowed)))} are not "
                               f"available; allowed: {', '.join(map(str, sorted(allowed)))}")
    return wanted


def pin_process(cpus) -> None:
    """Pin the trial's worker to `cpus`: every thread it has now and, by inheritance, every thread it starts (the
    engines' pools among them).  A worker is the trial's alone, so nothing is given back."""
    wanted = check(cpus)
    if wanted is None:
        return
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), wanted)
        except OSError:   # the thread ended meanwhile
            pass
