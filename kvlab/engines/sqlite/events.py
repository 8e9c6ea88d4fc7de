"""SQLite's engine events: what its native `stats` call returns (PRAGMA figures of the database file, the WAL's
size and the connections' cache counters), as named fields (kvlab.results.events)."""
from ..descriptor import EngineEvents, Field, pick


def _sqlite(numbers: dict, text: str) -> dict:
    return pick(numbers, {"pages": "page_count", "free_pages": "freelist_count", "page_size_bytes": "page_size",
                          "wal_bytes": "wal_bytes", "cache_hits": "cache_hit", "cache_misses": "cache_miss",
                          "pages_written": "cache_write", "cache_spills": "cache_spill",
                          "memory_bytes": "memory_used"})


EVENTS = EngineEvents(_sqlite, {
    "pages": Field("pages", "gauge", "PRAGMA page_count: the database file's pages, as of the last checkpoint's "
                                    "view plus the WAL"),
    "free_pages": Field("pages", "gauge", "PRAGMA freelist_count: pages on the free list"),
    "page_size_bytes": Field("bytes", "gauge", "PRAGMA page_size"),
    "wal_bytes": Field("bytes", "gauge", "the size of the -wal file: it falls back when a checkpoint lets the WAL "
                                         "restart (or truncates it)"),
    "cache_hits": Field("pages", "counter", "sqlite3_db_status SQLITE_DBSTATUS_CACHE_HIT, over every thread's "
                                            "connection"),
    "cache_misses": Field("pages", "counter", "sqlite3_db_status SQLITE_DBSTATUS_CACHE_MISS: pages read from the "
                                              "WAL or the database file"),
    "pages_written": Field("pages", "counter", "sqlite3_db_status SQLITE_DBSTATUS_CACHE_WRITE: dirty pages "
                                               "written by commits (into the WAL)"),
    "cache_spills": Field("pages", "counter", "sqlite3_db_status SQLITE_DBSTATUS_CACHE_SPILL: dirty pages written "
                                              "before commit because the cache filled"),
    "memory_bytes": Field("bytes", "gauge", "sqlite3_memory_used: the process's SQLite heap"),
})
