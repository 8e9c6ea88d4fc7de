"""A workload file (TOML) for custom mixes:

    name = "checkout"
    distribution = "zipfian"                 # or { name = "hotspot", hot_fraction = 0.1, hot_ops = 0.9 }
    record_count = 1000000
    value_size = [8, 100]                    # bytes, or one number
    [pacing]                                 # optional: open loop
    target_rate = 5000                       # transactions/s (per_client = true: per client)
    arrivals = "poisson"
    # or a target that varies in time (kvlab.model.workloads.rate), instead of target_rate:
    # schedule = "sine:a=1000,b=0.1,c=0,d=5000"   (or "steps:0=1000,10=8000,11=1000", "file:rates.csv",
    #                                               a file relative to this one)
    operation_count = 50000                  # transactions in total (reads per client = this / threads)
    [run]                                    # optional: what the workload implies for the run
    threads = 100                            # clients (clients = 100 says the same)
    duration = 60                            # seconds: the run goes by time, not operation_count
    cpus = "0-1"                             # recorded, not applied (give cpus= to the run)

A run (kvlab.run, make_spec) takes num from record_count, reads from operation_count, threads and
duration from [run], the target rate from [pacing], unless it is given them itself.
    [[template]]
    name = "browse"
    weight = 9
    txn = "g10"                              # a mako string ...
    [[template]]
    name = "buy"
    weight = 1
    ops = [ { kind = "get", count = 2 }, { kind = "rmw", distribution = "uniform" } ]   # ... or ops

Meta's mixgraph (kvlab.model.workloads.mixgraph) written out: keys from two-term-exp, value sizes and seek
lengths from a generalized Pareto:

    distribution = { name = "two-term-exp", keyrange_num = 30, key_dist_a = 0.002312, key_dist_b = 0.3467 }
    value_size = [1, 1024]                   # the bounds a Pareto size is held to
    value_pareto = { k = 0.2615, sigma = 25.45, theta = 0 }
    [[template]]
    name = "seek"
    [[template.ops]]
    kind = "scan"
    length = 10000
    min_length = 0
    length_distribution = "pareto"
    length_pareto = { k = 2.517, sigma = 14.236 }
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from ... import errors
from .distributions import distribution as make_distribution
from .mako import parse_ops
from .mix import Mix, Op, Pacing, Template
from .rate import parse as parse_schedule

TOP = ("name", "description", "distribution", "record_count", "operation_count", "value_size", "value_pareto",
       "insert_order", "commit_reads", "max_retries", "pacing", "run", "template")
RUN_KEYS = ("threads", "clients", "duration", "cpus")
OP_KEYS = ("kind", "count", "length", "min_length", "length_distribution", "distribution", "snapshot",
           "length_pareto")


def _dist(value, where):
    if isinstance(value, str):
        return make_distribution(value)
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        params = {k: v for k, v in value.items() if k != "name"}
        return make_distribution(value["name"], **params)
    raise errors.SpecError(f"{where}: distribution must be a name or {{ name = ..., parameters }}, got {value!r}")


def _only(d: dict, allowed, where):
    extra = sorted(set(d) - set(allowed))
    if extra:
        raise errors.SpecError(f"{where}: {', '.join(extra)} unknown; allowed: {', '.join(allowed)}")


def from_toml_text(text: str, where: str = "workload file") -> Mix:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise errors.SpecError(f"{where} is not valid TOML: {exc}") from None
    _only(doc, TOP, where)
    templates = []
    for i, t in enumerate(doc.get("template") or [], 1):
        tw = f"{where}, template {i}"
        if not isinstance(t, dict):
            raise errors.SpecError(f"{tw}: expected a [[template]] table")
        _only(t, ("name", "weight", "txn", "ops"), tw)
        if ("txn" in t) == ("ops" in t):
            raise errors.SpecError(f"{tw}: give exactly one of txn (a mako string) or ops (a list of operations)")
        if "txn" in t:
            ops = parse_ops(t["txn"])
        else:
            if not isinstance(t["ops"], list) or not t["ops"]:
                raise errors.SpecError(f"{tw}: ops must be a non-empty list of {{ kind = ..., count = ... }}")
            ops = []
            for j, o in enumerate(t["ops"], 1):
                if not isinstance(o, dict) or "kind" not in o:
                    raise errors.SpecError(f"{tw}, op {j}: expected {{ kind = ..., ... }}, got {o!r}")
                _only(o, OP_KEYS, f"{tw}, op {j}")
                fields = dict(o)
                if "distribution" in fields:
                    fields["distribution"] = _dist(fields["distribution"], f"{tw}, op {j}")
                ops.append(Op(**fields))
        templates.append(Template(t.get("name", f"t{i}"), tuple(ops), weight=t.get("weight", 1.0)))
    if not templates:
        raise errors.SpecError(f"{where}: no [[template]]; a workload needs at least one")
    pacing = doc.get("pacing") or {}
    if not isinstance(pacing, dict):
        raise errors.SpecError(f"{where}: [pacing] must be a table")
    _only(pacing, ("target_rate", "per_client", "arrivals", "schedule"), f"{where}, [pacing]")
    if "schedule" in pacing:   # a rate file is read now, relative to this file
        pacing = {**pacing, "schedule": parse_schedule(pacing["schedule"], base=Path(where).parent)}
    run = doc.get("run") or {}
    if not isinstance(run, dict):
        raise errors.SpecError(f"{where}: [run] must be a table")
    if "num" in run:   # said before [run] was applied; the data set's size has one name in a mix
        raise errors.SpecError(f"{where}, [run]: num is record_count (at the top of the file); allowed in [run]: "
                               f"{', '.join(RUN_KEYS)}")
    _only(run, RUN_KEYS, f"{where}, [run]")
    if "threads" in run and "clients" in run:
        raise errors.SpecError(f"{where}, [run]: give threads or clients, not both (a client is a thread here)")
    run = dict(run)
    fields = {k: doc[k] for k in ("record_count", "operation_count", "insert_order", "commit_reads", "max_retries",
                                  "description", "value_pareto") if k in doc}
    for key in ("threads", "clients"):
        if key in run:
            fields["threads"] = run.pop(key)
    if "duration" in run:
        fields["duration"] = run.pop("duration")
    if "value_size" in doc:
        vs = doc["value_size"]
        fields["value_size"] = tuple(vs) if isinstance(vs, list) else vs
    notes = [f"[run] cpus={run['cpus']!r} is recorded, not applied (give cpus= to the run)"] if "cpus" in run else []
    return Mix(doc.get("name", Path(where).stem), tuple(templates),
               distribution=_dist(doc.get("distribution", "uniform"), where), pacing=Pacing(**pacing),
               run_defaults=run, source=f"toml:{where}", notes=tuple(notes), **fields)


def from_toml(path) -> Mix:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise errors.SpecError(f"workload file {str(p)!r} cannot be read: {exc.strerror or exc}; expected: a "
                               "readable TOML mix file (its format: kvlab.model.workloads.toml_file)") from None
    return from_toml_text(text, str(p))
