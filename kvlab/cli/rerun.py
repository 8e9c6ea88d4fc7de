"""`kvlab rerun RUN_ID [--set KEY=VALUE ...]`: a stored run again, exactly, then beside the original.

The spec comes from the records' provenance (RunSpec.from_dict: every field, the seed, the engine settings
asked for, each mix's definition as data), so the rerun draws the same key stream; the key encoding is
checked against this build's.  `--set` changes run fields or engine settings (validated as any spec).
The rerun is stored with the tag rerun-of:RUN_ID; each benchmark is paired with the original's (same keys?),
then compared as `kvlab results compare` does (A: the original, B: the rerun).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path

from .. import engines, errors
from ..execution import native
from ..execution.dbfiles import jobdir
from ..execution.run.runner import run_spec
from ..model.spec import RunSpec
from ..results import compare
from ..results.result import RunResult
from ..results.store import Store
from . import common, output
from .parsing import UsageError, _did_you_mean, add_running_options
from .results import print_comparison

NAME = "rerun"
HELP = "run a stored run again, exactly (its spec, seed, settings and workload definitions), and compare"
DESCRIPTION = """Run a stored run again, exactly: its spec, seed, engine settings and workload definitions as
recorded, so the same keys are drawn in the same order; then print it beside the original (the same keys
found?) and compared with it as `kvlab results compare RUN_ID ...` does.  --set changes a run field or an \
engine setting.  The rerun is stored with the tag rerun-of:RUN_ID.
A run that reused a database (--use-existing-db) reruns on that database as it is now; any other runs in a
temporary directory unless --db is given."""

# run fields --set does not take: each has its own option, or no scalar form
_NOT_SET = {"db": "--db DIR", "keep_db": "--db DIR (a --db directory is kept)", "overwrite": "--overwrite",
            "engine_settings": "--set KEY=VALUE with the setting's own name (cache_size, sync, ...)",
            "mixes": "nothing: a mix is rerun as recorded"}
_FIELDS = {f.name: f for f in dataclasses.fields(RunSpec)}


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=DESCRIPTION)
    r.add_argument("run_id", metavar="RUN_ID", help="the stored run (the id `stored as run ...` printed; "
                   "`kvlab results list` shows them); a unique prefix does")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="change a run field (num, reads, threads, duration, value_size, seed, warmup, ...) or an "
                        f"engine setting ({', '.join(engines.ENGINE_SETTINGS)}); repeatable")
    add_running_options(r, db_help="database directory, kept after the run (default: the original's if it reused "
                                   "one, else a temporary one, removed)", seed=False)
    return r


def handle(args) -> int:
    store = Store(args.store)
    run_id, original = load_run(store, args.run_id)
    specs = stored_specs(run_id, original)
    check_key_encoding(run_id, original)
    changes, notes = overrides(args.set), []
    with contextlib.ExitStack() as folders:
        moved = {}
        shared = shared_dbs(specs) if args.db is None else set()
        if shared:   # kvlab compare's: loaded once in its job folder (gone with the job), each point reopening it
            folder = folders.enter_context(jobdir.job_folder("kvlab-rerun-"))
            moved = {d: str(folder / Path(d).name) for d in shared}
            notes.append(f"the original loaded {len(shared)} database{'s' if len(shared) > 1 else ''} once and "
                         "reused them (a kvlab compare job's folder, gone with it); this rerun loads them again in "
                         f"a folder of its own, {folder}, removed after")
        return _rerun(args, store, run_id, original, specs, changes, notes, moved)


def shared_dbs(specs) -> set:
    """The databases a run loaded and later reopened (use_existing_db), which a rerun must load again as one."""
    loaded = {s.db for s, _ in specs if s.db is not None and not s.use_existing_db}
    return {s.db for s, _ in specs if s.use_existing_db and s.db in loaded}


def _rerun(args, store, run_id, original, specs, changes, notes, moved) -> int:
    new_specs = [rebuild(spec, changes, args, notes, moved) for spec, _ in specs]
    args.tag = list(dict.fromkeys([*(args.tag or ()), f"rerun-of:{run_id}"]))
    for spec in new_specs:   # a moved database is made by the rerun's own load first
        common.preflight(args, spec.db, spec.use_existing_db and spec.db not in moved.values())
    first = original[0]
    common.say(args, f"kvlab rerun of run {run_id} ({first.started_at}): " + "; ".join(
        f"{s.engine}, {','.join(s.workloads)}, num={s.num:,}, threads={s.threads}, seed={s.seed}" for s in new_specs)
        + (f"; changed: {', '.join(f'{k}={v!r}' for k, v in changes.items())}" if changes else ""))
    for n in notes:
        common.say(args, f"  note: {n}")
    benchmarks = []
    for spec, (_, load_only) in zip(new_specs, specs):
        benchmarks += list(run_spec(spec, on_result=lambda b: common.print_result(b, args),
                                    control=common.progress_control(args), load_only=load_only))
    result = RunResult(benchmarks, new_specs[0] if len(new_specs) == 1 else None)
    common.report(result, args)
    print()
    print_against_original(original, result, run_id, store)
    return common.finish(result, args)


def load_run(store: Store, given: str):
    """(run id, its records in the order they ran); a unique prefix of an id does."""
    if not store.path.exists():
        raise errors.ResultsError(f"no results store at {store.path}; give --store PATH (or set KVLAB_RESULTS)")
    records = store.load(run_id=given)
    if len(records):
        return given, records
    like = given.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    ids = list(store.query("SELECT DISTINCT run_id FROM benchmarks WHERE run_id LIKE ? ESCAPE '\\' ORDER BY run_id",
                           [like]).run_id)
    if len(ids) == 1:
        return ids[0], store.load(run_id=ids[0])
    if ids:
        raise errors.ResultsError(f"run id {given!r} is ambiguous in {store.path}: {', '.join(ids[:6])}"
                                  f"{' ...' if len(ids) > 6 else ''}; give more of it")
    raise errors.ResultsError(f"no run {given!r} in {store.path}; `kvlab results list` shows the stored runs "
                              "(--store PATH for another store)")


def stored_specs(run_id: str, records) -> list:
    """(spec, load only) for each distinct spec of a run's records, in the order they ran (kvlab compare stores
    several as one run); load only: the spec recorded nothing but its load phase (kvlab ycsb -load)."""
    seen = {}
    for b in records:
        d = (b.provenance or {}).get("spec")
        if d is None:
            raise errors.ResultsError(f"run {run_id}: {b.workload} has no stored spec (recorded by a kvlab before "
                                      "provenance, schema kvlab.result/1), so it cannot be rerun exactly")
        seen.setdefault(json.dumps(d, sort_keys=True), (d, []))[1].append(b.phase)
    return [(RunSpec.from_dict(d), all(p == "load" for p in phases)) for d, phases in seen.values()]


def check_key_encoding(run_id: str, records) -> None:
    """The keys a seed draws are written in the build's key encoding: another one is another key stream."""
    ours = native.load().KEY_ENCODING
    theirs = {b.key_encoding for b in records}
    if theirs - {ours}:
        raise errors.SpecError(f"run {run_id} was measured with key encoding {', '.join(sorted(theirs))}; this "
                               f"kvlab writes {ours}, so its keys would differ: it cannot be rerun exactly here")


def overrides(items) -> dict:
    """--set KEY=VALUE items as {run field or engine setting: value}, each value parsed by its field's type."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        key, text = key.strip().replace("-", "_"), text.strip()
        if not sep or not key:
            raise UsageError(f"--set {item!r}: expected KEY=VALUE")
        if key in _NOT_SET:
            raise UsageError(f"--set {key}: not set this way; use {_NOT_SET[key]}")
        if key in out:
            raise UsageError(f"--set {key} was given twice; give it once")
        if key in engines.ENGINE_SETTINGS:
            out[key] = engines.parse_setting(f"{key}={text}", "--set")[1]
        elif key in _FIELDS:
            out[key] = _field_value(key, text, item)
        else:
            allowed = [k for k in _FIELDS if k not in _NOT_SET] + list(engines.ENGINE_SETTINGS)
            raise UsageError(f"--set {item!r}: {key!r} is no run field or engine setting"
                             f"{_did_you_mean(key, allowed)}; allowed: {', '.join(allowed)}")
    return out


def _field_value(key: str, text: str, item: str):
    kind = str(_FIELDS[key].type).replace(" ", "")
    if "None" in kind.split("|") and text.lower() in ("none", "null", ""):
        return None
    base = kind.split("|")[0]
    try:
        if base == "bool":
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return text.lower() in ("true", "1", "yes")
        if base == "int":
            return int(text.replace("_", "").replace(",", ""))
        if base == "float":
            return float(text)
        if base == "tuple":
            return tuple(w.strip() for w in text.split(",") if w.strip())
        return text
    except ValueError:
        what = {"bool": "true or false", "int": "an integer", "float": "a number"}[base]
        raise UsageError(f"--set {item!r}: {key} takes {what}, got {text!r}") from None


def rebuild(spec: RunSpec, changes: dict, args, notes: list, moved: dict | None = None) -> RunSpec:
    """The stored spec with the changes and the database this rerun uses (`moved`: a database the run loaded and
    reused, to its place in the rerun's own folder); validated as any spec."""
    fields = {k: v for k, v in changes.items() if k in _FIELDS}
    settings = {k: v for k, v in changes.items() if k not in _FIELDS}
    if settings:
        fields["engine_settings"] = {**spec.engine_settings, **settings}
    if args.db is not None:
        fields.update(db=args.db, keep_db=True, overwrite=bool(getattr(args, "overwrite", False)))
    elif moved and spec.db in moved:
        fields.update(db=moved[spec.db], keep_db=True, overwrite=False)
    elif spec.use_existing_db:
        notes.append(f"the original reused the database in {spec.db}: this rerun reads it as it is now")
    elif spec.db is not None:
        notes.append(f"the original ran in {spec.db}; this rerun uses a temporary directory (--db DIR to choose)")
        fields.update(db=None, keep_db=False, overwrite=False)
    try:
        return spec.replace(**fields)
    except errors.SpecError as exc:
        raise errors.SpecError(f"--set: {exc}") from None
    except TypeError as exc:   # a value of the wrong shape for a field RunSpec does not check itself
        raise errors.SpecError(f"--set: {exc}") from None


def pairs(original, rerun) -> list:
    """(original, rerun) benchmarks matched by engine, workload, phase, threads, trial and their order."""
    def keyed(results):
        seen, out = {}, {}
        for b in results:
            k = (b.engine, b.workload, b.phase, b.threads, b.trial)
            seen[k] = seen.get(k, -1) + 1
            out[(*k, seen[k])] = b
        return out
    a, b = keyed(original), keyed(rerun)
    return [(a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b])]


def _found(b):
    if b is None or b.found is None:
        return None
    return f"{b.found:,}" if b.not_found is None else f"{b.found:,}/{b.not_found:,}"


def print_against_original(original, rerun, run_id: str, store: Store) -> None:
    """The key stream (ops, found and not found of each benchmark against the original's), then the
    comparison of `kvlab results compare` (A: the original, B: the rerun), then what changed beneath them."""
    rows, notes = [], []
    for a, b in pairs(original, rerun):
        x = a or b
        same = a is not None and b is not None and (a.ops, a.found, a.not_found) == (b.ops, b.found, b.not_found)
        rows.append({"workload": x.workload, "phase": x.phase, "threads": x.threads, "ops_a": a.ops if a else None,
                     "ops_b": b.ops if b else None, "found_a": _found(a), "found_b": _found(b),
                     "same": "yes" if same else "no"})
        if a is not None and b is not None:
            ca = (a.provenance or {}).get("engine_config_effective")
            cb = (b.provenance or {}).get("engine_config_effective")
            if ca != cb:
                notes.append(f"{x.workload}: the engine configuration in effect differs: {ca} -> {cb}")
            va, vb = a.versions or {}, b.versions or {}
            moved = [f"{k} {va.get(k)} -> {vb.get(k)}" for k in ("engine_library", "kvlab", "git_commit")
                     if va.get(k) != vb.get(k)]
            if moved:
                notes.append(f"the rerun ran with {', '.join(moved)}")
    print(f"the rerun's keys against the original's (run {run_id}):")
    output.table(rows, [("workload", "workload", "<"), ("phase", "phase", "<"), ("threads", "threads", ">"),
                        ("ops_a", "ops", ">"), ("ops_b", "ops now", ">"), ("found_a", "found", ">"),
                        ("found_b", "found now", ">"), ("same", "same keys", ">")],
                 legend="  found: keys found (/not found) among the reads; same keys: the same ops and found/not-found "
                        "counts as the original (one key stream); a timed run's counts follow its speed")
    for n in dict.fromkeys(notes):
        print(f"  note: {n}")
    # one engine a side, or the same several (a kvlab compare run): matched by engine too
    engines_a, engines_b = {b.engine for b in original}, {b.engine for b in rerun}
    match = ("engine", *compare.MATCH) if len(engines_a) > 1 and engines_a == engines_b else compare.MATCH
    print()
    try:
        print_comparison(compare.compare(run_id, rerun, store=store, match=match))
    except errors.KvlabError as exc:   # the rerun is still stored: a comparison that cannot be made is said
        print(f"  no comparison: {exc}")
