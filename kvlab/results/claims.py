"""The seeds' findings as checkable claims, and their verdicts: pure logic on tidy frames, no engine run.

A claims file (data/reference/claims.toml, read by kvlab.lab.seeds.claims) holds `[[claim]]` tables; `parse`
validates them into frozen `Claim`s and names every mistake at once (which claim, which field, what is allowed).
A claim says what it measures (`Measure`: a table of the seed's experiment, a metric, the engines, the axis) and
how it is tested: one kind of `KINDS`, each a function of the selected rows:

    ratio          A / B within [min, max], at each point of the axis (or A's points over one B)
    order          subjects ranked by the metric (`ranking`, each better than the next, or `best` above all
                   others) at every point of the axis
    trend          over a thread axis: `grows` (every step up; `min_efficiency` of linear from the first point)
                   or `peaks` (the highest point within `window`, near `near`, then at least `min_drop` below it)
    near_constant  the series within `within` (a fraction) of its median, or of `target`

Preconditions (`[claim.requires]`, `REQUIRES`) are checked against the machine (`Machine`: cores, memory, built
engines) and the run's setup (cache and data bytes, sync) before the test; a claim whose preconditions fail, whose
engines are not built, or whose points all need more cores than this machine has is "cannot test here", with the
reason.  A thread axis (`threads_axis`) drops the points that need more cores than the machine has, and says so.
`verdict_row(claim, measured, published, machine, setup, scales)` gives one row of the verdict table.

Figures too short to judge: a measured row that carries the phase it comes from (`phase_s`, `phase_ops`: the
benchmark record's timed seconds and ops) is checked against kvlab's own stability floor
(kvlab.results.sanity.too_short: MIN_SECONDS and MIN_OPS).  A claim any of whose rows the test reads fails it is
"cannot test here", with the rows and the smallest preset scale expected to pass (`scales`: per row, how much
larger its phase would be at each preset).  A count of events (COUNTS: context switches) has at least the noise
of a Poisson count: two counts a and b whose difference is within COUNT_Z * sqrt(a + b) are not ordered, and an
order test that rests on such a pair (and on no pair clearly out of order) cannot be decided.

Units: every figure carries its unit (`measure.unit`, or per row from the column `measure.unit_by` names, e.g.
seed 003's `metric`: writes_per_sec -> writes/s), published and measured alike.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from .. import engines as engine_registry
from .. import errors
from . import sanity

VERDICTS = ("reproduced", "not reproduced", "cannot test here")
COLUMNS = ["claim", "statement", "published", "measured", "verdict", "reason"]

# metrics made from other columns, wherever a table has them
DERIVED: dict[str, tuple[tuple[str, ...], Callable]] = {
    "ctx_switches": (("ctx_voluntary", "ctx_involuntary"), lambda a, b: a + b),
}
# metrics that count events: their noise is at least a Poisson count's, sqrt(n); two counts a and b differ only
# where |a - b| exceeds COUNT_Z standard deviations of the difference, COUNT_Z * sqrt(a + b) (95%, two-sided)
COUNTS = frozenset({"ctx_switches", "ctx_voluntary", "ctx_involuntary"})
COUNT_Z = 1.96
# the columns of a measured row that say how long the phase behind its figure ran (a benchmark record's seconds
# and ops), checked against kvlab's stability floor (kvlab.results.sanity)
PHASE_COLUMNS = ("phase_s", "phase_ops")


@dataclass(frozen=True)
class Source:
    section: str
    lines: str
    quote: str


@dataclass(frozen=True)
class Measure:
    table: str
    metric: str
    engines: tuple = ()
    by: str = "engine"
    axis: str | None = None
    points: tuple = ()
    where: Mapping = field(default_factory=dict)
    threads_axis: bool = False
    extra_threads: int = 0
    each: bool = False
    unit: str = ""                # the metric's unit as printed (s, ops/s, %, KB, context switches)
    unit_by: str | None = None    # or a column naming each row's metric (writes_per_sec -> writes/s)


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str
    statement: str
    source: Source
    measure: Measure
    test: str
    params: Mapping
    requires: Mapping = field(default_factory=dict)
    stand_in: str = ""
    note: str = ""

    def named_engines(self) -> tuple:
        """The engines the claim needs built: its measure's, and those its test names when it compares engines."""
        named = list(self.measure.engines)
        if self.measure.by == "engine":
            for key in ("ranking", "best"):
                v = self.params.get(key)
                named += list(v) if isinstance(v, (list, tuple)) else [v] if v else []
            for key in ("num", "den"):
                v = (self.params.get(key) or {}).get("engine")
                named += list(v) if isinstance(v, (list, tuple)) else [v] if v else []
        return tuple(dict.fromkeys(named))


@dataclass(frozen=True)
class Machine:
    """What a claim's preconditions are checked against: cores this process may use, memory, engines built
    (None: not known, not checked)."""
    cores: int
    memory_bytes: int | None = None
    engines: frozenset | None = None


@dataclass(frozen=True)
class Outcome:
    ok: bool | None            # None: the test could not be made (its reason says why)
    figure: str
    reason: str = ""


# ---------------------------------------------------------------------------------------------------------------
# Validation: a small schema per table, every problem named at once.

_TYPES: dict[str, type | tuple[type, ...]] = {"str": str, "int": int, "number": (int, float), "bool": bool, "list": list, "table": dict}


def _check_fields(where: str, table, schema: Mapping, problems: list) -> dict:
    """The fields of `table` per `schema` ({name: (type name, required)}); wrong, missing and unknown ones added to
    `problems`.  Returns the known fields present."""
    if not isinstance(table, dict):
        problems.append(f"{where}: must be a table, got {type(table).__name__}")
        return {}
    out = {}
    for key in table:
        if key not in schema:
            problems.append(f"{where}: unknown field {key!r}; allowed: {', '.join(schema)}")
    for key, (kind, required) in schema.items():
        if key not in table:
            if required:
                problems.append(f"{where}: missing field {key!r} ({kind})")
            continue
        value = table[key]
        ok = isinstance(value, _TYPES[kind]) and not (kind in ("int", "number") and isinstance(value, bool))
        if not ok:
            problems.append(f"{where}: {key} must be {kind}, got {type(value).__name__} {value!r}")
            continue
        out[key] = value
    return out


CLAIM_FIELDS = {"id": ("str", True), "seed": ("str", True), "statement": ("str", True), "test": ("str", True),
                "source": ("table", True), "measure": ("table", True), "params": ("table", True),
                "requires": ("table", False), "stand_in": ("str", False), "note": ("str", False)}
SOURCE_FIELDS = {"section": ("str", True), "lines": ("str", True), "quote": ("str", True)}
MEASURE_FIELDS = {"table": ("str", True), "metric": ("str", True), "engines": ("list", True), "by": ("str", False),
                  "axis": ("str", False), "points": ("list", False), "where": ("table", False),
                  "threads_axis": ("bool", False), "extra_threads": ("int", False), "each": ("bool", False),
                  "unit": ("str", False), "unit_by": ("str", False)}


@dataclass(frozen=True)
class Kind:
    """A kind of test: its parameters ({name: (type name, required)}), a check of their values beyond types
    (returns problems), and the evaluation of the selected rows."""
    params: Mapping
    check: Callable[[Mapping, Measure], list]
    evaluate: Callable[[Any, "Claim", "Context"], Outcome]
    about: str


@dataclass(frozen=True)
class Require:
    """A precondition: the type of its value and its check (None when met, else the reason it is not)."""
    kind: str
    check: Callable[[Any, "Context"], str | None]
    about: str


def parse(text: str, origin: str = "claims.toml", seeds=None, tables=None) -> list:
    """The claims of a TOML document, validated: every problem at once in one SpecError.  `seeds`: the seed ids
    allowed; `tables`: {seed: the table names its experiment gives} (both unchecked when None)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise errors.SpecError(f"{origin} is not valid TOML: {exc}") from None
    problems: list = []
    unknown_top = [k for k in doc if k != "claim"]
    if unknown_top:
        problems.append(f"{origin}: unknown top-level key(s) {', '.join(unknown_top)}; allowed: [[claim]] tables")
    raw = doc.get("claim", [])
    if not isinstance(raw, list) or not raw:
        problems.append(f"{origin}: no [[claim]] tables")
        raw = []
    claims, seen = [], set()
    for i, table in enumerate(raw, 1):
        name = table.get("id") if isinstance(table, dict) else None
        where = f"{origin}: claim {i}" + (f" ({name})" if isinstance(name, str) else "")
        before = len(problems)
        c = _check_fields(where, table, CLAIM_FIELDS, problems)
        src = _check_fields(f"{where}: source", c.get("source", {}), SOURCE_FIELDS, problems) if "source" in c else {}
        m = _check_fields(f"{where}: measure", c.get("measure", {}), MEASURE_FIELDS, problems) \
            if "measure" in c else {}
        if "id" in c:
            if c["id"] in seen:
                problems.append(f"{where}: id {c['id']!r} is used twice; ids are unique")
            seen.add(c["id"])
        if "seed" in c and seeds is not None and c["seed"] not in seeds:
            problems.append(f"{where}: seed {c['seed']!r} is unknown; allowed: {', '.join(seeds)}")
        if tables is not None and "table" in m and c.get("seed") in tables and m["table"] not in tables[c["seed"]]:
            problems.append(f"{where}: measure.table {m['table']!r} is not a table of seed {c['seed']}'s experiment; "
                            f"allowed: {', '.join(tables[c['seed']])}")
        named = list(m.get("engines", []))
        if m.get("by", "engine") == "engine" and isinstance(c.get("params"), dict):
            p = c["params"]
            named += [x for x in _as_list(p.get("ranking")) + [p.get("best")] if isinstance(x, str)]
            named += [e for k in ("num", "den") if isinstance(p.get(k), dict)
                      for e in _as_list(p[k].get("engine"))]
        for e in dict.fromkeys(named):
            if e not in engine_registry.listed():
                problems.append(f"{where}: engine {e!r} is unknown; allowed: {', '.join(engine_registry.REGISTRY)}")
        if m.get("threads_axis") and "axis" not in m:
            problems.append(f"{where}: measure.threads_axis needs measure.axis (the column that counts threads)")
        if m.get("extra_threads", 0) < 0:
            problems.append(f"{where}: measure.extra_threads must be 0 or more, got {m['extra_threads']}")
        if "measure" in c and isinstance(c["measure"], dict) and not (m.get("unit") or m.get("unit_by")):
            problems.append(f"{where}: measure needs unit (the metric's unit as printed: s, ops/s, %, KB, context "
                            "switches, ...) or unit_by (a column naming each row's metric, e.g. metric)")
        measure = Measure(table=m.get("table", ""), metric=m.get("metric", ""), engines=tuple(m.get("engines", ())),
                          by=m.get("by", "engine"), axis=m.get("axis"), points=tuple(m.get("points", ())),
                          where=dict(m.get("where", {})), threads_axis=m.get("threads_axis", False),
                          extra_threads=m.get("extra_threads", 0), each=m.get("each", False),
                          unit=m.get("unit", ""), unit_by=m.get("unit_by"))
        kind = KINDS.get(c.get("test", ""))
        if "test" in c and kind is None:
            problems.append(f"{where}: test {c['test']!r} is unknown; allowed: {', '.join(KINDS)}")
        params = c.get("params", {})
        if kind is not None and "params" in c:
            p = _check_fields(f"{where}: params ({c['test']})", params, kind.params, problems)
            if len(problems) == before:
                problems += [f"{where}: params ({c['test']}): {msg}" for msg in kind.check(p, measure)]
        requires = c.get("requires", {})
        for key, value in requires.items():
            req = REQUIRES.get(key)
            if req is None:
                problems.append(f"{where}: requires.{key} is unknown; allowed: {', '.join(REQUIRES)}")
            elif not isinstance(value, _TYPES[req.kind]) or (req.kind == "int" and isinstance(value, bool)):
                problems.append(f"{where}: requires.{key} must be {req.kind}, got {type(value).__name__} {value!r}")
        if len(problems) == before:
            claims.append(Claim(id=c["id"], seed=c["seed"], statement=c["statement"], source=Source(**src),
                                measure=measure, test=c["test"], params=dict(params), requires=dict(requires),
                                stand_in=c.get("stand_in", ""), note=c.get("note", "")))
    if problems:
        raise errors.SpecError(f"{len(problems)} problem(s) in {origin}:\n  " + "\n  ".join(problems))
    return claims


def _as_list(v) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [] if v is None else [v]


# ---------------------------------------------------------------------------------------------------------------
# Numbers as the table prints them.

def num(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    a = abs(x)
    if a >= 1e6:
        return f"{x / 1e6:.3g}M"
    if a >= 1e4:
        return f"{x / 1e3:.3g}k"
    if a >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _unit_text(unit) -> str:
    """A unit as it follows a figure: '%' close up, any other after a space, none where there is none."""
    if not isinstance(unit, str) or not unit:
        return ""
    return unit if unit == "%" else f" {unit}"


def unit_of(metric) -> str:
    """A metric's name as its unit, where the rows name their own metric (seed 003's writes_per_sec: writes/s)."""
    if not isinstance(metric, str):
        return ""
    return metric.replace("_per_sec", "/s").replace("_per_", "/").replace("_", " ")


def figure(value, unit="") -> str:
    """A figure with its unit: '0.0301 s', '3.93M reads/s', '34.7%', '15 context switches'."""
    return num(value) + ("" if _nan(value) else _unit_text(unit))


def _with_interval(value, lo, hi, unit="") -> str:
    if lo is None or hi is None or _nan(lo) or _nan(hi):
        return figure(value, unit)
    return f"{num(value)} [{num(lo)}, {num(hi)}]{_unit_text(unit)}"


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _point(claim: Claim, x) -> str:
    axis = claim.measure.axis or ""
    unit = {"threads": "thread", "readers": "reader", "interval": "interval"}.get(axis)
    if unit is None:
        return str(x)
    return f"{_int(x)} {unit}{'' if _int(x) == 1 or axis == 'interval' else 's'}" if axis != "interval" \
        else f"interval {_int(x)}"


def _int(x):
    return int(x) if isinstance(x, float) and x.is_integer() else x


# ---------------------------------------------------------------------------------------------------------------
# Context: what a test sees besides its rows.

@dataclass(frozen=True)
class Context:
    machine: Machine | None
    setup: Mapping
    dropped: tuple = ()           # the axis points dropped for want of cores
    rows: Any = None              # the selected rows (before any drop)
    published: Any = None         # the published table's rows of the claim, where there is one


def _rows_of(rows, selector: Mapping):
    out = rows
    for col, want in selector.items():
        if col not in out.columns:
            return out.iloc[0:0]
        wanted = list(want) if isinstance(want, (list, tuple)) else [want]
        out = out[out[col].isin(wanted)]
    return out


def _subjects(rows, claim: Claim) -> list:
    return list(dict.fromkeys(rows[claim.measure.by]))


def _points(rows, claim: Claim) -> list:
    axis = claim.measure.axis
    if not axis or axis not in rows.columns:
        return [None]
    values = list(dict.fromkeys(rows[axis]))
    order = {v: i for i, v in enumerate(claim.measure.points)}
    if all(v in order for v in values):
        return sorted(values, key=lambda v: order[v])
    return sorted(values, key=lambda v: (not isinstance(v, (int, float)), v if isinstance(v, (int, float)) else 0,
                                         str(v)))


def _at(rows, claim: Claim, point):
    axis = claim.measure.axis
    return rows if point is None or not axis or axis not in rows.columns else rows[rows[axis] == point]


# ---------------------------------------------------------------------------------------------------------------
# The kinds of test.

def _bound_text(p) -> str:
    if "min" in p and "max" in p:
        return f"between {num(p['min'])}x and {num(p['max'])}x"
    return f"at least {num(p['min'])}x" if "min" in p else f"at most {num(p['max'])}x"


def _check_ratio(p, m) -> list:
    out = []
    if "min" not in p and "max" not in p:
        out.append("give min, max or both (the bound on num / den)")
    if "min" in p and "max" in p and p["min"] > p["max"]:
        out.append(f"min {p['min']} is above max {p['max']}")
    for key in ("num", "den"):
        if key in p and not p[key]:
            out.append(f"{key} must select rows (column = value), got an empty table")
    return out


def _selector_text(sel: Mapping, claim: Claim) -> str:
    return ", ".join(str(v) if k == claim.measure.by else f"{k} {v}" for k, v in sel.items())


def _ratio(rows, claim: Claim, ctx: Context) -> Outcome:
    p, m = claim.params, claim.measure
    top, bottom = _rows_of(rows, p["num"]), _rows_of(rows, p["den"])
    missing = [_selector_text(p[k], claim) for k, part in (("num", top), ("den", bottom)) if part.empty]
    if missing:
        return Outcome(None, "", f"not measured: no rows for {' and '.join(missing)}")
    pairs = []
    axis = m.axis
    if axis and axis in rows.columns and axis not in p["num"] and axis not in p["den"]:
        below = {r[axis]: r for _, r in bottom.iterrows()}
        pairs = [(_point(claim, r[axis]), r, below[r[axis]]) for _, r in top.iterrows() if r[axis] in below]
    elif len(bottom) == 1:
        d = bottom.iloc[0]
        pairs = [(_point(claim, r[axis]) if axis in p["num"] and axis in rows.columns else "", r, d)
                 for _, r in top.iterrows()]
    if not pairs:
        return Outcome(None, "", f"not measured: no point has both {_selector_text(p['num'], claim)} and "
                                 f"{_selector_text(p['den'], claim)}")
    parts, ok, straddles = [], True, []
    for label, a, b in pairs:
        if _nan(a["_value"]) or _nan(b["_value"]) or not b["_value"]:
            return Outcome(None, "", f"not measured: {m.metric} is missing{' at ' + label if label else ''}")
        r = a["_value"] / b["_value"]
        lo = a["_lo"] / b["_hi"] if not (_nan(a["_lo"]) or _nan(b["_hi"]) or not b["_hi"]) else None
        hi = a["_hi"] / b["_lo"] if not (_nan(a["_hi"]) or _nan(b["_lo"]) or not b["_lo"]) else None
        good = ("min" not in p or r >= p["min"]) and ("max" not in p or r <= p["max"])
        ok &= good
        if lo is not None and hi is not None and any(lo <= p[k] <= hi for k in ("min", "max") if k in p):
            straddles.append(label or "the point")
        interval = f" [{lo:.3g}x, {hi:.3g}x]" if lo is not None and hi is not None else ""
        parts.append(f"{r:.3g}x{interval}{' at ' + label if label else ''} ({figure(a['_value'], a['_unit'])} / "
                     f"{figure(b['_value'], b['_unit'])})")
    ratio = f"{_selector_text(p['num'], claim)} / {_selector_text(p['den'], claim)} {m.metric}: "
    reason = f"{'every' if ok else 'not every'} ratio is {_bound_text(p)}"
    if straddles:
        reason += f"; the interval straddles the bound at {', '.join(straddles)}"
    return Outcome(ok, ratio + "; ".join(parts), reason)


def _check_order(p, m) -> list:
    out = []
    if p.get("better") not in ("higher", "lower"):
        out.append(f"better must be 'higher' or 'lower', got {p.get('better')!r}")
    if ("ranking" in p) == ("best" in p):
        out.append("give ranking (each better than the next) or best (better than all others), one of them")
    if "ranking" in p and len(p["ranking"]) < 2:
        out.append(f"ranking needs at least two subjects, got {p['ranking']!r}")
    return out


def _order(rows, claim: Claim, ctx: Context) -> Outcome:
    p, m = claim.params, claim.measure
    higher = p["better"] == "higher"
    present = _subjects(rows, claim)
    ranking = list(p["ranking"]) if "ranking" in p else None
    needed = ranking or [p["best"]]
    absent = [s for s in needed if s not in present]
    if absent:
        return Outcome(None, "", f"not measured: no rows for {', '.join(map(str, absent))}")
    if ranking is None and len(present) < 2:
        return Outcome(None, "", f"not measured: {p['best']} has nothing to be compared with")
    parts, failed, overlaps, unresolved = [], [], [], []
    counts = m.metric in COUNTS
    for point in _points(rows, claim):
        at = _at(rows, claim, point).drop_duplicates(subset=[m.by], keep="last").set_index(m.by)
        if ranking is not None:
            chain = [s for s in ranking if s in at.index]
        else:
            others = [s for s in at.index if s != p["best"]]
            others.sort(key=lambda s: at.loc[s, "_value"], reverse=higher)
            chain = [p["best"]] + others
        vals = [at.loc[s, "_value"] for s in chain]
        if any(_nan(v) for v in vals):
            return Outcome(None, "", f"not measured: {m.metric} is missing{' at ' + _point(claim, point) if point is not None else ''}")
        pairs = list(zip(chain, chain[1:])) if ranking is not None else [(chain[0], s) for s in chain[1:]]
        for a, b in pairs:
            va, vb = at.loc[a, "_value"], at.loc[b, "_value"]
            said = (f"{a} {figure(va, at.loc[a, '_unit'])} vs {b} {figure(vb, at.loc[b, '_unit'])}"
                    + (f" at {_point(claim, point)}" if point is not None else ""))
            noise = COUNT_Z * math.sqrt(max(va, 0) + max(vb, 0)) if counts else 0.0
            if counts and abs(va - vb) <= noise:   # within the counts' Poisson noise: no order either way
                unresolved.append((f"{a} {num(va)} vs {b} {num(vb)}" + (f" at {_point(claim, point)}"
                                                                        if point is not None else ""),
                                   f"{COUNT_Z:g} x sqrt({num(va)} + {num(vb)}) = {num(noise)}"))
            elif not (va > vb if higher else va < vb):
                failed.append(said)
            la, ha, lb, hb = (at.loc[a, "_lo"], at.loc[a, "_hi"], at.loc[b, "_lo"], at.loc[b, "_hi"])
            if not any(_nan(x) for x in (la, ha, lb, hb)) and la <= hb and lb <= ha:
                overlaps.append(f"{a}/{b}" + (f" at {_point(claim, point)}" if point is not None else ""))
        where = f"{_point(claim, point)}: " if point is not None else ""
        if ranking is not None and len(chain) == 2:
            a, b = chain
            ratio = f" ({num(at.loc[a, '_value'] / at.loc[b, '_value'])}x)" if at.loc[b, "_value"] else ""
            parts.append(f"{where}{_shown(at, a)} vs {_shown(at, b)}{ratio}")
        else:
            shown = chain if ranking is not None else chain[:2]
            text = [f"{s} {_shown(at, s)}" for s in shown]
            if ranking is not None:
                parts.append(where + ", ".join(text))
            else:
                parts.append(f"{where}{text[0]}; best of the {len(chain) - 1} others: {text[1]}")
    head = f"{needed[0]} vs {needed[1]} ({m.metric}, {p['better']} is better): " \
        if ranking is not None and len(ranking) == 2 else f"{m.metric} ({p['better']} is better): "
    if len(parts) > 4:   # a long series: its ends, and how many points lie between
        parts = parts[:2] + [f"... {len(parts) - 3} more ..."] + parts[-1:]
    if failed:
        reason = "out of order: " + "; ".join(failed[:4]) + (f" (and {len(failed) - 4} more)" if len(failed) > 4
                                                              else "")
    else:
        reason = "in the published order" + (" at every point" if len(parts) > 1 else "")
    if overlaps:
        reason += f"; the medians' intervals overlap ({', '.join(overlaps[:4])}): the order there is not established"
    if unresolved:
        (first, bound), rest = unresolved[0], unresolved[1:]
        within = (f"{first} {claim.measure.unit or m.metric} differ by no more than a count's Poisson noise "
                  f"({bound})" + "".join(f"; {pair} ({b})" for pair, b in rest[:2])
                  + (f"; and {len(rest) - 2} more" if len(rest) > 2 else ""))
        if not failed:   # nothing clearly out of order, but not every pair is ordered: no verdict either way
            return Outcome(None, head + "; ".join(parts), "the order is not established: " + within)
        reason += f"; not ordered either way: {within}"
    return Outcome(not failed, head + "; ".join(parts), reason)


def _shown(at, subject) -> str:
    """One subject's figure at a point, with its interval and its unit."""
    return _with_interval(at.loc[subject, "_value"], at.loc[subject, "_lo"], at.loc[subject, "_hi"],
                          at.loc[subject, "_unit"])


def _check_trend(p, m) -> list:
    out = []
    if not m.axis:
        out.append("a trend needs measure.axis (the series' column)")
    if p.get("shape") not in ("grows", "peaks"):
        out.append(f"shape must be 'grows' or 'peaks', got {p.get('shape')!r}")
    if p.get("shape") == "peaks":
        for key in ("near", "window", "min_drop"):
            if key not in p:
                out.append(f"shape 'peaks' needs {key}")
        w = p.get("window")
        if w is not None and not (isinstance(w, list) and len(w) == 2 and w[0] <= p.get("near", w[0]) <= w[1]):
            out.append(f"window must be [low, high] around near, got {w!r}")
    return out


def _series(rows, claim: Claim):
    """(points, values, each value as printed with its interval) of one subject's series, in axis order."""
    axis = claim.measure.axis
    s = rows[[axis, "_value", "_lo", "_hi", "_unit"]].dropna(subset=["_value"]).drop_duplicates(subset=[axis],
                                                                                                keep="last")
    s = s.sort_values(axis)
    return list(s[axis]), list(s["_value"]), [_with_interval(v, lo, hi, u) for v, lo, hi, u in
                                             zip(s["_value"], s["_lo"], s["_hi"], s["_unit"])]


def _cores_needed(claim: Claim, point) -> int:
    return int(point) + claim.measure.extra_threads


def _trend(rows, claim: Claim, ctx: Context) -> Outcome:
    p, m = claim.params, claim.measure
    results = []
    for subject in _subjects(rows, claim):
        xs, vs, shown = _series(rows[rows[m.by] == subject], claim)
        text = f"{subject}: " + ", ".join(f"{t} at {_point(claim, x)}" for x, t in zip(xs, shown))
        results.append(_peaks(subject, xs, vs, text, claim, ctx) if p["shape"] == "peaks" else
                       _grows(subject, xs, vs, text, claim, ctx))
    if not results:
        return Outcome(None, "", "not measured: no series")
    text = "; ".join(r.figure for r in results if r.figure)
    if any(r.ok is None for r in results):
        return Outcome(None, text, "; ".join(r.reason for r in results if r.ok is None))
    return Outcome(all(r.ok for r in results), text, "; ".join(r.reason for r in results))


def _grows(subject, xs, vs, text, claim: Claim, ctx: Context) -> Outcome:
    p, axis = claim.params, claim.measure.axis
    if len(xs) < 2:
        if ctx.dropped and ctx.machine is not None:
            first = min(ctx.dropped)
            why = (f"needs {_cores_needed(claim, first)} cores for a second point ({_int(first)} {axis}), this "
                   f"machine has {ctx.machine.cores}")
        else:
            why = f"not measured: needs at least two {axis} points, the run has {len(xs)}"
        return Outcome(None, text if xs else "", why)
    speedups = [v / vs[0] for v in vs]
    steps_ok = all(b >= a * (1 + p.get("min_step", 0.0)) for a, b in zip(vs, vs[1:]))
    eff = [s / (x / xs[0]) for s, x in zip(speedups, xs)]
    eff_ok = "min_efficiency" not in p or all(e >= p["min_efficiency"] for e in eff[1:])
    text += f" ({num(speedups[-1])}x from {_int(xs[0])} to {_int(xs[-1])} {axis}, {eff[-1]:.0%} of linear)"
    reasons = []
    if not steps_ok:
        falls = [f"{_int(a)}->{_int(b)}" for (a, va), (b, vb) in zip(zip(xs, vs), zip(xs[1:], vs[1:])) if vb < va]
        reasons.append(f"{subject} does not grow at every step ({', '.join(falls) or 'too small a step'})")
    if not eff_ok:
        worst = min(range(1, len(xs)), key=lambda i: eff[i])
        reasons.append(f"{subject} reaches {eff[worst]:.0%} of linear at {_int(xs[worst])} {axis}, below "
                       f"{p['min_efficiency']:.0%}")
    if steps_ok and eff_ok:
        reasons.append(f"{subject} grows at every step" + (f", at least {p['min_efficiency']:.0%} of linear"
                                                           if "min_efficiency" in p else ""))
    return Outcome(steps_ok and eff_ok, text, "; ".join(reasons))


def _peaks(subject, xs, vs, text, claim: Claim, ctx: Context) -> Outcome:
    p, axis = claim.params, claim.measure.axis
    near, (low, high) = p["near"], p["window"]
    if not xs or max(xs) <= near:
        have = ctx.machine.cores if ctx.machine else None
        need = _cores_needed(claim, near) + 1
        if have is not None and have < need:
            return Outcome(None, text, f"needs more than {need - 1} cores to see past the peak near {near} {axis}, "
                                         f"this machine has {have}")
        return Outcome(None, text, f"not measured past {near} {axis} (points: {', '.join(map(str, map(_int, xs)))})")
    i = max(range(len(vs)), key=lambda k: vs[k])
    if i == len(xs) - 1:
        if ctx.dropped:
            return Outcome(None, text, f"{subject} still rises at {_int(xs[i])} {axis}, the most this machine's "
                                         f"cores allow")
        return Outcome(False, text, f"{subject} still rises at {_int(xs[i])} {axis}, the last point: no peak")
    drop = 1 - vs[-1] / vs[i]
    text += f" (peak at {_int(xs[i])}, then {drop:.0%} lower at {_int(xs[-1])})"
    if not low <= xs[i] <= high:
        return Outcome(False, text, f"{subject} peaks at {_int(xs[i])} {axis}, outside {low}-{high}")
    if drop < p["min_drop"]:
        return Outcome(False, text, f"{subject} falls {drop:.0%} after its peak, less than {p['min_drop']:.0%}")
    return Outcome(True, text, f"{subject} peaks at {_int(xs[i])} {axis} and falls {drop:.0%}")


def _check_near_constant(p, m) -> list:
    return [] if 0 < p.get("within", 0) < 1 else [f"within must be a fraction between 0 and 1, got {p.get('within')!r}"]


def _near_constant(rows, claim: Claim, ctx: Context) -> Outcome:
    p, m = claim.params, claim.measure
    parts, bad = [], []
    for subject in _subjects(rows, claim):
        mine = rows[rows[m.by] == subject]
        vs = [v for v in mine["_value"] if not _nan(v)]
        if not vs or ("target" not in p and len(vs) < 2):
            return Outcome(None, "", f"not measured: {subject} has {len(vs)} value(s) of {m.metric}")
        unit = mine["_unit"].iloc[0]
        if "target" in p:
            dev = max(abs(v - p["target"]) for v in vs) / abs(p["target"])
            parts.append(f"{subject} {', '.join(figure(v, unit) for v in vs)} (target {figure(p['target'], unit)}, "
                         f"off by {dev:.1%})")
        else:
            mid = sorted(vs)[len(vs) // 2]
            dev = (max(vs) - min(vs)) / mid if mid else math.inf
            parts.append(f"{subject} {figure(min(vs), unit)} to {figure(max(vs), unit)} over {len(vs)} points "
                         f"({dev:.1%} spread)")
        if dev > p["within"]:
            bad.append(f"{subject} is {dev:.1%} off {figure(p['target'], unit)}" if "target" in p else
                       f"{subject} varies {dev:.1%}")
    text = f"{m.metric}: " + "; ".join(parts)
    if bad:
        return Outcome(False, text, f"{'; '.join(bad)}, more than {p['within']:.0%}")
    return Outcome(True, text, f"within {p['within']:.0%}")


KINDS = {
    "ratio": Kind({"num": ("table", True), "den": ("table", True), "min": ("number", False),
                   "max": ("number", False)}, _check_ratio, _ratio,
                  "num's metric over den's within [min, max], at each point of the axis"),
    "order": Kind({"better": ("str", True), "ranking": ("list", False), "best": ("str", False)}, _check_order, _order,
                  "subjects ranked by the metric at every point of the axis"),
    "trend": Kind({"shape": ("str", True), "min_efficiency": ("number", False), "min_step": ("number", False),
                   "near": ("number", False), "window": ("list", False), "min_drop": ("number", False)},
                  _check_trend, _trend, "grows with threads (up to the cores), or peaks near a point then falls"),
    "near_constant": Kind({"within": ("number", True), "target": ("number", False)}, _check_near_constant,
                          _near_constant, "every value within a fraction of the median (or of target)"),
}


# ---------------------------------------------------------------------------------------------------------------
# Preconditions.

def _gib(n) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def _need_cores(value, ctx: Context) -> str | None:
    if ctx.machine is None or ctx.machine.cores >= value:
        return None
    return f"needs {value} cores, this machine has {ctx.machine.cores}"


def _cache_holds_data(value, ctx: Context) -> str | None:
    cache, data = ctx.setup.get("cache_bytes"), ctx.setup.get("data_bytes")
    if not value or cache is None or data is None or cache >= data:
        return None
    return f"the cache ({_gib(cache)}) is below the data ({_gib(data)}) where the seed's held it"


def _fits_in_ram(value, ctx: Context) -> str | None:
    data = ctx.setup.get("data_bytes")
    ram = ctx.machine.memory_bytes if ctx.machine else None
    budget = ctx.setup.get("memory_bytes")   # a memory budget, which the `kvlab` command holds the page cache to
    if value and budget is not None and (ram is None or budget < ram):
        if data is not None and data > budget:
            return (f"the data ({_gib(data)}) is larger than the memory budget ({_gib(budget)}), which holds the "
                    "OS page cache too, where the seed's fit in RAM")
        return None
    if not value or data is None or ram is None or data <= ram:
        return None
    return f"the data ({_gib(data)}) is larger than this machine's memory ({_gib(ram)}) where the seed's fit in RAM"


def _sync(value, ctx: Context) -> str | None:
    have = ctx.setup.get("sync")
    if have is None or bool(have) == value:
        return None
    return f"sync is {'on' if have else 'off'} here, {'on' if value else 'off'} in the seed"


def _as_published(columns, ctx: Context) -> str | None:
    """The selected rows' `columns` hold the published table's values for the same row (by the claim's `by`)."""
    rows, pub = ctx.rows, ctx.published
    if rows is None or pub is None or rows.empty or pub.empty:
        return None
    out: dict = {}   # (column, here, the seed's) -> the rows that differ so
    for col in columns:
        if col not in rows.columns or col not in pub.columns:
            continue
        keys = [k for k in ("test", "benchmark") if k in rows.columns and k in pub.columns] or None
        if keys is None:
            continue
        want = pub.drop_duplicates(subset=keys).set_index(keys)[col]
        for _, r in rows.iterrows():
            key = r[keys[0]] if len(keys) == 1 else tuple(r[k] for k in keys)
            if key in want.index and str(r[col]) != str(want.loc[key]):
                out.setdefault((col, str(r[col]), str(want.loc[key])), []).append(str(key))
    return "; ".join(f"{col} {here} here where the seed's was {seeds} ({', '.join(dict.fromkeys(keys))})"
                     for (col, here, seeds), keys in out.items()) or None


def _larger_than_memory(value, ctx: Context) -> str | None:
    data, limit = ctx.setup.get("limited_data_bytes"), ctx.setup.get("memory_limit_bytes")
    if not value:
        return None
    if limit is None:
        why = ctx.setup.get("memory_limit_unavailable")
        return f"no memory limit here ({why})" if why else None
    if data is None or data > limit:
        return None
    return (f"the data ({_gib(data)}) fits in the memory limit ({_gib(limit)}): not larger than RAM, as the seed's "
            f"was")


REQUIRES = {
    "cores": Require("int", _need_cores, "at least this many cores"),
    "cache_holds_data": Require("bool", _cache_holds_data, "the engine's cache holds the data (setup: cache_bytes, "
                                "data_bytes)"),
    "fits_in_ram": Require("bool", _fits_in_ram, "the data fits in this machine's memory (setup: data_bytes)"),
    "larger_than_memory": Require("bool", _larger_than_memory, "the data outgrows the memory it runs in (setup: "
                                  "limited_data_bytes, memory_limit_bytes)"),
    "sync": Require("bool", _sync, "writes synced (true) or not (false), as the seed's (setup: sync)"),
    "as_published": Require("list", _as_published, "these columns of the rows used hold the seed's values "
                            "(compression, clients)"),
}


# ---------------------------------------------------------------------------------------------------------------
# Selection and the verdict.

def select(frame, claim: Claim):
    """The rows of `frame` the claim uses, with `_value`, `_lo`, `_hi` (the metric's median and its interval where
    the frame has them) added; None where the frame lacks the metric or a column the claim selects on."""
    if frame is None:
        return None
    m = claim.measure
    frame = frame.copy()
    if m.metric not in frame.columns and m.metric in DERIVED:
        cols, fn = DERIVED[m.metric]
        if all(c in frame.columns for c in cols):
            frame[m.metric] = fn(*(frame[c] for c in cols))
    if m.metric not in frame.columns or m.by not in frame.columns:
        return None
    rows = _rows_of(frame, m.where)
    if m.engines and "engine" in rows.columns:
        rows = rows[rows["engine"].isin(m.engines)]
    rows = rows.copy()
    rows["_value"] = rows[m.metric].astype(float)
    for side, suffix in (("_lo", "_ci95_lo"), ("_hi", "_ci95_hi")):
        col = m.metric + suffix
        rows[side] = rows[col].astype(float) if col in rows.columns else float("nan")
    rows["_unit"] = rows[m.unit_by].map(unit_of) if m.unit_by and m.unit_by in rows.columns else m.unit
    return rows


def expand(claim: Claim, measured_engines) -> list:
    """A claim measured per engine (`each`) as one claim per engine (its id gets '/engine'); else the claim."""
    if not claim.measure.each:
        return [claim]
    engines = claim.measure.engines or tuple(measured_engines)
    return [replace(claim, id=f"{claim.id}/{e}", measure=replace(claim.measure, engines=(e,), each=False))
            for e in engines] or [claim]


def _used(rows, claim: Claim):
    """The rows the claim's test reads: a ratio's num and den rows, a ranking's subjects, else all of them."""
    import pandas as pd
    p = claim.params
    if "num" in p and "den" in p:
        return pd.concat([_rows_of(rows, p["num"]), _rows_of(rows, p["den"])])
    if "ranking" in p and claim.measure.by in rows.columns:
        return rows[rows[claim.measure.by].isin(p["ranking"])]
    return rows


def _drop_for_cores(rows, claim: Claim, machine: Machine | None):
    m = claim.measure
    if not m.threads_axis or machine is None or rows is None or m.axis not in rows.columns:
        return rows, ()
    need = rows[m.axis].astype(float) + m.extra_threads
    dropped = tuple(sorted(set(rows[m.axis][need > machine.cores])))
    return rows[need <= machine.cores], dropped


def stable(seconds, ops) -> bool:
    """Whether a phase of `seconds` and `ops` is a stable figure by kvlab's own floor: kvlab.results.sanity's
    too_short (MIN_SECONDS and MIN_OPS, with its tolerance for a run timed to exactly MIN_SECONDS)."""
    from types import SimpleNamespace
    phase = SimpleNamespace(phase="run", params={}, seconds=float(seconds), ops=float(ops), engine="", workload="",
                            threads=1)
    return sanity.too_short(phase) is None


def _label(r, claim: Claim) -> str:
    """A measured row as a reason names it: 'lmdb load', 'lmdb readwhilewriting at 1 reader', 'lmdb fdb-write-10'."""
    m = claim.measure
    who = f"{r[m.by]} {m.table}" if m.by == "engine" or "engine" not in r.index else f"{r['engine']} {r[m.by]}"
    if m.axis and m.axis in r.index and m.axis != m.by:
        who += (" at " if m.axis in ("threads", "readers") else " ") + _point(claim, r[m.axis])
    return who


def _seconds(seconds) -> str:
    return f"{seconds:.2g} s" if seconds < 1 else f"{seconds:,.1f} s"


def too_short(rows, claim: Claim, scales: Callable | None = None, alone: bool = True) -> str | None:
    """Why the claim cannot be judged on `rows` (the rows its test reads) where any of them comes from a phase below
    kvlab's stability floor (its `phase_s` and `phase_ops`: kvlab.results.sanity), with the smallest preset scale
    expected to pass: `scales(row)` gives [(scale, how many times larger its phase would be there)] (None: not
    known); each short phase's seconds and ops are scaled by that factor.  None where every row is stable (or none says its phase)."""
    if rows is None or rows.empty or not all(c in rows.columns for c in PHASE_COLUMNS):
        return None
    short = [r for _, r in rows.iterrows() if not (_nan(r["phase_s"]) or _nan(r["phase_ops"]))
             and not stable(r["phase_s"], r["phase_ops"])]
    if not short:
        return None
    short.sort(key=lambda r: (r["phase_s"], r["phase_ops"]))
    said = [f"{_label(r, claim)} ran {_seconds(r['phase_s'])} ({r['phase_ops']:,.0f} ops)" for r in short[:3]]
    more = f", and {len(short) - 3} more" if len(short) > 3 else ""
    text = (f"too short to judge: {', '.join(said)}{more}, under the {sanity.MIN_SECONDS:g} s and {sanity.MIN_OPS:,} "
            "ops kvlab needs of a stable figure")
    given = [scales(r) for r in short] if scales is not None else [None]
    if any(f is None for f in given):   # no presets to scale to (a notebook's own parameters)
        return text + "; a larger run would test it"
    factors: list[dict] = [dict(f or ()) for f in given]
    names = list(dict.fromkeys(n for f in factors for n in f))
    names.sort(key=lambda n: max(f.get(n, 0.0) for f in factors))
    verb = "would test it" if alone else "would run them long enough"
    for name in names:
        at = [(r, f[name]) for r, f in zip(short, factors) if name in f]
        if len(at) == len(short) and all(stable(r["phase_s"] * k, r["phase_ops"] * k) for r, k in at):
            low, k = min(at, key=lambda x: x[0]["phase_s"] * x[1])
            return f"{text}; --scale {name} {verb} (scaled by its size, the shortest phase about {_seconds(low['phase_s'] * k)})"
    top = names[-1] if names else None
    longest = ""
    if top is not None and all(top in f for f in factors):
        low, k = min(((r, f[top]) for r, f in zip(short, factors)), key=lambda x: x[0]["phase_s"] * x[1])
        longest = f" (at {top}, scaled by its size, the shortest phase about {_seconds(low['phase_s'] * k)})"
    return f"{text}; no preset scale would{longest}"


def evaluate(claim: Claim, frame, machine: Machine | None = None, setup: Mapping | None = None,
             published=None, scales: Callable | None = None) -> Outcome:
    """The claim's test on `frame` (one of the seed experiment's tables), with its preconditions and kvlab's
    stability floor on the phases behind the rows it reads (too_short; `scales` names the scale that passes)."""
    setup = setup or {}
    rows = select(frame, claim)
    if rows is None:
        return Outcome(None, "", f"not measured: no {claim.measure.table} table with {claim.measure.metric}")
    pub = select(published, claim) if published is not None else None
    ctx = Context(machine, setup, rows=_used(rows, claim), published=pub)
    if rows.empty:
        who = ", ".join(claim.named_engines()) or "any engine"
        where = ", ".join(f"{k} {v}" for k, v in claim.measure.where.items())
        return Outcome(None, "", f"not measured: no rows for {who}{' (' + where + ')' if where else ''} in this run")
    kept, dropped = _drop_for_cores(rows, claim, machine)
    ctx = replace(ctx, dropped=dropped)
    unmet = [why for key, value in claim.requires.items() if (why := REQUIRES[key].check(value, ctx))]
    note = ""
    if dropped and machine is not None:
        note = (f"{claim.measure.axis} {', '.join(str(_int(x)) for x in dropped)} dropped: "
                f"{'each needs' if len(dropped) > 1 else 'needs'} more than this machine's {machine.cores} cores"
                + (f" (with {claim.measure.extra_threads} more thread{'s' if claim.measure.extra_threads > 1 else ''})"
                   if claim.measure.extra_threads else ""))
    if kept.empty:
        low = min(rows[claim.measure.axis])
        return Outcome(None, "", f"needs {_cores_needed(claim, low)} cores for its first point, this machine has "
                                 f"{machine.cores if machine else '?'}")
    out = KINDS[claim.test].evaluate(kept, claim, ctx)
    if out.ok is None and dropped and not out.reason.startswith("needs"):
        first = min(dropped)
        out = replace(out, reason=f"needs {_cores_needed(claim, first)} cores for {claim.measure.axis} {_int(first)}, "
                                  f"this machine has {machine.cores if machine else '?'}")
    blocked = bool(unmet) or out.ok is None
    short = too_short(_used(kept, claim), claim, scales, alone=not blocked)
    if unmet:
        return Outcome(None, out.figure, "; ".join(unmet + ([short] if short else [])))
    if short:   # kvlab's own floor says these figures are not stable: no verdict on them
        untested = [out.reason] if out.ok is None and out.reason else []
        said = untested + [short] if out.reason.startswith("needs") else [short] + untested   # the cores first
        return Outcome(None, out.figure, "; ".join(said + ([note] if note else [])))
    reason = "; ".join(x for x in (out.reason, note) if x)
    return Outcome(out.ok, out.figure, reason)


def verdict_row(claim: Claim, measured, published=None, machine: Machine | None = None,
                setup: Mapping | None = None, scales: Callable | None = None) -> dict:
    """One row of the verdict table: the claim tested on `measured` (its table), its published figure from
    `published` (the seed's table, tested the same way on a machine without limits).  `scales(row)`: the preset
    scales and how many times larger the row's phase would be at each (see too_short)."""
    missing = [e for e in claim.named_engines() if machine is not None and machine.engines is not None
               and e not in machine.engines]
    figure_pub = ""
    if published is not None:
        figure_pub = evaluate(claim, published).figure
    if missing:
        got = evaluate(claim, measured, machine, setup, published, scales) if measured is not None else None
        return _row(claim, figure_pub, got.figure if got else "", "cannot test here",
                    f"engine{'s' if len(missing) > 1 else ''} {', '.join(missing)} not built")
    over = (setup or {}).get("over_budget") or {}   # {engine: its step that went over its memory budget, and why}
    hit = [e for e in (claim.named_engines() or over) if e in over]
    if hit:   # the engine's rows are missing or partial: no verdict from them
        return _row(claim, figure_pub, "", "cannot test here",
                    "over the memory budget: " + "; ".join(over[e] for e in hit))
    got = evaluate(claim, measured, machine, setup, published, scales)
    verdict = "cannot test here" if got.ok is None else "reproduced" if got.ok else "not reproduced"
    return _row(claim, figure_pub, got.figure, verdict, got.reason)


def _row(claim, published, measured, verdict, reason) -> dict:
    return {"claim": claim.id, "statement": claim.statement, "published": published, "measured": measured,
            "verdict": verdict, "reason": reason}
