"""Seed 001: a load (fillseq), then readwhilewriting per reader count, and what became of the seed's RocksDB
flags (notebook 02_readwhilewriting)."""
from __future__ import annotations

import shutil

from ...engines.rocksdb import ROCKSDB_PFX_FLAGS
from ...execution.host import accounting
from .common import tmpdb
from .plan import Step, attempt, by_engine

# phase_s, phase_ops: the benchmark's timed phase (its seconds and ops), what kvlab's stability floor is checked on
# before a claim is judged on the row (kvlab.results.claims.too_short)
LOAD_COLUMNS = ["engine", "wall_s", "user_s", "sys_s", "cpu_pct", "db_size_kb", "process_size_kb", "total_size_kb",
                "ctx_voluntary", "ctx_involuntary", "phase_s", "phase_ops"]


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
            "ctx_voluntary": a["ctx_voluntary"], "ctx_involuntary": a["ctx_involuntary"],
            "phase_s": b.seconds, "phase_ops": b.ops}


# The load's puts per commit, alike for every engine: at one put a commit (db_bench's default) LMDB loaded 61.7k/s
# here against 1.28M/s at 1,000, and the seed's 1.5M/s for LMDB cannot come from a commit per put.
LOAD_BATCH = 1000


def load_and_readwhilewriting_plan(engines, num, readers, duration, writes_per_second, seed=1, memory=None) -> list:
    """Per engine, in one database: the load (fillseq), then readwhilewriting with each reader count, each within
    the memory budget `memory` (None: the engines' defaults)."""
    steps = []
    for name in engines:   # the seed's LMDB loaded 100M records in 65 s (1.5M/s): commits of many puts, every engine
        steps.append(Step(name, "load", dict(workload="fillseq", num=num, seed=seed, interval=0, memory=memory,
                                             batch=LOAD_BATCH), seed_db=True))
        for n in readers:   # the writer overwrites loaded keys
            steps.append(Step(name, f"{n} readers", dict(workload="readwhilewriting", num=num, threads=n,
                                                         duration=duration, use_existing_db=True,
                                                         writes_per_second=writes_per_second, seed=seed + n,
                                                         memory=memory),
                              seed_db=True))
    return steps


def load_and_readwhilewriting(engines, num, readers, duration, writes_per_second, seed=1, memory=None):
    """Seed 001: load (fillseq) then readwhilewriting per reader count: (load table, rww table, results)."""
    results = []
    for name, steps in by_engine(load_and_readwhilewriting_plan(engines, num, readers, duration, writes_per_second,
                                                                seed, memory)):
        db = tmpdb()
        try:
            for step in steps:
                r = attempt(step, db)   # None: over its memory budget (kvlab reproduce), its claims untested
                if r is None:
                    continue
                results.append(r[0] if step.run["workload"] == "fillseq" else r.by_workload("readwhilewriting"))
        finally:
            shutil.rmtree(db, ignore_errors=True)
    load, rww = tables_of(results)
    return load, rww, results


def tables_of(results) -> tuple:
    """Seed 001's two tables (load, readwhilewriting per reader count) from its runs' benchmarks, in hand or read
    back from the store: a fillseq benchmark is a load row, a readwhilewriting one a row of its reader count."""
    import pandas as pd
    load_rows, rww_rows = [], []
    for b in results:
        if b.workload == "fillseq":
            load_rows.append(_row(b.engine, b))
        elif b.workload == "readwhilewriting":
            n = b.threads
            rww_rows.append({**_row(b.engine, b), "readers": n, "writes_per_sec": (b.writer or {}).get("ops_per_sec"),
                             "reads_per_sec": b.ops_per_sec, "read_p99_us": (b.latency_us or {}).get("p99"),
                             "ideal_cpu_pct": 100 * (n + 1)})
    return pd.DataFrame(load_rows, columns=LOAD_COLUMNS), pd.DataFrame(rww_rows, columns=RWW_COLUMNS)


# the seed's readwhilewriting table, per engine and reader count: run time (wall), CPU % and user/sys, DB size,
# process size, total size, context switches (voluntary, involuntary), write rate, read rate
SEED001_COLUMNS = ["wall_s", "cpu_pct", "user_s", "sys_s", "db_size_kb", "process_size_kb", "total_size_kb",
                   "ctx_voluntary", "ctx_involuntary", "writes_per_sec", "reads_per_sec"]
RWW_COLUMNS = LOAD_COLUMNS + ["readers", "writes_per_sec", "reads_per_sec", "read_p99_us", "ideal_cpu_pct"]


def readwhilewriting_table(rww, published_df=None):
    """Seed 001's readwhilewriting table in full, per engine and reader count, the published row (the seed's
    engine, at that reader count) beside the measured one: SEED001_COLUMNS, indexed by (engine, readers, source),
    source "measured" or "published".  Only the engines measured, at the seed's reader counts and at the ones
    measured."""
    import pandas as pd
    frames = []
    if rww is not None and not rww.empty:
        frames.append(rww.assign(source="measured"))
    if published_df is not None and rww is not None and not rww.empty:
        pub = published_df[published_df.engine.isin(set(rww.engine))]
        frames.append(pub.assign(source="published"))
    if not frames:
        return pd.DataFrame(columns=["engine", "readers", "source", *SEED001_COLUMNS]).set_index(
            ["engine", "readers", "source"])
    order = {e: i for i, e in enumerate(dict.fromkeys(rww.engine))}
    out = pd.concat([f[["engine", "readers", "source", *SEED001_COLUMNS]] for f in frames], ignore_index=True)
    out["_engine"] = out.engine.map(order)
    out = out.sort_values(["_engine", "readers", "source"], kind="stable").drop(columns="_engine")
    return out.set_index(["engine", "readers", "source"])


def notebook_plan(p, engines) -> list:
    """Notebook 02_readwhilewriting's runs."""
    return load_and_readwhilewriting_plan(engines, p["num"], p["readers"], p["duration"], p["writes_per_second"],
                                          memory=p.get("memory"))


def rocksdb_tuning_report() -> dict:
    """Seed 001's RocksDB 'pfx' flags: which became RocksDB 7.8 options, which it no longer has."""
    from ...model.dbbench_flags import FLAGS, translate_rocksdb_flags
    flags = ROCKSDB_PFX_FLAGS.split()
    names = [f[2:].split("=")[0] for f in flags]
    gone = [n for n in names if FLAGS[n].kind == "gone"]
    ignored = [n for n in names if FLAGS[n].kind == "ignored"]
    return {"options_string": translate_rocksdb_flags(flags).options, "no_longer_in_rocksdb": gone,
            "not_honoured": ignored}
