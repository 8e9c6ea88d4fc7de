"""LevelDB's engine events: what its native `stats` call returns (numbers and text), as named fields and the
periods of background work they mark (kvlab.results.events)."""
import re

from ..descriptor import EngineEvents, Field, pick

_LDB_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$", re.M)
_MB = 1048576


def _leveldb(numbers: dict, text: str) -> dict:
    out = pick(numbers, {"memory_bytes": "approximate_memory_usage", "l0_files": "num_files_at_level0"})
    files = [v for k, v in numbers.items() if k.startswith("num_files_at_level") and isinstance(v, int)]
    if files:
        out["files"] = sum(files)
    if "Compactions" in text:   # the table lists only levels that have files or compaction time
        rows = _LDB_ROW.findall(text)
        out["compaction_seconds"] = sum(float(r[3]) for r in rows)
        out["compaction_read_bytes"] = round(sum(float(r[4]) for r in rows) * _MB)
        out["compaction_write_bytes"] = round(sum(float(r[5]) for r in rows) * _MB)
    return out


EVENTS = EngineEvents(_leveldb, {
    "memory_bytes": Field("bytes", "gauge", "leveldb.approximate-memory-usage"),
    "l0_files": Field("count", "gauge", "leveldb.num-files-at-level0"),
    "files": Field("count", "gauge", "leveldb.num-files-at-level<N>, summed"),
    "compaction_seconds": Field("s", "counter", "leveldb.stats Time(sec), summed over levels (memtable flushes "
                                                "included; to 1 s a level)"),
    "compaction_read_bytes": Field("bytes", "counter", "leveldb.stats Read(MB), summed over levels (to 1 MB)"),
    "compaction_write_bytes": Field("bytes", "counter", "leveldb.stats Write(MB), summed over levels (memtable "
                                                        "flushes included; to 1 MB)"),
}, periods={"compaction": ("compaction_write_bytes", "compaction_read_bytes", "compaction_seconds")})
