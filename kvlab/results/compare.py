"""Two groups of results side by side, as benchstat compares them: `kvlab.compare(a, b)` and
`kvlab results compare A B`.

A side is a selection from the results store, written without SQL: comma-separated terms that must all
hold, each `tag:NAME`, `sweep:NAME`, `run:ID` (or a bare run id) or `KEY=VALUE` (`|` between values that
may each do: `threads=1|2`).  A side may also be results in hand (a RunResult or a list of
BenchmarkResults).  Benchmarks are matched across the sides by (workload, phase, threads); within a side,
the benchmarks of one match key (repeats, trials, runs) are the samples.  Partial benchmarks (stopped
early) are left out.

Per matched benchmark and metric: both medians with the interval of each median (results.stats: exact
order statistics), the change of B against A in %, and the two-sided Mann-Whitney U p-value.  The verdict
is `~` when p >= alpha, when a side has fewer than 3 samples (no p-value), or when the change is smaller
than the noise floor; otherwise "faster"/"slower" (throughput and latency) or "better"/"worse" (CPU and
I/O per op), by the metric's direction.  A geometric-mean row per metric closes the table.

The noise floor is the larger of `threshold` (percent, default 2) and, where the caller gives one, a
measured floor: `noise_floor` is a mapping {metric: percent} or a callable (metric, key) -> percent or
None, with key the match key as a dict, plus `engines` and `hosts`: those of the benchmarks matched there,
on both sides.  That is the hook for a machine's measured A/A spread (`kvlab noise`, Store.noise_floor).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from .. import errors
from . import stats
from .result import BenchmarkResult, RunResult
from .store import Store, settings_text

MATCH = ("workload", "phase", "threads")
ALPHA = 0.05
THRESHOLD_PCT = 2.0


@dataclass(frozen=True)
class Metric:
    name: str                   # column of the frame of samples
    label: str                  # what the table's title says
    higher_is_better: bool
    words: tuple                # verdict when B is better, when B is worse


METRICS = (
    Metric("ops_per_sec", "ops/s", True, ("faster", "slower")),
    Metric("p50_us", "p50 latency (us)", False, ("faster", "slower")),
    Metric("p99_us", "p99 latency (us)", False, ("faster", "slower")),
    Metric("p999_us", "p99.9 latency (us)", False, ("faster", "slower")),
    Metric("cpu_us_per_op", "CPU per op (us: user + system CPU / ops)", False, ("better", "worse")),
    Metric("io_bytes_per_op", "I/O per op (bytes written / ops)", False, ("better", "worse")),
    Metric("write_amp", "write amplification (process bytes written / user bytes written)", False,
           ("better", "worse")),
    Metric("read_amp", "read amplification (device block reads / read ops)", False, ("better", "worse")),
)
BY_NAME = {m.name: m for m in METRICS}

# what tells runs apart besides the match key: a side pooling several of these is said so
DESCRIBE = ("engine", "num", "value_size", "key_size", "engine_settings")

# --- selections --------------------------------------------------------------------------------

# filter key -> (column, type)
FILTER_KEYS = {
    "engine": ("engine", str), "workload": ("workload", str), "phase": ("phase", str), "threads": ("threads", int),
    "num": ("num", int), "value_size": ("value_size", int), "key_size": ("key_size", int), "trial": ("trial", int),
    "settings": ("engine_settings", str), "library": ("engine_library", str), "commit": ("git_commit", str),
    "run": ("run_id", str), "sweep": ("sweep_id", str), "tag": ("tags", str),
}


@dataclass(frozen=True)
class Selection:
    """A side (or --where) as written: terms, each (column, values), all of which must hold."""
    text: str
    terms: tuple

    def sql(self) -> tuple:
        """(clause, args) for DuckDB; the clause is '' for no terms."""
        clauses, args = [], []
        for column, values in self.terms:
            if column == "tags":
                clauses.append("(" + " OR ".join("list_contains(tags, ?)" for _ in values) + ")")
            else:
                clauses.append(f"{column} IN ({', '.join('?' * len(values))})")
            args += list(values)
        return " AND ".join(clauses), args

    def mask(self, frame):
        """The rows of a frame of samples (results in hand) that the terms select."""
        keep = np.ones(len(frame), dtype=bool)
        for column, values in self.terms:
            if column not in frame.columns:
                keep &= False
            elif column == "tags":
                keep &= frame[column].map(lambda tags: bool(set(tags or ()) & set(values))).to_numpy(bool)
            else:
                keep &= frame[column].isin(values).to_numpy(bool)
        return keep


def parse_selection(text: str, what: str = "selection") -> Selection:
    """`tag:fig3,engine=lmdb,threads=1|2` -> a Selection; a term that is none of the forms is a run id."""
    if text is None or not str(text).strip():
        raise errors.SpecError(f"{what}: empty; allowed: a run id, tag:NAME, sweep:NAME, run:ID or KEY=VALUE terms "
                               "joined by ','")
    terms = []
    for raw in str(text).split(","):
        term = raw.strip()
        if not term:
            raise errors.SpecError(f"{what} {text!r}: an empty term between commas")
        prefix, colon, rest = term.partition(":")
        if colon and prefix in ("tag", "sweep", "run") and "=" not in prefix:
            key, value = prefix, rest
        elif "=" in term:
            key, _, value = term.partition("=")
            key = key.strip().replace("-", "_")
        else:
            key, value = "run", term
        if key not in FILTER_KEYS:
            import difflib
            close = difflib.get_close_matches(key, list(FILTER_KEYS), n=2)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise errors.SpecError(f"{what} {text!r}: {key!r} is not a key to select by{hint}; allowed: "
                                   f"{', '.join(FILTER_KEYS)}, and tag:NAME, sweep:NAME, run:ID")
        column, kind = FILTER_KEYS[key]
        values: list[str] | list[int] = [v.strip() for v in value.split("|")]
        if any(not v for v in values):
            raise errors.SpecError(f"{what} {text!r}: {key} needs a value ({key}=VALUE)")
        if kind is int:
            try:
                values = [int(v) for v in values]
            except ValueError:
                raise errors.SpecError(f"{what} {text!r}: {key} takes whole numbers, not {value!r}") from None
        terms.append((column, tuple(values)))
    return Selection(str(text), tuple(terms))


# --- samples -----------------------------------------------------------------------------------

_SAMPLE_COLUMNS = ("id", "run_id", "engine", "workload", "phase", "threads", "num", "value_size", "key_size",
                   "engine_settings", "trial", "ops", "ops_per_sec", "p50_us", "p99_us", "p999_us", "cpu_us_per_op",
                   "io_bytes_per_op", "host", "write_amp", "read_amp", "started_at", "ended_at", "load_others",
                   "others_cpu_pct", "cores", "cpufreq", "turbo", "memory_budget", "sync", "compression",
                   "machine")

_STORE_QUERY = (
    "SELECT id, run_id, engine, workload, phase, threads, num, value_size, key_size, engine_settings, trial, ops, "
    "ops_per_sec, p50_us, p99_us, p999_us, "
    "(TRY_CAST(acct->>'cpu_user_s' AS DOUBLE) + TRY_CAST(acct->>'cpu_sys_s' AS DOUBLE)) * 1e6 / nullif(ops, 0) "
    "AS cpu_us_per_op, TRY_CAST(acct->>'io_write_bytes' AS DOUBLE) / nullif(ops, 0) AS io_bytes_per_op, "
    "facts[2]->>'$' AS host, write_amp, read_amp, facts[3]->>'$' AS started_at, facts[4]->>'$' AS ended_at, "
    "TRY_CAST(facts[5]->>'$' AS DOUBLE) AS load_others, TRY_CAST(facts[6]->>'$' AS DOUBLE) AS others_cpu_pct, "
    "TRY_CAST(facts[7]->>'$' AS INTEGER) AS cores, CAST(facts[8] AS VARCHAR) AS cpufreq, "
    "CAST(facts[9] AS VARCHAR) AS turbo, TRY_CAST(facts[10]->>'$' AS BIGINT) AS memory_budget, "
    "COALESCE(CAST(facts[11] AS VARCHAR), 'false') AS sync, COALESCE(facts[12]->>'$', 'none') AS compression, "
    "concat_ws(', ', facts[13]->>'$', facts[14]->>'$' || ' cores', facts[2]->>'$') AS machine, "
    "partial, {sides} FROM (SELECT *, facts[1] AS acct FROM (SELECT *, "
    "json_extract(record, ['$.accounting', '$.provenance.machine.hostname', '$.started_at', '$.ended_at', "
    "'$.provenance.machine.system.load.others_1min', '$.provenance.machine.system.others_cpu_pct', "
    "'$.provenance.machine.system.cores', '$.provenance.machine.system.cpufreq.governors', "
    "'$.provenance.machine.system.turbo.enabled', '$.params.memory_budget.bytes', "
    "'$.provenance.engine_config_effective.sync', '$.provenance.engine_config_effective.compression', "
    "'$.provenance.machine.cpu_model', '$.provenance.machine.cores']) AS facts FROM benchmarks WHERE {where})) "
    "ORDER BY id")


def store_samples(store: Store, selections, where: Selection | None = None) -> list:
    """For each selection, the stored benchmarks it (and `where`) picks, one row each, with the compared
    metrics.  One scan of the store for all of them: its records are read once (a compressed column is read
    whole, whichever rows are wanted), which is most of the time a comparison takes."""
    if not store.path.exists():
        raise errors.ResultsError(f"no results store at {store.path}")
    sql = [s.sql() for s in selections]
    side_args = [a for _, args in sql for a in args]
    sides = ", ".join(f"({clause}) AS side_{i}" for i, (clause, _) in enumerate(sql))
    where_clause = "(" + " OR ".join(f"({clause})" for clause, _ in sql) + ")"
    args = side_args + side_args
    if where is not None and where.terms:
        clause, extra = where.sql()
        where_clause += f" AND {clause}"
        args += extra
    frame = store.query(_STORE_QUERY.format(sides=sides, where=where_clause), args)
    return [frame[frame[f"side_{i}"].fillna(False).astype(bool)].drop(columns=[f"side_{j}" for j in
                                                                                range(len(sql))]).reset_index(drop=True)
            for i in range(len(sql))]


def result_samples(results, where: Selection | None = None):
    """Results in hand (a RunResult or BenchmarkResults) as the same rows as store_samples gives."""
    import pandas as pd
    rows = []
    for i, b in enumerate(results):
        if not isinstance(b, BenchmarkResult):
            raise errors.SpecError(f"a side of a comparison holds a {type(b).__name__}; allowed: BenchmarkResult")
        acct = b.accounting or {}
        cpu = None
        if acct.get("cpu_user_s") is not None and acct.get("cpu_sys_s") is not None and b.ops:
            cpu = (acct["cpu_user_s"] + acct["cpu_sys_s"]) * 1e6 / b.ops
        io = acct["io_write_bytes"] / b.ops if acct.get("io_write_bytes") is not None and b.ops else None
        params = b.params or {}
        rows.append({"id": i, "run_id": None, "engine": b.engine, "workload": b.workload, "phase": b.phase,
                     "threads": b.threads, "num": params.get("num"), "value_size": params.get("value_size"),
                     "key_size": params.get("key_size"), "engine_settings": settings_text(b), "trial": b.trial,
                     "ops": b.ops, "ops_per_sec": b.ops_per_sec, "p50_us": b.latency_us.get("p50"),
                     "p99_us": b.latency_us.get("p99"), "p999_us": b.latency_us.get("p999"), "cpu_us_per_op": cpu,
                     "io_bytes_per_op": io, "host": ((b.provenance or {}).get("machine") or {}).get("hostname"),
                     "write_amp": (b.amplification or {}).get("write_amp"),
                     "read_amp": (b.amplification or {}).get("read_amp"), **_system_columns(b),
                     "partial": b.partial, "tags": list(b.tags), "sweep_id": None,
                     "engine_library": (b.versions or {}).get("engine_library"),
                     "git_commit": (b.versions or {}).get("git_commit"), **_setting_columns(b)})
    frame = pd.DataFrame(rows, columns=list(_SAMPLE_COLUMNS) + ["partial", "tags", "sweep_id", "engine_library",
                                                               "git_commit"])
    if where is not None and where.terms:
        frame = frame[where.mask(frame)]
    return frame


def _setting_columns(b: BenchmarkResult) -> dict:
    """The settings a like-for-like check compares, as the store's query reads them."""
    effective = (b.provenance or {}).get("engine_config_effective") or {}
    machine = (b.provenance or {}).get("machine") or {}
    sync = effective.get("sync")
    parts = [machine.get("cpu_model"), f"{machine['cores']} cores" if machine.get("cores") else None,
             machine.get("hostname")]
    return {"memory_budget": ((b.params or {}).get("memory_budget") or {}).get("bytes"),
            # kvlab opens an engine without sync and without compression unless a setting says otherwise
            "sync": json.dumps(bool(sync)), "compression": effective.get("compression") or "none",
            "machine": ", ".join(str(p) for p in parts if p) or None}


def _system_columns(b: BenchmarkResult) -> dict:
    """When a benchmark ran and the machine as its trial started (provenance.machine.system), as the store's
    query reads them."""
    system = ((b.provenance or {}).get("machine") or {}).get("system") or {}
    governors = (system.get("cpufreq") or {}).get("governors")
    turbo = (system.get("turbo") or {}).get("enabled")
    return {"started_at": b.started_at or None, "ended_at": b.ended_at or None,
            "load_others": (system.get("load") or {}).get("others_1min"),
            "others_cpu_pct": system.get("others_cpu_pct"), "cores": system.get("cores"),
            "cpufreq": None if governors is None else json.dumps(governors, separators=(",", ":")),
            "turbo": None if turbo is None else json.dumps(turbo)}


# --- the comparison ----------------------------------------------------------------------------

NoiseFloor = Callable[[str, dict], "float | None"]


def noise_floor_pct(metric: str, key: dict, threshold: float, noise_floor=None) -> tuple:
    """(percent, source): the change below which a difference is called noise.  `threshold` always counts;
    a measured floor (`noise_floor`: {metric: percent} or a callable (metric, key) -> percent or None) wins
    where it is larger."""
    measured = None
    if isinstance(noise_floor, Mapping):
        measured = noise_floor.get(metric)
    elif callable(noise_floor):
        measured = noise_floor(metric, key)
    if measured is not None and measured > threshold:
        return float(measured), "measured"
    return float(threshold), "threshold"


def verdict(metric: Metric, change_pct, p, alpha: float, floor_pct: float) -> str:
    """'~' (no significant change, or below the floor), else the metric's word for better or worse."""
    if p is None or p >= alpha or change_pct is None or math.isnan(change_pct) or abs(change_pct) < floor_pct:
        return "~"
    better = (change_pct > 0) == metric.higher_is_better
    return metric.words[0 if better else 1]


def _change_pct(a, b):
    """B's change against A in %, or None where a ratio means nothing: a null, or a zero on either side."""
    if a is None or b is None or a == 0 or b == 0 or (isinstance(a, float) and math.isnan(a)) or \
            (isinstance(b, float) and math.isnan(b)):
        return None
    return (b / a - 1.0) * 100.0


def _no_change_why(sa: dict, sb: dict) -> str | None:
    """Why a matched benchmark gets no % change (None when it gets one): a side without a median, a median
    of 0, or an interval of a median that reaches 0 or spans both signs (a ratio to a value that may be 0 or
    of either sign is any number: a write amplification of 0.000030 against 25.9 is not +86,385,625%)."""
    for side, s in (("A", sa), ("B", sb)):
        if s["median"] is None:
            return f"{side} has no value"
        if s["median"] == 0:
            return f"{side}'s median is 0"
    for side, s in (("A", sa), ("B", sb)):
        if s["median_ci"] is None:
            continue
        lo, hi = s["median_ci"]
        if lo <= 0 <= hi:
            return f"{side}'s interval of the median, {lo:g} .. {hi:g}, " + \
                ("spans both signs" if lo < 0 < hi else "reaches 0")
    return None


def _sides(values, where, store) -> list:
    """(label, frame of samples) of each side: results in hand as they are, selections read from the store in
    one query."""
    out, wanted = [], {}
    for value, what in zip(values, ("A", "B")):
        if isinstance(value, RunResult) or (isinstance(value, (list, tuple)) and value and
                                            all(isinstance(b, BenchmarkResult) for b in value)):
            frame = result_samples(value, where)
            engines = ",".join(dict.fromkeys(frame.engine)) if len(frame) else "nothing"
            out.append((f"{what} ({engines}, in hand)", frame))
            continue
        if isinstance(value, Mapping):
            value = ",".join(f"{k}={v}" for k, v in value.items())
        if not isinstance(value, str):
            raise errors.SpecError(f"{what}: a {type(value).__name__}; allowed: a selection string (run id, "
                                   "tag:NAME, sweep:NAME, KEY=VALUE terms), a dict of filters, or results (RunResult)")
        wanted[len(out)] = parse_selection(value, what)
        out.append((value, None))
    if wanted:
        frames = store_samples(store, list(wanted.values()), where)
        for (i, selection), frame in zip(wanted.items(), frames):
            if frame.empty:
                raise errors.ResultsError(
                    f"{'AB'[i]} {selection.text!r} selects no benchmark in {store.path}"
                    f"{' with --where ' + where.text if where is not None and where.terms else ''}"
                    f"{_suggest(store, selection)}")
            out[i] = (out[i][0], frame)
    return out


def _suggest(store, selection) -> str:
    """Where a bare word matched no run id: is it a tag or a sweep's name?"""
    words = [v for column, values in selection.terms if column == "run_id" for v in values]
    hints = []
    for w in words:
        if not store.query("SELECT 1 FROM benchmarks WHERE list_contains(tags, ?) LIMIT 1", [w]).empty:
            hints.append(f"tag:{w}")
        if not store.query("SELECT 1 FROM benchmarks WHERE sweep_id = ? LIMIT 1", [w]).empty:
            hints.append(f"sweep:{w}")
    return f" (did you mean {' or '.join(hints)}?)" if hints else ""


def compare(a, b, *, where=None, store=None, threshold: float = THRESHOLD_PCT, alpha: float = ALPHA,
            noise_floor=None, match=MATCH, metrics=None, level: float = stats.LEVEL, loads: bool = False):
    """B against A: one row per matched benchmark and metric, then a geometric-mean row per metric.

    `a`, `b`: selection strings (`tag:base`, `sweep:NAME`, a run id, `engine=lmdb,workload=readrandom`), dicts of
    filters, or results in hand.  `where`: a selection both sides must also satisfy.  `store`: a Store or
    path (default the results store).  `loads`: compare load phases too (left out unless asked, here or by a
    `phase=load` term).  Returns a pandas frame (its `attrs` carry the sides, the settings, `warnings` to say
    before the table (verdicts the sample sizes cannot give, sides not interleaved in time on a machine that
    changed) and notes: unmatched benchmarks, pooled configurations, partial benchmarks and loads left out)."""
    import pandas as pd
    store = store if isinstance(store, Store) else Store(store)
    where_sel, chosen, match = _checked_arguments(where, metrics, match)
    (label_a, frame_a), (label_b, frame_b) = _sides((a, b), where_sel, store)
    frame_a, frame_b, notes = _complete_benchmarks(frame_a, frame_b)
    if not (loads or any(_asks_for_loads(v) for v in (a, b, where_sel))):
        frame_a, frame_b = _without_loads(frame_a, frame_b, notes)
    groups_a, groups_b = _groups(frame_a, match), _groups(frame_b, match)
    keys = _matched_keys(groups_a, groups_b, match, notes)
    if not keys:
        raise errors.ResultsError(
            f"no benchmark of A ({label_a}) matches one of B ({label_b}) by {', '.join(match)}; A has "
            f"{_keys_text(groups_a, match)}; B has {_keys_text(groups_b, match)}")
    rows: list = []
    for m in chosen:
        rows += _metric_rows(m, keys, groups_a, groups_b, match, level=level, threshold=threshold, alpha=alpha,
                             noise_floor=noise_floor)
    out = pd.DataFrame(rows, columns=_table_columns(match))
    for col in ("a_n", "b_n", "geomean_of", *(k for k in match if k in _COUNTS)):
        out[col] = out[col].astype("Int64")     # counts stay whole numbers beside the geomean rows' nulls
    notes += [f"no % change for {r['metric']} in {key_text({k: r.get(k) for k in match})}: {r['change_why']}"
              for r in rows if r.get("change_why")]
    warnings = _unlike_warnings(frame_a, frame_b) + _reach_warnings(rows, alpha) + _timing_warnings(frame_a, frame_b)
    out.attrs.update({"a": label_a, "b": label_b, "alpha": alpha, "threshold_pct": threshold, "level": level,
                      "match": list(match), "notes": notes, "warnings": warnings})
    for side, frame in (("a", frame_a), ("b", frame_b)):
        runs = frame.run_id.dropna()
        out.attrs.update({f"{side}_benchmarks": len(frame), f"{side}_runs": int(runs.nunique()) if len(runs) else None,
                          f"{side}_engines": sorted(set(frame.engine.dropna()))})
    return out


def _checked_arguments(where, metrics, match) -> tuple:
    """compare's `where`, `metrics` and `match` checked: (the where Selection or None, the Metrics, match)."""
    where_sel = parse_selection(where, "--where") if isinstance(where, str) else \
        (parse_selection(",".join(f"{k}={v}" for k, v in where.items()), "--where") if where else None)
    unknown = [m for m in (metrics or ()) if isinstance(m, str) and m not in BY_NAME]
    if unknown:
        raise errors.SpecError(f"metric {unknown[0]!r} is unknown; allowed: {', '.join(BY_NAME)}")
    chosen = [BY_NAME[m] if isinstance(m, str) else m for m in (metrics or METRICS)]
    match = tuple(match)
    bad = [k for k in match if k not in _SAMPLE_COLUMNS]
    if bad:
        raise errors.SpecError(f"match key {bad[0]!r} is unknown; allowed: {', '.join(_SAMPLE_COLUMNS[2:11])}")
    return where_sel, chosen, match


def _complete_benchmarks(frame_a, frame_b) -> tuple:
    """Both sides without their partial benchmarks, and the notes that say so (and name runs on both sides)."""
    notes = []
    for label, frame in (("A", frame_a), ("B", frame_b)):
        partial = int(frame.partial.fillna(False).sum())
        if partial:
            notes.append(f"{label}: {partial} partial benchmark(s) (stopped early) left out")
    frame_a = frame_a[~frame_a.partial.fillna(False).astype(bool)]
    frame_b = frame_b[~frame_b.partial.fillna(False).astype(bool)]
    both = set(frame_a.run_id.dropna()) & set(frame_b.run_id.dropna())
    if both:
        notes.append(f"{len(both)} run(s) are on both sides: {', '.join(sorted(both)[:5])}"
                     f"{' ...' if len(both) > 5 else ''}")
    return frame_a, frame_b, notes


LOAD_DIFFERS = 0.5       # the others' 1-minute load average: side medians this far apart, the load differed
CPU_DIFFERS_PCT = 25.0   # other processes' CPU at a trial's start (% of one CPU): side medians this far apart


def _asks_for_loads(side) -> bool:
    """A side or --where that names the load phase (phase=load) asks for it."""
    if isinstance(side, Mapping):
        return "load" in str(side.get("phase", "")).split("|")
    if isinstance(side, str):
        try:
            side = parse_selection(side)
        except errors.SpecError:
            return False
    if isinstance(side, Selection):
        return any(column == "phase" and "load" in values for column, values in side.terms)
    return False


def _without_loads(frame_a, frame_b, notes: list) -> tuple:
    """Both sides without their load phases (how fast a database was filled is not what a comparison of
    engines or settings asks), and a note naming what was left out."""
    left = [f for f in (frame_a, frame_b) if (f.phase == "load").any()]
    if left:
        names = dict.fromkeys(f"{w} load" for f in left for w in f.workload[f.phase == "load"])
        notes.append(f"load phases left out ({', '.join(names)}): loads=True (--loads) compares them, each "
                     "kind in a geomean of its own")
    return frame_a[frame_a.phase != "load"], frame_b[frame_b.phase != "load"]


def _reach_warnings(rows, alpha: float) -> list:
    """One line per pair of sample sizes that cannot give p < alpha, whatever the difference."""
    sizes = dict.fromkeys((int(r["a_n"]), int(r["b_n"])) for r in rows
                          if r.get("a_n") is not None and r.get("geomean_of") is None and r["a_n"] and r["b_n"])
    out = []
    for na, nb in sizes:
        text = stats.reach_text(na, nb, alpha)
        if text:
            out.append(f"n={na}/{nb}: {text}; run more (kvlab results compare --run ... --repeat "
                       f"{stats.fewest_per_side(alpha) + 1})")
    return out


# what makes two sides not like for like: (column, what it is, how a value reads)
_LIKE = (("memory_budget", "memory budget",
          lambda v: "engine defaults" if v is None else f"{int(v) / 2**20:,.0f} MiB"),
         ("sync", "durability", lambda v: "?" if v is None else "sync every write" if json.loads(v) else "no sync"),
         ("compression", "compression", lambda v: "?" if v is None else str(v)),
         ("key_size", "key size", lambda v: "?" if v is None else f"{int(v)} B"),
         ("value_size", "value size", lambda v: "?" if v is None else f"{int(v)} B"),
         ("num", "data size (keys)", lambda v: "?" if v is None else f"{int(v):,}"),
         ("machine", "machine", lambda v: "?" if v is None else str(v)))


def _unlike_warnings(frame_a, frame_b) -> list:
    """'not like for like' when A and B differ in a setting that decides what is measured beside the engine or
    the setting compared: the memory budget, durability, compression, key or value size, data size, machine.
    A setting both sides hold several values of, the same ones, is one both sides vary alike: not a difference."""
    import pandas as pd
    differ = []
    for column, what, show in _LIKE:
        if column not in frame_a or column not in frame_b:
            continue
        values = [tuple(sorted({None if pd.isna(v) else v for v in f[column]}, key=str)) for f in (frame_a, frame_b)]
        if values[0] != values[1]:
            differ.append(f"{what} (A {' | '.join(show(v) for v in values[0])}; "
                          f"B {' | '.join(show(v) for v in values[1])})")
    if not differ:
        return []
    return ["not like for like: A and B differ in " + ", ".join(differ) + "; a difference between them may be "
            "these settings', not the engines' (kvlab results diff A B lists every setting that differs)"]


def _timing_warnings(frame_a, frame_b) -> list:
    """'not interleaved' when one side's benchmarks all started before the other's and the machine's load or CPU
    frequency setting (the system checks stored with each trial) differed between them: the difference may be
    the machine's, not A's or B's."""
    import pandas as pd
    starts = [pd.to_datetime(f.started_at, errors="coerce", utc=True, format="ISO8601").dropna()
              for f in (frame_a, frame_b)]
    if any(s.empty for s in starts):
        return []
    (a0, a1), (b0, b1) = ((s.min(), s.max()) for s in starts)
    if not (a1 < b0 or b1 < a0):
        return []
    first, then = ("A", "B") if a1 < b0 else ("B", "A")
    differed = []
    medians = [pd.to_numeric(f.load_others, errors="coerce").median() for f in (frame_a, frame_b)]
    if not any(pd.isna(medians)) and abs(medians[0] - medians[1]) >= LOAD_DIFFERS:
        differed.append(f"the load average of other work was {medians[0]:.2f} during A and {medians[1]:.2f} "
                        "during B")
    busy = [pd.to_numeric(f.others_cpu_pct, errors="coerce").median() for f in (frame_a, frame_b)]
    if not any(pd.isna(busy)) and abs(busy[0] - busy[1]) >= CPU_DIFFERS_PCT:
        differed.append(f"other processes used {busy[0]:.0f}% of a CPU at A's starts and {busy[1]:.0f}% at B's")
    for column, what in (("cpufreq", "CPU frequency governors"), ("turbo", "turbo")):
        values = [set(f[column].dropna()) for f in (frame_a, frame_b)]
        if all(values) and not values[0] & values[1]:
            differed.append(f"{what} {', '.join(sorted(values[0]))} during A, {', '.join(sorted(values[1]))} "
                            "during B")
    if not differed:
        return []
    last, next_first = (a1, b0) if first == "A" else (b1, a0)
    return [f"not interleaved: every benchmark of {first} started before {then}'s first ({first}'s last "
            f"{last:%Y-%m-%d %H:%M:%S}, {then}'s first {next_first:%H:%M:%S} UTC), and the machine changed between "
            "them: "
            + "; ".join(differed) + ". The difference may be the machine's; kvlab results compare --run SPEC_A SPEC_B "
            "runs the sides interleaved (A B, B A, ...)"]


def _matched_keys(groups_a, groups_b, match, notes: list) -> list:
    """The match keys both sides have; notes gain the keys one side alone has and the matched keys it pools."""
    keys = [k for k in groups_a if k in groups_b]
    for label, groups, other in (("A", groups_a, groups_b), ("B", groups_b, groups_a)):
        alone = [k for k in groups if k not in other]
        if alone:
            notes.append(f"only in {label} (not compared): {', '.join(key_text(dict(zip(match, k))) for k in alone)}")
        for k in keys:
            pooled = _pooled(groups[k])
            if pooled:
                notes.append(f"{label} pools {pooled} in {key_text(dict(zip(match, k)))}")
    return keys


def _metric_rows(m, keys, groups_a, groups_b, match, *, level, threshold, alpha, noise_floor) -> list:
    """One metric's rows: one per matched key with samples on either side, then its geometric-mean row."""
    rows = []
    pairs: dict[str, list] = {}     # phase kind -> (A, B) medians: a geomean pools one kind only
    for k in keys:
        key = dict(zip(match, k))
        sa = stats.summarize(groups_a[k][m.name], level)
        sb = stats.summarize(groups_b[k][m.name], level)
        if sa["n"] == 0 and sb["n"] == 0:
            continue
        p = None
        if sa["n"] >= stats.MIN_SAMPLES and sb["n"] >= stats.MIN_SAMPLES:
            p = stats.mann_whitney_u(sa["values"], sb["values"])[1]
        why = _no_change_why(sa, sb)
        change = None if why else _change_pct(sa["median"], sb["median"])
        floor, source = noise_floor_pct(m.name, {**key, **_where_measured(groups_a[k], groups_b[k])},
                                        threshold, noise_floor)
        rows.append({**key, "metric": m.name, **_side_columns("a", sa), **_side_columns("b", sb),
                     "change_pct": change, "p_value": p, "floor_pct": floor, "floor_source": source,
                     "verdict": verdict(m, change, p, alpha, floor),
                     "min_p": stats.smallest_p(sa["n"], sb["n"]) if p is not None else None, "change_why": why})
        if not why and sa["median"] > 0 and sb["median"] > 0:
            kind = key["phase"] if "phase" in key else \
                "+".join(sorted({str(v) for g in (groups_a[k], groups_b[k]) for v in g.phase.dropna()}))
            pairs.setdefault(kind, []).append((sa["median"], sb["median"]))
    for kind, kind_pairs in pairs.items():
        ga = float(np.exp(np.mean(np.log([x for x, _ in kind_pairs]))))
        gb = float(np.exp(np.mean(np.log([y for _, y in kind_pairs]))))
        rows.append({**{k: None for k in match}, "workload": "geomean", "phase": kind, "metric": m.name,
                     "a_median": ga, "b_median": gb, "change_pct": _change_pct(ga, gb), "geomean_of": len(kind_pairs)})
    return rows


def _table_columns(match) -> list:
    """The compare table's columns: the match key (workload first if the key lacks it), then the figures."""
    columns = list(match) + ["metric", "a_n", "a_median", "a_ci_lo", "a_ci_hi", "a_ci_level", "b_n", "b_median",
                             "b_ci_lo", "b_ci_hi", "b_ci_level", "change_pct", "p_value", "min_p", "floor_pct",
                             "floor_source", "verdict", "geomean_of", "change_why"]
    if "phase" not in columns:      # a geomean row names the phase kind it pools
        columns.insert(0, "phase")
    if "workload" not in columns:
        columns.insert(0, "workload")
    return columns


_COUNTS = ("threads", "num", "value_size", "key_size", "trial")


def _side_columns(prefix: str, s: dict) -> dict:
    lo, hi = s["median_ci"] or (None, None)
    return {f"{prefix}_n": s["n"], f"{prefix}_median": s["median"], f"{prefix}_ci_lo": lo, f"{prefix}_ci_hi": hi,
            f"{prefix}_ci_level": s["median_ci_level"]}


def _where_measured(*parts) -> dict:
    """The engines and hosts of a matched benchmark's samples on both sides (a measured floor is theirs)."""
    def values(col):
        return tuple(sorted({str(v) for p in parts for v in p[col] if v is not None and v == v}))
    return {"engines": values("engine"), "hosts": values("host")}


def _groups(frame, match) -> dict:
    """match key -> the frame's rows with that key, in the order keys first appear."""
    out: dict[tuple, object] = {}
    if frame.empty:
        return out
    for k, idx in frame.groupby(list(match), sort=False, dropna=False).groups.items():
        out[k if isinstance(k, tuple) else (k,)] = frame.loc[idx]
    return out


def _pooled(part) -> str:
    """'2 engines (lmdb, rocksdb)' when a side's samples of one key come from unlike configurations."""
    said = []
    for col in DESCRIBE:
        values = sorted({str(v) for v in part[col] if v is not None and v == v and v != ""})
        if len(values) > 1:
            said.append(f"{len(values)} {col.replace('_', ' ')}s ({', '.join(values[:4])}"
                        f"{', ...' if len(values) > 4 else ''})")
    return "; ".join(said)


def key_text(key: dict) -> str:
    """'readrandom run 2 thr' for a match key."""
    parts = []
    for k, v in key.items():
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        parts.append(f"{v} thr" if k == "threads" else (f"{k}={v}" if k not in ("workload", "phase") else str(v)))
    return " ".join(parts)


def _keys_text(groups, match) -> str:
    keys = [key_text(dict(zip(match, k))) for k in groups]
    return ", ".join(keys[:6]) + (" ..." if len(keys) > 6 else "") if keys else "nothing"


def records(frame) -> list:
    """The frame as JSON-ready records (NaN and <NA> as null)."""
    return json.loads(frame.to_json(orient="records", double_precision=15))
