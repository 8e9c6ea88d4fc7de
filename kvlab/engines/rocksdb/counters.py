"""RocksDB's own account of what it wrote and read in a phase (kvlab.results.amplification's engine figure)."""
import json
import re
from typing import Any

from ..descriptor import EngineCounters, no_log

_GIB = 1024.0 ** 3
_RDB_WAL = re.compile(r"Cumulative WAL: .*?written: ([0-9.]+) GB")
_RDB_EVENT = re.compile(r"EVENT_LOG_v1 (\{.*\})\s*$")


def _rocksdb(before, after, log_text, state) -> dict:
    if log_text is None:
        return no_log("RocksDB")
    jobs = state.setdefault("jobs", {})
    flush = compaction = 0
    for line in log_text.splitlines():
        m = _RDB_EVENT.search(line)
        if not m:
            continue
        try:
            ev = json.loads(m.group(1))
        except ValueError:
            continue
        kind = ev.get("event")
        if kind in ("flush_started", "compaction_started"):
            jobs[ev.get("job")] = kind
        elif kind == "table_file_creation":
            if jobs.get(ev.get("job")) == "flush_started":
                flush += int(ev.get("file_size", 0))
            else:
                compaction += int(ev.get("file_size", 0))
    out: dict[str, Any] = {
        "flush_bytes": flush, "compaction_bytes": compaction, "wal_bytes": None, "blocks_read": None,
        "source": "RocksDB: flush and compaction output from its LOG's table_file_creation events (exact bytes) "
                  "+ WAL bytes from its rocksdb.stats 'Cumulative WAL ... written' (to 0.01 GiB)",
        "note": "RocksDB counts no block reads unless its statistics are on (kvlab leaves them off)"}
    wal = [_RDB_WAL.search((s or {}).get("text") or "") for s in (before, after)]
    if wal[1] is not None:
        out["wal_bytes"] = round((float(wal[1].group(1)) - (float(wal[0].group(1)) if wal[0] else 0.0)) * _GIB)
        out["bytes_written"] = flush + compaction + out["wal_bytes"]
    else:
        out["bytes_written"] = flush + compaction
        out["note"] += "; no WAL figure in its statistics: tables only"
    return out


COUNTERS = EngineCounters(_rocksdb, log_file="LOG")
