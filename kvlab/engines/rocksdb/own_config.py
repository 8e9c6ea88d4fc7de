"""RocksDB's own account of its configuration: the newest OPTIONS-NNNNNN file it wrote into the database
directory (every DB, column-family and table option, as RocksDB prints them) and the block cache's capacity from
its LOG (the OPTIONS file names the cache only as a pointer)."""
from __future__ import annotations

import re
from pathlib import Path

_SECTION = re.compile(r'^\[(\w+)(?:/(\w+))?(?: "([^"]*)")?\]\s*$')
_CAPACITY = re.compile(r"^\s*capacity\s*:\s*(\d+)\s*$", re.M)


def options_file(path: Path) -> Path | None:
    """The newest OPTIONS-NNNNNN in `path`, or None."""
    try:
        found = [p for p in Path(path).glob("OPTIONS-*") if p.name[8:].isdigit()]
    except OSError:
        return None
    return max(found, key=lambda p: int(p.name[8:]), default=None)


def parse_options(text: str) -> dict:
    """An OPTIONS file as {"DBOptions.name": value, "CFOptions.name": value, "TableOptions.name": value, ...};
    a column family other than "default" keeps its name ("CFOptions[cf].name")."""
    out: dict = {}
    prefix = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _SECTION.match(line)
        if m:
            kind, _sub, name = m.groups()
            prefix = kind if name in (None, "default") else f"{kind}[{name}]"
            continue
        if prefix is not None and "=" in line:
            key, _, value = line.partition("=")
            out[f"{prefix}.{key.strip()}"] = value.strip()
    return out


def own_config(path: Path, stats: dict | None) -> dict:
    opts = options_file(path)
    if opts is None:
        return {}
    try:
        out = parse_options(opts.read_text(errors="replace"))
    except OSError:
        return {}
    try:
        m = _CAPACITY.search((Path(path) / "LOG").read_text(errors="replace"))
    except OSError:
        m = None
    if m:
        out["block_cache.capacity"] = m.group(1)
    return out
