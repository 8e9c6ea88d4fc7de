"""RocksDB's engine events: what its native `stats` call returns (numbers and text), as named fields and the
periods of background work they mark (kvlab.results.events)."""
import re

from ..descriptor import EngineEvents, Field, pick

_GB = 1024.0 ** 3   # RocksDB's "GB" in its stats text is GiB (bytes / (1 << 30))
_RDB_PROPS = {
    "running_flushes": "num-running-flushes", "running_compactions": "num-running-compactions",
    "immutable_memtables": "num-immutable-mem-table", "memtable_bytes": "cur-size-all-mem-tables",
    "pending_compaction_bytes": "estimate-pending-compaction-bytes",
    "delayed_write_rate_bytes_per_s": "actual-delayed-write-rate", "sst_bytes": "total-sst-files-size",
    "write_stopped": "is-write-stopped",
}
_RDB_COMPACTION = re.compile(r"^Cumulative compaction: ([0-9.]+) GB write, [0-9.]+ MB/s write, ([0-9.]+) GB read, "
                             r"[0-9.]+ MB/s read, ([0-9.]+) seconds", re.M)
_RDB_FLUSH = re.compile(r"^Flush\(GB\): cumulative ([0-9.]+)", re.M)
_RDB_STALL = re.compile(r"^Cumulative stall: (\d+):(\d+):([0-9.]+) H:M:S", re.M)
_RDB_STALLS = re.compile(r"^Stalls\(count\): (.*)$", re.M)


def _rdb_levels(text: str) -> dict:
    """From the first per-level compaction table: jobs that wrote into L0 (flushes, and intra-L0 compactions) and
    compactions into L1 and below (Comp(cnt))."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Level") and "Comp(cnt)" in line:
            header = line.split()
            col = header.index("Comp(cnt)") + 1   # "Size" is two tokens in a row ("972.28 KB")
            l0 = deeper = 0   # a level without a row has had no jobs: RocksDB lists those with files or stats
            for row in lines[i + 2:]:
                tok = row.split()
                if not tok or not re.fullmatch(r"L\d+", tok[0]) or len(tok) <= col:
                    break
                try:
                    n = int(tok[col])
                except ValueError:
                    return {}
                if tok[0] == "L0":
                    l0 = n
                else:
                    deeper = (deeper or 0) + n
            return {"l0_jobs": l0, "compactions": deeper}
    return {}


def _rocksdb(numbers: dict, text: str) -> dict:
    out = pick(numbers, _RDB_PROPS)
    m = _RDB_COMPACTION.search(text)
    if m:
        out["compaction_write_bytes"] = round(float(m.group(1)) * _GB)
        out["compaction_read_bytes"] = round(float(m.group(2)) * _GB)
        out["compaction_seconds"] = float(m.group(3))
    m = _RDB_FLUSH.search(text)
    if m:
        out["flush_bytes"] = round(float(m.group(1)) * _GB)
    m = _RDB_STALL.search(text)
    if m:
        out["stall_seconds"] = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    m = _RDB_STALLS.search(text)
    if m:   # "0 level0_slowdown, ..., 5 memtable_compaction, 0 memtable_slowdown, interval 5 total count"
        counts = [int(x) for x, name in re.findall(r"(\d+) ([a-z0-9_]+)", m.group(1).split(", interval")[0])]
        out["stalls"] = sum(counts)
    out.update(_rdb_levels(text))
    return out


EVENTS = EngineEvents(_rocksdb, {
    "running_flushes": Field("count", "gauge", "rocksdb.num-running-flushes"),
    "running_compactions": Field("count", "gauge", "rocksdb.num-running-compactions"),
    "immutable_memtables": Field("count", "gauge", "rocksdb.num-immutable-mem-table"),
    "memtable_bytes": Field("bytes", "gauge", "rocksdb.cur-size-all-mem-tables"),
    "pending_compaction_bytes": Field("bytes", "gauge", "rocksdb.estimate-pending-compaction-bytes"),
    "delayed_write_rate_bytes_per_s": Field("bytes/s", "gauge",
                                            "rocksdb.actual-delayed-write-rate (0: writes not delayed)"),
    "sst_bytes": Field("bytes", "gauge", "rocksdb.total-sst-files-size"),
    "write_stopped": Field("flag", "gauge", "rocksdb.is-write-stopped (1: writes stopped at the interval's end)"),
    "compaction_write_bytes": Field("bytes", "counter", "rocksdb.stats 'Cumulative compaction: ... GB write' "
                                                        "(flushes included; to 0.01 GiB)"),
    "compaction_read_bytes": Field("bytes", "counter", "rocksdb.stats 'Cumulative compaction: ... GB read' "
                                                       "(to 0.01 GiB)"),
    "compaction_seconds": Field("s", "counter", "rocksdb.stats 'Cumulative compaction: ... seconds' "
                                                "(flushes included; to 0.1 s)"),
    "flush_bytes": Field("bytes", "counter", "rocksdb.stats 'Flush(GB): cumulative' (to 0.001 GiB)"),
    "stall_seconds": Field("s", "counter", "rocksdb.stats 'Cumulative stall' (H:M:S, to 1 ms)"),
    "stalls": Field("count", "counter", "rocksdb.stats 'Stalls(count)', every cause summed"),
    "l0_jobs": Field("count", "counter", "rocksdb.stats compaction table, L0's Comp(cnt): flushes and "
                                         "intra-L0 compactions"),
    "compactions": Field("count", "counter", "rocksdb.stats compaction table, Comp(cnt) of L1 and below"),
}, periods={
    "flush": ("running_flushes", "flush_bytes", "l0_jobs"),
    "compaction": ("running_compactions", "compactions", "compaction_read_bytes"),
    "stall": ("delayed_write_rate_bytes_per_s", "write_stopped", "stall_seconds", "stalls"),
})
