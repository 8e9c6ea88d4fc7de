"""A sweep: a parameter grid as data.  A base run plus axes, each point repeated.

    SweepSpec(name="engines-threads", base={"workload": "readrandom", "num": 100_000},
              axes={"engine": ["lmdb", "leveldb"], "threads": [1, 2]}, repeats=2)

An axis is any RunSpec field (`workload` or `workloads`, `threads`, `value_size`, ...), any
engine setting (`cache_size`, `compression`, ...), or a field of the workload model's Mix,
written `mix.<field>` (`mix.distribution`, `mix.value_size`, ...; see MIX_AXES).  The grid
is the product of the axes in the order written, each point run `repeats` times.

Ids are content, not positions: a point's id hashes the run it describes (the fields that
differ from RunSpec's defaults, the engine settings, the mix overrides) and its repeat, so
adding a value to an axis, reordering axes or re-reading the same TOML file keeps the ids of
the points already measured, and the store can tell which are finished.  The sweep's id is
its name.  Seeds are the sweep's `seed` (default 1) plus the repeat index: every point of one
repeat draws the same key sequence, on every engine.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .. import engines, errors
from . import workloads
from .spec import RunSpec, make_spec
from .workloads.distributions import distribution as make_distribution
from .workloads.mix import Mix, Pacing
from .workloads.resolve import resolve

DEFAULT_SEED = 1
MAX_POINTS = 100_000
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
# RunSpec fields a sweep decides itself: each point runs once, on a fresh database kvlab creates
_RESERVED = {
    "repeat": "a sweep repeats points itself: give `repeats` to the sweep",
    "db": "every point runs on a fresh temporary database (points may run on other hosts)",
    "use_existing_db": "every point runs on a fresh temporary database",
    "keep_db": "every point's temporary database is removed after it",
    "overwrite": "every point runs on a fresh temporary database",
    "mixes": "give a mix's fields as mix.<field> axes, or custom mixes through `mixes=`",
}
# names accepted beside RunSpec's own fields
_ALIASES = {"workload": "workloads", "clients": "threads"}


def _mix_distribution(mix: Mix, value) -> Mix:
    if isinstance(value, Mapping):
        value = dict(value)
        return dataclasses.replace(mix, distribution=make_distribution(value.pop("name"), **value))
    return dataclasses.replace(mix, distribution=make_distribution(value))


def _mix_field(name: str) -> Callable[[Mix, object], Mix]:
    def set_field(mix: Mix, value) -> Mix:
        changed: dict[str, Any] = {name: tuple(value) if isinstance(value, list) else value}
        return dataclasses.replace(mix, **changed)
    return set_field


def _mix_pacing(name: str) -> Callable[[Mix, object], Mix]:
    def set_pacing(mix: Mix, value) -> Mix:
        return dataclasses.replace(mix, pacing=dataclasses.replace(mix.pacing, **{name: value}))
    return set_pacing


# the workload model's fields a sweep can vary, each a function (mix, value) -> mix
MIX_AXES: dict[str, Callable[[Mix, object], Mix]] = {
    "mix.distribution": _mix_distribution,
    **{f"mix.{f}": _mix_field(f) for f in ("record_count", "operation_count", "value_size", "insert_order",
                                           "commit_reads", "max_retries")},
    **{f"mix.{f.name}": _mix_pacing(f.name) for f in dataclasses.fields(Pacing)},
}


def allowed_axes() -> list:
    fields = [f.name for f in dataclasses.fields(RunSpec)
              if f.name not in _RESERVED and f.name != "engine_settings"]
    return sorted(set(fields) | set(_ALIASES)) + list(engines.ENGINE_SETTINGS) + list(MIX_AXES)


def _check_name(kind: str, name) -> str:
    if not isinstance(name, str):
        raise errors.SpecError(f"{kind} {name!r} must be a string; allowed: {', '.join(allowed_axes())}")
    canonical = _ALIASES.get(name, name)
    if canonical in _RESERVED:
        raise errors.SpecError(f"{kind} {name!r} cannot be set in a sweep: {_RESERVED[canonical]}")
    if canonical not in allowed_axes():
        raise errors.SpecError(f"{kind} {name!r} is unknown; allowed: {', '.join(allowed_axes())}")
    return canonical


def _canonical(value):
    """JSON-ready, with tuples as lists, so ids do not depend on how a value was written."""
    return json.loads(json.dumps(value, sort_keys=True, default=lambda o: o.to_dict() if hasattr(o, "to_dict")
                                 else list(o) if isinstance(o, (tuple, set, frozenset)) else str(o)))


def _digest(obj) -> str:
    return hashlib.sha1(json.dumps(_canonical(obj), sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class SweepPoint:
    """One run of the grid: its axis values, its repeat, and the RunSpec it runs."""
    sweep: str
    index: int          # position in this expansion (display only; ids do not depend on it)
    id: str
    values: dict        # axis -> value
    repeat: int
    spec: RunSpec
    mix_values: dict = field(default_factory=dict)   # mix.<field> -> value, applied to spec.mixes already

    def label(self) -> str:
        vals = ", ".join(f"{k}={_short(v)}" for k, v in self.values.items())
        return f"{vals}{', ' if vals else ''}repeat {self.repeat}"

    def to_dict(self) -> dict:
        return {"sweep": self.sweep, "index": self.index, "id": self.id, "values": _canonical(self.values),
                "repeat": self.repeat}


def _short(v) -> str:
    return ",".join(v) if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v) else str(v)


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: `base` run parameters, `axes` (name -> list of values), `repeats`."""
    name: str
    base: Mapping[str, object] = field(default_factory=dict)
    axes: Mapping[str, Sequence[object]] = field(default_factory=dict)   # a list per axis once validated
    repeats: int = 1
    mixes: Mapping[str, Mix] = field(default_factory=dict)      # custom mixes named in workloads

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise errors.SpecError(f"sweep name {self.name!r} is not allowed; allowed: 1-100 letters, digits, "
                                   "'_', '.', '-', starting with a letter or digit")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or not 1 <= self.repeats <= 1000:
            raise errors.SpecError(f"repeats={self.repeats!r} is out of range; allowed: an integer from 1 to 1000")
        if not isinstance(self.base, Mapping):
            raise errors.SpecError(f"a sweep's base must be a table of run parameters, got {self.base!r}")
        if not isinstance(self.axes, Mapping):
            raise errors.SpecError(f"a sweep's axes must be a table of name = [values], got {self.axes!r}")
        base = {}
        for k, v in self.base.items():
            base[_check_name("base parameter", k)] = v
        axes = {}
        for k, values in self.axes.items():
            name = _check_name("axis", k)
            if name in axes:
                raise errors.SpecError(f"axis {k!r} is given twice (as {name!r})")
            if name in base:
                raise errors.SpecError(f"{k!r} is both in the base and an axis; give it in one place")
            if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not values:
                raise errors.SpecError(f"axis {k!r} must be a non-empty list of values, got {values!r}")
            if len({json.dumps(_canonical(v), sort_keys=True) for v in values}) != len(values):
                raise errors.SpecError(f"axis {k!r} repeats a value: {list(values)!r}")
            axes[name] = list(values)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "axes", axes)
        object.__setattr__(self, "mixes", dict(self.mixes))
        size = 1
        for values in axes.values():
            size *= len(values)
        if size * self.repeats > MAX_POINTS:
            raise errors.SpecError(f"the sweep has {size * self.repeats:,} points; allowed: at most {MAX_POINTS:,}")
        self.points()   # every point must be a valid run: say which is not, before anything runs

    @property
    def id(self) -> str:
        return self.name

    @property
    def settings(self) -> int:
        """Points without counting repeats."""
        n = 1
        for values in self.axes.values():
            n *= len(values)
        return n

    def points(self) -> list:
        """Every point, axes varying in the order written (the last fastest), repeats innermost."""
        names = list(self.axes)
        out: list[SweepPoint] = []
        for combo in itertools.product(*(self.axes[n] for n in names)):
            values = dict(zip(names, combo))
            for repeat in range(self.repeats):
                out.append(self._point(len(out), values, repeat))
        return out

    def _point(self, index, values, repeat) -> SweepPoint:
        params = {**self.base, **values}
        mix_values = {k: params.pop(k) for k in list(params) if k in MIX_AXES}
        params["seed"] = int(params.get("seed", DEFAULT_SEED)) + repeat
        engine = params.pop("engine", "lmdb")
        workload = params.pop("workloads", "fillseq,readrandom")
        where = f"sweep {self.name!r}, point {', '.join(f'{k}={_short(v)}' for k, v in values.items()) or 'base'}"
        try:
            names, mixes = resolve(workload, self.mixes)
            if mix_values:   # before the spec is made, so the changed mixes' own counts (record_count, ...) apply
                mixes = _apply_mix_values(names, mixes, mix_values)
            spec = make_spec(engine, names, mixes=mixes, **params)
        except errors.SpecError as exc:
            raise errors.SpecError(f"{where}: {exc}") from None
        ident = {"engine": spec.engine, "workloads": list(spec.workloads), "run": spec.changed_fields(),
                 "engine_settings": dict(spec.engine_settings), "mix": mix_values, "repeat": repeat}
        if self.mixes:
            ident["custom_mixes"] = {n: m.to_dict() for n, m in self.mixes.items()}
        return SweepPoint(self.name, index, _digest(ident), values, repeat, spec, mix_values)

    def to_dict(self) -> dict:
        d = {"name": self.name, "base": _canonical(self.base), "axes": _canonical(self.axes),
             "repeats": self.repeats}
        if self.mixes:
            d["mixes"] = {n: m.to_dict() for n, m in self.mixes.items()}
        return d

    def describe(self) -> str:
        axes = " x ".join(f"{k} ({len(v)})" for k, v in self.axes.items()) or "no axes"
        return (f"sweep {self.name}: {self.settings * self.repeats} points = {axes}"
                f"{f' x {self.repeats} repeats' if self.repeats > 1 else ''}")


def _apply_mix_values(workload_names, given: dict, mix_values: dict) -> dict:
    mixes = dict(given)
    chosen = {w: m for w in workload_names if (m := workloads.get(w, given).mix) is not None}
    if not chosen:
        raise errors.SpecError(f"{', '.join(mix_values)} apply to workload mixes only (ycsb-a, fdb-*, txn:..., "
                               f"a custom mix); this point runs {', '.join(workload_names)}")
    for name, mix in chosen.items():
        for axis, value in mix_values.items():
            mix = MIX_AXES[axis](mix, value)
        mixes[name] = mix
    return mixes


def from_toml(text: str, source: str = "<toml>", mixes: Mapping | None = None) -> SweepSpec:
    """A SweepSpec from TOML: `name`, `repeats`, a `[base]` table and an `[axes]` table."""
    import tomllib
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise errors.SpecError(f"{source}: not valid TOML ({exc})") from None
    unknown = set(doc) - {"name", "repeats", "base", "axes"}
    if unknown:
        raise errors.SpecError(f"{source}: key(s) {', '.join(sorted(unknown))} unknown; allowed: name, repeats, "
                               "[base], [axes]")
    if "name" not in doc:
        raise errors.SpecError(f"{source}: a sweep needs a name (name = \"...\"): its id in the results store")
    return SweepSpec(doc["name"], doc.get("base", {}), doc.get("axes", {}), doc.get("repeats", 1), mixes or {})


def load_toml(path) -> SweepSpec:
    from pathlib import Path
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise errors.SpecError(f"cannot read sweep file {p}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise errors.SpecError(f"cannot read sweep file {p}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                               "expected a TOML file") from None
    return from_toml(text, str(p))
