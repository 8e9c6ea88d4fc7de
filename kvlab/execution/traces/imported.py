"""What the importers share: keys of any bytes made kvlab key indices, op names made the trace's codes, the
ops kvlab has no counterpart for counted, and the result a Trace of one phase."""
from __future__ import annotations

from collections import Counter

import numpy as np

from .. import native
from .fileformat import Trace, TracePhase, dtype

IMPORTED_KEY_SIZE = 16   # kvlab's default key: an imported trace's distinct keys are far fewer than 10^16


def build(path: str, fmt: str, rows: list, skipped: Counter, source: dict) -> Trace:
    """A Trace of one phase from `rows`, (time_ns, thread, op name, key bytes, size) in the file's order.  Each
    distinct key becomes its rank among the trace's keys in byte order, so equal keys stay equal and a range
    or seek meets the keys in their order; each thread (a client) keeps its ops in the file's order; times
    count from the first op.  `skipped`: the ops that kvlab has no counterpart for, by name (the header keeps
    the counts, and a replay warns of them)."""
    names = list(native.load().OP_TYPES)
    code = {n: i for i, n in enumerate(names)}
    keys = sorted({r[3] for r in rows})
    rank = {k: i for i, k in enumerate(keys)}
    threads = sorted({r[1] for r in rows})
    dense = {t: i for i, t in enumerate(threads)}
    t0 = min((r[0] for r in rows), default=0)
    per: dict[int, list] = {}
    for t, th, op, key, size in rows:
        per.setdefault(dense[th], []).append((rank[key], t - t0, -1, size, code[op], 0, 0))
    arrays = {th: np.array(recs, dtype=dtype()) for th, recs in per.items()}
    header = {"format": fmt, "imported_from": path, "ops": names, "engine": None, "workload": None, "spec": None,
              "source": source, "keys": len(keys), "threads_recorded": {str(dense[t]): str(t) for t in threads},
              "skipped": dict(skipped), "key_size": IMPORTED_KEY_SIZE}
    info = {"index": 0, "name": f"{fmt} trace", "kind": "run", "loop": None, "threads": len(arrays),
            "key_size": IMPORTED_KEY_SIZE, "num": len(keys)}
    return Trace(path=path, format=fmt, header=header, phases=[TracePhase(info, arrays)])
