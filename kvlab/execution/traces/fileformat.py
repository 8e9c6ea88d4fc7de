"""kvlab's trace file (docs/traces.md): a header with the run's provenance, then sections.

    magic     8 bytes  b"KVLTRACE"
    version   u32      FORMAT_VERSION
    length    u32      the header's bytes
    header    JSON     {"format", "version", "kvlab", "engine", "workload", "spec", "ops", "created", ...}
    sections, each a u32 tag, then
      "PHS1"  u32 length, JSON {"index", "name", "kind", "loop", "threads", "key_size", "value_size", "num"}
      "BLK1"  u32 phase, u32 thread, u32 count, u64 clock start, f64 ns per tick, then count records of 32 bytes
              (kv_trace.h's kv_trace_rec: key u64, start u64, intended u64 (0: none), size u32, op u8, flags u8,
              reserved u16), the times as the latency clock read them

All little-endian.  Python writes the header and each phase's section (TraceWriter); the native threads write
the blocks, a thread's in its order, the threads' blocks interleaved.  `read` gives a Trace: each phase's records
per thread, in order, their times made ns from the phase's start (`dtype()`: start_ns, intended_ns, -1 for
none).  A file that is not one, or is cut, or of another version, is a TraceError saying so.
"""
from __future__ import annotations

import json
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ... import errors
from ..._version import __version__
from .. import native

FORMAT = "kvlab"
MAGIC = b"KVLTRACE"
FORMAT_VERSION = 1
PHASE_TAG = 0x31534850   # "PHS1"
_U32 = struct.Struct("<I")
_BLOCK = struct.Struct("<IIIIQd")   # tag, phase, thread, count, clock start, ns per tick


class TraceError(errors.SpecError):
    """A trace file that cannot be read: what is wrong with it, and where."""


def file_dtype() -> np.dtype:
    """A record's layout in the file (kv_trace.h), as the extension says it: times in latency-clock ticks."""
    return native.load().TRACE_DTYPE


def dtype() -> np.dtype:
    """A record as `read` gives it: the file's layout with its times in ns from the phase's start (start_ns,
    intended_ns; -1: none)."""
    names = {"start": "start_ns", "intended": "intended_ns"}
    f = file_dtype()
    return np.dtype([(names.get(n, n), "<i8" if n in names else f.fields[n][0]) for n in f.names])


def _in_ns(raw: np.ndarray, clock_start: int, ns_per_tick: float) -> np.ndarray:
    out = np.empty(len(raw), dtype=dtype())
    for name in ("key", "size", "op", "flags", "reserved"):
        out[name] = raw[name]
    start = raw["start"].astype(np.int64) - np.int64(clock_start)
    out["start_ns"] = np.round(start * ns_per_tick).astype(np.int64)
    intended = raw["intended"].astype(np.int64) - np.int64(clock_start)
    out["intended_ns"] = np.where(raw["intended"] == 0, -1, np.round(intended * ns_per_tick)).astype(np.int64)
    return out


@dataclass
class TracePhase:
    """One phase of a trace: its description and each thread's records, in the order the thread ran them."""
    info: dict
    threads: dict = field(default_factory=dict)   # thread index -> records (dtype())

    @property
    def ops(self) -> int:
        return sum(len(r) for r in self.threads.values())


@dataclass
class Trace:
    """A trace as read: where from, in which format, its header and its phases.  `header["ops"]` names the op
    codes its records use, in code order."""
    path: str
    format: str
    header: dict
    phases: list

    @property
    def ops(self) -> int:
        return sum(p.ops for p in self.phases)

    def provenance(self) -> dict:
        """What a replay's result says of the trace it ran."""
        return {"file": self.path, "format": self.format, "header": self.header, "ops": self.ops,
                "phases": [{**p.info, "ops": p.ops, "threads_recorded": len(p.threads)} for p in self.phases]}


class TraceWriter:
    """A trace being recorded: the header written as it opens, a section per phase; the native run writes the
    records into `fd` (Run(..., trace=(fd, phase index)))."""

    def __init__(self, path, header: dict):
        self.path = str(path)
        head = {"format": "kvlab-trace", "version": FORMAT_VERSION, "kvlab": __version__,
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "ops": list(native.load().OP_TYPES), **header}
        data = json.dumps(head, sort_keys=True, default=str).encode()
        try:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise errors.SpecError(f"record_trace={self.path!r}: cannot create it: {exc.strerror}") from None
        self.phases = 0
        self._write(MAGIC + _U32.pack(FORMAT_VERSION) + _U32.pack(len(data)) + data)

    @classmethod
    def reopened(cls, path, fd: int, phases: int) -> "TraceWriter":
        """The same trace in a trial's worker: its descriptor handed over (the file's offset is shared), the
        phases written so far."""
        self = cls.__new__(cls)
        self.path, self.fd, self.phases = str(path), fd, phases
        return self

    def _write(self, data: bytes):
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            self.close()
            raise errors.KvlabError(f"record_trace={self.path!r}: cannot write it: {exc.strerror}") from None

    def phase(self, info: dict) -> tuple:
        """A phase's section, before its run writes its records: (fd, index) for the native Run."""
        index = self.phases
        data = json.dumps({"index": index, **info}, sort_keys=True, default=str).encode()
        self._write(_U32.pack(PHASE_TAG) + _U32.pack(len(data)) + data)
        self.phases += 1
        return self.fd, index

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def is_kvlab(path) -> bool:
    """Whether the file starts with kvlab's magic."""
    with open(path, "rb") as f:
        return f.read(len(MAGIC)) == MAGIC


def read(path) -> Trace:
    """The trace in `path`, each phase's records per thread in order; a TraceError for a file that is not a
    kvlab trace, is of another version, or is cut short."""
    path = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TraceError(f"trace {path!r}: cannot read it: {exc.strerror}") from None
    if data[:len(MAGIC)] != MAGIC:
        raise TraceError(f"trace {path!r} is not a kvlab trace (it does not start with {MAGIC!r}; "
                         "a RocksDB trace or a cache-trace CSV: --format rocksdb or csv)")
    pos = len(MAGIC)
    if len(data) < pos + 8:
        raise TraceError(f"trace {path!r} is cut short in its header ({len(data)} bytes)")
    version, length = _U32.unpack_from(data, pos)[0], _U32.unpack_from(data, pos + 4)[0]
    if version != FORMAT_VERSION:
        raise TraceError(f"trace {path!r} is of format version {version}; this kvlab ({__version__}) reads version "
                         f"{FORMAT_VERSION}")
    pos += 8
    if len(data) < pos + length:
        raise TraceError(f"trace {path!r} is cut short in its header ({len(data) - pos} of {length} bytes)")
    try:
        header = json.loads(data[pos:pos + length])
    except ValueError as exc:
        raise TraceError(f"trace {path!r}: its header is not JSON ({exc})") from None
    pos += length
    rec = file_dtype()
    phases: list[TracePhase] = []
    chunks: list[dict] = []
    while pos < len(data):
        if len(data) < pos + 4:
            raise TraceError(f"trace {path!r} is cut short at byte {pos} (a section's tag)")
        tag = _U32.unpack_from(data, pos)[0]
        if tag == PHASE_TAG:
            if len(data) < pos + 8:
                raise TraceError(f"trace {path!r} is cut short at byte {pos} (a phase's section)")
            n = _U32.unpack_from(data, pos + 4)[0]
            if len(data) < pos + 8 + n:
                raise TraceError(f"trace {path!r} is cut short at byte {pos} (a phase's section)")
            phases.append(TracePhase(json.loads(data[pos + 8:pos + 8 + n])))
            chunks.append({})
            pos += 8 + n
        elif tag == native.load().TRACE_BLOCK_TAG:
            if len(data) < pos + _BLOCK.size:
                raise TraceError(f"trace {path!r} is cut short at byte {pos} (a block's head)")
            _, phase, thread, count, clock_start, ns_per_tick = _BLOCK.unpack_from(data, pos)
            pos += _BLOCK.size
            end = pos + count * rec.itemsize
            if len(data) < end:
                raise TraceError(f"trace {path!r} is cut short at byte {len(data)}: a block of {count} records "
                                 f"needs {end - pos} bytes from byte {pos}")
            if phase >= len(phases):
                raise TraceError(f"trace {path!r}: a block at byte {pos - _BLOCK.size} names phase {phase}, "
                                 "which no section before it describes")
            chunks[phase].setdefault(thread, []).append(_in_ns(np.frombuffer(data, rec, count, pos), clock_start,
                                                                ns_per_tick))
            pos = end
        else:
            raise TraceError(f"trace {path!r}: unknown section tag {tag:#010x} at byte {pos} (the file is damaged "
                             "or not a kvlab trace)")
    for p, threads in zip(phases, chunks):
        p.threads = {t: np.concatenate(parts) for t, parts in sorted(threads.items())}
    return Trace(path=path, format=FORMAT, header=header, phases=phases)
