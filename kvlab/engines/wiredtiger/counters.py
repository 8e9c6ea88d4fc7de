"""WiredTiger's own account of what it wrote and read in a phase (kvlab.results.amplification's engine figure)."""
from ..descriptor import EngineCounters, stat_delta


def _wiredtiger(before, after, log_text, state) -> dict:
    blocks = stat_delta(before, after, "block-manager: bytes written")
    log = stat_delta(before, after, "log: log bytes written")
    if blocks is None:
        return {"bytes_written": None, "blocks_read": None, "source": "WiredTiger statistics",
                "note": "WiredTiger's statistics have no 'block-manager: bytes written' here"}
    return {"bytes_written": blocks + (log or 0), "block_manager_bytes": blocks, "log_bytes": log,
            "blocks_read": stat_delta(before, after, "block-manager: blocks read"),
            "bytes_read": stat_delta(before, after, "block-manager: bytes read"),
            "source": "WiredTiger statistics: 'block-manager: bytes written' + 'log: log bytes written'; "
                      "'block-manager: blocks read'", "note": None}


COUNTERS = EngineCounters(_wiredtiger)
