"""The generic engine settings (kv_config in cython_ext/include/kv_engine.h): what each one means, written once.
`kvlab run --set KEY=VALUE`, the run builder, the engine reference page and each configuration's `honours`
name them from here."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .. import errors


@dataclass(frozen=True)
class Setting:
    """One generic setting: what it means, and the values kv_config's field holds (`kind`: "int" in [lo, hi],
    "bool", or "text"; sizes are uint64 in C, the rest int)."""
    meaning: str
    kind: str
    lo: int = 0
    hi: int = 0


_SIZE = 2 ** 62
_INT = 2 ** 31 - 1
# setting -> what it is (kv_config's comments in kv_engine.h give the C side of the same fields)
SETTINGS: dict[str, Setting] = {
    "cache_size": Setting("the engine's own cache, bytes (not given: the engine's default; LMDB has none)",
                          "int", 0, _SIZE),
    "sync": Setting("flush the log (or the data) on every commit", "bool"),
    "disable_wal": Setting("no write-ahead log, where the engine allows it", "bool"),
    "compression": Setting("the block compression: none, snappy, lz4, zstd (each configuration lists what it takes)",
                           "text"),
    "map_size": Setting("LMDB's map size, bytes: the largest its data file can grow", "int", 0, _SIZE),
    "block_size": Setting("the table's block (or page) size, bytes", "int", 0, _INT),
    # beyond 100 bits a key is none of LevelDB's or RocksDB's (LevelDB's overflowed and aborted)
    "bloom_bits": Setting("bloom filter bits per key (0: none)", "int", 0, 100),
    "write_buffer_size": Setting("an LSM tree's memtable size, bytes", "int", 0, _SIZE),
    "max_open_files": Setting("table files kept open (-1: unlimited)", "int", -1, _INT),
    "options": Setting("the engine's own option string (RocksDB options string, WiredTiger connection config, LMDB "
                       "flag list, LevelDB key=value list)", "text"),
    "table_options": Setting("WiredTiger's table config string", "text"),
}
ENGINE_SETTINGS = tuple(SETTINGS)

# what an LSM engine honours, and which of them a table file records when it is written (a reopen may change them)
LSM_SETTINGS = frozenset({"cache_size", "sync", "disable_wal", "compression", "block_size", "bloom_bits",
                          "write_buffer_size", "max_open_files", "options"})
LSM_TABLE_FILES = ("compression", "block_size", "bloom_bits", "write_buffer_size", "options")


_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40,
               "tib": 1 << 40}


def size_in_bytes(value) -> int | None:
    """Bytes from 536870912, '512M', '512MiB', '2G', '1.5g' (binary units); None for what is no size (a bool
    included).  The callers say what is allowed: model.spec.memory_bytes, parse_setting here, and the LinkBench
    cgroup's parse_size."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", str(value))
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        return None
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


BYTE_SETTINGS = ("cache_size", "map_size", "write_buffer_size", "block_size")   # a size: bytes, or 1GiB, 64M


def parse_setting(item: str, where: str) -> tuple:
    """One engine setting written as KEY=VALUE (`kvlab run --set`, the run builder's options):
    integers and true/false become such, anything else stays a string.  `where` names the
    input in the error."""
    key, sep, value = item.partition("=")
    key, value = key.strip(), value.strip()
    if not sep:
        raise errors.SpecError(f"{where} ({item!r}): expected KEY=VALUE; allowed keys: {', '.join(SETTINGS)}")
    if key not in SETTINGS:
        raise errors.SpecError(f"{where} ({item!r}): {key!r} is no engine setting; allowed keys: "
                               f"{', '.join(SETTINGS)} (an engine's own option goes in options=...)")
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    if key in BYTE_SETTINGS:   # 1GiB, 64M as --memory takes them
        n = size_in_bytes(value)
        if n is not None:
            return key, n
    try:
        return key, int(value)
    except ValueError:
        return key, value
