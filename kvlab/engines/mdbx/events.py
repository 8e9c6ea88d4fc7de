"""libmdbx's engine events: what its native `stats` call returns (mdbx_env_info_ex, mdbx_env_stat_ex), as named fields
and the periods of background work they mark (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _mdbx(numbers: dict, text: str) -> dict:
    return pick(numbers, {"last_page": "last_pgno", "file_size": "file_size", "branch_pages": "branch_pages",
                           "leaf_pages": "leaf_pages", "overflow_pages": "overflow_pages", "depth": "depth",
                           "entries": "entries", "readers": "num_readers", "transactions": "last_txnid",
                           "unsynced": "unsync_bytes", "pages_new": "pages_new", "pages_cow": "pages_cow",
                           "page_splits": "page_splits", "page_merges": "page_merges",
                           "pages_spilled": "pages_spilled", "write_ops": "write_ops", "fsyncs": "fsyncs"})


EVENTS = EngineEvents(_mdbx, {
    "last_page": Field("pages", "gauge", "mdbx_env_info mi_last_pgno: the file's high-water page"),
    "file_size": Field("bytes", "gauge", "mdbx_env_info mi_dxb_fsize: the data file's size (its geometry grows it)"),
    "branch_pages": Field("pages", "gauge", "mdbx_env_stat ms_branch_pages"),
    "leaf_pages": Field("pages", "gauge", "mdbx_env_stat ms_leaf_pages"),
    "overflow_pages": Field("pages", "gauge", "mdbx_env_stat ms_overflow_pages (large values)"),
    "depth": Field("count", "gauge", "mdbx_env_stat ms_depth"),
    "entries": Field("count", "gauge", "mdbx_env_stat ms_entries"),
    "readers": Field("count", "gauge", "mdbx_env_info mi_numreaders: reader slots used"),
    "transactions": Field("count", "counter", "mdbx_env_info mi_recent_txnid: write transactions committed"),
    "unsynced": Field("bytes", "gauge", "mdbx_env_info mi_unsync_volume: written since the last steady commit "
                                        "(a no-sync mode)"),
    "pages_new": Field("pages", "counter", "mi_pgop_stat.newly: pages added"),
    "pages_cow": Field("pages", "counter", "mi_pgop_stat.cow: pages copied for an update"),
    "page_splits": Field("count", "counter", "mi_pgop_stat.split"),
    "page_merges": Field("count", "counter", "mi_pgop_stat.merge"),
    "pages_spilled": Field("pages", "counter", "mi_pgop_stat.spill: dirty pages a large transaction wrote early"),
    "write_ops": Field("count", "counter", "mi_pgop_stat.wops: explicit write calls (not pages)"),
    "fsyncs": Field("count", "counter", "mi_pgop_stat.fsync: explicit fsyncs"),
})
