"""The quickstart's comparison (notebook 00_quickstart): fillseq + readrandom in kvlab's native loop, and the
same through each engine's Python binding in a plain Python loop (bindings.py), with 1 and 2 threads."""
from __future__ import annotations

import importlib
import random
import shutil
import tempfile
import threading
import time

from ...execution import native
from ..api import run
from .bindings import BINDINGS


def python_loop_baseline(num, threads=(1, 2), seed=1):
    """fillseq + readrandom through the Python bindings, in a plain Python loop with 1 and 2
    Python threads (the GIL serialises them); bindings not installed are skipped."""
    import pandas as pd
    make_key = native.load().make_key
    keys = [make_key(i) for i in range(num)]
    rows = []
    d = tempfile.mkdtemp(prefix="kvlab-py-")
    try:
        for binding in BINDINGS:
            try:
                module = importlib.import_module(binding.module)
            except ImportError:
                continue
            rows += _bench(binding(), module, d, keys, threads, seed)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return pd.DataFrame(rows)


def _bench(binding, module, folder, keys, threads, seed) -> list:
    """One binding's rows: per thread count, the keys put in order, then as many random reads split over
    that many Python threads."""
    num, value, rows = len(keys), b"x" * 100, []
    binding.open(module, folder)
    try:
        for t in threads:
            rng = random.Random(seed)
            order = [keys[rng.randrange(num)] for _ in range(num)]
            fill = _fill(binding.put, keys, value)
            read = _read(binding.get, order, t)
            rows.append({"engine": binding.engine, "loop": "python", "threads": t, "fillseq_ops_per_sec": fill,
                         "readrandom_ops_per_sec": read})
    finally:
        binding.close()
    return rows


def _fill(put, keys, value) -> float:
    t0 = time.perf_counter()
    for k in keys:
        put(k, value)
    return len(keys) / (time.perf_counter() - t0)


def _read(get, order, threads: int) -> float:
    chunks = [order[i::threads] for i in range(threads)]
    t0 = time.perf_counter()
    ths = [threading.Thread(target=lambda c=c: [get(k) for k in c]) for c in chunks]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    return len(order) / (time.perf_counter() - t0)


def native_loop(engines, num, threads=(1, 2), seed=1):
    import pandas as pd
    rows, results = [], []
    for name in engines:
        for t in threads:
            r = run(name, "fillseq,readrandom", num=num, reads=max(1, num // t), threads=t, seed=seed, interval=0)
            results += list(r)
            rows.append({"engine": name, "loop": "kvlab native", "threads": t,
                         "fillseq_ops_per_sec": r.by_workload("fillseq").ops_per_sec,
                         "readrandom_ops_per_sec": r.by_workload("readrandom").ops_per_sec})
    return pd.DataFrame(rows), results
