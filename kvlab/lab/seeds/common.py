"""What every seed's notebook shares: the scale presets, the parameters they resolve to, which engines are
built, the published tables (data/reference/, shipped as kvlab._resources) and a fresh database folder."""
from __future__ import annotations

import shutil
import tempfile

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
        "large": dict(num=10_000_000, reads=1_000_000, threads=[1, 2, 4, 8, 16, 32], repeats=1),
    },
    "readwhilewriting": {
        "smoke": dict(num=20_000, readers=[1, 2], duration=0.5, writes_per_second=1000),
        "default": dict(num=1_000_000, readers=[1, 2, 4], duration=10.0, writes_per_second=10_000),
        "full": dict(num=100_000_000, readers=[1, 2, 4, 8, 16, 32, 64], duration=600.0, writes_per_second=10_000),
        "large": dict(num=10_000_000, readers=[1, 4, 16, 64], duration=20.0, writes_per_second=10_000),
    },
    "dbbench_suite": {
        "smoke": dict(num=10_000, reads=2_000, threads=2, timeline_num=30_000, timeline_interval=0.1),
        "default": dict(num=500_000, reads=100_000, threads=2),
        "full": dict(num=50_000_000, reads=500_000, threads=32, timeline_num=3_000_000, timeline_interval=1.0),
        "large": dict(num=10_000_000, reads=500_000, threads=32, timeline_num=3_000_000, timeline_interval=1.0),
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
    "quickstart": {
        "smoke": dict(num=5_000),
        "default": dict(num=200_000),
        "full": dict(num=1_000_000),
        "large": dict(num=1_000_000),   # the seed's own: it fits
    },
}


def resolve(notebook: str, scale: str, **given) -> dict:
    """The notebook's parameters: `given` (the parameters cell) at scale "default",
    else the preset of that scale."""
    presets = SCALES[notebook]
    if scale not in presets:
        from ...errors import SpecError
        raise SpecError(f"scale {scale!r} is unknown; allowed: {', '.join(presets)}")
    return dict(given) if scale == "default" else {**given, **presets[scale]}


def built(names) -> list:
    """The engines of `names` that this kvlab has built, in order."""
    have = native.built_adapters()
    return [n for n in names if engine_registry.get(n).adapter in have]


def published(name: str):
    import pandas as pd
    path = _resources.folder("reference") / f"{name}.csv"
    return pd.read_csv(path) if path.exists() else None


def tmpdb() -> str:
    """A database path that does not exist yet, in a fresh temporary folder's place (the caller removes it)."""
    d = tempfile.mkdtemp(prefix="kvlab-nb-")
    shutil.rmtree(d)
    return d
