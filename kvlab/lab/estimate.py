"""What a notebook run or a sweep will cost before it starts (the cost model is kvlab.services.estimate, which
`kvlab sweep` uses too; this module adds what each notebook runs): the runs it makes, the keys, the wall time, the
disk and memory it needs, beside the free space where its databases and output go (os.statvfs).
`kvlab notebooks run --dry-run` and `kvlab sweep show` print it; a real run that cannot fit on the disk is
refused before it starts (`check_disk`).

The numbers are the notebooks' own: each notebook's papermill `parameters` cell is read from the shipped
.ipynb (its literal assignments, never evaluated) and resolved by the same `seeds.common.resolve` the notebook
calls (smoke and full from its SCALES).  Which runs a notebook makes is its seed module's plan
(`notebook_plan`: kvlab/lab/seeds/plan.py), the same Steps the seed's experiments walk when the notebook runs.

Time comes from the sweep runner's model (`execution.orchestration.sweep.point_seconds`: stored ops/s per thread for the
same engine, workload and phase where the results store has them), with conservative rates of its own (ASSUMED_*)
where the store has none; disk is keys x
(key + value) x a space-amplification factor per engine, measured from stored db_size_bytes where the store
has a large enough run, else DEFAULT_SPACE_AMP.  docs/time-to-result.md says what this leaves out.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import json

from .. import _resources, errors
from .. import engines as engine_registry
from ..engines.descriptor import memory_split
from ..execution.host.cgroup import parse_size
from ..model.spec import RunSpec
from ..model.workloads.rate import parse as parse_schedule
from ..results.store import Store

# the cost model both faces use (kvlab.services.estimate), re-exported: kvlab.lab.estimate is the notebook face's door
from ..services.estimate import (  # noqa: F401
    AMP_MIN_LOGICAL_BYTES,
    ASSUMED_LOAD_OPS_PER_SEC,
    ASSUMED_READ_OPS_PER_SEC,
    ASSUMED_WRITE_OPS_PER_SEC,
    CRASH_OVERHEAD_S,
    DB_FLOOR_BYTES,
    DEFAULT_CACHE_BYTES,
    DEFAULT_SPACE_AMP,
    FIGURE_BYTES,
    LINKBENCH_BYTES_PER_ID,
    LINKBENCH_LOAD_IDS_PER_SEC,
    NOTEBOOK_BYTES,
    PYTHON_OPS_PER_SEC,
    STORE_BYTES,
    STORE_BYTES_PER_RUN,
    Cost,
    Work,
    _spec_work,
    amp_basis,
    check_disk,
    cost,
    db_folder,
    describe,
    describe_basis,
    describe_total,
    format_bytes,
    free_bytes,
    memory_available,
    needs,
    rate_basis,
    stored_rates,
    stored_space_amp,
    sweep_cost,
)
from . import coverage
from .seeds import common
from .seeds.durability import Crashes
from .seeds.field import Replay, SlaSearch
from .seeds.linkbench import LinkBenchRun
from .seeds.plan import Step
from .seeds.quickstart import VALUE, PythonLoop


def _cells(name: str) -> list:
    path = _resources.folder("notebooks") / f"{name}.ipynb"
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


def parameters(name: str, scale: str) -> dict:
    """The notebook's parameters as papermill runs it at `scale`: its `parameters` cell's assignments,
    `scale` injected, resolved through the seed's presets (seeds.common.resolve, as the notebook does)."""
    cell = next(c for c in _cells(name) if "parameters" in c.get("metadata", {}).get("tags", []))
    given = {}
    for node in ast.parse("".join(cell["source"])).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            given[node.targets[0].id] = ast.literal_eval(node.value)
    given.pop("scale", None)
    seed = name.split("_", 1)[-1]
    if seed not in common.SCALES:
        raise errors.SpecError(f"notebook {name}: no scale presets; add a row to kvlab/lab/seeds/common.py's SCALES")
    return common.resolve(seed, scale, **given)



# --- the runs each notebook makes: its seed's plan --------------------------------------------------------

def step_work(step: Step) -> Work:
    """What one step of a plan costs: a kvlab run by the sweep runner's model (a paced run at least its ops at
    the target rate); LinkBench, crash tests and the Python loop by their own sizes and the assumed rates."""
    where = dict(runner_tmp=not step.seed_db)
    if step.run is not None:
        spec = step.spec()
        rate = spec.target_rate or (parse_schedule(spec.rate_schedule).mean_rate() if spec.rate_schedule else 0.0)
        paced = spec.reads_per_thread * spec.threads / rate if rate else 0.0
        return _budgeted(_spec_work(step.label, spec, seconds=paced, in_memory=step.in_memory, **where), spec)
    w = step.work
    if isinstance(w, PythonLoop):
        return Work(step.label, step.engine, w.num, RunSpec.key_size + len(VALUE),
                    seconds=2 * w.num * len(w.threads) / PYTHON_OPS_PER_SEC, **where)
    if isinstance(w, LinkBenchRun):
        lb = w.config
        return Work(step.label, step.engine, lb.nodes, LINKBENCH_BYTES_PER_ID,
                    seconds=lb.nodes / LINKBENCH_LOAD_IDS_PER_SEC + lb.duration,
                    memory_cap=parse_size(w.memory_limit) if w.memory_limit else None, **where)
    if isinstance(w, Replay):   # its load at the load rate, its other ops at the write rate (YCSB-A's half)
        return Work(step.label, step.engine, w.num, w.record_bytes,
                    seconds=w.num / ASSUMED_LOAD_OPS_PER_SEC + (w.ops - w.num) / ASSUMED_WRITE_OPS_PER_SEC,
                    runner_tmp=not step.seed_db)
    if isinstance(w, SlaSearch):
        return Work(step.label, step.engine, w.num, w.record_bytes,
                    seconds=w.num / ASSUMED_LOAD_OPS_PER_SEC + w.seconds(), runner_tmp=not step.seed_db)
    if isinstance(w, Crashes):
        return Work(step.label, step.engine, w.num, RunSpec.key_size + RunSpec.value_size,
                    seconds=w.cuts * (w.max_s + CRASH_OVERHEAD_S), **where)
    raise errors.SpecError(f"{step.label}: no estimate for a {type(w).__name__}; add it to estimate.step_work")


def _budgeted(work: Work, spec: RunSpec) -> Work:
    """A run with a memory budget: its engine's cache is the budget's split (the notebooks' `memory`), not the
    engine's default, where the spec gives no cache_size of its own."""
    if spec.memory is None or spec.engine_settings.get("cache_size"):
        return work
    cfg = engine_registry.get(spec.engine)
    d = engine_registry.descriptor(cfg)
    split = memory_split(d, cfg, spec.memory)
    setting = getattr(d.cache, "setting", None)
    return dataclasses.replace(work, cache_bytes=int(split.get(setting, 0)) if setting else 0)


def notebook_plan(name: str, scale: str) -> tuple:
    """(parameters, the plan) of notebook `name` at `scale`: its seed module's notebook_plan on the built engines."""
    seed = name.split("_", 1)[-1]
    try:
        module = importlib.import_module(f"{__package__}.seeds.{seed}") if seed.isidentifier() else None
    except ModuleNotFoundError:
        module = None
    if not hasattr(module, "notebook_plan"):
        raise errors.SpecError(f"notebook {name}: no plan; add notebook_plan to kvlab/lab/seeds/{seed}.py")
    p = parameters(name, scale)
    # the engines it runs: its `engines` that are built (None: every built engine, coverage.every_built), or notebook
    # 08's `versions` (of one engine), as given: the notebook builds the set-up ones where missing
    # (seeds.versions.ready) and refuses any other
    return p, module.notebook_plan(p, coverage.chosen(p["engines"])[0] if "engines" in p else list(p["versions"]))


def notebook_works(name: str, scale: str) -> tuple:
    """(parameters, the runs) of notebook `name` at `scale`."""
    p, steps = notebook_plan(name, scale)
    return p, [step_work(s) for s in steps]



# --- a notebook's cost ----------------------------------------------------------------------------------

def output_bytes(name: str, runs_stored: int = 0) -> int:
    """The notebook's output folder: the executed notebook, its figures (plots.save calls in its cells), and a
    store if it keeps one there."""
    source = "".join("".join(c["source"]) for c in _cells(name))
    store = STORE_BYTES + runs_stored * STORE_BYTES_PER_RUN if "kvlab.duckdb" in source else 0
    return NOTEBOOK_BYTES + source.count("plots.save(") * FIGURE_BYTES + store


def notebooks_cost(names, scale: str, store: Store | None = None) -> list:
    """The cost of each notebook in `names` at `scale`, with the rates and space factors of `store`."""
    store = store if store is not None else Store()
    rates, amps = stored_rates(store), stored_space_amp(store)
    out = []
    for name in names:
        _, works = notebook_works(name, scale)
        out.append(cost(f"{name} ({scale})", works, rates, amps, output_bytes(name, len(works))))
    return out


