"""Badger's own account of its configuration: the block cache and memtable size it was opened with, as the shim
reports them (the adapter's stats call)."""
from __future__ import annotations

from pathlib import Path


def own_config(path: Path, stats: dict | None) -> dict:
    numbers = (stats or {}).get("numbers") or {}
    names = {"cache_capacity": "cache_size", "memtable_capacity": "write_buffer_size"}
    return {ours: numbers[theirs] for theirs, ours in names.items() if theirs in numbers}
