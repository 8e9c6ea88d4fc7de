"""Sweeps in the results store: which points are finished, and one tidy frame per sweep.

A finished point is a `done` row in `sweep_points`, written in the same transaction as its
benchmarks (Store.append(..., point=...)), so a point is either wholly stored or not at all.
The tidy frame has one row per setting (the axis values without the repeat), workload and phase:
the axes as columns, then for each metric the median across repeats and the interval of that median
(results.stats: exact order statistics; none below 3 repeats), the number of repeats and the hosts that ran them.
"""
from __future__ import annotations

import json

from .. import errors
from .result import BenchmarkResult, RunResult
from .stats import summarize
from .store import Store

METRICS = ("ops_per_sec", "micros_per_op", "p50_us", "p99_us", "p999_us", "cpu_pct", "txn_per_sec")


def finished_points(store: Store, sweep_id: str) -> set:
    """Ids of the points of `sweep_id` already stored (an empty set for a store or sweep not seen yet)."""
    if not store.path.exists():
        return set()
    df = store.query("SELECT DISTINCT point_id FROM sweep_points WHERE sweep_id = ? AND status = 'done'", [sweep_id])
    return set(df["point_id"])


def list_sweeps(store: Store):
    """One row per sweep in the store: points done and failed, hosts, first and last record."""
    return store.query(
        "SELECT sweep_id, count(DISTINCT point_id) FILTER (WHERE status = 'done') AS points_done, "
        "count(*) FILTER (WHERE status = 'failed') AS failures, string_agg(DISTINCT host, ',') AS hosts, "
        "min(recorded_at) AS first, max(recorded_at) AS last FROM sweep_points GROUP BY sweep_id ORDER BY last")


def _rows(store: Store, sweep_id: str, phases, point_ids=None):
    if not store.path.exists():
        raise errors.ResultsError(f"no results store at {store.path}")
    df = store.query(
        "WITH done AS (SELECT point_id, arg_min(run_id, recorded_at) AS run_id, arg_min(axis_values, recorded_at) "
        "AS axis_values, arg_min(repeat, recorded_at) AS repeat, arg_min(host, recorded_at) AS host, "
        "arg_min(worker, recorded_at) AS worker FROM sweep_points WHERE sweep_id = ? AND status = 'done' "
        "GROUP BY point_id) "
        "SELECT b.id, b.point_id, d.axis_values, d.repeat, d.host, d.worker, b.engine, b.workload, b.phase, "
        "b.threads, b.ops_per_sec, b.micros_per_op, b.p50_us, b.p99_us, b.p999_us, b.cpu_pct, b.txn_per_sec "
        "FROM benchmarks b JOIN done d ON b.point_id = d.point_id AND b.run_id = d.run_id "
        "WHERE b.sweep_id = ? ORDER BY b.id", [sweep_id, sweep_id])
    if df.empty:
        known = list_sweeps(store)["sweep_id"].tolist()
        raise errors.ResultsError(f"sweep {sweep_id!r} has no finished points in {store.path}; sweeps there: "
                                  f"{', '.join(known) or 'none'}")
    if phases is not None:
        df = df[df.phase.isin(phases)]
    if point_ids is not None:
        df = df[df.point_id.isin(set(point_ids))]
    return df


def _definition_axes(store: Store, sweep_id: str) -> dict:
    """The axes (name -> values, in order) of the latest definition the sweep ran with."""
    defined = store.query("SELECT definition FROM sweeps WHERE sweep_id = ?", [sweep_id])
    return json.loads(defined.definition.iloc[0]).get("axes", {}) if not defined.empty else {}


def _axes_order(defined: dict, rows) -> list:
    seen = list(defined)
    for values in rows.axis_values:
        for k in json.loads(values):
            if k not in seen:
                seen.append(k)
    return seen


def tidy(store: Store, sweep_id: str, phases=("run",), metrics=METRICS, point_ids=None):
    """One row per setting, workload and phase: the axes as columns, then per metric its median across
    repeats (`<metric>`), the interval of that median (`<metric>_ci95_lo`, `_hi`: the order-statistic
    interval, 95% or more from 6 repeats; with 3 to 5 the min-max range, whose confidence is lower) and that
    interval's confidence (`<metric>_ci_level`: 0.75 with 3 repeats, 0.969 with 6); all three empty with fewer
    than 3 repeats, where no interval can be given.
    `point_ids` keeps only those points (a sweep's current expansion: a name reused with another base
    run would otherwise pool unlike points); None takes every point stored under the name."""
    import pandas as pd
    rows = _rows(store, sweep_id, phases, point_ids)
    defined = _definition_axes(store, sweep_id)
    axes = _axes_order(defined, rows)
    parsed = [json.loads(v) for v in rows.axis_values]
    for axis in axes:
        rows[axis] = [p.get(axis) for p in parsed]
    key_cols = ["engine"] + [a for a in axes if a != "engine"] + ["workload", "phase"]
    # list values (a mix's value_size range) group by their text
    group = rows[key_cols].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
    out = []
    for _, idx in group.groupby(key_cols, sort=False, dropna=False).groups.items():
        part = rows.loc[idx]
        rec = {c: part[c].iloc[0] for c in key_cols}
        rec["repeats"] = int(part.point_id.nunique())
        for m in metrics:
            s = summarize(part[m].dropna().tolist())
            lo, hi = s["median_ci"] or (None, None)
            rec[m], rec[f"{m}_ci95_lo"], rec[f"{m}_ci95_hi"], rec[f"{m}_ci_level"] = \
                s["median"], lo, hi, s["median_ci_level"]
        rec["hosts"] = ",".join(sorted(set(part.host.dropna())))
        out.append(rec)
    frame = pd.DataFrame(out)
    # rows in the grid's order (axis values as written), whichever order the points finished in
    def position(axis):
        order = {json.dumps(v, sort_keys=True): i for i, v in enumerate(defined.get(axis, []))}
        return frame[axis].map(lambda v: order.get(json.dumps(v, sort_keys=True), len(order)))
    keys = pd.DataFrame({a: position(a) for a in axes if a in frame.columns})
    frame = frame.loc[keys.sort_values(list(keys.columns), kind="stable").index].reset_index(drop=True) \
        if len(keys.columns) else frame
    # a metric no benchmark of the sweep has (txn/s of db_bench loops) is left out
    empty = [m for m in metrics if frame[m].isna().all()]
    return frame.drop(columns=[c for m in empty for c in (m, *interval_columns(m))])


def interval_columns(metric: str) -> tuple:
    """The tidy frame's columns that hold `metric`'s median interval: low, high, confidence."""
    return f"{metric}_ci95_lo", f"{metric}_ci95_hi", f"{metric}_ci_level"


def points_frame(store: Store, sweep_id: str):
    """Every recorded end of a point of `sweep_id` (done and failed), with host, worker and times."""
    return store.query("SELECT point_id, status, repeat, axis_values, host, worker, started_at, ended_at, error, "
                       "run_id, recorded_at FROM sweep_points WHERE sweep_id = ? ORDER BY recorded_at", [sweep_id])


def results(store: Store, sweep_id: str, phases=None, point_ids=None) -> RunResult:
    """The full stored records of a sweep's finished points (provenance and machine facts included)."""
    rows = _rows(store, sweep_id, phases, point_ids)
    ids = [int(i) for i in rows.id]
    if not ids:
        return RunResult([])
    recs = store.query(f"SELECT record FROM benchmarks WHERE id IN ({', '.join('?' * len(ids))}) ORDER BY id", ids)
    return RunResult([BenchmarkResult.from_dict(json.loads(r)) for r in recs.record])
