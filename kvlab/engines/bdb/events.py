"""Berkeley DB's engine events: what its native `stats` call returns (numbers and text), as named fields and the
periods of background work they mark (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _bdb(numbers: dict, text: str) -> dict:
    return pick(numbers, {"cache_hits": "cache_hit", "cache_misses": "cache_miss", "pages_read": "pages_read",
                           "pages_written": "pages_written", "page_size_bytes": "btree_pagesize",
                           "log_bytes": "log_bytes", "log_bytes_since_checkpoint": "log_bytes_since_checkpoint",
                           "commits": "txn_commits", "checkpoint_time_s": "last_checkpoint_time"})


EVENTS = EngineEvents(_bdb, {
    "cache_hits": Field("pages", "counter", "memp_stat st_cache_hit"),
    "cache_misses": Field("pages", "counter", "memp_stat st_cache_miss"),
    "pages_read": Field("pages", "counter", "memp_stat st_page_in"),
    "pages_written": Field("pages", "counter", "memp_stat st_page_out: dirty pages written out of the buffer "
                                               "pool (eviction, or a checkpoint)"),
    "page_size_bytes": Field("bytes", "gauge", "DB->stat bt_pagesize"),
    "log_bytes": Field("bytes", "counter", "log_stat st_w_mbytes, st_w_bytes: written to the log (txn variant)"),
    "log_bytes_since_checkpoint": Field("bytes", "gauge", "log_stat st_wc_mbytes, st_wc_bytes (txn variant)"),
    "commits": Field("count", "counter", "txn_stat st_ncommits (txn variant)"),
    "checkpoint_time_s": Field("s", "counter", "txn_stat st_time_ckp, the last checkpoint's time (Unix seconds; "
                                               "it rises when a checkpoint ends, 0 before any: the adapter's "
                                               "checkpoint thread takes one per 64 MiB of log or minute)"),
}, periods={"eviction": ("pages_written",), "checkpoint": ("checkpoint_time_s",)})
