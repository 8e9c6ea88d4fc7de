"""libmdbx's own account of its configuration: what mdbx_env_info_ex and mdbx_env_stat_ex return (the adapter's stats
call), its map size, page size and reader slots."""
from __future__ import annotations

from pathlib import Path

_KEYS = {"map_size": "map_size", "page_size": "page_size", "max_readers": "max_readers"}


def own_config(path: Path, stats: dict | None) -> dict:
    numbers = (stats or {}).get("numbers") or {}
    return {k: numbers[key] for k, key in _KEYS.items() if key in numbers}
