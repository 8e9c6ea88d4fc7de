"""LinkBench's phases on a kvlab engine: load (nodes, links, counts), request (the mix on `requesters`
clients, bounded by `requests` or by intervals x interval_seconds, sampled every interval), or run
(both).  With `memory_limit` the phase runs in a child process inside a memory cgroup of that size
(kvlab.execution.host.cgroup), the engine's cache sized inside it, and the database's page cache dropped
before a request phase, so the run is really larger than its memory; without, it runs here.

    python -m kvlab.execution.orchestration.linkbench REQUEST.json RESULT.json    (the child; internal)
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from ... import engines, errors
from ...model.spec import make_spec
from ...model.workloads.linkbench import LinkBench
from ...results.result import RunResult, load_json
from ..host import cgroup
from ..run import runner

PHASES = ("load", "request", "run")
GRAPH_RECORD = ".kvlab-linkbench.json"   # in the database directory: the graph its load wrote
# the settings that decide what the load wrote; a request phase uses the recorded ones
GRAPH_FIELDS = ("maxid1", "startid1", "link_type_count", "nlinks_shape", "nlinks_max", "seed")
WRITE_BUFFER_SHARE = 0.08   # each memtable (an LSM keeps two or more), when not given
# of what memory_limit leaves beside the process itself, for the engine's cache when none is given: less than
# half, because an LSM's memtables, table readers (index and filter blocks) and allocator overhead live beside
# its cache (RocksDB at 1M nodes in 384M, with half, grew to the limit and was killed; with 0.3 it peaks at ~330)
CACHE_SHARE = 0.3


def spec_for(engine: str, config: LinkBench, phase: str, db=None, **settings):
    """The RunSpec of one LinkBench phase."""
    if phase not in PHASES:
        raise errors.SpecError(f"linkbench phase {phase!r} is unknown; allowed: {', '.join(PHASES)}")
    if phase == "request" and db is None:
        raise errors.SpecError("linkbench request runs on a loaded database: give db=DIR (made by linkbench load "
                               "with the same settings)")
    mix = config.workload()
    # the time bound is the request phase's: a load always writes every node (a load cut off at the request
    # phase's intervals x interval_seconds left most of a large graph unwritten, yet recorded as loaded)
    timed = phase != "load" and not config.requests
    return make_spec(engine, "linkbench-load" if phase == "load" else "linkbench", mixes={"linkbench": mix},
                     num=config.nodes, threads=config.requesters, reads=config.requests or config.nodes,
                     duration=config.duration if timed else 0.0, interval=config.interval_seconds,
                     warmup=config.warmup_time, db=db, use_existing_db=phase == "request",
                     keep_db=db is not None, seed=config.seed, **settings)


def as_loaded(config: LinkBench, db) -> tuple[LinkBench, list]:
    """`config` with the graph-defining settings the database's load recorded, and notes on what changed."""
    path = Path(db) / GRAPH_RECORD
    if not path.exists():
        raise errors.NoDatabase(f"{db} holds no LinkBench graph ({GRAPH_RECORD} is missing): run linkbench load "
                                "(or run) on it first")
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise errors.ResultsError(f"{path} cannot be read ({exc}); load the graph again") from None
    changed = {k: recorded[k] for k in GRAPH_FIELDS if k in recorded and recorded[k] != getattr(config, k)}
    notes = [f"the request phase uses the graph as loaded: {', '.join(f'{k}={v}' for k, v in changed.items())}"] \
        if changed else []
    return replace(config, **changed), notes


def _record_graph(config: LinkBench, db):
    path = Path(db) / GRAPH_RECORD
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({k: getattr(config, k) for k in GRAPH_FIELDS}))
    tmp.replace(path)


def run_linkbench(engine: str, config: LinkBench | None = None, phase: str = "run", *, db=None,
                  memory_limit=None, control=None, **settings) -> RunResult:
    config = config or LinkBench()
    notes = []
    if phase == "request" and db is not None:
        config, notes = as_loaded(config, db)
    spec = spec_for(engine, config, phase, db, **settings)   # validated before anything starts
    if memory_limit is None:
        result = runner.run_spec(spec, control=control)
    else:
        result = _bounded(engine, config, phase, db, cgroup.parse_size(memory_limit), settings)
    if db is not None and phase in ("load", "run") and result.benchmarks and not result.benchmarks[0].partial:
        loaded = (result.benchmarks[0].graph or {}).get("nodes_loaded")
        if loaded is not None and loaded < config.nodes:   # never record a graph that is not all there
            raise errors.KvlabError(f"linkbench load wrote {loaded:,} of {config.nodes:,} nodes; the graph is not "
                                    f"recorded in {db}, so no request phase will run on it: load it again")
        _record_graph(config, db)
    if notes:   # new records: the workers' are never changed
        result.benchmarks = [dataclasses.replace(b, warnings=[*b.warnings, *notes]) for b in result]
    return result


def _bounded(engine, config, phase, db, limit, settings) -> RunResult:
    settings = dict(settings)
    notes = [f"memory-bounded: the phase ran in a memory cgroup of {limit / 1048576:.0f} MiB (page cache included)"]
    cfg = engines.get(engine)
    for key, value in cfg.larger_than_ram.items():
        if key not in settings:
            settings[key] = value
            notes.append(f"{key}={value}: {engine}'s own advice for a database larger than memory")
    if "cache_size" not in settings and "cache_size" in cfg.honours:   # LMDB's cache is the page cache
        settings["cache_size"] = int((limit - cgroup.BASELINE) * CACHE_SHARE)
        notes.append(f"engine cache sized to {settings['cache_size'] / 1048576:.0f} MiB: {CACHE_SHARE:.0%} of "
                     f"the memory limit less {cgroup.BASELINE >> 20} MiB for the process itself; the page cache "
                     "gets the rest")
    # an LSM's memtables: beside its cache
    if "write_buffer_size" not in settings and "write_buffer_size" in cfg.honours:
        settings["write_buffer_size"] = max(1 << 20, int((limit - cgroup.BASELINE) * WRITE_BUFFER_SHARE))
        notes.append(f"write buffers sized to {settings['write_buffer_size'] / 1048576:.0f} MiB each")
    request = {"engine": engine, "config": config.to_dict(), "phase": phase, "db": db, "settings": settings,
               "evict": phase == "request"}
    with cgroup.MemoryCgroup(limit) as cg, tempfile.TemporaryDirectory(prefix="kvlab-linkbench-") as tmp:
        req, out = Path(tmp) / "request.json", Path(tmp) / "result.json"
        req.write_text(json.dumps(request))
        proc = subprocess.run([sys.executable, "-m", "kvlab.execution.orchestration.linkbench", str(req), str(out)],
                              preexec_fn=cg.join, capture_output=True, text=True)
        facts = cg.facts()
        if proc.returncode != 0 or not out.exists():
            oom = "oom" in proc.stderr.lower() or proc.returncode in (-9, 137)
            tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
            raise errors.KvlabError(f"linkbench {phase} under memory_limit={limit} failed (exit {proc.returncode}"
                                    f"{'; the cgroup killed it for memory: raise memory_limit' if oom else ''}"
                                    f"): {tail}")
        result = load_json(out)
    result.benchmarks = [dataclasses.replace(b, accounting={**(b.accounting or {}), **facts},
                                             warnings=[*b.warnings, *notes]) for b in result]
    return result


def _child(request_path: str, out_path: str) -> int:
    from ...model.workloads.linkbench import LinkBench as LB
    req = json.loads(Path(request_path).read_text())
    cfg = req["config"]
    config = LB(**{**cfg, "notes": tuple(cfg.get("notes", ()))})
    if req["evict"] and req["db"]:
        cgroup.evict_page_cache(req["db"])
    result = runner.run_spec(spec_for(req["engine"], config, req["phase"], req["db"], **req["settings"]))
    result.write_json(out_path)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(_child(sys.argv[1], sys.argv[2]))
    except errors.KvlabError as exc:
        print(f"kvlab: error: {exc}", file=sys.stderr)
        sys.exit(2)
