"""The seeds' claims (data/reference/claims.toml) tested on a seed experiment's frames: the verdict table.

    load_claims()                                   every claim, validated (kvlab.results.claims.parse)
    verdicts(seed, measured, machine=None, setup=None)
        one row per claim of `seed`: claim, statement, published, measured, verdict, reason

`measured` is what the seed's experiment function returned (kvlab.lab.reproduce: read_scalability's sweep frame or
read_scalability_table, load_and_readwhilewriting's (load, rww, results), dbbench_suite's, seed003's, seed004's
tuples, or a list of seed004 tuples, cached and larger than RAM), or a dict {table: frame}.  SEEDS names each
seed's tables, in the order its experiment returns them, and how its published tables (data/reference/) line up
with them; the published figure of a claim is its own test run on those.  `setup` holds what the run was set up
with and the frames do not say (cache_bytes, data_bytes, sync, the memory limit), for the claims' preconditions;
`machine` is this one by default (its cores, memory and built engines).

    reproduce(seed, scale, engines, store)          `kvlab reproduce`: the seed's experiment (RUNNERS) at a scale
                                                    of seeds.common.SCALES, its runs stored, and its verdict table
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, cast

from ... import _resources, errors
from ... import engines as engine_registry
from ...results import claims as logic
from .common import built, published

CLAIMS_FILE = "claims.toml"


def _dropna_engine(df):
    return df[df.engine.notna()].reset_index(drop=True)


def _pub000() -> dict:
    return {"read_scalability": published("seed000_read_scalability")}


def _pub001() -> dict:
    return {"load": _dropna_engine(published("seed001_load")),
            "readwhilewriting": _dropna_engine(published("seed001_readwhilewriting"))}


def _pub002() -> dict:   # the 50M tables: the claims' figures (the notes say where 200M differs)
    df = published("seed002_dbbench")
    return {"dbbench": df[df.num == df.num.min()].reset_index(drop=True)}


def _pub003() -> dict:   # FoundationDB, the seed's one engine
    return {"transactions": published("seed003_fdb").assign(engine="foundationdb")}


def _pub004() -> dict:
    return {"qps": _dropna_engine(published("seed004_qps")),
            "latency": _dropna_engine(published("seed004_latency")).rename(columns={"mean_ms": "mean"}),
            "io": _dropna_engine(published("seed004_io"))}


@dataclass(frozen=True)
class SeedTables:
    """A seed's experiment as the claims see it: its tables' names in the order its function returns them, its
    published tables in the same columns, and rows to keep of a table where the table has the column."""
    experiment: str
    tables: tuple
    published: Callable[[], dict]
    keep: Mapping = field(default_factory=dict)


SEEDS = {
    "000": SeedTables("read_scalability", ("read_scalability",), _pub000,
                      keep={"read_scalability": {"phase": "run", "workload": "readrandom"}}),
    "001": SeedTables("load_and_readwhilewriting", ("load", "readwhilewriting"), _pub001),
    "002": SeedTables("dbbench_suite", ("dbbench",), _pub002),
    "003": SeedTables("seed003", ("transactions",), _pub003),
    "004": SeedTables("seed004", ("qps", "latency", "io"), _pub004),
}


def parse_claims(text: str, origin: str = CLAIMS_FILE) -> list:
    """The claims of a TOML text, validated against the seeds and their tables."""
    return logic.parse(text, origin, seeds=list(SEEDS), tables={s: t.tables for s, t in SEEDS.items()})


def load_claims(path=None) -> list:
    """Every claim of the shipped claims file (or of `path`), validated."""
    from pathlib import Path
    p = Path(path) if path is not None else _resources.folder("reference") / CLAIMS_FILE
    try:
        text = p.read_text()
    except OSError as exc:
        raise errors.SpecError(f"cannot read the claims file {p}: {exc.strerror or exc}") from None
    return parse_claims(text, str(p))


def this_machine() -> logic.Machine:
    """This machine as the claims' preconditions see it: the cores this process may run on, its memory, the
    engines this kvlab has built."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return logic.Machine(cores=len(os.sched_getaffinity(0)), memory_bytes=memory,
                         engines=frozenset(built(engine_registry.REGISTRY)))


def seed_key(seed) -> str:
    """The seed's id as the claims name it ("000"), from "000", "0" or 0; a SpecError for a seed kvlab lacks."""
    key = f"{int(seed):03d}" if str(seed).isdigit() else str(seed)
    if key not in SEEDS:
        raise errors.SpecError(f"seed {seed!r} is unknown; allowed: {', '.join(SEEDS)}")
    return key


def _seed(seed) -> SeedTables:
    return SEEDS[seed_key(seed)]


def tables(seed, measured) -> dict:
    """{table name: frame} of what seed `seed`'s experiment returned (see the module's docstring)."""
    import pandas as pd
    s = _seed(seed)
    if measured is None:
        found: dict = {}
    elif isinstance(measured, pd.DataFrame):
        found = {s.tables[0]: measured}
    elif isinstance(measured, Mapping):
        unknown = [k for k in measured if k not in s.tables]
        if unknown:
            raise errors.SpecError(f"seed {seed}'s experiment has no table {', '.join(map(repr, unknown))}; "
                                   f"allowed: {', '.join(s.tables)}")
        found = dict(measured)
    elif isinstance(measured, (list, tuple)) and measured and all(isinstance(x, (list, tuple)) for x in measured):
        parts = [tables(seed, x) for x in measured]   # several returns of the experiment (seed 004's two settings)
        found = {t: pd.concat([p[t] for p in parts if t in p], ignore_index=True)
                 for t in s.tables if any(t in p for p in parts)}
    elif isinstance(measured, (list, tuple)):
        frames = [x for x in measured if isinstance(x, pd.DataFrame)]
        found = dict(zip(s.tables, frames))
    else:
        raise errors.SpecError(f"measured must be what seed {seed}'s {s.experiment}() returned, a frame or a dict "
                               f"of frames; got {type(measured).__name__}")
    out = {}
    for name, frame in found.items():
        for col, value in s.keep.get(name, {}).items():
            if col in frame.columns:
                frame = frame[frame[col] == value]
        out[name] = frame.reset_index(drop=True)
    return out


def published_tables(seed) -> dict:
    """The seed's published tables (data/reference/) in its experiment's columns."""
    return _seed(seed).published()


def verdicts(seed, measured, machine: logic.Machine | None = None, setup: Mapping | None = None,
             claims=None):
    """The verdict table of seed `seed`: one row per claim (per engine, for a claim tested on each), with its
    published figure, the measured one, the verdict and why."""
    import pandas as pd
    key = seed_key(seed)
    measured_tables = tables(key, measured)
    pubs = published_tables(key)
    machine = machine or this_machine()
    rows = []
    for claim in (claims if claims is not None else load_claims()):
        if claim.seed != key:
            continue
        frame = measured_tables.get(claim.measure.table)
        engines = list(dict.fromkeys(frame.engine)) if frame is not None and "engine" in frame.columns else []
        for one in logic.expand(claim, engines):
            pub = pubs.get(one.measure.table)
            if (pub is not None and one.measure.engines and "engine" in pub.columns
                    and not pub.engine.isin(one.measure.engines).any() and pub.engine.nunique() == 1):
                pub = pub.assign(engine=one.measure.engines[0])   # the seed's one engine, beside each of ours
            rows.append(logic.verdict_row(one, frame, pub, machine, setup))
    return pd.DataFrame(rows, columns=logic.COLUMNS)


# ---------------------------------------------------------------------------------------------------------------
# `kvlab reproduce`: a seed's experiment at a scale, at the seed's configuration, then its verdict table.

KEY_VALUE_BYTES = 16 + 100   # the seeds' 16-byte keys and 100-byte values (000, 001): the data a cache must hold
MIN_CACHE = 64 * 2**20


@dataclass(frozen=True)
class Reproduction:
    """What `reproduce` ran: the experiment's frames (as verdicts() takes them), the setup the preconditions are
    checked against, the results to store (a sweep stores its own points), and the verdict table."""
    seed: str
    scale: str
    engines: tuple
    measured: object
    setup: Mapping
    results: list
    table: Any


def _run000(p, engines, store, progress):
    from .read_scalability import read_scalability, read_scalability_table
    data = p["num"] * KEY_VALUE_BYTES
    cache = max(2 * data, MIN_CACHE)   # the seed's cache held its data (10 GB for ~1.2 GB): so does this one
    sweep = read_scalability(engines, p["threads"], p["num"], p["reads"], cache_size=cache, repeats=p["repeats"],
                             store=store, name=p["name"])
    sweep.run(progress=progress)
    return read_scalability_table(sweep.frame()), {"cache_bytes": cache, "data_bytes": data}, []


def _run001(p, engines, store, progress):
    from .readwhilewriting import load_and_readwhilewriting
    load, rww, results = load_and_readwhilewriting(engines, p["num"], p["readers"], p["duration"],
                                                   p["writes_per_second"])
    return (load, rww), {"data_bytes": p["num"] * KEY_VALUE_BYTES, "sync": False}, results


def _run002(p, engines, store, progress):
    from .dbbench_suite import dbbench_suite
    frame, results = dbbench_suite(engines, p["num"], p["reads"], p["threads"])
    return frame, {}, results


def _run003(p, engines, store, progress):
    from .transactions import seed003
    frame, results = seed003(engines, p["num"], p["duration"], p["max_clients"])
    return frame, {"sync": True}, results


def _run004(p, engines, store, progress):
    from ...execution.host.cgroup import parse_size, unavailable
    from .linkbench import seed004
    cached = seed004(engines, p["maxid1"], p["requesters"], p["intervals"], p["interval_seconds"])
    bounded = seed004(engines, p["bounded_maxid1"], p["requesters"], p["intervals"], p["interval_seconds"],
                      memory_limit=p["memory_limit"])
    limit, io = parse_size(p["memory_limit"]), bounded[2]
    why = unavailable(limit)   # larger than RAM is a database that outgrows the memory limit it runs in
    sizes = [x for x in (io["db_size_mib"] if "db_size_mib" in io.columns else []) if x == x]
    setup = {"memory_limit_bytes": None if why else limit, "memory_limit_unavailable": why,
             "limited_data_bytes": max(sizes) * 2**20 if sizes else None}
    return [cached[:3], bounded[:3]], setup, cached[3] + bounded[3]


@dataclass(frozen=True)
class Runner:
    """How `reproduce` runs a seed: its scale presets (seeds.common.SCALES), the engines it runs by default, and
    the function that runs it: (parameters, engines, store, progress) -> (measured, setup, results)."""
    notebook: str
    engines: tuple
    run: Callable


RUNNERS = {
    "000": Runner("read_scalability", ("wiredtiger-btree", "leveldb"), _run000),
    "001": Runner("readwhilewriting", ("lmdb", "leveldb", "rocksdb", "rocksdb-tuned", "wiredtiger-btree",
                                       "wiredtiger-lsm", "bdb"), _run001),
    "002": Runner("dbbench_suite", ("wiredtiger-lsm", "rocksdb"), _run002),
    "003": Runner("transactions", ("lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "bdb"), _run003),
    "004": Runner("linkbench", ("wiredtiger-btree", "rocksdb"), _run004),
}


def reproduce(seed, scale: str = "default", engines=None, store=None, progress: bool = False,
              machine: logic.Machine | None = None) -> Reproduction:
    """Run seed `seed`'s experiment at `scale` on `engines` (default: the seed's, those built), store what it ran
    in `store` (a path, a Store or None: the default results store), and test its claims."""
    from ...results.store import Store
    from .common import SCALES
    key = seed_key(seed)
    runner = RUNNERS[key]
    presets = cast(dict, SCALES[runner.notebook])
    if scale not in presets:
        raise errors.SpecError(f"scale {scale!r} is unknown; allowed: {', '.join(presets)}")
    asked = list(engines) if engines else list(runner.engines)
    for name in asked:
        engine_registry.get(name)   # an unknown name: a SpecError listing the known ones
    have = built(asked)
    if not have:
        raise errors.EngineNotBuilt(f"none of {', '.join(asked)} is built here (kvlab engines lists what is)")
    p = dict(presets[scale])
    p["name"] = f"reproduce-{key}-{scale}"
    store = store if isinstance(store, Store) else Store(store)
    measured, setup, results = runner.run(p, have, store, progress)
    if results:
        store.append(results)
    machine = machine or this_machine()
    return Reproduction(key, scale, tuple(have), measured, setup, results,
                        verdicts(key, measured, machine=machine, setup=setup))
