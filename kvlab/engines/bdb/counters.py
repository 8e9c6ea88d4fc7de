"""Berkeley DB's own account of what it wrote and read in a phase (kvlab.results.amplification's engine figure)."""
from ..descriptor import EngineCounters, stat, stat_delta


def _bdb(before, after, log_text, state) -> dict:
    pages = stat_delta(before, after, "pages_written")
    size = stat(after, "btree_pagesize")
    if pages is None or not size:
        return {"bytes_written": None, "blocks_read": None, "source": "Berkeley DB memp_stat",
                "note": "Berkeley DB's buffer-pool statistics are missing"}
    return {"bytes_written": pages * size, "pages_written": pages, "page_size": size,
            "blocks_read": stat_delta(before, after, "pages_read"),
            "source": "Berkeley DB memp_stat: pages written out of the buffer pool (st_page_out) x page size; "
                      "pages read in (st_page_in)",
            "note": "its log is not counted; pages stay in the buffer pool until a checkpoint, eviction or close"}


COUNTERS = EngineCounters(_bdb)
