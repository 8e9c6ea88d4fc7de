"""--engine-counters records the engine's own per-operation counters (issue 47): RocksDB's PerfContext through its C
API, SQLite's statement counters, WiredTiger's statistics; per phase, divided by the phase's operations."""
import pytest

import kvlab
from kvlab.results import engine_counters as ec

from .conftest import require


def _rec(result, workload):
    return next(b.params.get("engine_op_counters") for b in result if b.workload == workload)


def test_rocksdb_s_perf_context_per_get():
    require("rocksdb")
    r = kvlab.run("rocksdb", "fillseq,readrandom", num=20_000, reads=20_000, seed=3, interval=0,
                  engine_counters=True)
    got = _rec(r, "readrandom")
    assert got["ops"] == 20_000 and "PerfContext" in got["source"]
    # every get looks in the memtable once (kvlab's keys are all there or all flushed: some are in either)
    assert got["per_op"]["get_from_memtable_count"] == pytest.approx(1.0)
    assert got["per_op"]["user_key_comparison_count"] > 1
    assert next(b for b in r if b.workload == "readrandom").params["instruments"]["engine_op_counters"].startswith(
        "recorded per op")
    off = kvlab.run("rocksdb", "fillseq,readrandom", num=2_000, reads=2_000, seed=3, interval=0)
    assert all("engine_op_counters" not in b.params for b in off)   # only when asked: they cost every op


def test_sqlite_s_statement_counters_and_a_phase_counted_alone():
    require("sqlite")
    r = kvlab.run("sqlite", "fillseq,readrandom,readrandom", num=5_000, reads=5_000, seed=3, interval=0,
                  engine_counters=True)
    reads = [b.params["engine_op_counters"] for b in r if b.workload == "readrandom"]
    assert len(reads) == 2
    # the second phase's figure is its own, not the first's added in (statistics are cumulative while open)
    assert reads[0]["totals"]["run"] == reads[1]["totals"]["run"] == 5_000
    assert reads[0]["per_op"]["vm_step"] == pytest.approx(reads[1]["per_op"]["vm_step"], rel=0.01)
    assert reads[0]["per_op"]["vm_step"] > 1


def test_a_reopened_engine_counts_from_zero():
    got = ec.phase_record({"a": 100}, {"a": 30, "b": 5}, 10, "test")
    assert got["totals"] == {"a": 30, "b": 5} and got["per_op"]["a"] == 3.0
    assert ec.select({"op.block_read_count": 4, "cache: pages read into cache": 2, "other": 1},
                     {"cache: pages read into cache": "pages_read"}) == {"block_read_count": 4, "pages_read": 2}
