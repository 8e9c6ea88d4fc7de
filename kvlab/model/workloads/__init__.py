"""The workload registry: what each benchmark name means, as data.

Two kinds of name.  db_bench's workloads run specialised loops in cython_ext/src/driver.c;
this table says which loop a name runs, whether it needs a loaded database, and the settings a
db_bench alias implies (fillbatch = fillseq in batches of 1000, fillsync = fillrandom with sync
on and num/1000 writes).  Everything else is a mix (mix.py): the presets (YCSB A-F, seed 003's
tests), `txn:<mako spec>`, and mixes a spec carries by name (a TOML file, YCSB properties, the
Python API); all of them run the one generic loop."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from ... import errors

if TYPE_CHECKING:
    from .mix import Mix


# how a workload changes the live set, the keys and values the database holds (space amplification:
# kvlab.results.amplification.apply_phase reads it)
LIVE_PATTERNS = {
    "none": "writes nothing, or rewrites keys that are live already",
    "sequential": "writes keys in order from its thread's first key: every key written is live",
    "random": "writes keys drawn uniformly with replacement from kvlab's deterministic key streams",
    "delete": "deletes keys drawn uniformly: each live key survives with (1 - 1/n)^deletes",
    "mix": "a mix: each insert adds a key, each delete removes one, updates keep the count",
    "graph": "a LinkBench graph, whose live bytes kvlab does not track",
    "trace": "a trace's writes and deletes, replayed, whose live bytes kvlab does not track",
}
# what a fill's record in the database's marker counts (execution.dbfiles.dbdir): records written in key order from the
# first (so a load may be bulk and a killed one resumed), random writes, a LinkBench graph's nodes
FILL_UNITS = ("records", "writes", "nodes")


@dataclass(frozen=True)
class Workload:
    name: str
    native: str                 # the driver loop (KV_WORKLOADS in kv_driver.h; kvlab._native.WORKLOADS)
    description: str
    needs_data: bool = False    # reads a loaded key space; a fresh db gets a fillseq load phase
    writes: bool = False        # writes: after it the database holds data
    implies: Mapping[str, object] = field(default_factory=dict)
    mix: Mix | None = None      # native "mix": the Mix it runs
    uniform_reads: bool = False  # reads keys uniformly over the key space: its found share is the live share
    # what it counts, read by the phase plan (kvlab.execution.run.phases) and never from the name
    counts_found: bool = False  # counts the keys its reads (or deletes) found and missed
    one_thread_only: bool = False   # one thread does the work whatever `threads` is (compact): only it counts
    has_writer: bool = False    # a writer thread beside the workers (readwhilewriting), reported apart
    live_pattern: str = "none"  # how it changes the live set (LIVE_PATTERNS)
    fills: str | None = None    # fills the key space; what the marker's fill record counts (FILL_UNITS)
    graph: bool = False         # runs on a LinkBench graph: its load, or a mix of its operations
    batches: bool = False       # its loop makes `batch` ops one timed call (a write batch, a MultiGet): with a
    #                             batch above 1, a latency is a batch's

    def __post_init__(self):
        if self.live_pattern not in LIVE_PATTERNS:
            raise ValueError(f"workload {self.name!r}: live pattern {self.live_pattern!r} is unknown; allowed: "
                             f"{', '.join(LIVE_PATTERNS)}")
        if self.fills is not None and self.fills not in FILL_UNITS:
            raise ValueError(f"workload {self.name!r}: fill unit {self.fills!r} is unknown; allowed: "
                             f"{', '.join(FILL_UNITS)}")


REGISTRY: dict[str, Workload] = {}


def _add(*args, **kw):
    w = Workload(*args, **kw)
    REGISTRY[w.name] = w


_add("fillseq", "fillseq", "write num keys in key order; threads split the key range", writes=True,
     live_pattern="sequential", fills="records", batches=True)
_add("fillrandom", "fillrandom", "write num keys drawn uniformly with replacement", writes=True,
     live_pattern="random", fills="writes", batches=True)
_add("overwrite", "overwrite", "fillrandom over an existing key space", needs_data=True, writes=True,
     live_pattern="random", batches=True)
_add("fillbatch", "fillseq", "fillseq in batches of 1000 puts", writes=True, implies={"batch": 1000},
     live_pattern="sequential", fills="records", batches=True)
_add("fillsync", "fillrandom", "fillrandom with sync on every write, num/1000 writes", writes=True,
     implies={"sync": True, "num_divisor": 1000}, live_pattern="random", fills="writes", batches=True)
_add("readrandom", "readrandom", "reads per thread, keys uniform over the key space", needs_data=True,
     uniform_reads=True, counts_found=True)
_add("readmissing", "readmissing", "random reads of keys that are never present", needs_data=True,
     counts_found=True)
_add("readhot", "readhot", "random reads within the first 1% of the key space", needs_data=True, counts_found=True)
_add("readseq", "readseq", "iterate from the first key, reads entries per thread", needs_data=True,
     counts_found=True)
_add("seekrandom", "seekrandom", "seek to a random key, then read seek_nexts more", needs_data=True,
     counts_found=True)
_add("deleterandom", "deleterandom", "delete num random keys (split across threads)", needs_data=True,
     writes=True, counts_found=True, live_pattern="delete")
_add("readwhilewriting", "readwhilewriting",
     "threads readers plus one writer overwriting random keys (rate writes_per_second); "
     "the writer is reported apart", needs_data=True, writes=True, uniform_reads=True, counts_found=True,
     has_writer=True, live_pattern="random")
_add("compact", "compact", "compact the whole key range once", needs_data=False, one_thread_only=True)
_add("readrandomwriterandom", "readrandomwriterandom",
     "reads per thread of keys uniform over the key space, of each 100 first readwritepercent gets (default 90), "
     "then puts; reads and writes timed apart", needs_data=True, writes=True, counts_found=True,
     live_pattern="random")
_add("updaterandom", "updaterandom", "reads per thread of read-modify-writes of uniform keys: a get, then a put "
     "of a new value (one rmw op)", needs_data=True, writes=True, counts_found=True, live_pattern="random")
_add("multireadrandom", "multireadrandom", "reads keys per thread, uniform, batch keys a call through the "
     "engine's batched read (RocksDB's MultiGet) or batch gets where it has none; a latency is a batch's",
     needs_data=True, uniform_reads=True, counts_found=True, batches=True)
_add("fillseqdeterministic", "fillseqdeterministic",
     "fillseq on one thread, then the whole key range compacted inside the phase, so the fill leaves the same "
     "shape every time (db_bench's keeps each LSM level's shape instead: docs/dbbench.md)", writes=True,
     implies={"threads": 1}, live_pattern="sequential", batches=True)
_add("replay", "replay", "a trace's operations, each thread's in order, at its recorded speed or back to back "
     "(kvlab replay FILE; docs/traces.md)", writes=True, counts_found=True, live_pattern="trace")
_add("linkbench-load", "graphload", "LinkBench's load: nodes, their links and link counts (kv_graph.h's encoding); "
     "the load phase of a LinkBench mix, which gives the graph", writes=True, live_pattern="graph", fills="nodes",
     graph=True)


MAKO_PREFIXES = ("txn:", "mako:")   # a mako transaction spec follows either


def get(name: str, mixes: Mapping[str, Mix] | None = None) -> Workload:
    """The workload `name`: a db_bench loop, a preset mix, `txn:<mako spec>` (or `mako:`), or one of `mixes`.
    Files (TOML, YCSB) become mixes in `resolve.resolve`, which make_spec calls."""
    from .mako import from_mako
    from .presets import PRESETS
    if name in REGISTRY:
        return REGISTRY[name]
    mix = (mixes or {}).get(name) or PRESETS.get(name)
    if mix is None and isinstance(name, str) and name.startswith(MAKO_PREFIXES):
        mix = from_mako(name.partition(":")[2])
    if mix is None:
        raise unknown(name, mixes)
    graph = bool(mix.graph)
    return Workload(name, "mix", mix.description or mix.describe(), needs_data=True, writes=mix.writes, mix=mix,
                    counts_found=True, live_pattern="graph" if graph else "mix", graph=graph)


def unknown(name, mixes: Mapping[str, Mix] | None = None) -> errors.SpecError:
    """The error for a workload that is none of the forms a run takes: what is allowed, and the closest
    name when there is one."""
    import difflib
    from pathlib import Path

    from .presets import PRESETS
    from .ycsb import CORE_FILES
    text = str(name)
    names = [*REGISTRY, *PRESETS, *(mixes or {}), *CORE_FILES]
    close = difflib.get_close_matches(text, names, n=1)
    prefix, colon, rest = text.partition(":")
    if colon and not close and not text.startswith(MAKO_PREFIXES):   # tx:g9u1, mak:g9u1
        near = difflib.get_close_matches(prefix + ":", MAKO_PREFIXES, n=1, cutoff=0.6)
        close = [near[0] + rest] if near else close
    why = ""
    try:
        p = Path(text)
        if p.is_dir():
            why = ": a directory, not a workload file"
        elif ("/" in text or text.endswith((".properties", ".toml", ".txt"))) and not p.exists():
            why = ": no such file"
    except (OSError, ValueError):   # a name no file system takes (NUL, too long)
        pass
    mine = f" mixes given: {', '.join(map(str, mixes))};" if mixes else ""
    return errors.SpecError(
        f"workload {text!r} is unknown{why}{f' (did you mean {close[0]}?)' if close else ''}; allowed: a name "
        f"(db_bench's {', '.join(REGISTRY)}; the mixes {', '.join(PRESETS)};{mine} see `kvlab workloads`), "
        "txn:<mako spec> or mako:<mako spec> (e.g. txn:g9u1), a TOML mix file (*.toml), or a YCSB properties file "
        "(a path, or YCSB's core workloada ... workloadf), several joined by commas")


def catalog() -> list:
    """Every named workload, one line each: db_bench's loops, then the mix presets (YCSB A-F,
    seed 003's tests).  `kvlab workloads` prints it."""
    from .presets import PRESETS  # the presets are built with the parsers, which import this package's siblings
    rows = [{"name": w.name, "kind": "db_bench", "description": w.description} for w in REGISTRY.values()]
    rows += [{"name": m.name, "kind": "mix", "description": f"{m.description}: {m.describe()}"}
             for m in PRESETS.values()]
    return rows
