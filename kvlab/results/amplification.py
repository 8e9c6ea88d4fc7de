"""Write, read and space amplification of a phase and of each interval, each figure labelled with its source.

- **write amplification**: bytes written to storage / bytes the user wrote (the keys and values of the writes
  the workload made; a delete writes its key).  Three figures, each from its own counter:
  `write_amp` the process's (/proc/self/io write_bytes: bytes it dirtied in the page cache, so a page
  rewritten before the kernel writes it back counts once); `write_amp_device` the block device's
  (/proc/diskstats sectors written: device-wide, so other processes count too, and the kernel writes dirty
  pages back up to ~30 s late, so a short phase's figure can fall below its writes); `write_amp_engine` the
  engine's own account where it keeps one (ENGINE_COUNTERS: RocksDB's and LevelDB's table files from their
  info LOG plus RocksDB's WAL, WiredTiger's block manager and log, Berkeley DB's buffer pool).
- **read amplification**: `read_amp` is block reads per read op (device read requests / read ops) and
  `read_bytes_per_read` the device's bytes read per read op; `process_read_bytes_per_read` the process's
  (/proc/self/io read_bytes).  Read ops: read, seek, read-modify-write, range and scan ops.
- **space amplification**: `space_amp` is the database's live size on disk (its files' allocated blocks up to
  their lengths, kvlab.execution.dbfiles.dbdir.disk_usage: what `du` says after close, without preallocated
  space such as RocksDB's WAL) over the live logical bytes: the keys and values the workload believes are live
  (`live_after`: fillseq's keys exactly, random writes' expected distinct keys given kvlab's deterministic key
  streams).

A figure that cannot be computed is None, with the reason under `notes[figure]`: no block device under the
database (tmpfs, overlay), a database in memory (tmpfs: nothing reaches storage), no user writes or reads in
the phase, live data unknown (a database that existed before the run), a write counter under its resolution
(RESOLUTION_FRACTION of the user's bytes or RESOLUTION_PAGES pages: the writes are still in the page cache).

Pure functions: the runner (kvlab.execution) reads the counters and hands them over.
"""
from __future__ import annotations

import math
from typing import Any

from .. import engines
from ..engines.descriptor import EngineCounters

WRITE_OPS = ("write", "insert", "rmw")     # ops that store a key and a value
DELETE_OPS = ("delete",)                   # ops that store a key (a tombstone, or the removal of one)
READ_OPS = ("read", "seek", "rmw", "range", "scan")
# filesystems that keep files in memory: nothing they hold is written to or read from storage
MEMORY_FS = ("tmpfs", "ramfs", "devtmpfs", "hugetlbfs")

FIGURES = ("write_amp", "write_amp_device", "write_amp_engine", "read_amp", "read_bytes_per_read",
           "process_read_bytes_per_read", "space_amp")
INTERVAL_FIGURES = ("write_amp", "write_amp_device", "read_amp", "read_bytes_per_read", "space_amp")

SOURCES = {
    "write_amp": "/proc/self/io write_bytes (bytes the process dirtied in the page cache) / user bytes written",
    "write_amp_device": "/proc/diskstats sectors written x 512 on the database's block device (device-wide) / "
                        "user bytes written",
    "read_amp": "/proc/diskstats reads completed on the database's block device (device-wide) / read ops",
    "read_bytes_per_read": "/proc/diskstats sectors read x 512 (device-wide) / read ops",
    "process_read_bytes_per_read": "/proc/self/io read_bytes / read ops",
    "space_amp": "live size of the database (its files' st_blocks x 512, each up to its length: preallocated "
                 "blocks apart) / live logical bytes (keys + values the workload believes are live)",
    "user_bytes": "keys + values of the writes the workload made (a delete: its key)",
}
COUNTERS = {"write_amp": "/proc/self/io write_bytes", "write_amp_device": "the block device's sectors written"}


# The resolution of the storage counters' write figures.  Both count bytes on their way to storage, not bytes the
# phase made: /proc/self/io counts a page when it becomes dirty (a page left dirty by an earlier phase, or an
# earlier trial, is not counted again), the device when the kernel writes it back (up to ~30 s later).  Bytes still
# in the page cache are not "amplification 0": below either bound the figure is None, with that reason.
RESOLUTION_FRACTION = 0.1   # a counter that saw under a tenth of the user's bytes has not seen them
RESOLUTION_PAGES = 16       # nor one that saw under 16 pages (64 KiB)
PAGE = 4096


def below_resolution(written, user_bytes: float, counter: str, what: str = "phase") -> str | None:
    """Why a write figure from `counter` cannot be read (its reason), or None when it can: the counter saw fewer
    bytes than RESOLUTION_FRACTION of the user's or RESOLUTION_PAGES pages."""
    if written is None or not user_bytes:
        return None
    floor = max(RESOLUTION_FRACTION * user_bytes, RESOLUTION_PAGES * PAGE)
    if written >= floor:
        return None
    return (f"{counter} saw {written:,.0f} bytes for {user_bytes:,.0f} user bytes, under this figure's resolution "
            f"({RESOLUTION_FRACTION:g} of the user bytes and at least {RESOLUTION_PAGES} pages): the writes are "
            f"still in the page cache (dirty pages the kernel has not written back, or pages an earlier phase left "
            f"dirty, which are not counted again), so this {what} cannot say what reached storage; bytes still in "
            f"the page cache are not 'amplification 0'")


def user_write_bytes(ops: dict, key_size: int, value_size: float) -> float:
    """Bytes the user wrote: each write-type op its key and value, each delete its key."""
    writes = sum(ops.get(op, 0) for op in WRITE_OPS)
    deletes = sum(ops.get(op, 0) for op in DELETE_OPS)
    return writes * (key_size + value_size) + deletes * key_size


def read_ops(ops: dict) -> int:
    return sum(ops.get(op, 0) for op in READ_OPS)


# --- live data -----------------------------------------------------------------------------------------------
#
# kvlab's random writes are deterministic: thread i of a write loop draws its keys from the stream (seed, write
# stream, i), so a fillrandom and an overwrite of the same seed and thread count write the same keys, and only
# writes past the longest earlier run of a stream reach new ones.  The live set is therefore kept as what
# determines it: the fraction of the key space sequential writes covered, the longest prefix drawn from each
# random-write stream, the survivors of random deletes and a mix's inserted keys beyond the key space.

def live_start(known: bool) -> dict:
    """The live set of a fresh database (known, empty), or of one that existed before the run (unknown)."""
    if known:
        return {"keys": 0.0, "bytes": 0.0, "n": None, "seq": 0.0, "draws": {}, "survive": 1.0, "extra": 0.0,
                "entry": 0.0, "how": "a new database"}
    return {"keys": None, "bytes": None,
            "how": "the database existed before the run (--use-existing-db): kvlab does not know what it holds"}


def covered_arcs(n: int, arcs) -> int:
    """Distinct keys of sequential writes on a key space of n: `arcs` [(first key, keys written)], each
    wrapping modulo n (a thread's share of fillseq, which runs on past it when timed)."""
    spans = []
    for first, count in arcs:
        if count <= 0:
            continue
        if count >= n:
            return n
        first %= n
        end = first + count
        spans += [(first, min(end, n))] + ([(0, end - n)] if end > n else [])
    spans.sort()
    total, cur_lo, cur_hi = 0, None, None
    for lo, hi in spans:
        if cur_hi is None or lo > cur_hi:
            if cur_hi is not None:
                total += cur_hi - cur_lo
            cur_lo, cur_hi = lo, hi
        else:
            cur_hi = max(cur_hi, hi)
    if cur_hi is not None:
        total += cur_hi - cur_lo
    return total


def _count(live: dict, how: str) -> dict:
    n = live["n"] or 0
    draws = sum(live["draws"].values())
    missed = math.exp(draws * math.log1p(-1.0 / n)) if n > 1 else (0.0 if draws else 1.0)
    keys = n * (1.0 - (1.0 - live["seq"]) * missed) * live["survive"] + live["extra"]
    return {**live, "keys": keys, "bytes": keys * live["entry"], "how": how}


def live_after(live: dict, pattern: str, n: int, count: float, entry_bytes: float, *, arcs=None,
               streams=None) -> dict:
    """The expected live set after `count` ops of `pattern` on a key space of `n` keys, from `live` (live_start,
    or an earlier live_after; keys None: unknown).  Patterns:
      "sequential"  writes of keys in order: `arcs` [(first key, keys written)] per thread, else the first
                    min(count, n) keys;
      "random"      uniform draws with replacement from the streams `streams` [(stream, draws)] (default one
                    stream of `count`): a key escapes D draws with probability (1 - 1/n)^D, D summed over the
                    streams' longest prefixes so far;
      "delete"      `count` deletes of keys drawn uniformly: each live key survives with (1 - 1/n)^count;
      "insert"      `count` new keys past the key space (a mix's inserts); "remove" `count` deletes of live keys;
      "none"        nothing written (reads, compact) or live keys rewritten.
    Bytes are the keys at `entry_bytes` each (the size of the phase's writes)."""
    if live.get("keys") is None or count <= 0 or pattern == "none":
        return dict(live)
    live = {**live, "n": n, "draws": dict(live["draws"]), "entry": entry_bytes or live["entry"]}
    if pattern == "sequential":
        covered = covered_arcs(n, arcs) if arcs else min(count, n)
        live["seq"] = max(live["seq"], covered / n)
        how = "sequential writes: every key written is live"
    elif pattern == "random":
        for stream, drawn in (streams if streams is not None else [(("random", 0), count)]):
            key = repr((stream, n))
            live["draws"][key] = max(live["draws"].get(key, 0), drawn)
        how = ("uniform random writes: expected distinct keys n(1 - (1 - 1/n)^D), D the draws of each key stream "
               "(seed, thread) past its earlier runs, with the earlier keys")
    elif pattern == "delete":
        live["survive"] *= math.exp(count * math.log1p(-1.0 / n)) if n > 1 else 0.0
        how = "uniform random deletes: each live key survives with (1 - 1/n)^deletes"
    elif pattern == "insert":
        live["extra"] += count
        how = "a mix: each insert adds a key, each delete removes one, updates keep the count"
    elif pattern == "remove":
        keys = _count(live, "")["keys"]
        live["survive"] *= max(0.0, 1.0 - count / keys) if keys else 0.0
        how = "a mix: each insert adds a key, each delete removes one, updates keep the count"
    else:
        raise ValueError(f"live pattern {pattern!r} is unknown")
    return _count(live, how)


def apply_phase(live: dict, pattern: str, n: int, ops: dict, entry_bytes: float, arcs=None, streams=None) -> dict:
    """The live set after a phase (or part of one) that changes it by `pattern` (its workload's live_pattern,
    kvlab.model.workloads.LIVE_PATTERNS) and did `ops` (op type -> count) on a key space of `n`: sequential or
    random writes, random deletes, a mix's inserts and deletes, a LinkBench graph (not tracked).
    `arcs`: fillseq's per-thread (first key, keys written); `streams`: the random writes' [(stream, draws)]."""
    if pattern == "graph":
        return {"keys": None, "bytes": None, "how": "a LinkBench graph: kvlab does not track its live bytes"}
    if pattern == "trace":
        return {"keys": None, "bytes": None, "how": "a replayed trace: kvlab does not track its live bytes"}
    if pattern == "mix":
        live = live_after(live, "insert", n, ops.get("insert", 0), entry_bytes)
        live = live_after(live, "remove", n, ops.get("delete", 0), entry_bytes)
        if ops.get("clear_range") and live.get("keys") is not None:
            live = {"keys": None, "bytes": None, "how": "a mix cleared key ranges, whose sizes kvlab does not know"}
        return live
    if pattern == "none":
        return dict(live)
    # updaterandom's read-modify-writes store as writes do (rmw: its own op type)
    count = ops.get("delete", 0) if pattern == "delete" else ops.get("write", 0) + ops.get("rmw", 0)
    return live_after(live, pattern, n, count, entry_bytes, arcs=arcs, streams=streams)


# --- the engines' own counters -------------------------------------------------------------------------------

# adapter -> how its engine accounts (its descriptor's `counters`, kvlab/engines/<adapter>/counters.py); an adapter
# without them has no engine figure
ENGINE_COUNTERS: dict[str, EngineCounters] = {name: d.counters for name, d in engines.DESCRIPTORS.items()
                                              if isinstance(d.counters, EngineCounters)}


# --- the figures ---------------------------------------------------------------------------------------------

def _ratio(num, den):
    if num is None or den is None or den <= 0:
        return None
    return num / den


def storage_notes(storage: dict | None, device: str | None, device_note: str) -> dict:
    """Why figures cannot be computed on this storage: {"process": reason or None, "device": reason or None}."""
    fstype = (storage or {}).get("fstype")
    process = device_reason = None
    if fstype in MEMORY_FS:
        process = (f"the database is on {fstype}, in memory: nothing it writes or reads reaches storage, "
                   "so the process's storage counters stay at 0")
    if device is None:
        device_reason = f"no block device: {device_note}"
    elif fstype in MEMORY_FS:
        device_reason = process
    return {"process": process, "device": device_reason}


def figures(*, user_bytes: float, reads: int, delta: dict, allocated: float | None, live: dict,
            storage_why: dict, engine: dict | None = None, what: str = "phase") -> dict:
    """The amplification record of a phase: every figure of FIGURES (None where it cannot be computed, with the
    reason in notes), the counts behind them, and where each came from (sources).

    `delta`: the phase's counter differences (accounting.delta: io_write_bytes, io_read_bytes, disk_*);
    `allocated`: the database's allocated bytes at the phase's end; `live`: the live set then (live_after);
    `storage_why`: storage_notes(); `engine`: the engine's own account (ENGINE_COUNTERS) or None."""
    notes: dict[str, str] = {}
    out: dict[str, Any] = {k: None for k in FIGURES}
    out.update({"user_write_bytes": user_bytes, "read_ops": reads, "live_keys": live.get("keys"),
                "live_bytes": live.get("bytes"), "allocated_bytes": allocated,
                "written_bytes": delta.get("io_write_bytes"), "device_written_bytes": delta.get("disk_write_bytes"),
                "device_read_bytes": delta.get("disk_read_bytes"), "device_reads": delta.get("disk_reads")})
    process_why, device_why = storage_why.get("process"), storage_why.get("device")
    has_device = "disk_write_bytes" in delta and device_why is None
    no_writes = f"no user writes in this {what}"
    no_reads = f"no read ops in this {what}"
    # write amplification
    for fig, ok, why, num in (("write_amp", process_why is None, process_why, delta.get("io_write_bytes")),
                              ("write_amp_device", has_device, device_why, delta.get("disk_write_bytes"))):
        if not ok:
            notes[fig] = why or "the counter is unavailable"
        elif not user_bytes:
            notes[fig] = no_writes
        elif (why := below_resolution(num, user_bytes, COUNTERS[fig], what)) is not None:
            notes[fig] = why
        else:
            out[fig] = _ratio(num, user_bytes)
    # below 1, the storage counters saw less than the writes: bytes not yet written back (or rewritten in the page
    # cache before they were) are not amplification, so there is no figure, only the reason and the ratio seen
    if out["write_amp"] is not None and out["write_amp"] < 1:
        notes["write_amp"] = (
            f"none: below 1 ({out['write_amp']:.3g}): /proc/self/io counts a page when it becomes dirty, so pages "
            "rewritten before the kernel wrote them back (a B-tree's leaves, an mmap) count once, and what was "
            f"still dirty at the end of this {what} not at all; with sync on, or over a run longer than the "
            "writeback delay, it counts what reaches storage")
        out["write_amp"] = None
    if out["write_amp_device"] is not None and out["write_amp_device"] < 1:
        notes["write_amp_device"] = (
            f"none: below 1 ({out['write_amp_device']:.3g}): the kernel writes dirty pages back later "
            f"(dirty_expire_centisecs, 30 s by default), so what was still in the page cache at the end of this "
            f"{what} is not in it")
        out["write_amp_device"] = None
    elif (out["write_amp_device"] is not None and out["write_amp"] is not None
            and out["write_amp_device"] < out["write_amp"] / 2):
        notes["write_amp_device"] = (
            "below half the process's figure: the kernel writes dirty pages back later (dirty_expire_centisecs, "
            "30 s by default), so what was still in the page cache at the end of this " + what + " is not in it")
    if engine is not None:
        out["engine"] = engine
        if engine.get("bytes_written") is None:
            notes["write_amp_engine"] = engine.get("note") or "the engine keeps no such counter"
        elif not user_bytes:
            notes["write_amp_engine"] = no_writes
        else:
            out["write_amp_engine"] = engine["bytes_written"] / user_bytes
            if out["write_amp_engine"] < 1 and engine.get("note"):
                notes["write_amp_engine"] = f"below 1: {engine['note']}"
    else:
        notes["write_amp_engine"] = "this engine keeps no account of what it writes that kvlab reads"
    # read amplification
    if not reads:
        for fig in ("read_amp", "read_bytes_per_read", "process_read_bytes_per_read"):
            notes[fig] = no_reads
    else:
        if has_device:
            out["read_amp"] = _ratio(delta.get("disk_reads"), reads)
            out["read_bytes_per_read"] = _ratio(delta.get("disk_read_bytes"), reads)
        else:
            notes["read_amp"] = notes["read_bytes_per_read"] = device_why or "the counter is unavailable"
        if process_why is None:
            out["process_read_bytes_per_read"] = _ratio(delta.get("io_read_bytes"), reads)
        else:
            notes["process_read_bytes_per_read"] = process_why
        if engine is not None and engine.get("blocks_read") is not None:
            out["engine_blocks_read_per_read"] = engine["blocks_read"] / reads
    # space amplification
    if live.get("bytes") is None:
        notes["space_amp"] = f"live data unknown: {live.get('how')}"
    elif not live["bytes"]:
        notes["space_amp"] = "no live data"
    elif allocated is None:
        notes["space_amp"] = "the database's allocated size is unknown"
    else:
        out["space_amp"] = allocated / live["bytes"]
        out["live_how"] = live.get("how")
    out["sources"] = {k: v for k, v in SOURCES.items()}
    if engine is not None:
        out["sources"]["write_amp_engine"] = engine.get("source")
    out["notes"] = notes
    return out


def interval_figures(*, user_bytes: float, reads: int, delta: dict, allocated: float | None,
                     live_bytes: float | None, storage_why: dict) -> dict:
    """An interval's figures (INTERVAL_FIGURES, None where they cannot be computed; the reasons are the phase's
    notes, and a write figure under the counters' resolution, below_resolution, is None as the phase's is)."""
    has_device = "disk_write_bytes" in delta and storage_why.get("device") is None
    process = storage_why.get("process") is None
    written, device = delta.get("io_write_bytes"), delta.get("disk_write_bytes")
    process = process and below_resolution(written, user_bytes, "") is None
    has_write_device = has_device and below_resolution(device, user_bytes, "") is None
    return {
        "write_amp": _ratio(written, user_bytes) if process else None,
        "write_amp_device": _ratio(device, user_bytes) if has_write_device else None,
        "read_amp": _ratio(delta.get("disk_reads"), reads) if has_device else None,
        "read_bytes_per_read": _ratio(delta.get("disk_read_bytes"), reads) if has_device else None,
        "space_amp": _ratio(allocated, live_bytes),
    }
