"""redb's own account of its configuration: the cache it was opened with and its page size, as the shim reports them
(the adapter's stats call)."""
from __future__ import annotations

from pathlib import Path

_KEYS = {"cache_size": "cache_size", "page_size": "page_size"}


def own_config(path: Path, stats: dict | None) -> dict:
    numbers = (stats or {}).get("numbers") or {}
    return {k: numbers[key] for k, key in _KEYS.items() if key in numbers}
