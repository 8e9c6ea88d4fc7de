"""fjall's engine events: what the adapter's `stats` call returns (the shim's reading of fjall's own counters: disk
space, journals, tables, memtables, compactions, the block cache, and the commits the shim counts), as named fields
(kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _fjall(numbers: dict, text: str) -> dict:
    return pick(numbers, {k: k for k in FIELDS})


FIELDS = {
    "disk_space": Field("bytes", "gauge", "Database::disk_space: journals, tables and blob files (a live journal is "
                                          "preallocated: 64 MiB while open)"),
    "journal_disk_space": Field("bytes", "gauge", "of which journals"),
    "journal_count": Field("count", "gauge", "journal files"),
    "table_count": Field("count", "gauge", "the keyspace's tables (SST files), all levels"),
    "l0_table_count": Field("count", "gauge", "of which in level 0"),
    "write_buffer_size": Field("bytes", "gauge", "bytes in memtables, active and sealed"),
    "outstanding_flushes": Field("count", "gauge", "sealed memtables waiting to be flushed"),
    "active_compactions": Field("count", "gauge", "compactions running"),
    "compactions_completed": Field("count", "counter", "compactions finished"),
    "cache_used": Field("bytes", "gauge", "bytes in the block cache"),
    "commits": Field("count", "counter", "write transactions committed through the shim"),
    "durable_commits": Field("count", "counter", "of them with SyncData or SyncAll"),
}

EVENTS = EngineEvents(_fjall, FIELDS)
