"""WiredTiger's own account of its configuration: the persistent connection settings it wrote to
WiredTiger.basecfg, the cache it runs with (its statistic "cache: maximum bytes configured"), and the table's
configuration as its metadata file (WiredTiger.wt) stores it, every default filled in."""
from __future__ import annotations

import re
from pathlib import Path

from ..descriptor import config_pairs

# the metadata keys of kvlab's table (engine_wiredtiger.c: table:kvlab over file:kvlab.wt, or lsm:kvlab)
_TABLE_KEYS = (b"file:kvlab.wt", b"lsm:kvlab")
# the first key of a stored configuration (WiredTiger keeps them sorted): where the value's text starts, past
# the packed length before it
_FIRST_KEYS = ("access_pattern_hint=", "app_metadata=", "bloom=", "chunks=", "key_format=")
_TEXT = re.compile(rb"[\x20-\x7e]{4,}")
# what changes with every checkpoint, not a setting
_NOT_SETTINGS = ("checkpoint", "checkpoint_lsn", "checkpoint_backup_info", "id", "version", "chunks", "last",
                 "old_chunks")
_STATS = {"cache_size": "cache: maximum bytes configured",
          "eviction_target_bytes": "cache: eviction target bytes"}


def _value_text(run: str) -> str:
    starts = [i for i in (run.find(k) for k in _FIRST_KEYS) if 0 <= i <= 2]
    return run[min(starts):] if starts else run


def table_config(path: Path) -> dict:
    """kvlab's table as WiredTiger.wt records it: the last entry found (older copies may linger in free
    blocks)."""
    try:
        data = (Path(path) / "WiredTiger.wt").read_bytes()
    except OSError:
        return {}
    runs = [m.group(0) for m in _TEXT.finditer(data)]
    found = None
    for i, run in enumerate(runs[:-1]):
        if any(run.endswith(k) for k in _TABLE_KEYS) and b"format=" in runs[i + 1]:
            found = runs[i + 1].decode("ascii")
    if found is None:
        return {}
    return {k: v for k, v in config_pairs(_value_text(found)).items() if k not in _NOT_SETTINGS}


def base_config(path: Path) -> dict:
    try:
        text = (Path(path) / "WiredTiger.basecfg").read_text(errors="replace")
    except OSError:
        return {}
    out: dict = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            out.update(config_pairs(line.strip()))
    return out


def own_config(path: Path, stats: dict | None) -> dict:
    numbers = (stats or {}).get("numbers") or {}
    out = {f"connection.{k}": v for k, v in base_config(path).items()}
    out.update({f"connection.{k}": numbers[key] for k, key in _STATS.items() if key in numbers})
    out.update({f"table.{k}": v for k, v in table_config(path).items()})
    return out
