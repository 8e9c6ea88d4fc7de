"""The generic engine settings (kv_config in cython_ext/include/kv_engine.h): what each one means, written once.
`kvlab run --set KEY=VALUE`, the run builder, the engine reference page and each configuration's `honours`
name them from here."""
from __future__ import annotations

from .. import errors

# setting -> what it means (kv_config's comment in kv_engine.h gives the C side of the same fields)
SETTINGS = {
    "cache_size": "the engine's own cache, bytes (not given: the engine's default; LMDB has none)",
    "sync": "flush the log (or the data) on every commit",
    "disable_wal": "no write-ahead log, where the engine allows it",
    "compression": "the block compression: none, snappy, lz4, zstd (each configuration lists what it takes)",
    "map_size": "LMDB's map size, bytes: the largest its data file can grow",
    "block_size": "the table's block (or page) size, bytes",
    "bloom_bits": "bloom filter bits per key (0: none)",
    "write_buffer_size": "an LSM tree's memtable size, bytes",
    "max_open_files": "table files kept open (-1: unlimited)",
    "options": "the engine's own option string (RocksDB options string, WiredTiger connection config, LMDB "
               "flag list, LevelDB key=value list)",
    "table_options": "WiredTiger's table config string",
}
ENGINE_SETTINGS = tuple(SETTINGS)

# what an LSM engine honours, and which of them a table file records when it is written (a reopen may change them)
LSM_SETTINGS = frozenset({"cache_size", "sync", "disable_wal", "compression", "block_size", "bloom_bits",
                          "write_buffer_size", "max_open_files", "options"})
LSM_TABLE_FILES = ("compression", "block_size", "bloom_bits", "write_buffer_size", "options")


def parse_setting(item: str, where: str) -> tuple:
    """One engine setting written as KEY=VALUE (`kvlab run --set`, the run builder's options):
    integers and true/false become such, anything else stays a string.  `where` names the
    input in the error."""
    key, sep, value = item.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or key not in SETTINGS:
        raise errors.SpecError(f"{where} ({item!r}): expected KEY=VALUE; allowed keys: {', '.join(SETTINGS)}")
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
    try:
        return key, int(value)
    except ValueError:
        return key, value
