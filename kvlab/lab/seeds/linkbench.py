"""Seed 004: LinkBench on each engine, cached and larger than RAM (in a memory cgroup), and the seed's
claims as ratios between RocksDB and WiredTiger (notebook 06_linkbench)."""
from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Mapping

from ...model.workloads.linkbench import LinkBench
from .common import tmpdb
from .plan import Step

SEED004_OPS = ("add_link", "update_link", "get_links_list")

# The seed's MongoDB configuration, as each engine's settings: snappy blocks for both ("I used Snappy compression for
# WiredTiger/RocksDB"); WiredTiger's journal on without a sync per commit (journal.enabled with MongoDB's default
# write concern, its log flushed in the background) and a checkpoint every 60 s (syncPeriodSecs: 60); RocksDB with its
# WAL (kvlab's default) and the seed's configString, as db_bench flags translate it (soft_rate_limit, hard_rate_limit
# and max_grandparent_overlap_factor are gone from RocksDB 7, stats_dump_period_sec only reports).  The oplog MongoDB
# wrote beside every change is not modelled: each engine writes the graph's keys alone.
SEED004_COMPRESSION = "snappy"
_WT_MONGODB = {"options": "log=(enabled=true),checkpoint=(wait=60)"}
SEED004_ROCKSDB_FLAGS = ("--max_write_buffer_number=4 --max_background_compactions=6 --max_background_flushes=3 "
                         "--target_file_size_base=16777216 --soft_rate_limit=2.9 --hard_rate_limit=3 "
                         "--max_bytes_for_level_base=134217728 --level0_file_num_compaction_trigger=4 "
                         "--level0_slowdown_writes_trigger=12 --level0_stop_writes_trigger=20 "
                         "--max_grandparent_overlap_factor=8 --max_bytes_for_level_multiplier=8")
SEED004_WRITE_BUFFER = 16 << 20   # the configString's write_buffer_size=16m


def seed_settings(name: str) -> dict:
    """The settings seed 004's MongoDB configuration gave engine `name`: snappy where the engine has it; WiredTiger's
    journal and 60-s checkpoints; RocksDB's configString (SEED004_ROCKSDB_FLAGS, 16 MB memtables)."""
    from ... import engines as engine_registry
    from ...model.dbbench_flags import translate_rocksdb_flags
    cfg = engine_registry.get(name)
    out = {"compression": SEED004_COMPRESSION} if SEED004_COMPRESSION in cfg.compressions else {}
    if cfg.adapter == "wiredtiger":
        out.update(_WT_MONGODB)
    if engine_registry.unversioned(name) == "rocksdb":   # the default configuration and its versions, not rocksdb-tuned's own
        out["options"] = translate_rocksdb_flags(SEED004_ROCKSDB_FLAGS.split()).options
        out["write_buffer_size"] = SEED004_WRITE_BUFFER
    return out


@dataclass(frozen=True)
class LinkBenchRun:
    """LinkBench on one engine with `config`: its load, then its requests in a memory cgroup of `memory_limit`
    where one is given (seed004); or, with `settings`, both phases in one call with those engine settings (the
    timeline)."""
    config: LinkBench
    memory_limit: str | None = None
    settings: Mapping = field(default_factory=dict)


def seed004_plan(engines, maxid1, requesters, intervals, interval_seconds, memory_limit=None, loaders=2,
                 seed=1, memory=None) -> list:
    """One LinkBench (load, then requests) per engine, each in a folder of its own.  Cached, both phases within
    the memory budget `memory` (None: the engines' defaults); in a memory limit, the limit sizes the engine's
    caches (kvlab.execution.orchestration.linkbench) and `memory` is not used."""
    lb = LinkBench(maxid1=maxid1, requesters=requesters, loaders=loaders, intervals=intervals,
                   interval_seconds=interval_seconds, seed=seed)
    name = f"LinkBench {lb.nodes:,} ids{' in ' + memory_limit if memory_limit else ''}"
    budget = {"memory": memory} if memory is not None and memory_limit is None else {}
    return [Step(engine, name, work=LinkBenchRun(lb, memory_limit, {**budget, **seed_settings(engine)}), seed_db=True)
            for engine in engines]


def seed004(engines, maxid1, requesters, intervals, interval_seconds, memory_limit=None, loaders=2, seed=1,
            memory=None):
    """LinkBench on each engine: a load, then `intervals` x `interval_seconds` of requests; cached (no limit)
    or in a memory cgroup of `memory_limit` (larger than RAM when the database outgrows it).  Returns
    (qps per interval, per-operation latency, I/O per query, results)."""
    import pandas as pd

    from ...execution.orchestration.linkbench import run_linkbench
    setting = "cached" if memory_limit is None else "larger_than_ram"
    if memory_limit is not None:
        from ...execution.host.cgroup import parse_size, unavailable
        why = unavailable(parse_size(memory_limit))
        if why:   # say so, never run unbounded under that name
            print(f"larger than RAM is not measured here: {why}")
            empty = pd.DataFrame(columns=["setting", "engine"])
            return empty, pd.DataFrame(columns=["setting", "engine", "operation"]), empty, []
    qps, lat, io, results = [], [], [], []
    for step in seed004_plan(engines, maxid1, requesters, intervals, interval_seconds, memory_limit, loaders, seed,
                             memory):
        engine, lb, db, settings = step.engine, step.work.config, tmpdb(), dict(step.work.settings)
        try:
            load = run_linkbench(engine, lb, "load", db=db, **settings)[0]
            req = run_linkbench(engine, lb, "request", db=db, memory_limit=step.work.memory_limit, **settings)[-1]
        finally:
            shutil.rmtree(db, ignore_errors=True)
        results += [load, req]
        for i, iv in enumerate([iv for iv in req.intervals if iv["seconds"] > 0.5 * interval_seconds], 1):
            rate = iv["workers"]["ops_per_sec"].get("txn", 0.0)   # each interval is its own figure: its span
            qps.append({"setting": setting, "engine": engine, "interval": i, "qps": rate,
                        "phase_s": iv["seconds"], "phase_ops": rate * iv["seconds"]})
        mix = req.mix or {}   # a request phase that recorded no operation mix: no latency rows, its claims unmeasured
        for op, t in mix.get("templates", {}).items():
            l = t["latency_us"]
            lat.append({"setting": setting, "engine": engine, "operation": op, "count": t["count"],
                        **{k: (l[k] / 1000 if l[k] is not None else None)
                           for k in ("mean", "p50", "p95", "p99", "p999", "max")},
                        "phase_s": req.seconds, "phase_ops": req.ops})
        a = req.accounting
        io.append({"setting": setting, "engine": engine, "qps": mix.get("txn_per_sec"),
                   "reads_per_query": a.get("disk_reads_per_op"), "kb_read_per_query": a.get("disk_kb_read_per_op"),
                   "kb_written_per_query": a.get("disk_kb_written_per_op"),
                   "db_size_mib": (a.get("db_size_bytes") or 0) / 2**20,
                   "load_s": load.seconds, "cgroup_peak_mib": (a.get("cgroup_peak_bytes") or 0) / 2**20 or None,
                   "phase_s": req.seconds, "phase_ops": req.ops})
    return pd.DataFrame(qps), pd.DataFrame(lat), pd.DataFrame(io), results


def linkbench_timeline_plan(engine, maxid1, requesters, intervals, interval_seconds, checkpoint_wait=None,
                            memory=None) -> list:
    """LinkBench (load and requests) on `engine`, sampled per interval; `checkpoint_wait`: WiredTiger's
    checkpoint every that many seconds (the seed's engine; its checkpoints are what the timeline shows)."""
    settings = {"options": f"checkpoint=(wait={checkpoint_wait})"} if checkpoint_wait else {}
    if memory is not None:
        settings["memory"] = memory
    lb = LinkBench(maxid1=maxid1, requesters=requesters, intervals=intervals, interval_seconds=interval_seconds)
    return [Step(engine, "LinkBench timeline", work=LinkBenchRun(lb, settings=settings))]


def linkbench_timeline(engine, maxid1, requesters, intervals, interval_seconds, checkpoint_wait=None, memory=None):
    """The timeline's run (linkbench_timeline_plan): its RunResult, load and requests."""
    from ..api import linkbench
    [step] = linkbench_timeline_plan(engine, maxid1, requesters, intervals, interval_seconds, checkpoint_wait,
                                     memory)
    return linkbench(step.engine, "run", config=step.work.config, **step.work.settings)


def notebook_plan(p, engines) -> list:
    """Notebook 06_linkbench's runs: cached, then in the memory limit, then the timeline."""
    return (seed004_plan(engines, p["maxid1"], p["requesters"], p["intervals"], p["interval_seconds"],
                         memory=p.get("memory"))
            + seed004_plan(engines, p["bounded_maxid1"], p["requesters"], p["intervals"], p["interval_seconds"],
                           memory_limit=p["memory_limit"])
            + linkbench_timeline_plan(p["timeline_engine"], p["maxid1"], p["requesters"], p["timeline_intervals"],
                                      p["timeline_interval_seconds"], p["checkpoint_wait"], memory=p.get("memory")))


def seed004_latency_table(lat, published_df, setting):
    """The seed's latency table (mean ms of add_link, update_link, get_links_list) beside ours, each row
    also normalised to wiredtiger-btree (absolute times across machines mean little)."""
    import pandas as pd
    ours = lat[(lat.setting == setting) & lat.operation.isin(SEED004_OPS)].pivot(index="engine", columns="operation",
                                                                                 values="mean")[list(SEED004_OPS)]
    pub = published_df[published_df.setting == setting].pivot(index="engine_published", columns="operation",
                                                               values="mean_ms")[list(SEED004_OPS)]
    out = pd.concat({"measured": ours, "published": pub})
    for name, frame, base in (("measured / wiredtiger-btree", ours, "wiredtiger-btree"),
                              ("published / wiredtiger", pub, "wiredtiger")):
        if base in frame.index:
            out = pd.concat([out, pd.concat({name: frame / frame.loc[base]})])
    return out


def seed004_ratios(qps, lat, io, pub_qps, pub_lat, pub_io) -> "pd.DataFrame":  # noqa: F821  (pandas is imported inside)
    """The seed's claims as ratios between RocksDB and WiredTiger (btree), published beside measured."""
    import pandas as pd
    rows = []

    def ratio(df, value, a="rocksdb", b="wiredtiger-btree", **where):
        d = df
        for k, v in where.items():
            d = d[d[k] == v]
        x = d[d.engine == a][value].mean()
        y = d[d.engine == b][value].mean()
        return x / y if y else float("nan")
    for setting in ("cached", "larger_than_ram"):
        last = pub_qps[pub_qps.interval == 12]
        rows.append({"claim": f"QPS rocksdb / wiredtiger, {setting}",
                     "published": ratio(last, "qps", setting=setting),
                     "measured": ratio(qps, "qps", setting=setting) if (qps.setting == setting).any() else None})
        for op in SEED004_OPS:
            rows.append({"claim": f"{op} mean latency rocksdb / wiredtiger, {setting}",
                         "published": ratio(pub_lat.rename(columns={"mean_ms": "mean"}), "mean", setting=setting,
                                            operation=op),
                         "measured": ratio(lat, "mean", setting=setting, operation=op)
                         if (lat.setting == setting).any() else None})
    for col in ("reads_per_query", "kb_read_per_query", "kb_written_per_query"):
        rows.append({"claim": f"{col} rocksdb / wiredtiger, larger_than_ram",
                     "published": ratio(pub_io, col),
                     "measured": ratio(io, col, setting="larger_than_ram")
                     if (io.setting == "larger_than_ram").any() else None})
    return pd.DataFrame(rows)


def seed004_sentences(ratios) -> list:
    """One sentence per claim: does the measured ratio point the same way as the published one?"""
    out = []
    for r in ratios.itertuples():
        if r.measured is None or r.measured != r.measured or r.published != r.published:
            out.append(f"- **{r.claim}**: published {r.published:.2f}; not measured here.")
            continue
        if abs(r.published - 1) <= 0.1:   # the seed found no difference worth a direction
            near = abs(r.measured - 1) <= 0.1
            out.append(f"- **{r.claim}**: published {r.published:.2f}, measured {r.measured:.2f}: the seed found the "
                       f"two about equal (within 10%); {'so do we' if near else 'here they differ'}.")
            continue
        same = (r.measured > 1) == (r.published > 1)
        out.append(f"- **{r.claim}**: published {r.published:.2f}, measured {r.measured:.2f}: the shape "
                   f"{'agrees' if same else 'does not agree'} (RocksDB {'higher' if r.published > 1 else 'lower'} than "
                   f"WiredTiger in the seed{'' if same else ', the other way round here'}).")
    return out
