"""LevelDB's own account of its configuration: the `Options.*` lines of its LOG where the build writes them
(RocksDB's fork does; LevelDB 1.23 writes none), the comparator its MANIFEST names and the filter policy its
table files name (the only settings LevelDB records on disk)."""
from __future__ import annotations

import re
from pathlib import Path

_OPTION = re.compile(r"^\S+ \S+\s+Options\.(\S+?)\s*:\s*(.*?)\s*$", re.M)
_COMPARATOR = re.compile(rb"leveldb\.[A-Za-z]+Comparator")
# the metaindex's key "filter.<policy name>" (its value, a block handle, may follow in printable bytes)
_FILTER = re.compile(rb"filter\.(leveldb\.BuiltinBloomFilter2|[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*)")


def _head(path: Path, size: int = 1 << 16) -> bytes:
    with open(path, "rb") as f:
        return f.read(size)


def _tail(path: Path, size: int = 1 << 16) -> bytes:
    with open(path, "rb") as f:
        f.seek(0, 2)
        f.seek(max(f.tell() - size, 0))
        return f.read()


def own_config(path: Path, stats: dict | None) -> dict:
    path = Path(path)
    out: dict = {}
    try:
        out.update({f"Options.{k}": v for k, v in _OPTION.findall((path / "LOG").read_text(errors="replace"))})
    except OSError:
        pass
    try:
        manifests = sorted(path.glob("MANIFEST-*"))
        if manifests:
            m = _COMPARATOR.search(_head(manifests[-1]))
            if m:
                out["comparator"] = m.group(0).decode()
        tables = sorted(path.glob("*.ldb")) or sorted(path.glob("*.sst"))
        if tables:
            m = _FILTER.search(_tail(tables[-1]))
            out["filter_policy"] = m.group(1).decode() if m else "none"
    except OSError:
        pass
    return out
