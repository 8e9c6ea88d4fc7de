"""CPU pinning for a trial (a spec's `cpus`): the whole process, the engines' own threads included."""
from __future__ import annotations

import os
import threading

from ... import errors
from ...model.spec import cpu_set


def pin(cpus):
    """Pin the whole process to `cpus` (a spec's "0-1") for a trial: every thread that exists now
    (the engines' process-wide pools among them: RocksDB's start with the first open and live on)
    and, by inheritance, every thread started meanwhile.  Returns {tid: mask} to restore, or None."""
    if cpus is None:
        return None
    wanted, allowed = cpu_set(cpus), os.sched_getaffinity(0)
    if not wanted <= allowed:
        raise errors.SpecError(f"cpus={cpus!r}: CPU(s) {', '.join(map(str, sorted(wanted - allowed)))} are not "
                               f"available; allowed: {', '.join(map(str, sorted(allowed)))}")
    saved = {}
    for tid in _tasks():
        try:
            saved[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, wanted)
        except OSError:   # the thread ended meanwhile
            pass
    return saved


def unpin(saved):
    """Give back what `pin` returned: each thread its mask, threads started since the caller's."""
    for tid, mask in saved.items():
        try:
            os.sched_setaffinity(tid, mask)
        except OSError:
            pass
    # threads started during the run inherited the pinned mask: give them the caller's again
    for tid in set(_tasks()) - set(saved):
        try:
            os.sched_setaffinity(tid, saved.get(threading.get_native_id(), os.sched_getaffinity(0)))
        except OSError:
            pass


def _tasks() -> list:
    return [int(t) for t in os.listdir("/proc/self/task")]
