"""SQLite's own account of its configuration: the PRAGMA values its stats call reads on the adapter's own
connection (each thread's connection runs the same PRAGMAs), and each thread connection's cache."""
from __future__ import annotations

from pathlib import Path

_KEYS = {"page_size": "page_size", "wal_autocheckpoint": "wal_autocheckpoint", "mmap_size": "mmap_size",
         "secure_delete": "secure_delete", "auto_vacuum": "auto_vacuum", "cache_size_kib_per_thread":
         "thread_cache_kib"}
_SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def own_config(path: Path, stats: dict | None) -> dict:
    numbers = (stats or {}).get("numbers") or {}
    out: dict = {k: numbers[key] for k, key in _KEYS.items() if key in numbers}
    if "synchronous" in numbers:
        out["synchronous"] = _SYNCHRONOUS.get(numbers["synchronous"], numbers["synchronous"])
    if numbers:
        out["journal_mode"] = "wal"   # engine_sqlite.c opens every database in WAL mode
    return out
