"""fjall's own account of its configuration: the block cache it was opened with, as the shim reports it (the adapter's
stats call)."""
from __future__ import annotations

from pathlib import Path


def own_config(path: Path, stats: dict | None) -> dict:
    numbers = (stats or {}).get("numbers") or {}
    return {"cache_size": numbers["cache_capacity"]} if "cache_capacity" in numbers else {}
