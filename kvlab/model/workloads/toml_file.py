"""A workload file (TOML) for custom mixes:

    name = "checkout"
    distribution = "zipfian"                 # or { name = "hotspot", hot_fraction = 0.1, hot_ops = 0.9 }
    record_count = 1000000
    value_size = [8, 100]                    # bytes, or one number
    [pacing]                                 # optional: open loop
    target_rate = 5000                       # transactions/s (per_client = true: per client)
    arrivals = "poisson"
    [run]                                    # optional: what the workload implies for the run
    clients = 100
    [[template]]
    name = "browse"
    weight = 9
    txn = "g10"                              # a mako string ...
    [[template]]
    name = "buy"
    weight = 1
    ops = [ { kind = "get", count = 2 }, { kind = "rmw", distribution = "uniform" } ]   # ... or ops
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from ... import errors
from .distributions import distribution as make_distribution
from .mako import parse_ops
from .mix import Mix, Op, Pacing, Template

TOP = ("name", "description", "distribution", "record_count", "operation_count", "value_size", "insert_order",
       "commit_reads", "max_retries", "pacing", "run", "template")
RUN_KEYS = ("clients", "duration", "cpus", "num")
OP_KEYS = ("kind", "count", "length", "min_length", "length_distribution", "distribution", "snapshot")


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
        templates.append(Template(t.get("name", f"t{i}"), ops, weight=t.get("weight", 1.0)))
    if not templates:
        raise errors.SpecError(f"{where}: no [[template]]; a workload needs at least one")
    pacing = doc.get("pacing") or {}
    if not isinstance(pacing, dict):
        raise errors.SpecError(f"{where}: [pacing] must be a table")
    _only(pacing, ("target_rate", "per_client", "arrivals"), f"{where}, [pacing]")
    run = doc.get("run") or {}
    _only(run, RUN_KEYS, f"{where}, [run]")
    fields = {k: doc[k] for k in ("record_count", "operation_count", "insert_order", "commit_reads", "max_retries",
                                  "description") if k in doc}
    if "value_size" in doc:
        vs = doc["value_size"]
        fields["value_size"] = tuple(vs) if isinstance(vs, list) else vs
    return Mix(doc.get("name", Path(where).stem), templates,
               distribution=_dist(doc.get("distribution", "uniform"), where), pacing=Pacing(**pacing),
               run_defaults=run, source=f"toml:{where}", **fields)


def from_toml(path) -> Mix:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise errors.SpecError(f"workload file {str(p)!r} cannot be read: {exc.strerror or exc}") from None
    return from_toml_text(text, str(p))
