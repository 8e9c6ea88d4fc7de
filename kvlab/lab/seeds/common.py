"""What every seed's notebook shares: the scale presets, the parameters they resolve to, which engines are
built, the published tables (data/reference/, shipped as kvlab._resources) and a fresh database folder."""
from __future__ import annotations

import shutil
import tempfile
from typing import cast

from ... import _resources
from ... import engines as engine_registry
from ...execution import native

# Per notebook: the scale presets.  "full" is the seed's own scale; "large" the largest this project's 2-core VM runs
# in an evening (10M keys where the seed had 10M-100M, minutes where it had an hour), where full takes hours.
SCALES = {
    "read_scalability": {
        "smoke": dict(num=20_000, reads=20_000, threads=[1, 2], repeats=2),
        "default": dict(num=1_000_000, reads=1_000_000, threads=[1, 2, 4], repeats=3),
        "full": dict(num=10_000_000, reads=10_000_000, threads=[1, 2, 4, 8, 12, 16, 20, 24, 28, 32], repeats=3),
        # large: 10M keys read right after their load start cold in the engine's cache (WiredTiger 84k ops/s at 1
        # thread, LevelDB 126k, where the seed's warm caches had WiredTiger ahead): twice the reads, the cold start cut
        "large": dict(num=10_000_000, reads=2_000_000, threads=[1, 2, 4, 8, 16, 32], repeats=1, warmup="auto"),
    },
    "readwhilewriting": {
        "smoke": dict(num=20_000, readers=[1, 2], duration=0.5, writes_per_second=1000),
        "default": dict(num=1_000_000, readers=[1, 2, 4], duration=10.0, writes_per_second=10_000),
        "full": dict(num=100_000_000, readers=[1, 2, 4, 8, 16, 32, 64], duration=600.0, writes_per_second=10_000),
        "large": dict(num=10_000_000, readers=[1, 4, 16, 64], duration=20.0, writes_per_second=10_000),
    },
    "dbbench_suite": {
        # cache_size: the seed's 1 GB cache for 50M records of 816 B (2.5% of the data) scaled with num, but at least
        # 32 MiB, the least WiredTiger's LSM opens with (three of its 10 MB chunks); the memory budget (MEMORY) holds
        # the data, as the seed's 60 GB of RAM held its 40-44 GB (the OS page cache)
        "smoke": dict(num=10_000, reads=2_000, threads=2, timeline_num=30_000, timeline_interval=0.1,
                      cache_size=32 << 20),
        "default": dict(num=500_000, reads=100_000, threads=2, cache_size=33_554_432),
        "full": dict(num=50_000_000, reads=500_000, threads=32, timeline_num=3_000_000, timeline_interval=1.0,
                     cache_size=1_000_000_000),
        "large": dict(num=10_000_000, reads=500_000, threads=32, timeline_num=3_000_000, timeline_interval=1.0,
                      cache_size=200 << 20),
    },
    "transactions": {
        "smoke": dict(num=5_000, duration=0.25, max_clients=10),
        "default": dict(num=100_000, duration=3.0, max_clients=100),
        "full": dict(num=1_000_000, duration=60.0, max_clients=100),
        "large": dict(num=1_000_000, duration=60.0, max_clients=100),   # the seed's own: it fits
    },
    "ycsb": {
        "smoke": dict(num=5_000, operations=4_000, clients=2, rates=[1_000, 10_000, 1_000_000_000], seconds=0.3),
        "default": dict(num=100_000, operations=100_000, clients=2,
                        rates=[1_000, 10_000, 100_000, 400_000, 1_000_000, 2_000_000, 4_000_000], seconds=2.0),
        "full": dict(num=10_000_000, operations=10_000_000, clients=2,
                     rates=[1_000, 10_000, 100_000, 200_000, 400_000, 700_000, 1_000_000, 1_500_000, 2_000_000,
                            3_000_000, 4_000_000], seconds=10.0),
        "large": dict(num=1_000_000, operations=1_000_000, clients=2,
                      rates=[1_000, 10_000, 100_000, 400_000, 1_000_000, 2_000_000, 4_000_000], seconds=5.0),
    },
    "linkbench": {
        "smoke": dict(maxid1=5_001, requesters=4, intervals=3, interval_seconds=0.5, memory_limit="256M",
                      bounded_maxid1=30_001, timeline_intervals=4, timeline_interval_seconds=0.5),
        "default": dict(maxid1=100_001, requesters=12, intervals=12, interval_seconds=5.0, memory_limit="384M",
                        bounded_maxid1=1_000_001),
        "full": dict(maxid1=10_000_001, requesters=12, intervals=12, interval_seconds=60.0, memory_limit="2G",
                     bounded_maxid1=30_000_001, timeline_intervals=120, timeline_interval_seconds=1.0),
        "large": dict(maxid1=1_000_001, requesters=12, intervals=6, interval_seconds=30.0, memory_limit="1G",
                      bounded_maxid1=2_000_001, timeline_intervals=60, timeline_interval_seconds=1.0),
    },
    "durability": {   # full: 100 cuts per setting and every loss model (benchmarks/powerloss_campaign.py)
        "smoke": dict(cuts=1, num=2_000, max_s=0.2, engines=["lmdb", "leveldb"]),
        "default": dict(cuts=10, num=10_000, max_s=0.8),
        "full": dict(cuts=100, num=10_000, max_s=0.8),
        "large": dict(cuts=30, num=10_000, max_s=0.8),
    },
    "versions": {   # readrandom and overwrite on 200,000 keys as `kvlab versions` runs them; 5 repeats reach p < 0.05
        "smoke": dict(num=2_000, workloads=["readrandom"], threads=[1], repeat=3, duration=0.3, warmup=0.1),
        "default": dict(num=200_000, workloads=["readrandom", "overwrite"], threads=[1, 2], repeat=5, duration=2.0,
                        warmup=0.5),
        "full": dict(num=10_000_000, workloads=["readrandom", "overwrite"], threads=[1, 2, 4, 8], repeat=5,
                     duration=10.0, warmup=2.0),
        "large": dict(num=2_000_000, workloads=["readrandom", "overwrite"], threads=[1, 2], repeat=5, duration=5.0,
                      warmup=1.0),
    },
    "field": {   # a trace replayed, mixgraph, a sine-paced run and a p99 search per engine (notebook 09_field)
        "smoke": dict(engines=["lmdb", "rocksdb"], num=2_000, operations=1_000, duration=0.3,
                      schedule="sine:a=1000,b=6.2832,d=2000", schedule_duration=1.0, schedule_interval=0.25,
                      sla_duration=0.2, sla_repeat=1, sla_max_probes=3),
        "default": dict(num=100_000, operations=50_000, duration=5.0, schedule="sine:a=4000,b=0.41888,d=6000",
                        schedule_duration=30.0, schedule_interval=0.5, sla_duration=1.0, sla_repeat=3,
                        sla_max_probes=7),
        "full": dict(num=5_000_000, operations=2_500_000, duration=60.0, schedule="sine:a=40000,b=0.10472,d=60000",
                     schedule_duration=300.0, schedule_interval=1.0, sla_duration=5.0, sla_repeat=5,
                     sla_max_probes=12),
        "large": dict(num=1_000_000, operations=500_000, duration=20.0, schedule="sine:a=4000,b=0.10472,d=6000",
                      schedule_duration=120.0, schedule_interval=1.0, sla_duration=2.0, sla_repeat=3,
                      sla_max_probes=10),
    },
    "lsm_family": {   # fillrandom, overwrite, readrandom on every LSM, fresh each round; 5 rounds give a 94% interval
        "smoke": dict(engines=["leveldb", "rocksdb"], num=2_000, repeat=1),
        "default": dict(num=200_000, repeat=5),
        "full": dict(num=10_000_000, repeat=5),
        "large": dict(num=2_000_000, repeat=5),
    },
    "quickstart": {
        "smoke": dict(num=5_000),
        "default": dict(num=200_000),
        "full": dict(num=1_000_000),
        "large": dict(num=1_000_000),   # the seed's own: it fits
    },
}


# Per notebook and scale: the memory budget every kvlab run of the notebook gets (kvlab.run's memory=; None: the
# engines' own defaults), as its seed set its caches.  Each budget splits across an engine's knobs as its descriptor
# says (an LSM's block cache is a third of it, a B-tree's cache three quarters): where the seed's cache held its data
# the budget gives every engine's cache at least twice the scale's data (16 + 100 bytes a key for 000 and 001; YCSB's
# 1 KB records; LinkBench's ~1 KB an id), and where it did not, the budget stays below the data as the seed's did.
#   000  10 GB of cache for 0.8 GB of data: held; full: WiredTiger's cache about the seed's 10 GB
#   001  in memory (an 11 GB database in 256 GB, RocksDB's cache 32 GB): held; full: RocksDB's cache the seed's 32 GB
#   002  its own: 1 GB of cache for 20-40 GB on disk: below the data (smoke's 8 MB fits even the least budget); full:
#        WiredTiger's cache about the seed's 1 GB
#   003  FoundationDB's data in its cache: held
#   004  cached: ~70 GB of cache for 22-40 GB: held (its larger-than-RAM runs have their memory_limit instead)
#   versions: held, `kvlab versions`' own 1 GiB at its 200,000 keys; large and full keep the budget above the data
#        (2M keys: 232 MB; 10M: 1.2 GB)
#   field: YCSB's 1 KB records; the budget holds them in a B-tree's cache (100,000 keys: 110 MB; 1M: 1.1 GB; full's
#        5M: 5.5 GB in 16 GiB, whose B-tree cache is 12 GiB)
#   lsm_family: 256 MiB (benchmarks/lsm_family.py's): an LSM's block cache, a third of it, holds 200,000 keys
#        (23 MB) but not large's 2M (232 MB), nor full's 10M (1.2 GB) in 1 GiB: those read from storage where the
#        budget's memory cgroup holds the page cache too (much longer than the estimate's assumed rates)
#   YCSB and the quickstart hold their data; durability's crash tests keep the engines' defaults
MEMORY: dict[str, dict[str, str | None]] = {
    "read_scalability": {"smoke": "256MiB", "default": "1GiB", "large": "8GiB", "full": "12GiB"},
    "readwhilewriting": {"smoke": "256MiB", "default": "1GiB", "large": "8GiB", "full": "96GiB"},
    "dbbench_suite": {"smoke": "128MiB", "default": "1GiB", "large": "12GiB", "full": "64GiB"},
    "transactions": {"smoke": "256MiB", "default": "1GiB", "large": "1GiB", "full": "1GiB"},
    "ycsb": {"smoke": "256MiB", "default": "1GiB", "large": "4GiB", "full": "32GiB"},
    "linkbench": {"smoke": "256MiB", "default": "1GiB", "large": "4GiB", "full": "32GiB"},
    "versions": {"smoke": "256MiB", "default": "1GiB", "large": "1GiB", "full": "4GiB"},
    "field": {"smoke": "256MiB", "default": "1GiB", "large": "4GiB", "full": "16GiB"},
    "durability": {"smoke": None, "default": None, "large": None, "full": None},
    "lsm_family": {"smoke": "256MiB", "default": "256MiB", "large": "256MiB", "full": "1GiB"},
    "quickstart": {"smoke": "256MiB", "default": "1GiB", "large": "1GiB", "full": "1GiB"},
}


def resolve(notebook: str, scale: str, **given) -> dict:
    """The notebook's parameters: `given` (the parameters cell) at scale "default",
    else the preset of that scale, its memory budget (MEMORY) included."""
    presets = cast(dict, SCALES[notebook])
    if scale not in presets:
        from ...errors import SpecError
        raise SpecError(f"scale {scale!r} is unknown; allowed: {', '.join(presets)}")
    if scale == "default":
        return dict(given)
    return {**given, "memory": MEMORY[notebook][scale], **presets[scale]}


# a notebook's trials are held as the command's are: each trial's worker in a memory cgroup of the budget
COVERS = "page cache included where a memory cgroup can be made (the result says which)"


def budget_line(memory, engines, covers: str = COVERS, given=None) -> str:
    """One line on the memory budget a notebook's runs get: the budget and each engine's split of it (a setting in
    `given`, a mapping or a function of the engine's name, shown instead, as given), or, without one, every engine's
    own defaults with the figures.  A Python session's trials are held as the command's are (each trial's worker
    in a memory cgroup of the budget, page cache included, where one can be made: kvlab.execution.run.runner)."""
    from ...engines.descriptor import defaults_line, memory_split
    from ...model.spec import memory_bytes
    if memory is None:
        return defaults_line(engine_registry.DESCRIPTORS.values()) + " (no budget given: memory=None)"
    budget = memory_bytes(memory)
    parts = []
    for name in engines:
        cfg = engine_registry.get(name)
        split = memory_split(engine_registry.descriptor(cfg), cfg, budget)
        # the settings the runs give over the split: the same for every engine, or per engine (a function of its name)
        mine = {k: v for k, v in ((given(name) if callable(given) else given) or {}).items() if v is not None}
        parts.append(f"{name} " + (", ".join(f"{k} {_mib(mine.get(k, v))}" + (" (given)" if k in mine else "")
                                             for k, v in split.items())
                                   or "no cache of its own (the OS page cache)"))
    return f"memory budget: {budget / 2**20:,.0f} MiB each ({memory}), {covers}: " + "; ".join(parts)


def _mib(size) -> str:
    """A size in bytes as MiB; a range of sizes (a setting that differs between a seed's runs) as 'LOW-HIGH MiB'."""
    sizes = sorted(set(size)) if isinstance(size, (tuple, list, set, frozenset)) else [size]
    ends = sizes[:1] if len(sizes) == 1 else [sizes[0], sizes[-1]]
    return "-".join(f"{s / 2**20:.0f}" for s in ends) + " MiB"


def cache_bytes(memory, engines) -> int | None:
    """The smallest cache a budget gives any of `engines` (its split's cache setting), for the claims' 'the cache
    holds the data'; None without a budget or where no engine has a cache of its own."""
    from ...engines.descriptor import memory_split
    from ...model.spec import memory_bytes
    if memory is None:
        return None
    sizes = []
    for name in engines:
        cfg = engine_registry.get(name)
        d = engine_registry.descriptor(cfg)
        setting = getattr(d.cache, "setting", None)
        split = memory_split(d, cfg, memory_bytes(memory))
        if setting in split:
            sizes.append(split[setting])
    return min(sizes) if sizes else None


def built(names) -> list:
    """The engines of `names` that can run here, in order: compiled into kvlab, or a version built and loaded at run
    time (`kvlab engines build`: mdbx, redb, lmdb@0.9.70, ...)."""
    return [n for n in names if native.available(engine_registry.get(n))]


def published(name: str):
    import pandas as pd
    path = _resources.folder("reference") / f"{name}.csv"
    return pd.read_csv(path) if path.exists() else None


def tmpdb() -> str:
    """A database path that does not exist yet, in a fresh temporary folder's place (the caller removes it)."""
    d = tempfile.mkdtemp(prefix="kvlab-nb-")
    shutil.rmtree(d)
    return d
