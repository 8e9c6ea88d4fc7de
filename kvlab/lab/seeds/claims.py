"""The seeds' claims (data/reference/claims.toml) tested on a seed experiment's frames: the verdict table.

    load_claims()                                   every claim, validated (kvlab.results.claims.parse)
    verdicts(seed, measured, p=None, *, machine=None, setup=None, results=None, store=None)
        one row per claim of `seed`: claim, statement, published, measured, verdict, reason (a VerdictFrame:
        shown whole in a notebook, printed as `kvlab reproduce` prints it); with `store`, kept there with the
        run ids of `results` (Store.append_verdicts)

`measured` is what the seed's experiment function returned (kvlab.lab.reproduce: read_scalability's sweep frame or
read_scalability_table, load_and_readwhilewriting's (load, rww, results), dbbench_suite's, seed003's, seed004's
tuples, or a list of seed004 tuples, cached and larger than RAM), or a dict {table: frame}.  SEEDS names each
seed's tables, in the order its experiment returns them, and how its published tables (data/reference/) line up
with them; the published figure of a claim is its own test run on those.  `setup` holds what the run was set up
with and the frames do not say (cache_bytes, data_bytes, sync, the memory limit), for the claims' preconditions;
setup_of(seed, p, engines, measured) makes it from the experiment's parameters `p` (a notebook's, or reproduce's),
and verdicts does where it is given `p`.  `machine` is this one by default (its cores, memory and built engines).
A measured row carries the phase behind it (`phase_s`, `phase_ops`); a claim whose rows come from a phase below
kvlab's stability floor (kvlab.results.sanity) is "cannot test here", with the smallest preset scale expected to
pass (scales_of: each row's phase scaled by its seed's `size` from `p`, or from the preset `scale`).

    reproduce(seed, scale, engines, store, memory) `kvlab reproduce`: the seed's experiment (RUNNERS) at a scale
                                                    of seeds.common.SCALES within its memory budget (MEMORY), its
                                                    runs and its verdict table stored
    counts(table), markdown(table)                  the table as `kvlab reproduce` prints it (verdict_text.py)
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, cast

from ... import _resources, errors
from ... import engines as engine_registry
from ...results import claims as logic
from .common import built, published
from .verdict_text import counts, markdown  # noqa: F401  (the table as `kvlab reproduce` prints it; and text)

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


def _size000(table, p, row):   # each thread's reads
    return p["reads"]


def _size001(table, p, row):   # the load's records; readwhilewriting runs for its duration
    return p["num"] if table == "load" else p["duration"]


def _size002(table, p, row):   # readrandom: each thread's reads, threads on this machine's cores; the rest: records
    return p["reads"] * p["threads"] if row.get("benchmark") == "readrandom" else p["num"]


def _size003(table, p, row):   # each test runs for its duration
    return p["duration"]


def _size004(table, p, row):   # a QPS row is one interval; latency and I/O are the whole request phase
    return p["interval_seconds"] * (1 if table == "qps" else p["intervals"])


@dataclass(frozen=True)
class SeedTables:
    """A seed's experiment as the claims see it: its tables' names in the order its function returns them, its
    published tables in the same columns, rows to keep of a table where the table has the column, and `size`:
    (table, parameters, row) -> a number the phase behind that row grows in proportion to (its records, reads or
    duration), which scales a phase too short to judge to each preset scale (logic.too_short)."""
    experiment: str
    tables: tuple
    published: Callable[[], dict]
    keep: Mapping = field(default_factory=dict)
    size: Callable | None = None


SEEDS = {
    "000": SeedTables("read_scalability", ("read_scalability",), _pub000,
                      keep={"read_scalability": {"phase": "run", "workload": "readrandom"}}, size=_size000),
    "001": SeedTables("load_and_readwhilewriting", ("load", "readwhilewriting"), _pub001, size=_size001),
    "002": SeedTables("dbbench_suite", ("dbbench",), _pub002, size=_size002),
    "003": SeedTables("seed003", ("transactions",), _pub003, size=_size003),
    "004": SeedTables("seed004", ("qps", "latency", "io"), _pub004, size=_size004),
}


def scales_of(seed, table: str, p: Mapping | None) -> Callable | None:
    """For a claim on `table` of seed `seed` run with parameters `p`: a function of a measured row giving
    [(preset scale, how many times larger the row's phase would be there)], what logic.too_short scales a phase
    too short to judge by (None where `p` is not known; the function gives None where `p` lacks a size)."""
    from .common import SCALES
    key = seed_key(seed)
    size = SEEDS[key].size
    if size is None or p is None:
        return None
    presets = cast(dict, SCALES[RUNNERS[key].notebook])
    order = ("smoke", "default", "large", "full")   # where two presets are as large (large and full), the smaller
    presets = dict(sorted(presets.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))

    def at(row):
        try:
            now = size(table, p, row)
            return [(name, size(table, q, row) / now) for name, q in presets.items()] if now else None
        except (KeyError, TypeError):
            return None
    return at


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


def verdicts(seed, measured, p: Mapping | None = None, *, machine: logic.Machine | None = None,
             setup: Mapping | None = None, claims=None, results=None, store=None, scale: str | None = None):
    """The verdict table of seed `seed`: one row per claim (per engine, for a claim tested on each), with its
    published figure, the measured one, the verdict and why.

    `measured`: what the seed's experiment returned (see the module's docstring).  `p`: the parameters it ran with
    (a notebook's resolved parameters, or reproduce's preset), from which the setup the preconditions need is
    made (setup_of) where `setup` is not given.  With `store` (a path or a Store), the table is stored there with
    the runs behind it (Store.append_verdicts): `results` are those runs, a RunResult or a list of benchmarks
    (stored now, as one run) or a Sweep (its points, stored already: their run ids).  The frame shows in full
    in a notebook, and prints as `kvlab reproduce` prints it."""
    import pandas as pd
    key = seed_key(seed)
    measured_tables = tables(key, measured)
    pubs = published_tables(key)
    machine = machine or this_machine()
    if setup is None and p is not None:
        setup = setup_of(key, p, _engines_of(measured_tables), measured)
    sized = p if p is not None else _preset(key, scale)   # what a phase too short to judge is scaled from
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
            rows.append(logic.verdict_row(one, frame, pub, machine, setup,
                                          scales=scales_of(key, one.measure.table, sized)))
    table = verdict_frame(pd.DataFrame(rows, columns=logic.COLUMNS))
    if store is not None:
        store_verdicts(store, key, table, results, scale=scale, setup=setup, machine=machine,
                       engines=_engines_of(measured_tables))
    return table


def _preset(seed, scale) -> Mapping | None:
    """The parameters of seed `seed`'s preset `scale` (None for a scale that is not one)."""
    from .common import SCALES
    return cast(dict, SCALES[RUNNERS[seed_key(seed)].notebook]).get(scale) if scale else None


def _engines_of(measured_tables: Mapping) -> list:
    return list(dict.fromkeys(e for f in measured_tables.values() if f is not None and "engine" in f.columns
                              for e in f.engine if isinstance(e, str)))


def store_verdicts(store, seed, table, results=None, scale=None, setup=None, machine=None, engines=()) -> str:
    """Store a verdict table in `store` (a path or a Store) with the run ids of `results` (see verdicts()): results
    in hand are stored first, as one run; a Sweep's points are stored already.  Returns the table's id."""
    from ...results.store import Store
    from ...services.sweeps import Sweep
    store = store if isinstance(store, Store) else Store(store)
    run_ids: list = []
    if isinstance(results, Sweep):
        run_ids = sweep_run_ids(results)
    elif results is not None and len(list(results)):
        run_ids = [store.append(list(results))]
    m = machine or this_machine()
    return store.append_verdicts(table[logic.COLUMNS].to_dict("records"), seed=seed_key(seed), run_ids=run_ids,
                                 scale=scale, engines=engines, setup={k: v for k, v in (setup or {}).items()},
                                 machine={"cores": m.cores, "memory_bytes": m.memory_bytes,
                                          "engines": sorted(m.engines or ())})


def sweep_run_ids(sweep) -> list:
    """The run ids of a sweep's finished points, as its store holds them."""
    ids = [pt.id for pt in sweep.points()]
    if not ids or not sweep.store.path.exists():
        return []
    got = sweep.store.query("SELECT DISTINCT run_id FROM sweep_points WHERE sweep_id = ? AND status = 'done' AND "
                            "run_id IS NOT NULL AND list_contains(?, point_id) ORDER BY run_id", [sweep.id, ids])
    return list(got.run_id)


def verdict_frame(frame):
    """`frame` as a VerdictFrame (verdictframe.py): a pandas DataFrame that a notebook shows whole (no text cut at
    pandas' max_colwidth) and that prints as `kvlab reproduce` prints the table; any other use is a DataFrame's."""
    from .verdictframe import VerdictFrame
    return VerdictFrame(frame)


# ---------------------------------------------------------------------------------------------------------------
# `kvlab reproduce`: a seed's experiment at a scale, at the seed's configuration, then its verdict table.

KEY_VALUE_BYTES = 16 + 100   # the seeds' 16-byte keys and 100-byte values (000, 001): the data a cache must hold


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
    memory: str | None = None
    runs: object = None     # what verdicts' `results` takes: the results, or seed 000's Sweep


def setup_of(seed, p: Mapping, engines=(), measured=None) -> dict:
    """What seed `seed`'s experiment was set up with, from its parameters `p` (and, for seed 004, what its
    larger-than-RAM run measured), as the claims' preconditions read it: the data and the cache (the smallest
    cache the memory budget gives an engine run; without a budget, the smallest of their own defaults), sync,
    the memory limit."""
    from .common import cache_bytes
    key = seed_key(seed)
    memory = p.get("memory")
    budget = {"memory": memory}
    if key in ("000", "001"):
        cache = p.get("cache_size") or cache_bytes(memory, engines) or _default_cache(engines)
        out = {**budget, "data_bytes": p["num"] * KEY_VALUE_BYTES, "cache_bytes": cache}
        return {**out, "sync": False} if key == "001" else out
    if key == "002":   # the seed's 50M records of 16 + 800 B (uncompressed for readrandom) were in its RAM
        from ...model.spec import memory_bytes
        return {**budget, "data_bytes": p["num"] * (16 + 800), "cache_bytes": p.get("cache_size"),
                "memory_bytes": memory_bytes(memory) if memory is not None else None}
    if key == "003":
        return {**budget, "sync": True}
    if key == "004":
        from ...execution.host.cgroup import parse_size, unavailable
        limit = parse_size(p["memory_limit"])
        why = unavailable(limit)   # larger than RAM is a database that outgrows the memory limit it runs in
        io = tables(key, measured).get("io") if measured is not None else None
        sizes = [x for x, s in zip(io["db_size_mib"], io["setting"]) if x == x and s == "larger_than_ram"] \
            if io is not None and {"db_size_mib", "setting"} <= set(io.columns) else []
        return {**budget, "memory_limit_bytes": None if why else limit, "memory_limit_unavailable": why,
                "limited_data_bytes": max(sizes) * 2**20 if sizes else None}
    return budget


def _default_cache(engines) -> int | None:
    caches = (engine_registry.descriptor(engine_registry.get(n)).cache for n in engines)
    sizes = [int(getattr(c, "default_bytes", 0)) for c in caches if getattr(c, "default_bytes", None)]
    return min(sizes) if sizes else None


def _run000(p, engines, store, progress):
    from .read_scalability import read_scalability, read_scalability_table
    sweep = read_scalability(engines, p["threads"], p["num"], p["reads"], repeats=p["repeats"], store=store,
                             name=p["name"], memory=p["memory"], warmup=p.get("warmup"))
    sweep.run(progress=progress)
    return read_scalability_table(sweep.frame(), sweep.results(phases=("run",))), sweep


def _run001(p, engines, store, progress):
    from .readwhilewriting import load_and_readwhilewriting
    load, rww, results = load_and_readwhilewriting(engines, p["num"], p["readers"], p["duration"],
                                                   p["writes_per_second"], memory=p["memory"])
    return (load, rww), results


def _run002(p, engines, store, progress):
    from .dbbench_suite import dbbench_suite
    frame, results = dbbench_suite(engines, p["num"], p["reads"], p["threads"], memory=p["memory"],
                                   cache_size=p.get("cache_size"))
    return frame, results


def _run003(p, engines, store, progress):
    from .transactions import seed003
    frame, results = seed003(engines, p["num"], p["duration"], p["max_clients"], memory=p["memory"])
    return frame, results


def _run004(p, engines, store, progress):
    from .linkbench import seed004
    cached = seed004(engines, p["maxid1"], p["requesters"], p["intervals"], p["interval_seconds"],
                     memory=p["memory"])
    bounded = seed004(engines, p["bounded_maxid1"], p["requesters"], p["intervals"], p["interval_seconds"],
                      memory_limit=p["memory_limit"])
    return [cached[:3], bounded[:3]], cached[3] + bounded[3]


def _given002(p, engine):
    from .dbbench_suite import ROCKSDB_SEED
    memtables = tuple(m for _, m in ROCKSDB_SEED.values()) if engine_registry.unversioned(engine) == "rocksdb" else None
    return {"cache_size": p.get("cache_size"), "write_buffer_size": memtables}


def _given004(p, engine):
    from .linkbench import seed_settings
    return {k: v for k, v in seed_settings(engine).items() if k in ("cache_size", "write_buffer_size")}


@dataclass(frozen=True)
class Runner:
    """How `reproduce` runs a seed: its scale presets (seeds.common.SCALES, MEMORY), the engines it runs by default,
    and the function that runs it: (parameters, engines, store, progress) -> (measured, the runs: results in hand,
    or a Sweep whose points are stored)."""
    notebook: str
    engines: tuple
    run: Callable
    given: Callable = lambda p, engine: {}   # the settings its runs give `engine` over the budget split (the line says)


RUNNERS = {
    "000": Runner("read_scalability", ("wiredtiger-btree", "leveldb"), _run000),
    "001": Runner("readwhilewriting", ("lmdb", "leveldb", "rocksdb", "rocksdb-tuned", "wiredtiger-btree",
                                       "wiredtiger-lsm", "bdb"), _run001),
    "002": Runner("dbbench_suite", ("wiredtiger-lsm", "rocksdb"), _run002, given=_given002),
    "003": Runner("transactions", ("lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "bdb"), _run003),
    "004": Runner("linkbench", ("wiredtiger-btree", "rocksdb"), _run004, given=_given004),
}

def given(seed, p: Mapping) -> Callable:
    """The settings seed `seed`'s runs give each engine over its memory budget's split, with parameters `p`: a function
    of the engine's name (what budget_line's `given` takes)."""
    runner = RUNNERS[seed_key(seed)]
    return lambda engine: runner.given(p, engine)


PRESET = object()   # reproduce's memory: the scale's own budget (seeds.common.MEMORY)


def parameters(seed, scale: str, memory=PRESET) -> dict:
    """The parameters `reproduce` runs seed `seed` with at `scale`: its notebook's preset (seeds.common.SCALES),
    the scale's memory budget (MEMORY) unless `memory` is given (a size, or None for the engines' defaults)."""
    from .common import MEMORY, SCALES
    runner = RUNNERS[seed_key(seed)]
    presets = cast(dict, SCALES[runner.notebook])
    if scale not in presets:
        raise errors.SpecError(f"scale {scale!r} is unknown; allowed: {', '.join(presets)}")
    budgets = cast(dict, MEMORY[runner.notebook])
    p = {**presets[scale], "memory": budgets[scale] if memory is PRESET else memory}
    if p["memory"] is not None:
        from ...model.spec import memory_bytes
        memory_bytes(p["memory"])   # a size that is not one: a SpecError before anything runs
    return p


def reproduce(seed, scale: str = "default", engines=None, store=None, progress: bool = False,
              machine: logic.Machine | None = None, memory=PRESET) -> Reproduction:
    """Run seed `seed`'s experiment at `scale` on `engines` (default: the seed's, those built) within the scale's
    memory budget (or `memory`: a size, None for the engines' defaults), store what it ran in `store` (a path, a
    Store or None: the default results store), test its claims, and store the verdicts with the runs' ids."""
    from ...results.store import Store
    key = seed_key(seed)
    runner = RUNNERS[key]
    p = parameters(key, scale, memory)
    asked = list(engines) if engines else list(runner.engines)
    for name in asked:
        engine_registry.get(name)   # an unknown name: a SpecError listing the known ones
    have = built(asked)
    if not have:
        raise errors.EngineNotBuilt(f"none of {', '.join(asked)} is built here (kvlab engines lists what is)")
    p["name"] = f"reproduce-{key}-{scale}"
    store = store if isinstance(store, Store) else Store(store)
    from .plan import over_budget_recorded
    with over_budget_recorded() as over:   # a step over its memory budget: its engine's claims cannot be tested
        measured, runs = runner.run(p, have, store, progress)
    machine = machine or this_machine()
    setup = setup_of(key, p, have, measured)
    if over:
        setup["over_budget"] = dict(over)
    table = verdicts(key, measured, p, machine=machine, setup=setup, results=runs, store=store, scale=scale)
    results = list(runs) if isinstance(runs, (list, tuple)) else []
    return Reproduction(key, scale, tuple(have), measured, setup, results, table, p["memory"], runs)
