"""The estimate before a run, for both faces: what a set of runs costs in time, disk and memory, from the rates
and space factors the results store has seen (else stated defaults), and whether the disk where they go has room.
The notebook face adds what each notebook runs (kvlab.lab.estimate: its seed's plan); `kvlab sweep` costs its
points here."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import engines as engine_registry
from .. import errors
from ..execution.orchestration import sweep as sweep_execution
from ..model import workloads
from ..model.spec import RunSpec
from ..results.store import Store

# Stated defaults, used where the results store has nothing better.  Conservative: an LSM holds obsolete
# versions until compaction, a B-tree's pages are half full after random inserts, logs and WALs come on top.
DEFAULT_SPACE_AMP = 2.0
DB_FLOOR_BYTES = 16 << 20          # a database's own files at any size (logs, preallocated pages, manifests)
AMP_MIN_LOGICAL_BYTES = 64 << 20   # a stored run smaller than this says more about the floor than the factor
# the engines' own cache when cache_size is not given (each descriptor's `cache`; LMDB's cache is the page cache)
DEFAULT_CACHE_BYTES = {name: d.cache.default_bytes for name, d in engine_registry.DESCRIPTORS.items() if d.cache}
# Rates for a phase the store has never seen on that engine, a thread: the sweep runner's (kvlab.execution.orchestration.sweep),
# below the seeds' published figures (seed 002: RocksDB loaded 50M 800 B values at 228k ops/s and overwrote them
# at 42k; seed 001: LevelDB loaded 100M at 177k), so that an unmeasured run is estimated long rather than short.
ASSUMED_LOAD_OPS_PER_SEC = sweep_execution.ASSUMED_LOAD_OPS_PER_SEC
ASSUMED_WRITE_OPS_PER_SEC = sweep_execution.ASSUMED_WRITE_OPS_PER_SEC
ASSUMED_READ_OPS_PER_SEC = sweep_execution.ASSUMED_READ_OPS_PER_SEC
PYTHON_OPS_PER_SEC = 100_000       # the quickstart's plain Python loop through a binding
LINKBENCH_BYTES_PER_ID = 1_000     # LinkBench's own figure: about 1 GB per 1M ids (in MySQL)
LINKBENCH_LOAD_IDS_PER_SEC = 20_000
CRASH_OVERHEAD_S = 1.5             # a crash test's kill: start a writer, kill it, reopen and check
# the output folder: measured on this machine's smoke and default runs (three formats a figure)
NOTEBOOK_BYTES = 256 << 10
FIGURE_BYTES = 512 << 10
STORE_BYTES = 3 << 20              # a DuckDB store with its first records
STORE_BYTES_PER_RUN = 64 << 10


NotEnoughDisk = errors.NotEnoughDisk


@dataclass(frozen=True)
class Work:
    """One run a notebook or sweep makes.  `spec` is timed by the sweep runner's model; work that is not a
    kvlab run (LinkBench, crash tests, the Python loop) gives `seconds` itself.  Its database holds `keys`
    records of `record_bytes` (as stored: compressed values count at the run's compression_ratio)."""
    label: str
    engine: str
    keys: int
    record_bytes: int
    spec: RunSpec | None = None
    seconds: float = 0.0              # fixed time (work without a spec), or the least a paced run takes
    cache_bytes: int = 0
    in_memory: bool = True            # the seed ran from memory: the database should stay in the page cache
    memory_cap: int | None = None     # a memory cgroup's limit
    runner_tmp: bool = True           # the runner makes the database ($KVLAB_TMPDIR); else a seed's tmpdb()


@dataclass
class Cost:
    """What one notebook (or a sweep) will cost."""
    title: str
    works: list
    seconds: float = 0.0
    measured: int = 0                 # phases timed from stored rates (or by their own duration)
    assumed: int = 0                  # phases timed from the assumed rates
    db_bytes: dict = field(default_factory=dict)   # folder -> the largest database made there
    output_bytes: int = 0
    memory_bytes: int = 0
    amp: dict = field(default_factory=dict)        # engine adapter -> (factor, where it came from)

    @property
    def keys(self) -> int:
        return max((w.keys for w in self.works), default=0)


# --- the notebooks' parameters, read from the notebooks ----------------------------------------------

def _spec_work(label, spec: RunSpec, **kw) -> Work:
    sizes = [spec.value_size] + [max(m.value_size) for w in spec.workloads
                                 if (m := workloads.get(w, spec.mixes).mix) is not None and m.value_size]
    value = max(sizes)
    if spec.engine_settings.get("compression") not in (None, "", "none"):
        value = int(value * spec.compressed_fraction)
    cfg = engine_registry.get(spec.engine)
    cache = int(spec.engine_settings.get("cache_size") or DEFAULT_CACHE_BYTES.get(cfg.adapter, 0))
    return Work(label, spec.engine, spec.num, spec.key_size + value, spec=spec, cache_bytes=cache, **kw)




# --- from runs to a cost ----------------------------------------------------------------------------

def stored_space_amp(store: Store | None) -> dict:
    """Per engine configuration: the largest db_size_bytes / (num x (key + value)) among stored runs big
    enough to say something (AMP_MIN_LOGICAL_BYTES of data)."""
    if store is None or not store.path.is_file():
        return {}
    try:
        df = store.query("SELECT engine, max(db_size_bytes / (num * (key_size + value_size))) AS amp FROM benchmarks "
                         "WHERE db_size_bytes > 0 AND num * (key_size + value_size) >= ? GROUP BY engine",
                         [AMP_MIN_LOGICAL_BYTES])
    except errors.KvlabError:
        return {}
    return {r.engine: float(r.amp) for r in df.itertuples()}


def stored_rates(store: Store | None) -> dict:
    """The sweep runner's rates (median ops/s per thread by engine, workload, phase) from `store`."""
    if store is None or not store.path.is_file():
        return {}
    return sweep_execution._rates(store)


class _Rates(dict):
    """Stored rates, (engine, workload, phase) -> ops/s a thread, as the sweep runner's model reads them; a phase
    the store lacks gets the assumed rate of its kind, and is counted in `assumed`."""
    assumed = 0

    def get(self, key, default=None):
        if key in self:
            return self[key]
        self.assumed += 1
        engine, workload, phase = key
        if phase == "load":
            return ASSUMED_LOAD_OPS_PER_SEC
        try:
            writes = workloads.get(workload).writes
        except errors.SpecError:   # a custom mix, named only in its run's spec: take it as writing
            writes = True
        return ASSUMED_WRITE_OPS_PER_SEC if writes else ASSUMED_READ_OPS_PER_SEC


def db_folder(runner_tmp: bool) -> Path:
    """Where a database is made: the runner's own under $KVLAB_TMPDIR, else (and the seeds' tmpdb()) the
    temporary folder."""
    base = os.environ.get("KVLAB_TMPDIR") if runner_tmp else None
    return Path(base or tempfile.gettempdir())


def cost(title: str, works: list, rates: dict, amps: dict, output_bytes: int = 0) -> Cost:
    c = Cost(title, works, output_bytes=output_bytes)
    for w in works:
        if w.spec is not None:
            known = _Rates(rates)
            seconds, phases, _ = sweep_execution.point_seconds(w, known)   # every phase has a rate here
            c.seconds += max(seconds, w.seconds)
            c.measured, c.assumed = c.measured + phases - known.assumed, c.assumed + known.assumed
        else:
            c.seconds += w.seconds
            c.assumed += 1
        amp = amps.get(w.engine)
        c.amp[w.engine] = (amp, "stored") if amp else (DEFAULT_SPACE_AMP, "default")
        size = int(w.keys * w.record_bytes * c.amp[w.engine][0]) + DB_FLOOR_BYTES
        place = db_folder(w.runner_tmp)
        c.db_bytes[place] = max(c.db_bytes.get(place, 0), size)
        memory = (size if w.in_memory else 0) + w.cache_bytes
        c.memory_bytes = max(c.memory_bytes, min(memory, w.memory_cap) if w.memory_cap else memory)
    return c


def sweep_cost(points, store: Store | None) -> Cost:
    store = store if store is not None else Store()
    return cost("sweep", [_spec_work(p.label(), p.spec) for p in points], stored_rates(store),
                stored_space_amp(store), output_bytes=len(points) * STORE_BYTES_PER_RUN)


# --- the disk where it goes ---------------------------------------------------------------------------

def _existing(path: Path) -> Path:
    path = Path(path).expanduser().absolute()
    while not path.exists():
        path = path.parent
    return path


def free_bytes(path) -> int:
    st = os.statvfs(_existing(path))
    return st.f_bavail * st.f_frsize


def needs(costs: list, out: Path) -> list:
    """Per file system: (the places on it, bytes needed, bytes free).  Databases are made one at a time and
    removed after, so a place needs its largest; the output folder keeps everything."""
    places: dict[Path, int] = {}
    for c in costs:
        for place, size in c.db_bytes.items():
            places[place] = max(places.get(place, 0), size)
    places[Path(out)] = places.get(Path(out), 0) + sum(c.output_bytes for c in costs)
    devices: dict[int, list] = {}
    for place, size in places.items():
        dev = os.stat(_existing(place)).st_dev
        entry = devices.setdefault(dev, [[], 0, free_bytes(place)])
        entry[0].append(place)
        entry[1] += size
    return [tuple(e) for e in devices.values()]


def check_disk(costs: list, out: Path) -> None:
    """Refuse, before anything runs, a run whose estimate does not fit in the free space where it writes."""
    short = [(places, need, free) for places, need, free in needs(costs, out) if need > free]
    if short:
        text = "; ".join(f"{' and '.join(str(p) for p in places)} needs {format_bytes(need)}, "
                         f"{format_bytes(free)} free" for places, need, free in short)
        raise NotEnoughDisk(f"the run does not fit on the disk: {text} (an estimate: --dry-run or kvlab sweep "
                            "show says how it was made); make room, point --out, --store, $TMPDIR or $KVLAB_TMPDIR "
                            "elsewhere, or run less")


# --- words --------------------------------------------------------------------------------------------

def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"


def memory_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def describe_basis(store: Store | None) -> list:
    """Where the rates and space factors come from: said once, above the notebooks."""
    store = store if store is not None else Store()
    rates, amps = stored_rates(store), stored_space_amp(store)
    where = f"{len(rates)} engine+workload+phase rates in the results store {store.path}" if store.path.is_file() \
        else f"no results store at {store.path}"
    return [f"rates: {where}; where none, assumed "
            f"(a thread) loads {ASSUMED_LOAD_OPS_PER_SEC:,} ops/s, writes {ASSUMED_WRITE_OPS_PER_SEC:,}, reads "
            f"{ASSUMED_READ_OPS_PER_SEC:,}; Python loops {PYTHON_OPS_PER_SEC:,}, LinkBench loads "
            f"{LINKBENCH_LOAD_IDS_PER_SEC:,} ids/s",
            f"space: keys x (key + value) x a factor per engine: {len(amps)} measured from stored db_size_bytes; "
            f"where none, x{DEFAULT_SPACE_AMP:.1f} (stated default), plus {format_bytes(DB_FLOOR_BYTES)} a database"]


def rate_basis(c: Cost) -> str:
    total = c.measured + c.assumed
    if not c.assumed:
        return "every phase from stored rates or its own duration" if total else "nothing to run"
    return f"{c.measured} of {total} phases from stored rates or their own duration, {c.assumed} assumed"


def amp_basis(c: Cost) -> str:
    stored = [f"{e} x{f:.2f} stored" for e, (f, how) in sorted(c.amp.items()) if how == "stored"]
    default = sorted(e for e, (_, how) in c.amp.items() if how == "default")
    if default:
        stored.append(f"x{DEFAULT_SPACE_AMP:.1f} default for {len(default)} of {len(c.amp)} engines")
    return "; ".join(stored)


def describe(c: Cost) -> list:
    """The lines printed for one notebook or sweep."""
    dbs = ", ".join(f"{format_bytes(size)} in {place}" for place, size in c.db_bytes.items()) or "none"
    return [f"  runs     {len(c.works)}, up to {c.keys:,} keys a database",
            f"  time     about {sweep_execution.format_seconds(c.seconds)} ({rate_basis(c)})",
            f"  disk     {dbs} at most at once ({amp_basis(c)}); output {format_bytes(c.output_bytes)}",
            f"  memory   {format_bytes(c.memory_bytes)} (engine cache, plus the database kept in the page cache "
            "where the run reads from memory)"]


def describe_total(costs: list, out: Path) -> list:
    lines = [f"total: {sum(len(c.works) for c in costs)} runs, about "
             f"{sweep_execution.format_seconds(sum(c.seconds for c in costs))}"]
    for places, need, free in needs(costs, out):
        verdict = "fits" if need <= free else "DOES NOT FIT"
        lines.append(f"  disk     {' and '.join(str(p) for p in places)}: needs {format_bytes(need)}, "
                     f"{format_bytes(free)} free: {verdict}")
    avail = memory_available()
    memory = max((c.memory_bytes for c in costs), default=0)
    lines.append(f"  memory   {format_bytes(memory)} at most"
                 + (f", {format_bytes(avail)} available{'' if memory <= avail else ': MORE THAN AVAILABLE'}"
                    if avail else ""))
    return lines
