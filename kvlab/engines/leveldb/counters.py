"""LevelDB's own account of what it wrote and read in a phase (kvlab.results.amplification's engine figure)."""
import re

from ..descriptor import EngineCounters, no_log

_LDB_FLUSH = re.compile(r"Level-0 table #\d+: (\d+) bytes OK")
_LDB_COMPACTION = re.compile(r"Generated table #\d+@\d+: \d+ keys, (\d+) bytes")


def _leveldb(before, after, log_text, state) -> dict:
    if log_text is None:
        return no_log("LevelDB")
    flush = sum(int(m.group(1)) for m in _LDB_FLUSH.finditer(log_text))
    compaction = sum(int(m.group(1)) for m in _LDB_COMPACTION.finditer(log_text))
    return {"bytes_written": flush + compaction, "flush_bytes": flush, "compaction_bytes": compaction,
            "wal_bytes": None, "blocks_read": None,
            "source": "LevelDB: table files written by memtable flushes ('Level-0 table #N: B bytes OK') and "
                      "compactions ('Generated table ... B bytes') in its LOG (exact bytes)",
            "note": "LevelDB counts neither its log (WAL) bytes nor block reads: the engine figure is table files only"}


COUNTERS = EngineCounters(_leveldb, log_file="LOG")
