"""Seed 001: a load (fillseq), then readwhilewriting per reader count, and what became of the seed's RocksDB
flags (notebook 02_readwhilewriting)."""
from __future__ import annotations

import shutil

from ...engines.rocksdb import ROCKSDB_PFX_FLAGS
from ...execution.host import accounting
from .common import tmpdb
from .plan import Step, by_engine, execute

LOAD_COLUMNS = ["engine", "wall_s", "user_s", "sys_s", "cpu_pct", "db_size_kb", "process_size_kb", "total_size_kb",
                "ctx_voluntary", "ctx_involuntary"]


def _row(engine, b):
    a = b.accounting
    # the seed measured the DB after the process ended: its size after close, where the run closed after this phase
    db = a.get("db_size_after_close_bytes") or a["db_size_bytes"] or 0
    total = (accounting.seed_total(db, a["process_size_bytes"]) if a.get("process_size_bytes") is not None
             else a["total_size_bytes"])
    return {"engine": engine, "wall_s": a["wall_s"], "user_s": a["cpu_user_s"], "sys_s": a["cpu_sys_s"],
            "cpu_pct": a["cpu_pct"],
            "db_size_kb": db / 1024,
            "process_size_kb": a["process_peak_rss_bytes"] / 1024,
            "total_size_kb": (total or 0) / 1024,
            "ctx_voluntary": a["ctx_voluntary"], "ctx_involuntary": a["ctx_involuntary"]}


def load_and_readwhilewriting_plan(engines, num, readers, duration, writes_per_second, seed=1) -> list:
    """Per engine, in one database: the load (fillseq), then readwhilewriting with each reader count."""
    steps = []
    for name in engines:
        steps.append(Step(name, "load", dict(workload="fillseq", num=num, seed=seed, interval=0), seed_db=True))
        for n in readers:   # the writer overwrites loaded keys
            steps.append(Step(name, f"{n} readers", dict(workload="readwhilewriting", num=num, threads=n,
                                                         duration=duration, use_existing_db=True,
                                                         writes_per_second=writes_per_second, seed=seed + n),
                              seed_db=True))
    return steps


def load_and_readwhilewriting(engines, num, readers, duration, writes_per_second, seed=1):
    """Seed 001: load (fillseq) then readwhilewriting per reader count: (load table, rww table, results)."""
    import pandas as pd
    load_rows, rww_rows, results = [], [], []
    for name, steps in by_engine(load_and_readwhilewriting_plan(engines, num, readers, duration, writes_per_second,
                                                                seed)):
        db = tmpdb()
        try:
            for step in steps:
                r = execute(step, db)
                if step.run["workload"] == "fillseq":
                    b = r[0]
                    results.append(b)
                    load_rows.append(_row(name, b))
                    continue
                b = r.by_workload("readwhilewriting")
                n = step.run["threads"]
                results.append(b)
                rww_rows.append({**_row(name, b), "readers": n, "writes_per_sec": b.writer["ops_per_sec"],
                                 "reads_per_sec": b.ops_per_sec, "read_p99_us": b.latency_us["p99"],
                                 "ideal_cpu_pct": 100 * (n + 1)})
        finally:
            shutil.rmtree(db, ignore_errors=True)
    return pd.DataFrame(load_rows, columns=LOAD_COLUMNS), pd.DataFrame(rww_rows), results


def notebook_plan(p, engines) -> list:
    """Notebook 02_readwhilewriting's runs."""
    return load_and_readwhilewriting_plan(engines, p["num"], p["readers"], p["duration"], p["writes_per_second"])


def rocksdb_tuning_report() -> dict:
    """Seed 001's RocksDB 'pfx' flags: which became RocksDB 7.8 options, which it no longer has."""
    from ...model.dbbench_flags import FLAGS, translate_rocksdb_flags
    flags = ROCKSDB_PFX_FLAGS.split()
    names = [f[2:].split("=")[0] for f in flags]
    gone = [n for n in names if FLAGS[n].kind == "gone"]
    ignored = [n for n in names if FLAGS[n].kind == "ignored"]
    return {"options_string": translate_rocksdb_flags(flags).options, "no_longer_in_rocksdb": gone,
            "not_honoured": ignored}
