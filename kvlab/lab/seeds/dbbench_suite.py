"""Seed 002: db_bench's suite, fillseq; fillrandom then compact; overwrite; readrandom (notebook
03_dbbench_suite)."""
from __future__ import annotations

import shutil

from ...model import engines as engine_registry
from ..api import run
from .common import tmpdb

# (the seed's test name, the workload run, whether it runs on the database the step before left)
STEPS = (("fillseq", "fillseq", False), ("fillrandom", "fillrandom", False), ("compact", "compact", True),
         ("overwrite", "overwrite", True), ("readrandom", "readrandom", True))


def dbbench_suite(engines, num, reads, threads, value_size=800, compression="snappy", seed=1):
    """fillseq; fillrandom then compact; overwrite; readrandom, per engine, as seed 002 ran them."""
    import pandas as pd
    rows, results = [], []
    for name in engines:
        db = tmpdb()
        try:
            comp = compression if compression in engine_registry.get(name).compressions else "none"
            for test, workload, existing in STEPS:
                r = run(name, workload, num=num, reads=reads, threads=threads if workload == "readrandom" else 1,
                        value_size=value_size, db=db, use_existing_db=existing, seed=seed, compression=comp,
                        compression_ratio=0.5, interval=0)
                b = r.by_workload(workload)
                results.append(b)
                lat = b.latency_us
                rows.append({"engine": name, "benchmark": test, "ops_per_sec": b.ops_per_sec,
                             "micros_per_op": b.micros_per_op, "mb_per_sec": b.mb_per_sec, "p99_us": lat["p99"],
                             "p9999_us": lat["p9999"], "max_us": lat["max"],
                             "db_size_gb": (b.accounting["db_size_bytes"] or 0) / 1e9, "compression": comp})
        finally:
            shutil.rmtree(db, ignore_errors=True)
    return pd.DataFrame(rows), results


def engine_ratio(df, value="ops_per_sec", by="benchmark", base=None):
    """Each engine's figure relative to `base` (default: the first engine), per `by`."""
    engines_ = list(dict.fromkeys(df.engine))
    base = base or engines_[0]
    piv = df.pivot_table(index=by, columns="engine", values=value)
    return piv.div(piv[base], axis=0)
