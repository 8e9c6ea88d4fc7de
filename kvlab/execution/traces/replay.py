"""What a replay runs: a trace read in its format (detected by its first bytes, or named), its speed, and each
recorded phase's ops dealt onto the replay's threads as arrays the native replay loop takes (kv_trace.h).

Threads: with as many replay threads as recorded ones (the default), recorded thread i is replay thread i.  With
fewer, recorded thread i goes to replay thread i mod N, and the recorded threads that share one are merged by
time, each keeping its own order.  With more, each recorded thread's ops are dealt among the replay threads
i, i + R, ... by key, so each key's ops keep their order (a recorded thread's as a whole cannot run on two).
"""
from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ... import errors
from .. import native
from . import cachecsv, fileformat, rocksdb
from .fileformat import Trace, TraceError

# each format by its module's FORMAT (a RocksDB trace is a format, not the engine)
READERS = {m.FORMAT: m.read for m in (fileformat, rocksdb, cachecsv)}
FORMATS = tuple(READERS)
# the op types the replay loop runs (src/loop_replay.c)
REPLAYED_OPS = ("read", "write", "insert", "delete", "rmw", "seek", "scan", "range", "clear_range")
_cache: dict = {}


def detect(path) -> str:
    """The trace's format from its first bytes: kvlab's magic, RocksDB's begin record, else a CSV if its name says
    so or its first line has the cache traces' columns."""
    path = str(path)
    try:
        if fileformat.is_kvlab(path):
            return fileformat.FORMAT
        if rocksdb.is_rocksdb(path):
            return rocksdb.FORMAT
        with open(path, "rb") as f:
            first = f.readline(4096)
    except OSError as exc:
        raise TraceError(f"trace {path!r}: cannot read it: {exc.strerror}") from None
    if path.lower().endswith(".csv") or (first.count(b",") >= 5 and _text(first)):
        return cachecsv.FORMAT
    raise TraceError(f"trace {path!r} is none of the formats kvlab reads: kvlab's (starts with "
                     f"{fileformat.MAGIC!r}), RocksDB's (db_bench --trace_file), or a cache trace's CSV "
                     f"({','.join(cachecsv.COLUMNS)}); give --format {'|'.join(FORMATS)} to say which")


def _text(line: bytes) -> bool:
    try:
        return b"\x00" not in line and bool(line.decode("utf-8"))
    except UnicodeError:
        return False


def load(path, fmt: str | None = None) -> Trace:
    """The trace in `path`, read in `fmt` (None: detected).  Read once per file as it is (a replay's trials
    read it again only if it changed)."""
    path = str(path)
    if fmt is not None and fmt not in READERS:
        raise errors.SpecError(f"trace format {fmt!r} is unknown; allowed: {', '.join(FORMATS)}")
    fmt = fmt or detect(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise TraceError(f"trace {path!r}: {exc.strerror}") from None
    key = (path, fmt, st.st_mtime_ns, st.st_size)
    if key not in _cache:
        _cache.clear()
        _cache[key] = READERS[fmt](path)
    return _cache[key]


def parse_speed(text) -> float:
    """recorded: 1; max: 0 (back to back); Nx (N > 0): N times the recorded speed."""
    t = str(text).strip().lower()
    if t == "recorded":
        return 1.0
    if t == "max":
        return 0.0
    m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)x", t)
    if m and float(m.group(1)) > 0:
        return float(m.group(1))
    raise errors.SpecError(f"speed {text!r}: allowed: recorded, max, or Nx with N > 0 (2x: twice as fast, 0.5x: "
                           "half)")


@dataclass(frozen=True, eq=False)
class ReplayPhase:
    """One recorded phase as the replay runs it: each replay thread's ops (REPLAY_DTYPE), paced or not."""
    info: dict
    threads: tuple
    paced: bool
    key_size: int
    num: int             # the key space: the highest key index + 1
    value_size: int      # the largest value written (the run's value buffer holds it)
    describe: dict = field(default_factory=dict)
    warning: str | None = None   # an imported trace's ops that were skipped, counted
    reads: bool = True           # it reads (its found and not found mean something)

    @property
    def ops(self) -> int:
        return sum(len(a) for a in self.threads)

    def native(self) -> dict:
        return {"threads": list(self.threads), "paced": self.paced}


def recorded_threads(trace: Trace) -> int:
    return max((len(p.threads) for p in trace.phases if p.ops), default=1)


def key_size(trace: Trace) -> int:
    return int(trace.header.get("key_size") or (trace.header.get("spec") or {}).get("key_size") or 16)


def key_space(trace: Trace) -> int:
    """The distinct keys the trace touches (a replay's num: what its size check and figures count)."""
    keys = [r["key"] for p in trace.phases for r in p.threads.values() if len(r)]
    return max(1, len(np.unique(np.concatenate(keys)))) if keys else 1


def _codes(trace: Trace) -> np.ndarray:
    """The trace's op codes as this build's (a trace names its codes in its header), refusing one the replay
    loop does not run."""
    names = trace.header.get("ops")
    if not isinstance(names, list):
        raise TraceError(f"trace {trace.path!r}: its header does not name its op codes (\"ops\")")
    mine = list(native.load().OP_TYPES)
    table = np.full(256, 255, dtype=np.uint8)
    for i, n in enumerate(names[:256]):
        if n in REPLAYED_OPS and n in mine:
            table[i] = mine.index(n)
    return table


def _batch_flags() -> int:
    """The record flags that mark a batch (kv_trace.h): its puts, and the last before its commit."""
    return native.load().TRACE_BATCHED | native.load().TRACE_COMMIT


def _time(recs) -> np.ndarray:
    """Each op's time in ns from the phase start: its intended start where it had one, else its actual one."""
    t = np.where(recs["intended_ns"] >= 0, recs["intended_ns"], recs["start_ns"])
    return t.astype(np.int64)


def _to_ops(recs, table, scale: float) -> np.ndarray:
    out = np.zeros(len(recs), dtype=native.load().REPLAY_DTYPE)
    out["key"] = recs["key"]
    out["size"] = recs["size"]
    out["op"] = table[recs["op"]]
    out["flags"] = recs["flags"] & np.uint8(_batch_flags())
    out["at_ns"] = (_time(recs) / scale).astype(np.int64) if scale > 0 else 0
    return out


def _merge(parts: list) -> np.ndarray:
    """Recorded threads' ops onto one replay thread, by time, each keeping its own order (each thread's times made
    non-decreasing for the sort, which is stable)."""
    if len(parts) == 1:
        return parts[0]
    both = np.concatenate(parts)
    order = np.concatenate([np.maximum.accumulate(p["at_ns"]) if len(p) else p["at_ns"] for p in parts])
    return both[np.argsort(order, kind="stable")]


def phases(trace: Trace, speed: float, threads: int | None) -> list[ReplayPhase]:
    """Each recorded phase with ops, dealt onto `threads` replay threads (None: as recorded) at `speed` (0: max)."""
    table = _codes(trace)
    ks = key_size(trace)
    num = key_space(trace)
    out = []
    for p in trace.phases:
        if not p.ops:
            continue
        recorded = [p.threads[t] for t in sorted(p.threads)]
        top = max(int(r["key"].max()) for r in recorded if len(r))
        if ks < 20 and top >= 10 ** ks:
            raise TraceError(f"trace {trace.path!r}, phase {p.info.get('name')!r}: key index {top} does not fit "
                             f"its {ks}-byte keys")
        bad = Counter(trace.header["ops"][int(c)] if int(c) < len(trace.header["ops"]) else str(int(c))
                      for r in recorded for c in np.unique(r["op"]) if table[int(c)] == 255)
        if bad:
            raise TraceError(f"trace {trace.path!r}, phase {p.info.get('name')!r}: op types "
                             f"{', '.join(sorted(bad))}, which replay does not run; it runs "
                             f"{', '.join(REPLAYED_OPS)}")
        n = threads or len(recorded)
        ops = [_to_ops(r, table, speed) for r in recorded]
        batched = any(o["flags"].any() for o in ops)
        batches = "replayed as recorded" if batched else "none recorded"
        dealt: list[list] = [[] for _ in range(n)]
        if n <= len(ops):
            for i, o in enumerate(ops):
                dealt[i % n].append(o)
        else:   # more replay threads than recorded: a thread's ops split by key, its batches with them
            batches = "split by key onto more threads: each op on its own" if batched else batches
            for i, o in enumerate(ops):
                o["flags"] = 0
                mine = list(range(i, n, len(ops)))
                which = o["key"] % np.uint64(len(mine))
                for j, t in enumerate(mine):
                    dealt[t].append(o[which == j])
        arrays = tuple(_merge(d) if d else np.zeros(0, dtype=native.load().REPLAY_DTYPE) for d in dealt)
        writes = [a["size"][np.isin(a["op"], [native.load().OP_TYPES.index(x) for x in ("write", "insert", "rmw")])]
                  for a in arrays]
        value_size = max([int(w.max()) for w in writes if len(w)] + [1])
        out.append(ReplayPhase(info=dict(p.info), threads=arrays, paced=speed > 0, key_size=ks, num=num,
                               value_size=value_size,
                               describe={"file": trace.path, "format": trace.format, "header": trace.header,
                                         "phase": p.info.get("name"), "kind": p.info.get("kind"),
                                         "threads_recorded": len(recorded), "threads": n, "ops": p.ops,
                                         "batches": batches},
                               warning=skipped_warning(trace),
                               reads=bool(any(np.isin(a["op"], [native.load().OP_TYPES.index(x) for x in
                                                                ("read", "rmw", "seek", "scan", "range")]).any()
                                              for a in arrays))))
    if not out:
        raise TraceError(f"trace {trace.path!r} holds no operations")
    return out


def spec_for(path, engine: str = "lmdb", *, speed="recorded", threads: int | None = None, fmt: str | None = None,
             **params):
    """The RunSpec that replays the trace in `path` on `engine`: workload "replay", its key size and key space
    from the trace, as many threads as the most any recorded phase ran (or `threads`); `params` are RunSpec
    fields and engine settings (db, seed, interval, record_trace, cache_size, ...).  The trace is read and the
    speed and threads checked here, before anything runs."""
    from ...model.spec import make_spec
    parse_speed(speed)
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise errors.SpecError(f"threads={threads!r}: allowed: a whole number from 1 (default: as recorded)")
    trace = load(path, fmt)
    phases(trace, parse_speed(speed), threads)   # every op one the replay runs, before anything does
    for name in ("workload", "workloads", "num", "key_size", "replay"):
        if name in params:
            raise errors.SpecError(f"{name} is the trace's in a replay; allowed: RunSpec fields other than "
                                   "workload, num, key_size, and engine settings")
    return make_spec(engine, "replay", num=key_space(trace), key_size=max(key_size(trace), 1),
                     threads=threads or recorded_threads(trace),
                     replay={"path": str(path), "format": trace.format, "speed": str(speed), "threads": threads},
                     **params)


def skipped_warning(trace: Trace) -> str | None:
    """The warning for an imported trace's ops that kvlab has no counterpart for, with their counts."""
    skipped = trace.header.get("skipped") or {}
    if not skipped:
        return None
    total = sum(skipped.values())
    kinds = ", ".join(f"{n:,} {k}" for k, n in sorted(skipped.items(), key=lambda kv: -kv[1]))
    return (f"the {trace.format} trace {trace.path} holds {total:,} operations kvlab has no counterpart for, "
            f"skipped ({kinds}); the replay ran the other {trace.ops:,}")
