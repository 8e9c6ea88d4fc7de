"""`kvlab results diff A B` (`kvlab.results_diff`): the settings two runs, or two selections of stored
benchmarks, differ in: the spec's settings, the engine configuration kvlab gave and passed, the one the engine
reported about itself after open (provenance's `engine_config_reported`), the machine and the build.  Only the
rows that differ, as a frame of setting / A / B / held (which side holds the setting: "both", "A" or "B"; two
engines' runs differ mostly in the settings only one of them has, which `kvlab results diff` counts rather than
lists unless --all)."""
from __future__ import annotations

import json
from typing import Mapping

from .. import errors
from .compare import parse_selection
from .result import BenchmarkResult, RunResult
from .store import Store

# the groups of settings, in the order rows are listed
GROUPS = ("spec", "config.given", "config.passed", "config.reported", "machine", "build")
_ABSENT = "(none)"
# the machine's facts that stay put between runs (its `system` snapshot, load and frequency, is a measurement)
MACHINE = ("hostname", "cpu_model", "cores", "memory_bytes", "kernel", "machine", "python")
_MANY = " | "


def flat(value, prefix: str, out: dict) -> dict:
    """{"a.b.c": leaf} of nested dicts; a list stays one value (its JSON)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            flat(v, f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = json.dumps(value) if isinstance(value, (list, tuple)) else value
    return out


def settings(record: Mapping) -> dict:
    """One benchmark's settings, flattened: spec.*, config.given.*, config.passed.*, config.reported.*,
    machine.*, build.*."""
    prov = record.get("provenance") or {}
    machine = prov.get("machine") or {}
    versions = record.get("versions") or {}
    out: dict = {}
    flat({k: v for k, v in (prov.get("spec") or {}).items() if k != "engine_settings"}, "spec", out)
    flat(prov.get("engine_config_given") or {}, "config.given", out)
    flat(prov.get("engine_config_effective") or {}, "config.passed", out)
    flat(prov.get("engine_config_reported") or {}, "config.reported", out)
    flat({k: machine.get(k) for k in MACHINE if k in machine}, "machine", out)
    flat({k: v for k, v in versions.items() if k != "engine_build"}, "build", out)
    flat(versions.get("engine_build") or {}, "build.engine", out)
    return out


def _records(side, what: str, store: Store | None) -> list:
    if isinstance(side, RunResult) or (isinstance(side, (list, tuple)) and side
                                       and all(isinstance(b, BenchmarkResult) for b in side)):
        return [b.to_dict() for b in side]
    if isinstance(side, Mapping):
        side = ",".join(f"{k}={v}" for k, v in side.items())
    if not isinstance(side, str):
        raise errors.SpecError(f"{what}: a {type(side).__name__}; allowed: a selection string (run id, tag:NAME, "
                               "sweep:NAME, KEY=VALUE terms), a dict of filters, or results (RunResult)")
    store = store if store is not None else Store()
    if not store.path.exists():
        raise errors.ResultsError(f"no results store at {store.path}")
    clause, args = parse_selection(side, what).sql()
    rows = store.query(f"SELECT record FROM benchmarks WHERE {clause} ORDER BY id", args)
    if rows.empty:
        raise errors.ResultsError(f"{what} {side!r} selects no benchmark in {store.path}")
    return [json.loads(r) for r in rows["record"]]


def _side_values(records: list) -> dict:
    """{setting: the set of values its benchmarks hold (missing: None)}."""
    each = [settings(r) for r in records]
    keys = dict.fromkeys(k for s in each for k in s)
    return {k: {json.dumps(s.get(k), sort_keys=True, default=str) for s in each} for k in keys}


def _shown(values: set) -> str:
    return _MANY.join(sorted(_ABSENT if v == "null" else v.strip('"') for v in values))


def diff(a, b, *, store: Store | None = None):
    """The settings A and B differ in: a frame with columns setting, a, b, held (a side holding several values
    shows them joined by ' | '; a setting one side lacks shows '(none)'; held: "both" where each side holds a
    value, else the one side that does, "A" or "B"), one row per differing setting, in the order spec,
    config.given, config.passed, config.reported, machine, build.  `a`, `b`: selection strings as `results
    compare` takes them (a run id, tag:NAME, KEY=VALUE terms), dicts of filters, or results in hand.
    frame.attrs: "sides" (the two selections, or "in hand") and "engines" (each side's engines, joined by ' | ')."""
    import pandas as pd
    va, vb = (_side_values(_records(s, w, store)) for s, w in ((a, "A"), (b, "B")))
    rows = []
    keys = sorted(dict.fromkeys([*va, *vb]), key=lambda k: next(
        (i for i, g in reversed(list(enumerate(GROUPS))) if k.startswith(g + ".")), len(GROUPS)))
    for key in keys:
        sa, sb = va.get(key, {"null"}), vb.get(key, {"null"})
        if sa != sb:
            # a spec's field is every run's (None is a value there: no memory budget), so it is always both sides'
            held = "both" if key.startswith("spec.") or (_holds(sa) and _holds(sb)) else "A" if _holds(sa) else "B"
            rows.append({"setting": key, "a": _shown(sa), "b": _shown(sb), "held": held})
    frame = pd.DataFrame(rows, columns=["setting", "a", "b", "held"])
    frame.attrs["sides"] = (_label(a), _label(b))
    frame.attrs["engines"] = tuple(_shown(v.get("spec.engine", {"null"})) for v in (va, vb))
    return frame


def _holds(values: set) -> bool:
    """Whether a side holds a setting: one of its benchmarks has a value for it (not missing, not null)."""
    return values != {"null"}


def _label(side) -> str:
    return side if isinstance(side, str) else "in hand"


def records(frame) -> list:
    """The diff as JSON records ({setting, a, b}): every differing setting, values whole."""
    return frame[["setting", "a", "b"]].to_dict("records")
