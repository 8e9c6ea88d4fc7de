"""BerkeleyDB's own account of its configuration: what its stats call returns (DB->stat's page size) and a
DB_CONFIG file where one is in the environment's directory (it overrides what the adapter set)."""
from __future__ import annotations

from pathlib import Path

_KEYS = {"page_size": "btree_pagesize"}


def own_config(path: Path, stats: dict | None) -> dict:
    numbers = (stats or {}).get("numbers") or {}
    out: dict = {k: numbers[key] for k, key in _KEYS.items() if key in numbers}
    try:
        lines = (Path(path) / "DB_CONFIG").read_text(errors="replace").splitlines()
    except OSError:
        lines = []
    for line in lines:
        name, _, value = line.strip().partition(" ")
        if name and not name.startswith("#"):
            out[f"DB_CONFIG.{name}"] = value.strip()
    return out
