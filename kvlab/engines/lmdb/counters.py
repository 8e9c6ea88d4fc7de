"""LMDB's own account of what it wrote and read in a phase (kvlab.results.amplification's engine figure)."""
from ..descriptor import EngineCounters


def _lmdb(before, after, log_text, state) -> dict:
    return {"bytes_written": None, "blocks_read": None, "source": "LMDB mdb_env_info / mdb_env_stat",
            "note": "LMDB counts no pages written or read (its statistics are page counts of the tree and the "
                    "last page number): no engine figure"}


COUNTERS = EngineCounters(_lmdb)
