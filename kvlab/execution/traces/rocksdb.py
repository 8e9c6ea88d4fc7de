"""RocksDB's query trace (db_bench --trace_file, DB::StartTrace), as RocksDB's trace_replay/trace_replay.cc and
include/rocksdb/trace_record.h define it.  Each record: timestamp u64 (microseconds), type u8, payload length
u32, payload (little-endian).  The first record (type 1, kTraceBegin) holds "feedcafedeadbeef\\tTrace Version:
M.m\\tRocksDB Version: M.m\\t..."; the last may be kTraceEnd (2).  From trace version 0.2 each query payload
starts with a u64 bitmap of the fields that follow; 0.1 had none.
  Write (3):  the WriteBatch's bytes (length-prefixed in 0.2): a 12-byte head, then records: a tag, then
              varint-length-prefixed key (and value): Put (1), Delete (0), SingleDelete (7), and their column
              family forms (5, 4, 8) with a varint family id first; LogData (3) and the transaction markers
              carry no op.
  Get (4):    column family u32, key.    IteratorSeek (5): column family u32, key [, lower, upper bound].
  MultiGet (13): count u32, the families, the keys (each list length-prefixed).
A trace has no threads: it is one recorded thread.  Merges, range deletions, SeekForPrev and the block-cache
and I/O record types have no kvlab op: they are counted and skipped (fileformat's header keeps the counts).
"""
from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

from . import imported
from .fileformat import TraceError

FORMAT = "rocksdb"
MAGIC = b"feedcafedeadbeef"
_REC = struct.Struct("<QBI")
BEGIN, END, WRITE, GET, SEEK, SEEK_PREV, MULTIGET = 1, 2, 3, 4, 5, 6, 13
TYPE_NAMES = {6: "iterator_seek_for_prev", 7: "block_index", 8: "block_filter", 9: "block_data",
              10: "block_uncompression_dict", 11: "block_range_deletion", 12: "io"}
# WriteBatch tags (RocksDB's db/dbformat.h ValueType): those that are ops, those that carry none
PUT, DELETE, SINGLE_DELETE, CF_PUT, CF_DELETE, CF_SINGLE_DELETE = 0x1, 0x0, 0x7, 0x5, 0x4, 0x8
MERGE, CF_MERGE, LOG_DATA, RANGE_DELETE, CF_RANGE_DELETE = 0x2, 0x6, 0x3, 0xF, 0xE
MARKERS = {0x9, 0xD}          # a prepared transaction's begin, a noop: no payload
XID_MARKERS = {0xA, 0xB, 0xC}  # a transaction's end of prepare, commit, rollback: its id
BLOB_INDEX, CF_BLOB_INDEX = 0x11, 0x10


def is_rocksdb(path) -> bool:
    with open(path, "rb") as f:
        head = f.read(_REC.size + len(MAGIC))
    return len(head) == _REC.size + len(MAGIC) and head[8] == BEGIN and head[_REC.size:] == MAGIC


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if pos >= len(buf) or shift > 35:
            raise ValueError("a varint runs past its record")
        b = buf[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if not b & 0x80:
            return out, pos
        shift += 7


def _slice(buf: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = _varint(buf, pos)
    if pos + n > len(buf):
        raise ValueError("a length-prefixed field runs past its record")
    return buf[pos:pos + n], pos + n


def _batch(data: bytes, ts: int, rows: list, skipped: Counter):
    """A WriteBatch's ops, in its order."""
    if len(data) < 12:
        raise ValueError("a write batch shorter than its 12-byte head")
    pos = 12
    while pos < len(data):
        tag = data[pos]
        pos += 1
        if tag in (CF_PUT, CF_DELETE, CF_SINGLE_DELETE, CF_MERGE, CF_RANGE_DELETE, CF_BLOB_INDEX):
            _, pos = _varint(data, pos)
        if tag in (PUT, CF_PUT):
            key, pos = _slice(data, pos)
            value, pos = _slice(data, pos)
            rows.append((ts, 0, "write", key, len(value)))
        elif tag in (DELETE, CF_DELETE, SINGLE_DELETE, CF_SINGLE_DELETE):
            key, pos = _slice(data, pos)
            rows.append((ts, 0, "delete", key, 0))
        elif tag in (MERGE, CF_MERGE, RANGE_DELETE, CF_RANGE_DELETE, BLOB_INDEX, CF_BLOB_INDEX):
            _, pos = _slice(data, pos)
            _, pos = _slice(data, pos)
            skipped[{MERGE: "merge", CF_MERGE: "merge", RANGE_DELETE: "delete_range",
                     CF_RANGE_DELETE: "delete_range"}.get(tag, "blob_index")] += 1
        elif tag == LOG_DATA:
            _, pos = _slice(data, pos)
        elif tag in XID_MARKERS:
            _, pos = _slice(data, pos)
        elif tag in MARKERS:
            pass
        else:
            raise ValueError(f"a write batch record of tag {tag:#x}, which RocksDB's format does not define")


def read(path) -> imported.Trace:
    path = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TraceError(f"trace {path!r}: cannot read it: {exc.strerror}") from None
    rows: list = []
    skipped: Counter = Counter()
    pos, version, rocksdb_version, ended = 0, None, None, False
    while pos < len(data):
        if len(data) < pos + _REC.size:
            raise TraceError(f"RocksDB trace {path!r} is cut short at byte {pos} (a record's head)")
        ts, kind, n = _REC.unpack_from(data, pos)
        if version is None and (kind != BEGIN or data[_REC.size:_REC.size + len(MAGIC)] != MAGIC):
            raise TraceError(f"{path!r} is not a RocksDB trace (no kTraceBegin record with {MAGIC.decode()})")
        body = data[pos + _REC.size:pos + _REC.size + n]
        if len(body) < n:
            raise TraceError(f"RocksDB trace {path!r} is cut short at byte {len(data)}: a record of {n} bytes from "
                             f"byte {pos + _REC.size}")
        at = pos
        pos += _REC.size + n
        if version is None:
            fields = body.decode("utf-8", "replace").split("\t")
            version = next((f.split(":", 1)[1].strip() for f in fields if f.startswith("Trace Version:")), "0.1")
            rocksdb_version = next((f.split(":", 1)[1].strip() for f in fields if f.startswith("RocksDB Version:")),
                                   None)
            continue
        try:
            _record(kind, body, ts * 1000, version != "0.1", rows, skipped)
        except (ValueError, IndexError, struct.error) as exc:
            raise TraceError(f"RocksDB trace {path!r}: the record at byte {at} (type {kind}) is damaged: {exc}") \
                from None
        if kind == END:
            ended = True
            break
    if version is None:
        raise TraceError(f"{path!r} is empty: not a RocksDB trace")
    source = {"trace_version": version, "rocksdb_version": rocksdb_version, "ended": ended}
    return imported.build(path, FORMAT, rows, skipped, source)


def _record(kind: int, body: bytes, ts: int, mapped: bool, rows: list, skipped: Counter):
    if kind == END:
        return
    if kind == WRITE:
        if mapped:
            batch, _ = _slice(body, 8)
        else:
            batch = body
        _batch(batch, ts, rows, skipped)
    elif kind in (GET, SEEK):
        pos = 8 if mapped else 0
        pos += 4   # column family
        key, _ = _slice(body, pos)
        rows.append((ts, 0, "read" if kind == GET else "seek", key, 0))
    elif kind == MULTIGET:
        pos = 8 + 4   # bitmap, count
        _, pos = _slice(body, pos)   # the families
        keys, _ = _slice(body, pos)
        kpos = 0
        while kpos < len(keys):
            key, kpos = _slice(keys, kpos)
            rows.append((ts, 0, "read", key, 0))
    else:
        skipped[TYPE_NAMES.get(kind, f"type {kind}")] += 1
