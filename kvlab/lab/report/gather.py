"""What is reported: the groups as given (selections or results in hand), their benchmarks read from the
store in one query, and the comparison of two groups (kvlab.compare's frame)."""
from __future__ import annotations

import dataclasses
import json

from ... import errors
from ...results import compare as comparing
from ...results.compare import Selection, parse_selection
from ...results.formatting import missing
from ...results.result import BenchmarkResult, RunResult
from ...results.store import Store


@dataclasses.dataclass
class Group:
    """One selection as given: a Selection read from the store, or results in hand."""
    label: str
    selection: Selection | None = None
    results: list | None = None


@dataclasses.dataclass
class Entry:
    """One benchmark in the report, with where it was stored."""
    b: BenchmarkResult
    run: str                    # the run id, or "in hand N" for results not from the store
    stored_at: str | None = None
    sweep_id: str | None = None



def group(value, label_for_hand: str) -> Group:
    if isinstance(value, RunResult) or (isinstance(value, (list, tuple)) and value and
                                        all(isinstance(b, BenchmarkResult) for b in value)):
        return Group(f"{label_for_hand} (results in hand)", results=list(value))
    if isinstance(value, BenchmarkResult):
        return Group(f"{label_for_hand} (results in hand)", results=[value])
    if isinstance(value, dict):
        value = ",".join(f"{k}={v}" for k, v in value.items())
    if not isinstance(value, str):
        raise errors.SpecError(f"a selection is a {type(value).__name__}; allowed: a run id, tag:NAME, sweep:NAME, "
                               "KEY=VALUE terms, a dict of filters, or results (RunResult)")
    return Group(value, selection=parse_selection(value, "selection"))


def groups(selections, tag, sweep) -> list:
    groups = [group(v, f"group {i + 1}") for i, v in enumerate(selections)]
    tags = [tag] if isinstance(tag, str) else list(tag or ())
    for t in tags:
        groups.append(group(f"tag:{t}", ""))
    sweeps = [sweep] if isinstance(sweep, str) else list(sweep or ())
    for s in sweeps:
        groups.append(group(f"sweep:{s}", ""))
    return groups


def load(store: Store, groups, where) -> list:
    """The benchmarks every group selects (each once, in the order they were stored), read in one query; a
    group that selects nothing is an error naming it."""
    entries = []
    stored = [g for g in groups if g.selection is not None]
    if stored:
        if not store.path.exists():
            raise errors.ResultsError(f"no results store at {store.path}; give --store PATH (or set KVLAB_RESULTS)")
        sql = [g.selection.sql() for g in stored]
        args = [a for _, part in sql for a in part]
        sides = ", ".join(f"({clause}) AS side_{i}" for i, (clause, _) in enumerate(sql))
        query = (f"SELECT id, run_id, CAST(stored_at AS VARCHAR) AS stored_at, sweep_id, record, {sides} "
                 f"FROM benchmarks WHERE ({' OR '.join(f'({clause})' for clause, _ in sql)})")
        params = args + args
        if where is not None and where.terms:
            clause, extra = where.sql()
            query += f" AND {clause}"
            params += extra
        frame = store.query(query + " ORDER BY id", params)
        for i, g in enumerate(stored):
            if not frame[f"side_{i}"].fillna(False).astype(bool).any():
                raise errors.ResultsError(
                    f"{g.label!r} selects no benchmark in {store.path}"
                    f"{' with --where ' + where.text if where is not None and where.terms else ''}"
                    f"{_hint(store, g.selection)}")
        for rec in frame[["run_id", "stored_at", "sweep_id", "record"]].itertuples(index=False):
            b = BenchmarkResult.from_dict(json.loads(rec.record))
            entries.append(Entry(b, rec.run_id or "?", (rec.stored_at or "")[:19] or None,
                                 None if missing(rec.sweep_id) else rec.sweep_id))
    hand = 0
    for g in groups:
        if g.results is None:
            continue
        hand += 1
        chosen = g.results
        if where is not None and where.terms:
            keep = where.mask(comparing.result_samples(g.results))
            chosen = [b for b, k in zip(g.results, keep) if k]
        if not chosen:
            raise errors.ResultsError(f"{g.label}: no benchmark left with --where {where.text}")
        entries += [Entry(b, f"in hand {hand}") for b in chosen]
    return entries


def _hint(store: Store, selection: Selection) -> str:
    """Where a bare word matched no run id: the runs it begins, or a tag or sweep of that name."""
    hints = []
    for column, values in selection.terms:
        if column != "run_id":
            continue
        for w in values:
            runs = store.query("SELECT DISTINCT run_id FROM benchmarks WHERE starts_with(run_id, ?) ORDER BY run_id "
                               "LIMIT 4", [w]).run_id.tolist()
            if len(runs) == 1:
                hints.append(runs[0])
            elif runs:
                hints.append(f"one of {', '.join(runs[:3])}{' ...' if len(runs) > 3 else ''}")
            if not store.query("SELECT 1 FROM benchmarks WHERE list_contains(tags, ?) LIMIT 1", [w]).empty:
                hints.append(f"tag:{w}")
            if not store.query("SELECT 1 FROM benchmarks WHERE sweep_id = ? LIMIT 1", [w]).empty:
                hints.append(f"sweep:{w}")
    if hints:
        return f" (did you mean {' or '.join(hints)}?)"
    return "; `kvlab results list` shows the stored runs and their tags"


def comparison(sides, where, store, threshold, explicit):
    """(kvlab.compare's frame, None), or (None, why not) for two groups that do not match (an error when the
    comparison was asked for by name)."""
    values = [g.results if g.results is not None else g.label for g in sides]
    try:
        frame = comparing.compare(values[0], values[1], where=where.text if where is not None else None, store=store,
                                  threshold=threshold)
    except errors.ResultsError as exc:
        if explicit:
            raise
        return None, f"the two groups are not compared: {exc}"
    frame.attrs["a"], frame.attrs["b"] = sides[0].label, sides[1].label
    return frame, None
