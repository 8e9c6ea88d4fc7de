"""Accounting, time series, warm-up, repetitions, provenance and the results store."""
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import kvlab
from kvlab import cli, errors
from kvlab.results import BenchmarkResult, stats
from kvlab.results.store import Store

from .conftest import require

ROOT = Path(__file__).resolve().parent.parent


def test_written_bytes_reported_for_a_synced_100mb_run(tmp_path):
    require("rocksdb")
    r = kvlab.run("rocksdb", "fillrandom", num=10_000, value_size=10_000, batch=100, sync=True,
                  compression_ratio=1.0, db=str(tmp_path / "db"))
    a = r[0].accounting
    assert a["io_write_bytes"] >= 100e6 or a["disk_note"].startswith("unavailable"), a
    assert a["io_kb_written_per_op"] >= 9.5
    if a.get("disk_write_bytes") is not None:
        assert a["disk_writes_per_op"] is not None


def test_two_thread_readrandom_cpu_is_accounted_per_thread():
    """Both workers burn CPU, and the process's CPU (from /proc) covers the threads' own
    (RUSAGE_THREAD).  Compared with each other, not with the wall clock, so other load on the
    machine cannot fail it; the two-core scaling figure is benchmarks/scaling.py's."""
    require("lmdb")
    b = kvlab.run("lmdb", "readrandom", num=50_000, threads=2, duration=1.5, seed=1).by_workload("readrandom")
    a = b.accounting
    threads = a["threads"]
    assert len(threads) == 2 and all(t["cpu_user_s"] > 0.05 for t in threads), a
    per_thread = sum(t["cpu_user_s"] + t["cpu_sys_s"] for t in threads)
    process = a["cpu_user_s"] + a["cpu_sys_s"]
    assert per_thread <= process * 1.05 + 0.02, (per_thread, process)
    assert per_thread >= process * 0.7, (per_thread, process)
    assert 0 < a["workers_cpu_pct"] <= 200 * 1.05


def test_two_readrandom_workers_keep_the_cores_busy():
    """On an idle machine two workers hold the CPU they are given (the timing tier: on a shared one, other work
    takes it)."""
    require("lmdb")
    b = kvlab.run("lmdb", "readrandom", num=50_000, threads=2, duration=1.5, seed=1).by_workload("readrandom")
    assert b.accounting["workers_cpu_pct"] > 50


def test_interval_counts_sum_to_total(engine_for_intervals):
    r = kvlab.run(engine_for_intervals, "readwhilewriting", num=20_000, threads=2, duration=1.2, interval=0.2,
                  seed=4)
    b = r.by_workload("readwhilewriting")
    assert len(b.intervals) >= 5
    total = sum(sum(iv["workers"]["ops"].values()) for iv in b.intervals)
    assert total == b.ops
    assert sum(sum(iv["writer"]["ops"].values()) for iv in b.intervals if "writer" in iv) == b.writer["ops"]
    assert all("p99" in lat for iv in b.intervals for lat in iv["workers"]["latency_us"].values())
    assert all(iv["cpu_pct"] is not None for iv in b.intervals)


@pytest.fixture(params=["lmdb", "rocksdb"])
def engine_for_intervals(request):
    require(request.param)
    return request.param


def test_db_size_grows_with_num():
    require("lmdb")
    small = kvlab.run("lmdb", "fillseq", num=10_000)[0].accounting["db_size_bytes"]
    large = kvlab.run("lmdb", "fillseq", num=100_000)[0].accounting["db_size_bytes"]
    assert large > 5 * small > 0


def test_warmup_excluded_and_reported():
    require("lmdb")
    b = kvlab.run("lmdb", "readrandom", num=10_000, duration=1.5, warmup=0.5, seed=1).by_workload("readrandom")
    assert b.warmup["excluded"] and b.warmup["ops_excluded"] > 0
    assert 0.8 < b.seconds < 1.2
    # the warm-up snapshot reads running counters without pausing the threads: they may
    # differ by the few ops done while it reads them
    assert b.latency_us["count"] == pytest.approx(b.ops, rel=1e-3)


def test_repetitions_median_and_its_interval():
    """The interval is the median's (exact order statistics), never the mean's t interval beside a median."""
    v = [101.0, 97.0, 110.0, 95.0, 103.0]
    s = stats.summarize(v)
    a = np.array(v)
    assert s["median"] == np.median(a) and s["n"] == 5
    # 5 samples cannot give 95%: the min-max range, at its own confidence 1 - 2 / 2^5
    assert s["median_ci"] == [a.min(), a.max()] and s["median_ci_level"] == pytest.approx(0.9375)
    v9 = [12.0, 3.0, 7.0, 1.0, 9.0, 4.0, 15.0, 8.0, 6.0]
    s9 = stats.summarize(v9)
    assert s9["median"] == np.median(v9)
    # 9 samples: the 2nd smallest and 2nd largest, 1 - 2 * (1 + 9) / 2^9 = 96.1%
    assert s9["median_ci"] == [3.0, 12.0] and s9["median_ci_level"] == pytest.approx(1 - 20 / 512)
    two = stats.summarize([101.0, 97.0])
    assert two["median"] == 99.0 and two["median_ci"] is None and two["median_ci_level"] is None
    assert stats.interval_text(two) == "n=2: no interval"


def test_repeat_attaches_statistics():
    require("lmdb")
    r = kvlab.run("lmdb", "fillseq,readrandom", num=5_000, repeat=3, seed=1)
    assert len([b for b in r if b.workload == "readrandom"]) == 3
    rep = r[-1].repetitions
    values = [b.ops_per_sec for b in r if b.workload == "readrandom"]
    assert rep["ops_per_sec"]["median"] == pytest.approx(np.median(values))
    assert set(rep["latency_us"]) >= {"p50", "p99", "p999", "p9999", "max"}


def test_provenance_and_engine_stats():
    require("rocksdb")
    b = kvlab.run("rocksdb", "fillseq", num=5_000, seed=8, cache_size=1 << 20)[0]
    p = b.provenance
    assert p["spec"]["seed"] == 8 and p["key_encoding"] == "decimal-zero-padded"
    assert p["engine_config_given"] == {"cache_size": 1 << 20}
    assert p["engine_config_effective"]["cache_size"] == 1 << 20
    assert p["machine"]["cores"] >= 1 and p["machine"]["kernel"]
    assert p["storage"]["fstype"] and p["build"]["kvlab"]
    assert "estimate-num-keys" in b.engine_stats["numbers"]


def test_cli_json_has_every_field(tmp_path, capsys):
    require("rocksdb")
    out = tmp_path / "f.json"
    assert cli.main(["run", "--engine", "rocksdb", "--workload", "readwhilewriting", "--threads", "2",
                     "--duration", "2", "--num", "20000", "--interval", "0.5", "--json", str(out),
                     "--store", str(tmp_path / "s.duckdb")]) == 0
    d = [x for x in json.loads(out.read_text()) if x["workload"] == "readwhilewriting"][0]
    for key in ("wall_s", "cpu_user_s", "cpu_sys_s", "cpu_pct", "ctx_voluntary", "ctx_involuntary",
                "io_read_bytes", "io_write_bytes", "io_kb_read_per_op", "io_kb_written_per_op", "db_size_bytes",
                "process_peak_rss_bytes", "process_rss_bytes", "total_size_bytes", "disk_reads_per_op", "threads"):
        assert key in d["accounting"], key
    assert d["intervals"] and d["writer"]["cpu_user_s"] >= 0 and d["provenance"]["machine"]
    assert d["engine_stats"]["numbers"]


def test_store_round_trip_and_export(tmp_path):
    require("lmdb")
    store = Store(tmp_path / "k.duckdb")
    r = kvlab.run("lmdb", "readrandom", num=5_000, duration=0.4, interval=0.1, seed=3)
    run_id = store.append(r)
    back = store.load(run_id=run_id)
    assert [b.to_dict() for b in back] == [json.loads(json.dumps(b.to_dict(), default=float)) for b in r]
    assert len(store.frame(engine="lmdb")) == 2
    csv = store.export(tmp_path / "b.csv", "csv")
    assert csv.read_text().startswith("id,run_id")
    pq = store.export(tmp_path / "i.parquet", "parquet", table="intervals")
    assert pq.stat().st_size > 0
    with pytest.raises(errors.SpecError, match="allowed: csv, parquet"):
        store.export(tmp_path / "x", "xlsx")


# a store as the first kvlab made it (store version 1, no kvlab_meta)
STORE_V1 = """
CREATE TABLE benchmarks (
    id BIGINT PRIMARY KEY, run_id VARCHAR, stored_at TIMESTAMP DEFAULT current_timestamp,
    engine VARCHAR, workload VARCHAR, phase VARCHAR, threads INTEGER, ops BIGINT, seconds DOUBLE,
    ops_per_sec DOUBLE, micros_per_op DOUBLE, found BIGINT, seed UBIGINT, record JSON);
CREATE SEQUENCE benchmark_ids START 1;
"""


def test_store_migrates_version_1(tmp_path):
    import duckdb
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(STORE_V1)
    old = {"schema": "kvlab.result/1", "engine": "lmdb", "workload": "readrandom", "phase": "run", "threads": 1,
           "ops": 10, "seconds": 1.0, "thread_seconds": 1.0, "found": 10, "not_found": 0, "bytes": 100,
           "latency_us": {"p50": 1.0, "p99": 2.0, "p999": 3.0, "p9999": 4.0, "max": 5.0},
           "latency_by_op": {}, "latency_unit": "op", "seed": 1, "params": {}, "versions": {},
           "key_encoding": "decimal-zero-padded"}
    con.execute("INSERT INTO benchmarks (id, run_id, engine, workload, phase, threads, ops, seconds, ops_per_sec, "
                "micros_per_op, found, seed, record) VALUES (1, 'old', 'lmdb', 'readrandom', 'run', 1, 10, 1.0, "
                "10.0, 100000.0, 10, 1, ?)", [json.dumps(old)])
    con.close()
    store = Store(path)
    loaded = store.load()
    assert loaded[0].found == 10 and loaded[0].intervals == [] and loaded[0].trial == 0
    assert store.frame()["p99_us"].tolist() == [2.0]
    old["params"] = {"num": 5000, "value_size": 400, "key_size": 16}
    con = duckdb.connect(str(path))   # a record from before version 5: its num and sizes become columns
    con.execute("DELETE FROM kvlab_meta WHERE key = 'version'")
    con.execute("INSERT INTO kvlab_meta VALUES ('version', '4')")
    con.execute("ALTER TABLE benchmarks DROP COLUMN num; ALTER TABLE benchmarks DROP COLUMN value_size; "
                "ALTER TABLE benchmarks DROP COLUMN key_size; ALTER TABLE benchmarks DROP COLUMN latency_unit; "
                "ALTER TABLE benchmarks DROP COLUMN engine_settings; ALTER TABLE benchmarks DROP COLUMN tags; "
                "DROP TABLE crashtests; DROP TABLE IF EXISTS noise; ALTER TABLE benchmarks DROP COLUMN write_amp; "
                "ALTER TABLE benchmarks DROP COLUMN read_amp; ALTER TABLE benchmarks DROP COLUMN space_amp; "
                "ALTER TABLE intervals DROP COLUMN write_amp; ALTER TABLE intervals DROP COLUMN read_amp; "
                "ALTER TABLE intervals DROP COLUMN space_amp; ALTER TABLE intervals DROP COLUMN events")
    con.execute("UPDATE benchmarks SET record = ?", [json.dumps(old)])
    con.close()
    row = Store(path).frame().to_dict("records")[0]
    assert (row["num"], row["value_size"], row["key_size"], row["latency_unit"], list(row["tags"])) == \
        (5000, 400, 16, "op", [])


def test_killed_writer_leaves_earlier_rows(tmp_path):
    require("lmdb")
    path = tmp_path / "k.duckdb"
    child = textwrap.dedent(f"""
        import json, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        import kvlab
        from kvlab.results import store as st
        s = st.Store({str(path)!r})
        s.append(kvlab.run("lmdb", "fillseq,readrandom", num=2000, seed=1), run_id="first")
        second = kvlab.run("lmdb", "fillseq,readrandom", num=2000, seed=2)   # run (and its database gone) first:
        real = st.json.dumps                                                  # the kill lands in the append alone
        calls = []
        def slow(*a, **k):
            calls.append(1)
            if len(calls) == 2:          # inside the second run's transaction
                print("inside", flush=True)
                time.sleep(60)
            return real(*a, **k)
        st.json.dumps = slow
        s.append(second, run_id="second")
    """)
    p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "inside"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    frame = Store(path).frame()
    assert set(frame["run_id"]) == {"first"} and len(frame) == 2
    assert len(Store(path).load(run_id="first")) == 2


def test_results_cli(tmp_path, capsys):
    require("lmdb")
    store = tmp_path / "s.duckdb"
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "1000", "--store",
                     str(store)]) == 0
    assert cli.main(["results", "list", "--store", str(store)]) == 0
    assert "fillseq" in capsys.readouterr().out
    assert cli.main(["results", "export", "--store", str(store), "--format", "parquet", "--out",
                     str(tmp_path / "o.parquet")]) == 0
    assert (tmp_path / "o.parquet").exists()
    assert cli.main(["results", "list", "--store", str(tmp_path / "none.duckdb")]) == 2


def test_broken_record_raises():
    with pytest.raises(errors.ResultsError, match="unknown"):
        BenchmarkResult.from_dict({"schema": "kvlab.result/99"})
