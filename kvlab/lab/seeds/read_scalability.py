"""Seed 000: read scalability, the thread ladder (notebook 01_read_scalability)."""
from __future__ import annotations

from .plan import Step


def read_scalability(engines, threads, num, reads, cache_size=None, seed=1, repeats=1, store=None,
                     name="read-scalability", memory=None, warmup=None):
    """Seed 000's thread ladder as a sweep (engine x threads, each point repeated): every point loads a fresh
    database (fillseq, the load phase) and reads it with that many threads, within the memory budget `memory`
    (a size; None: the engines' defaults; `cache_size` given wins over the budget's cache).  `warmup`: seconds cut
    from the start of each read, or "auto" (the transient MSER-5 finds in 1-s intervals): at 10M keys a read right
    after the load starts with the engine's cache cold, where the seed's ran warm.  Returns the Sweep; run it, then
    read_scalability_table(sweep.frame()).  Points already in `store` are not run again."""
    from ..sweeps import sweep
    base = {"workload": "readrandom", "num": num, "reads": reads, "seed": seed, "interval": 0}
    if warmup is not None:
        base.update(warmup=warmup, interval=1.0 if warmup == "auto" else 0)
    if cache_size:
        base["cache_size"] = cache_size
    if memory is not None:
        base["memory"] = memory
    return sweep(name, axes={"engine": list(engines), "threads": list(threads)}, repeats=repeats, base=base,
                 store=store)


def read_scalability_plan(engines, threads, num, reads, cache_size=None, seed=1, repeats=1, memory=None,
                          warmup=None) -> list:
    """The sweep's points as steps (read_scalability without a store: every point, stored or not)."""
    sweep = read_scalability(engines, threads, num, reads, cache_size=cache_size, seed=seed, repeats=repeats,
                             store=None, name="read-scalability-plan", memory=memory, warmup=warmup)
    return [Step(pt.spec.engine, pt.label(), {k: v for k, v in pt.spec.to_dict().items() if k != "engine"})
            for pt in sweep.points()]


def notebook_plan(p, engines) -> list:
    """Notebook 01_read_scalability's runs: the ladder's points."""
    return read_scalability_plan(engines, p["threads"], p["num"], p["reads"], cache_size=p.get("cache_size"),
                                 repeats=p["repeats"], memory=p.get("memory"), warmup=p.get("warmup"))


def read_scalability_table(frame, results=None):
    """The seed's columns from a read-scalability sweep's tidy frame (medians across repeats, CI95 beside); with
    the sweep's `results` (sweep.results()), each row's shortest read phase beside (`phase_s`, `phase_ops`: what
    the claims check kvlab's stability floor on)."""
    t = frame[(frame.workload == "readrandom") & (frame.phase == "run")]
    t = t.rename(columns={"micros_per_op": "us_per_op"})[
        ["engine", "threads", "repeats", "us_per_op", "ops_per_sec", "ops_per_sec_ci95_lo", "ops_per_sec_ci95_hi",
         "p99_us"]].reset_index(drop=True)
    if results is None:
        return t
    shortest: dict = {}   # (engine, threads) -> the shortest repeat's (seconds, ops): any short repeat is short
    for b in results:
        if b.workload == "readrandom" and b.phase == "run":
            key = (b.engine, b.threads)
            shortest[key] = min(shortest.get(key, (b.seconds, b.ops)), (b.seconds, b.ops))
    found = [shortest.get((e, n), (float("nan"), float("nan"))) for e, n in zip(t.engine, t.threads)]
    return t.assign(phase_s=[x[0] for x in found], phase_ops=[x[1] for x in found])


def scaling_vs_published(measured, published_df):
    """Throughput relative to each engine's 1-thread figure, measured beside published."""
    import pandas as pd
    frames = []
    for label, df in (("measured", measured), ("published", published_df)):
        if df is None or df.empty:
            continue
        d = df[["engine", "threads", "ops_per_sec"]].copy()
        base = d[d.threads == 1].set_index("engine")["ops_per_sec"]
        d["speedup"] = d.apply(lambda r: r.ops_per_sec / base.get(r.engine, float("nan")), axis=1)
        d["source"] = label
        frames.append(d)
    return pd.concat(frames, ignore_index=True)
