"""kvlab.keys: the key indices a run's generator draws, as a numpy array, from the same C code
the hot loop uses (cython_ext/include/kv_dist.h), so a notebook can plot the access pattern."""
from __future__ import annotations

import numpy as np

from ... import errors
from ...model.workloads.distributions import distribution as make_distribution
from .. import native


def keys(distribution="uniform", n: int = 100_000, *, keyspace: int = 1_000_000, seed: int = 0,
         thread: int = 0, threads: int = 1, **params) -> np.ndarray:
    """`n` key indices in [0, keyspace) drawn by `distribution` (a name or a Distribution; its
    parameters as keywords: theta, hot_fraction, hot_ops, percentile, frac, expected_inserts),
    as thread `thread` of `threads` draws them in a run with seed `seed`."""
    dist = make_distribution(distribution, **params)
    for name, value, lo, hi in (("n", n, 0, 10**10), ("keyspace", keyspace, 1, 10**15), ("seed", seed, 0, 2**64 - 1),
                                ("threads", threads, 1, 1024), ("thread", thread, 0, max(0, threads - 1))):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
            raise errors.SpecError(f"keys: {name}={value!r} is out of range; allowed: an integer from {lo} to {hi}")
    args = dist.native_args()
    extra = args.pop("expected_inserts")
    # CoreWorkload sizes the scrambled zipfian's hash range as recordcount + expected inserts + 1
    modulus = keyspace + extra + 1 if dist.name == "zipfian" else 0
    return native.load().keys(dist.name, n, keyspace, seed, modulus=modulus, thread=thread, threads=threads, **args)
