"""Badger's engine events: what the adapter's `stats` call returns (the shim's reading of DB.Size, DB.Tables and
the block cache's metrics), as named fields (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _badger(numbers: dict, text: str) -> dict:
    return pick(numbers, {k: k for k in FIELDS})


FIELDS = {
    "lsm_size": Field("bytes", "gauge", "DB.Size: the LSM-tree's tables"),
    "vlog_size": Field("bytes", "gauge", "DB.Size: the value log files"),
    "table_count": Field("count", "gauge", "tables, all levels"),
    "l0_table_count": Field("count", "gauge", "of which in level 0"),
    "cache_hits": Field("count", "counter", "block cache hits"),
    "cache_misses": Field("count", "counter", "block cache misses"),
}

EVENTS = EngineEvents(_badger, FIELDS)
