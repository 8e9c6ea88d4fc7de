"""SQLite's own account of what it wrote and read in a phase (kvlab.results.amplification's engine figure)."""
from ..descriptor import EngineCounters, stat, stat_delta


def _sqlite(before, after, log_text, state) -> dict:
    pages = stat_delta(before, after, "cache_write")
    size = stat(after, "page_size")
    if pages is None or not size:
        return {"bytes_written": None, "blocks_read": None, "source": "SQLite sqlite3_db_status",
                "note": "SQLite's connection statistics are missing"}
    return {"bytes_written": pages * size, "pages_written": pages, "page_size": size,
            "blocks_read": stat_delta(before, after, "cache_miss"),
            "source": "SQLite sqlite3_db_status over every thread's connection: pages committed into the WAL "
                      "(SQLITE_DBSTATUS_CACHE_WRITE) x page size; pages read into the caches (CACHE_MISS)",
            "note": "the checkpoints' copies of WAL pages into the database file and the WAL's frame headers are "
                    "not counted; a cache miss may be served by the OS page cache"}


COUNTERS = EngineCounters(_sqlite)
