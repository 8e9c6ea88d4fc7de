"""Pebble's engine events: what the adapter's `stats` call returns (the shim's reading of DB.Metrics: WAL bytes,
flushes, compactions, tables, bytes written per level, the block cache), as named fields (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _pebble(numbers: dict, text: str) -> dict:
    return pick(numbers, {k: k for k in FIELDS})


FIELDS = {
    "disk_space": Field("bytes", "gauge", "Metrics.DiskSpaceUsage: WAL, tables, manifest and obsolete files"),
    "wal_bytes_in": Field("bytes", "counter", "bytes written to the WAL as logical records"),
    "wal_bytes_written": Field("bytes", "counter", "bytes the WAL wrote to its files (with its framing)"),
    "flush_count": Field("count", "counter", "memtable flushes"),
    "compact_count": Field("count", "counter", "compactions"),
    "memtable_size": Field("bytes", "gauge", "bytes in memtables, the mutable one and those waiting to flush"),
    "table_count": Field("count", "gauge", "tables (SST files), all levels"),
    "l0_table_count": Field("count", "gauge", "of which in level 0"),
    "bytes_flushed": Field("bytes", "counter", "table bytes written by flushes"),
    "bytes_compacted": Field("bytes", "counter", "table bytes written by compactions"),
    "cache_size": Field("bytes", "gauge", "bytes in the block cache"),
    "cache_hits": Field("count", "counter", "block cache hits"),
    "cache_misses": Field("count", "counter", "block cache misses"),
}

EVENTS = EngineEvents(_pebble, FIELDS, periods={"compaction": ("compact_count",), "flush": ("flush_count",)})
