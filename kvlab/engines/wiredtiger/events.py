"""WiredTiger's engine events: what its native `stats` call returns (numbers and text), as named fields and the
periods of background work they mark (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick

_WT = {
    "checkpoint_running": "transaction: transaction checkpoint currently running",
    "checkpoints": "transaction: transaction checkpoints",
    "checkpoint_ms": "transaction: transaction checkpoint total time (msecs)",
    "checkpoint_bytes": "block-manager: bytes written for checkpoint",
    "cache_bytes": "cache: bytes currently in the cache",
    "cache_dirty_bytes": "cache: tracked dirty bytes in the cache",
    "pages_evicted_modified": "cache: modified pages evicted",
    "pages_evicted_unmodified": "cache: unmodified pages evicted",
    "pages_evicted_by_app": "cache: pages evicted by application threads",
    "app_eviction_us": "thread-yield: application thread time evicting (usecs)",
    "lsm_rows_merged": "LSM: rows merged in an LSM tree",
    "lsm_merge_queued": "LSM: merge work units currently queued",
    "lsm_merge_throttle_sleeps": "LSM: sleep for LSM merge throttle",
}


def _wiredtiger(numbers: dict, text: str) -> dict:
    return pick(numbers, _WT)


EVENTS = EngineEvents(_wiredtiger, {
    "checkpoint_running": Field("count", "gauge", _WT["checkpoint_running"]),
    "checkpoints": Field("count", "counter", _WT["checkpoints"]),
    "checkpoint_ms": Field("ms", "counter", _WT["checkpoint_ms"]),
    "checkpoint_bytes": Field("bytes", "counter", _WT["checkpoint_bytes"] + " (LSM chunks included)"),
    "cache_bytes": Field("bytes", "gauge", _WT["cache_bytes"]),
    "cache_dirty_bytes": Field("bytes", "gauge", _WT["cache_dirty_bytes"]),
    "pages_evicted_modified": Field("pages", "counter", _WT["pages_evicted_modified"]),
    "pages_evicted_unmodified": Field("pages", "counter", _WT["pages_evicted_unmodified"]),
    "pages_evicted_by_app": Field("pages", "counter", _WT["pages_evicted_by_app"]),
    "app_eviction_us": Field("us", "counter", _WT["app_eviction_us"]),
    "lsm_rows_merged": Field("rows", "counter", _WT["lsm_rows_merged"]),
    "lsm_merge_queued": Field("count", "gauge", _WT["lsm_merge_queued"]),
    "lsm_merge_throttle_sleeps": Field("count", "counter", _WT["lsm_merge_throttle_sleeps"]),
}, periods={
    "checkpoint": ("checkpoint_running", "checkpoints"),
    "compaction": ("lsm_rows_merged",),
    "eviction": ("pages_evicted_by_app", "app_eviction_us"),
})
