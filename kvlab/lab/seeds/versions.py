"""Engine versions side by side (notebook 08_versions): `kvlab versions`' job and its Small Datum table (Mark
Callaghan's reports: each version's throughput relative to a base version, with CPU and I/O per operation).

The versions run as `kvlab versions` runs them (kvlab.services.maincompare, the table kvlab.services.versions'):
each loaded once with the same keys, then every workload at every thread count on its loaded database, repeated
round-robin with the first version rotating.  `versions_plan` lists those runs as Steps (the estimate costs them);
`versions` runs the same maincompare.Plan and returns the table as a tidy frame, one row per workload, thread count
and version, with the records behind it.

A version that is not built is refused before anything runs (EngineNotBuilt, naming its build command), except the
two LMDB versions that scripts/setup.sh builds (SETUP_BUILDS: seconds each), which are built here when missing, as
the test suite builds them."""
from __future__ import annotations

import uuid

from ...execution import native
from ...execution.plugins import build as plugin_build
from ...execution.plugins import where
from ...model.spec import memory_bytes
from ...services import maincompare
from ...services import versions as service
from .plan import Step

# what scripts/setup.sh builds (`kvlab engines build --skip-built --where-possible lmdb@0.9.24 lmdb@0.9.70`): built when missing
SETUP_BUILDS = ("lmdb@0.9.24", "lmdb@0.9.70")

# the frame's columns, in order
COLUMNS = ["workload", "threads", "version", "base", "n", "median_ops_per_sec", "relative", "relative_lo",
           "relative_hi", "relative_level", "p", "verdict", "cpu_us_per_op", "read_kb_per_op", "write_kb_per_op",
           "write_amp"]


def _plan(names, workloads, threads, num, repeat, duration, warmup, seed, memory) -> maincompare.Plan:
    return maincompare.Plan(engines=tuple(names), num=num, threads=tuple(threads), workloads=tuple(workloads),
                            repeat=repeat, duration=duration, warmup=warmup, seed=seed,
                            memory=None if memory is None else memory_bytes(memory), label=f"versions:{uuid.uuid4().hex[:8]}")


def versions_plan(names, workloads, threads, num, repeat, duration, warmup, seed=1, memory=None) -> list:
    """The job's runs in the order they run: each version's load (fillseq, `num` keys), then
    maincompare.schedule's points (every workload at every thread count, each `duration` s with `warmup` cut,
    `repeat` rounds), each on its version's loaded database (auto_load off: the estimate counts no load there)."""
    names = service.check_versions(names)
    plan = _plan(names, workloads, threads, num, repeat, duration, warmup, seed, memory)
    loads = [Step(n, "fillseq load", dict(workload=maincompare.LOAD, num=num, seed=seed, memory=plan.memory,
                                          interval=0), seed_db=True) for n in names]
    points = [Step(n, f"{pt.label()} #{r + 1}", dict(workload=pt.workload, num=num, threads=pt.threads,
                                                      seed=(seed + r) % 2 ** 64, use_existing_db=True, auto_load=False,
                                                      duration=duration, warmup=warmup, memory=plan.memory,
                                                      interval=0), seed_db=True)
              for r, n, pt in maincompare.schedule(plan)]
    return loads + points


def ready(names, log=None) -> list:
    """The versions, each loaded; SETUP_BUILDS' built first where missing, any other missing version refused
    (EngineNotBuilt naming `kvlab engines build NAME@VERSION`)."""
    for n in names:
        if n in SETUP_BUILDS and where.built(n) is None:
            plugin_build.build(n, **({"log": log} if log else {}))
        native.require_built(n, load_now=False)
    return list(names)


def versions(names, workloads, threads, num, repeat, duration, warmup, seed=1, memory=None):
    """`kvlab versions` on `names` (the first the base): (the Small Datum table as a tidy frame, the records)."""
    names = ready(service.check_versions(names))
    plan = _plan(names, workloads, threads, num, repeat, duration, warmup, seed, memory)
    outcome = maincompare.run_plan(plan)
    if outcome.stopped:
        raise KeyboardInterrupt(f"kvlab versions stopped by {outcome.stopped}")
    maincompare.finish(outcome.results)
    return versions_table(outcome.results, names[0]), outcome.results


def versions_table(results, base: str):
    """kvlab.services.versions.table as a tidy frame: one row per workload, thread count and version (the base
    first at each point), the relative throughput's interval as relative_lo/relative_hi."""
    import pandas as pd
    rows = []
    for r in service.table(results, base):
        lo, hi = r["relative_interval"] or (None, None)
        rows.append({"workload": r["point"].workload, "threads": r["point"].threads, "version": r["engine"],
                     "base": r["base"], "n": r["n"], "median_ops_per_sec": r["median"], "relative": r["relative"],
                     "relative_lo": lo, "relative_hi": hi, "relative_level": r["relative_level"], "p": r["p"],
                     "verdict": "base" if r["base"] else r["verdict"], "cpu_us_per_op": r["cpu_us_per_op"],
                     "read_kb_per_op": r["read_kb_per_op"], "write_kb_per_op": r["write_kb_per_op"],
                     "write_amp": r["write_amp"]})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame.attrs["base"] = base
    return frame


def notebook_plan(p, engines) -> list:
    """Notebook 08_versions' runs (`engines`: its versions)."""
    return versions_plan(engines, p["workloads"], p["threads"], p["num"], p["repeat"], p["duration"], p["warmup"],
                         seed=p["seed"], memory=p.get("memory"))
