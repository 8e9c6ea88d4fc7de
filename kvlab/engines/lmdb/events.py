"""LMDB's engine events: what its native `stats` call returns (numbers and text), as named fields and the
periods of background work they mark (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _lmdb(numbers: dict, text: str) -> dict:
    return pick(numbers, {"last_page": "last_pgno", "branch_pages": "branch_pages", "leaf_pages": "leaf_pages",
                           "overflow_pages": "overflow_pages", "depth": "depth", "entries": "entries",
                           "readers": "num_readers", "transactions": "last_txnid"})


EVENTS = EngineEvents(_lmdb, {
    "last_page": Field("pages", "gauge", "mdb_env_info me_last_pgno: the file's high-water page"),
    "branch_pages": Field("pages", "gauge", "mdb_env_stat ms_branch_pages"),
    "leaf_pages": Field("pages", "gauge", "mdb_env_stat ms_leaf_pages"),
    "overflow_pages": Field("pages", "gauge", "mdb_env_stat ms_overflow_pages"),
    "depth": Field("count", "gauge", "mdb_env_stat ms_depth"),
    "entries": Field("count", "gauge", "mdb_env_stat ms_entries"),
    "readers": Field("count", "gauge", "mdb_env_info me_numreaders"),
    "transactions": Field("count", "counter", "mdb_env_info me_last_txnid: write transactions committed"),
})
