"""The results store's tables are written once (kvlab/results/store.py, TABLES): each column's name, type and
place in a record make the CREATE, the INSERT and the upgrade of an older store.  An upgrade fills every
column it adds with what an append of the same record writes there."""
from __future__ import annotations

import json

import duckdb

from kvlab.results import store as st
from kvlab.results.result import BenchmarkResult


def columns(path) -> dict:
    con = duckdb.connect(str(path))
    try:
        rows = con.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                           "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall()
    finally:
        con.close()
    out: dict = {}
    for table, column, kind in rows:
        out.setdefault(table, []).append((column, kind))
    return out


def rows(path, table, order) -> list:
    """The table's rows by column name, JSON compared as values (DuckDB may space its text differently)."""
    kinds = {c.name: c.type for t in st.TABLES if t.name == table for c in t.columns}
    con = duckdb.connect(str(path))
    try:
        cur = con.execute(f"SELECT * FROM {table} ORDER BY {order}")
        names = [d[0] for d in cur.description]
        return [{k: json.loads(v) if kinds[k] == "JSON" and v is not None else v
                 for k, v in sorted(zip(names, r)) if k != "stored_at"} for r in cur.fetchall()]
    finally:
        con.close()


def interval(i, ops, events):
    lat = {"p50": 1.5 + i, "p99": 9.0, "p999": 20.0, "max": 31.0}
    return {"t_start_s": i * 0.5, "t_end_s": i * 0.5 + 0.5, "cpu_pct": 80.0 + i, "io_read_bytes": 4096 * i,
            "io_write_bytes": 8192, "amplification": {"write_amp": 1.25, "read_amp": None, "space_amp": 2.0},
            "events": events,
            "workers": {"ops": {"read": ops, "write": ops // 2}, "ops_per_sec": {"read": 2.0 * ops, "write": ops},
                        "latency_us": {"read": lat, "write": {**lat, "p50": 7.0}}},
            "writer": {"ops": {"write": 10}, "ops_per_sec": {"write": 20.0}, "latency_us": {"write": lat}}}


def benchmark(trial=0, **over) -> BenchmarkResult:
    fields = dict(
        engine="rocksdb", workload="readwhilewriting", phase="run", threads=2, ops=1000, seconds=0.5,
        thread_seconds=1.0, found=990, not_found=10, bytes=100_000,
        latency_us={"p50": 1.0, "p99": 2.0, "p999": 3.0, "p9999": 4.0, "max": 5.0, "mean": 1.2},
        latency_by_op={}, latency_unit="op", seed=7, params={"num": 5000, "value_size": 400, "key_size": 16},
        versions={"engine_library": "rocksdb 7.8", "git_commit": "abc123"}, key_encoding="decimal-zero-padded",
        partial=True, trial=trial, accounting={"cpu_pct": 150.0, "db_size_bytes": 123456},
        mix={"transactions": 400, "txn_per_sec": 800.0}, tags=["a", "b:c"],
        amplification={"write_amp": 3.5, "read_amp": 0.25, "space_amp": 1.5},
        provenance={"spec": {"engine_settings": {"cache_size": 1 << 20, "sync": True}}},
        intervals=[interval(0, 100, {"flushes": 1}), interval(1, 200, None), interval(2, 300, {})])
    return BenchmarkResult(**{**fields, **over})


def test_a_fresh_store_has_the_tables_columns_in_order(tmp_path):
    path = st.Store(tmp_path / "s.duckdb").check()
    have = columns(path)
    for table in st.TABLES:
        assert [c for c, _ in have[table.name]] == [c.name for c in table.columns], table.name
        for (name, kind), column in zip(have[table.name], table.columns):
            declared = column.type.split(" DEFAULT")[0].split(" PRIMARY")[0]
            assert kind == declared, (table.name, name, kind, declared)
    assert set(have) == {t.name for t in st.TABLES} | {"kvlab_meta"}


def test_every_insert_names_each_written_column_once():
    for table in st.TABLES:
        written = [c for c in table.columns if c.written]
        sql = table.insert()
        assert sql.count("?") == len([c for c in written if c.sql is None]), table.name
        assert len({c.name for c in table.columns}) == len(table.columns), table.name


def test_an_upgrade_fills_each_added_column_as_an_append_writes_it(tmp_path):
    """Every column with a place in the record is dropped (as a store from before it lacked it), the version
    set back, and the store opened again: each comes back, filled from the records, as the append wrote it."""
    path = tmp_path / "s.duckdb"
    store = st.Store(path)
    run_id = store.append([benchmark(), benchmark(trial=1, tags=[], mix=None, intervals=[])],
                          point={"sweep_id": "sw", "point_id": "p1"})
    report = {"summary": {"engine": "lmdb", "sync": True, "kills": 3, "reopen_failures": 0, "acked_txns": 30,
                          "acked_writes_lost": 0, "kills_with_loss": 0, "torn_txns": 0, "recovery_ms_p50": 1.5,
                          "recovery_ms_max": 2.5}, "batch": 10, "num": 2000, "seed": 5, "kills": []}
    store.append_crashtest(report, tags=("t",))
    orders = {"benchmarks": "id", "intervals": "benchmark_id, interval, side, op", "crashtests": "run_id"}
    before = {t: rows(path, t, o) for t, o in orders.items()}
    assert before["benchmarks"][0]["run_id"] == run_id and before["benchmarks"][0]["sweep_id"] == "sw"
    assert len(before["intervals"]) == 3 * 3 and before["crashtests"][0]["engine"] == "lmdb"
    filled = {t.name: [c.name for c in t.columns if c.path is not None] for t in st.TABLES if t.record}
    assert set(filled) == set(orders)
    con = duckdb.connect(str(path))
    for table, names in filled.items():
        for name in names:
            con.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
    con.execute("UPDATE kvlab_meta SET value = '1' WHERE key = 'version'")
    con.close()
    st.Store(path).frame()   # opened: upgraded
    after = {t: rows(path, t, o) for t, o in orders.items()}
    assert after == before
    fresh = columns(st.Store(tmp_path / "fresh.duckdb").check())
    assert {t: sorted(c) for t, c in columns(path).items()} == {t: sorted(c) for t, c in fresh.items()}


def test_a_store_from_a_newer_kvlab_is_refused(tmp_path):
    import pytest

    from kvlab import errors
    path = st.Store(tmp_path / "s.duckdb").check()
    con = duckdb.connect(str(path))
    con.execute("UPDATE kvlab_meta SET value = ? WHERE key = 'version'", [str(st.STORE_VERSION + 1)])
    con.close()
    with pytest.raises(errors.ResultsError, match=f"knows up to {st.STORE_VERSION}"):
        st.Store(path).frame()
