"""Engine events: what each engine says about its background work (flushes, compactions, write stalls,
checkpoints, eviction), read from the `key=value` lines and the text its native `stats` call returns, and the
periods in which that work ran.

One registry row per adapter (`ENGINES`): a parser from (numbers, text) to named numeric fields, what each field
is (unit; a gauge read at the sample, or a cumulative counter whose increase over an interval is stored), and which
fields mark each kind of period.  A field the engine does not report is absent, never zero.  Each interval of a
result holds `events` (execution/intervals.py); `periods(result)` turns them into the spans `plots.timeline` shades.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Field:
    unit: str         # bytes, bytes/s, s, ms, us, count, pages, rows
    kind: str         # "gauge": its value at the interval's end; "counter": its increase over the interval
    what: str


@dataclass(frozen=True)
class EngineEvents:
    """How one adapter reports its background work."""
    parse: Callable[[dict, str], dict]          # (stats numbers, stats text) -> {field: number}
    fields: dict[str, Field]
    # period kind -> the fields that mark it: a gauge above 0 at either end of the interval, or a counter that grew
    periods: dict[str, tuple] = field(default_factory=dict)


# what each kind of period means, for a legend and the docs
PERIOD_KINDS = {
    "flush": "memtable flush running",
    "compaction": "compaction (or LSM merge) running",
    "checkpoint": "checkpoint running",
    "stall": "writes stalled or slowed by the engine",
    "eviction": "application threads evicting pages",
}


def _pick(numbers: dict, names: dict) -> dict:
    """{field: numbers[key]} for the keys present and numeric."""
    out = {}
    for name, key in names.items():
        v = numbers.get(key)
        if isinstance(v, (int, float)):
            out[name] = v
    return out


# --- RocksDB: its properties (numbers) and rocksdb.stats' cumulative lines (text) ---------------------------------

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
    out = _pick(numbers, _RDB_PROPS)
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


ROCKSDB = EngineEvents(_rocksdb, {
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


# --- LevelDB: its compaction table, summed over levels ---------------------------------------------------------

_LDB_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$", re.M)
_MB = 1048576


def _leveldb(numbers: dict, text: str) -> dict:
    out = _pick(numbers, {"memory_bytes": "approximate_memory_usage", "l0_files": "num_files_at_level0"})
    files = [v for k, v in numbers.items() if k.startswith("num_files_at_level") and isinstance(v, int)]
    if files:
        out["files"] = sum(files)
    if "Compactions" in text:   # the table lists only levels that have files or compaction time
        rows = _LDB_ROW.findall(text)
        out["compaction_seconds"] = sum(float(r[3]) for r in rows)
        out["compaction_read_bytes"] = round(sum(float(r[4]) for r in rows) * _MB)
        out["compaction_write_bytes"] = round(sum(float(r[5]) for r in rows) * _MB)
    return out


LEVELDB = EngineEvents(_leveldb, {
    "memory_bytes": Field("bytes", "gauge", "leveldb.approximate-memory-usage"),
    "l0_files": Field("count", "gauge", "leveldb.num-files-at-level0"),
    "files": Field("count", "gauge", "leveldb.num-files-at-level<N>, summed"),
    "compaction_seconds": Field("s", "counter", "leveldb.stats Time(sec), summed over levels (memtable flushes "
                                                "included; to 1 s a level)"),
    "compaction_read_bytes": Field("bytes", "counter", "leveldb.stats Read(MB), summed over levels (to 1 MB)"),
    "compaction_write_bytes": Field("bytes", "counter", "leveldb.stats Write(MB), summed over levels (memtable "
                                                        "flushes included; to 1 MB)"),
}, periods={"compaction": ("compaction_write_bytes", "compaction_read_bytes", "compaction_seconds")})


# --- WiredTiger: its connection statistics ------------------------------------------------------------------------

_WT = {
    "checkpoint_running": "transaction: transaction checkpoint currently running",
    "checkpoints": "transaction: transaction checkpoints",
    "checkpoint_ms": "transaction: transaction checkpoint total time (msecs)",
    "checkpoint_bytes": "block-manager: bytes written for checkpoint",
    "cache_bytes": "cache: bytes currently in the cache",
    "cache_dirty_bytes": "cache: tracked dirty bytes in the cache",
    "pages_evicted_modified": "cache: modified pages evicted",
    "pages_evicted_unmodified": "cache: unmodified pages evicted",
    "pages_evicted_by_app": "cache: pages evicted by application threads",
    "app_eviction_us": "thread-yield: application thread time evicting (usecs)",
    "lsm_rows_merged": "LSM: rows merged in an LSM tree",
    "lsm_merge_queued": "LSM: merge work units currently queued",
    "lsm_merge_throttle_sleeps": "LSM: sleep for LSM merge throttle",
}


def _wiredtiger(numbers: dict, text: str) -> dict:
    return _pick(numbers, _WT)


WIREDTIGER = EngineEvents(_wiredtiger, {
    "checkpoint_running": Field("count", "gauge", _WT["checkpoint_running"]),
    "checkpoints": Field("count", "counter", _WT["checkpoints"]),
    "checkpoint_ms": Field("ms", "counter", _WT["checkpoint_ms"]),
    "checkpoint_bytes": Field("bytes", "counter", _WT["checkpoint_bytes"] + " (LSM chunks included)"),
    "cache_bytes": Field("bytes", "gauge", _WT["cache_bytes"]),
    "cache_dirty_bytes": Field("bytes", "gauge", _WT["cache_dirty_bytes"]),
    "pages_evicted_modified": Field("pages", "counter", _WT["pages_evicted_modified"]),
    "pages_evicted_unmodified": Field("pages", "counter", _WT["pages_evicted_unmodified"]),
    "pages_evicted_by_app": Field("pages", "counter", _WT["pages_evicted_by_app"]),
    "app_eviction_us": Field("us", "counter", _WT["app_eviction_us"]),
    "lsm_rows_merged": Field("rows", "counter", _WT["lsm_rows_merged"]),
    "lsm_merge_queued": Field("count", "gauge", _WT["lsm_merge_queued"]),
    "lsm_merge_throttle_sleeps": Field("count", "counter", _WT["lsm_merge_throttle_sleeps"]),
}, periods={
    "checkpoint": ("checkpoint_running", "checkpoints"),
    "compaction": ("lsm_rows_merged",),
    "eviction": ("pages_evicted_by_app", "app_eviction_us"),
})


# --- Berkeley DB: memp_stat (its buffer pool); log_stat and txn_stat (txn variant: its log and checkpoints) -----

def _bdb(numbers: dict, text: str) -> dict:
    return _pick(numbers, {"cache_hits": "cache_hit", "cache_misses": "cache_miss", "pages_read": "pages_read",
                           "pages_written": "pages_written", "page_size_bytes": "btree_pagesize",
                           "log_bytes": "log_bytes", "log_bytes_since_checkpoint": "log_bytes_since_checkpoint",
                           "commits": "txn_commits", "checkpoint_time_s": "last_checkpoint_time"})


BDB = EngineEvents(_bdb, {
    "cache_hits": Field("pages", "counter", "memp_stat st_cache_hit"),
    "cache_misses": Field("pages", "counter", "memp_stat st_cache_miss"),
    "pages_read": Field("pages", "counter", "memp_stat st_page_in"),
    "pages_written": Field("pages", "counter", "memp_stat st_page_out: dirty pages written out of the buffer "
                                               "pool (eviction, or a checkpoint)"),
    "page_size_bytes": Field("bytes", "gauge", "DB->stat bt_pagesize"),
    "log_bytes": Field("bytes", "counter", "log_stat st_w_mbytes, st_w_bytes: written to the log (txn variant)"),
    "log_bytes_since_checkpoint": Field("bytes", "gauge", "log_stat st_wc_mbytes, st_wc_bytes (txn variant)"),
    "commits": Field("count", "counter", "txn_stat st_ncommits (txn variant)"),
    "checkpoint_time_s": Field("s", "counter", "txn_stat st_time_ckp, the last checkpoint's time (Unix seconds; "
                                               "it rises when a checkpoint ends, 0 before any: the adapter's "
                                               "checkpoint thread takes one per 64 MiB of log or minute)"),
}, periods={"eviction": ("pages_written",), "checkpoint": ("checkpoint_time_s",)})


# --- LMDB: page counts of its one tree ------------------------------------------------------------------------

def _lmdb(numbers: dict, text: str) -> dict:
    return _pick(numbers, {"last_page": "last_pgno", "branch_pages": "branch_pages", "leaf_pages": "leaf_pages",
                           "overflow_pages": "overflow_pages", "depth": "depth", "entries": "entries",
                           "readers": "num_readers", "transactions": "last_txnid"})


LMDB = EngineEvents(_lmdb, {
    "last_page": Field("pages", "gauge", "mdb_env_info me_last_pgno: the file's high-water page"),
    "branch_pages": Field("pages", "gauge", "mdb_env_stat ms_branch_pages"),
    "leaf_pages": Field("pages", "gauge", "mdb_env_stat ms_leaf_pages"),
    "overflow_pages": Field("pages", "gauge", "mdb_env_stat ms_overflow_pages"),
    "depth": Field("count", "gauge", "mdb_env_stat ms_depth"),
    "entries": Field("count", "gauge", "mdb_env_stat ms_entries"),
    "readers": Field("count", "gauge", "mdb_env_info me_numreaders"),
    "transactions": Field("count", "counter", "mdb_env_info me_last_txnid: write transactions committed"),
})


# adapter -> how it reports its background work; an adapter without a row records no events
ENGINES: dict[str, EngineEvents] = {
    "rocksdb": ROCKSDB, "leveldb": LEVELDB, "wiredtiger": WIREDTIGER, "bdb": BDB, "lmdb": LMDB,
}


def parse(adapter: str, numbers: dict, text: str) -> dict | None:
    """The named fields of one stats reading, or None for an adapter without a row."""
    row = ENGINES.get(adapter)
    return None if row is None else row.parse(numbers or {}, text or "")


def interval(adapter: str, before: dict | None, after: dict | None) -> dict | None:
    """One interval's events: each gauge at its end, each counter's increase (absent where either end lacks it,
    or it went backwards: the engine was reopened)."""
    row = ENGINES.get(adapter)
    if row is None or after is None:
        return None
    out = {}
    for name, v in after.items():
        f = row.fields.get(name)
        if f is None:
            continue
        if f.kind == "gauge":
            out[name] = v
        elif before is not None and name in before and v >= before[name]:
            d = v - before[name]
            out[name] = round(d, 6) if isinstance(d, float) else d
    return out


def _adapter(b) -> str | None:
    return (b.versions or {}).get("adapter")


def periods(b, kinds=None) -> dict:
    """{kind: [(t_start_s, t_end_s), ...]} of a BenchmarkResult: runs of consecutive intervals in which a kind's
    work ran (a gauge above 0 at either end of the interval, or a counter that grew in it).  Kinds the engine
    does not report are absent; a kind it reports that never ran has an empty list."""
    adapter = _adapter(b)
    row = ENGINES.get(adapter) if adapter is not None else None
    if row is None:
        return {}
    out = {}
    for kind, names in row.periods.items():
        if kinds is not None and kind not in kinds:
            continue
        spans: list[tuple[float, float]] = []
        prev: dict = {}
        reported = False
        for iv in b.intervals:
            ev = iv.get("events")
            if ev is None:
                prev = {}
                continue
            on = False
            for name in names:
                f = row.fields[name]
                if name in ev:
                    reported = True
                    on = on or ev[name] > 0 or (f.kind == "gauge" and prev.get(name, 0) > 0)
            prev = ev
            if on:
                if spans and abs(spans[-1][1] - iv["t_start_s"]) < 1e-9:
                    spans[-1] = (spans[-1][0], iv["t_end_s"])
                else:
                    spans.append((iv["t_start_s"], iv["t_end_s"]))
        if reported:
            out[kind] = spans
    return out


def fields(adapter: str) -> dict:
    """{field: Field} an adapter reports (empty for one without a row)."""
    row = ENGINES.get(adapter)
    return dict(row.fields) if row is not None else {}
