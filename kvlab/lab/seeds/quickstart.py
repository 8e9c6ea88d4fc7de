"""The quickstart's comparison (notebook 00_quickstart): fillseq + readrandom in kvlab's native loop, and the
same through each engine's Python binding in a plain Python loop (bindings.py), with 1 and 2 threads."""
from __future__ import annotations

import importlib
import importlib.util
import random
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass

from ... import errors
from ...execution import native
from ...execution.worker import spawn
from .bindings import BINDINGS
from .plan import Step, execute

VALUE = b"x" * 100   # the Python loop's value: db_bench's 100 bytes


@dataclass(frozen=True)
class PythonLoop:
    """One binding's plain Python loop: fillseq of `num` keys, then as many random reads, at each thread count."""
    binding: type
    num: int
    threads: tuple
    seed: int = 1


def python_loop_baseline_plan(num, threads=(1, 2), seed=1) -> list:
    """One step per binding that is installed (bindings.py), in its own temporary folder."""
    return [Step(b.engine, "Python loop", work=PythonLoop(b, num, tuple(threads), seed), seed_db=True)
            for b in BINDINGS if importlib.util.find_spec(b.module) is not None]


def python_loop_baseline(num, threads=(1, 2), seed=1):
    """fillseq + readrandom through the Python bindings, in a plain Python loop with 1 and 2
    Python threads (the GIL serialises them); bindings not installed are skipped."""
    import pandas as pd
    rows = []
    for step in python_loop_baseline_plan(num, threads, seed):
        loop = step.work
        # in a worker of its own, as every trial: the binding's engine is never opened in the notebook's kernel
        got = spawn.call("kvlab.lab.seeds.quickstart:bench_in_worker",
                         (BINDINGS.index(loop.binding), num, loop.threads, loop.seed))
        if got.error is not None:
            raise got.error
        if not got.returned:
            raise errors.EngineError(f"{loop.binding.engine}'s Python loop died ({got.how()}): "
                                     f"{got.log[-1] if got.log else 'no message'}")
        rows += got.value
    return pd.DataFrame(rows)


def bench_in_worker(link, which: int, num: int, threads, seed) -> list:
    """In a worker: binding BINDINGS[which]'s rows (none where its module is not installed)."""
    binding = BINDINGS[which]
    try:
        module = importlib.import_module(binding.module)
    except ImportError:
        return []
    make_key = native.load().make_key
    keys = [make_key(i) for i in range(num)]
    d = tempfile.mkdtemp(prefix="kvlab-py-")
    try:
        return _bench(binding(), module, d, keys, threads, seed)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _bench(binding, module, folder, keys, threads, seed) -> list:
    """One binding's rows: per thread count, the keys put in order, then as many random reads split over
    that many Python threads."""
    num, value, rows = len(keys), VALUE, []
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


def native_loop_plan(engines, num, threads=(1, 2), seed=1, memory=None) -> list:
    """fillseq then readrandom on each engine in kvlab's native loop, at each thread count, within the memory
    budget `memory` (None: the engines' defaults)."""
    return [Step(name, f"native loop, {t} threads", dict(workload="fillseq,readrandom", num=num, reads=max(1, num // t),
                                                         threads=t, seed=seed, interval=0, memory=memory))
            for name in engines for t in threads]


def native_loop(engines, num, threads=(1, 2), seed=1, memory=None):
    import pandas as pd
    rows, results = [], []
    for step in native_loop_plan(engines, num, threads, seed, memory):
        r = execute(step)
        results += list(r)
        rows.append({"engine": step.engine, "loop": "kvlab native", "threads": step.run["threads"],
                     "fillseq_ops_per_sec": r.by_workload("fillseq").ops_per_sec,
                     "readrandom_ops_per_sec": r.by_workload("readrandom").ops_per_sec})
    return pd.DataFrame(rows), results


def notebook_plan(p, engines) -> list:
    """Notebook 00_quickstart's runs: its `kvlab.start` cell (LMDB in the background: the cell calls kvlab.start
    itself, as it shows a reader the API), the native loop, the Python bindings' loop."""
    start = dict(workload="fillseq,readrandom", num=p["num"], threads=2, memory=p["memory"])
    background = Step("lmdb", "kvlab.start", start)
    return ([background] + native_loop_plan(engines, p["num"], memory=p.get("memory"))
            + python_loop_baseline_plan(p["num"]))
