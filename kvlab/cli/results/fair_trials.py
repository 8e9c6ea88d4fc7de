"""`kvlab results compare --run SPEC_A SPEC_B`: fair trials, A and B run here interleaved (A B, B A, ...), each
side a `kvlab run` argument string or a stored run whose spec is reused; their warnings said once."""
from __future__ import annotations

import dataclasses
import json
import re
import shlex
import sys
import uuid

from ... import errors
from .. import output
from ..parsing import UsageError, given

RUN_REPEAT = 5


def run_sides(store, args) -> tuple:
    """Run A and B interleaved (A B, B A, ...), each trial stored as it ends with the tags compare:ID:A or :B
    and the user's; returns the two sides to compare (the tags, or the results in hand with --no-store) and
    the exit code (130 when stopped part-way)."""
    from ...execution.orchestration.interleave import run_interleaved
    from .. import common
    (spec_a, tags_a, seed_a), (spec_b, tags_b, seed_b) = (_side_spec(store, text, f"--run {side}")
                                                          for text, side in zip(args.run, ("SPEC_A", "SPEC_B")))
    shared = None
    if seed_b is None:
        spec_b, shared = spec_b.replace(seed=spec_a.seed), spec_a.seed
    elif seed_a is None:
        spec_a, shared = spec_a.replace(seed=spec_b.seed), spec_b.seed
    repeat = args.repeat or RUN_REPEAT
    from ...results import compare, stats
    cannot = stats.reach_text(repeat, repeat, compare.ALPHA)
    if cannot:   # said before any trial is spent
        print(f"warning: --repeat {repeat}: {cannot}; give --repeat {stats.fewest_per_side(compare.ALPHA) + 1} or "
              "more for a verdict", file=sys.stderr)
    label = f"compare:{uuid.uuid4().hex[:8]}"
    tags = {"A": [f"{label}:A", *args.tag, *tags_a], "B": [f"{label}:B", *args.tag, *tags_b]}
    args.tag = list(dict.fromkeys([*args.tag, *tags_a, *tags_b, *tags["A"][:1], *tags["B"][:1]]))
    for spec in (spec_a, spec_b):
        common.preflight(args, spec.db, spec.use_existing_db)
    common.say(args, f"kvlab results compare --run: {repeat} trial{'s' if repeat > 1 else ''} a side, interleaved "
                     f"A B, B A, A B ...; trials tagged {label}:A and {label}:B",
               f"  A: {_describe(spec_a)}", f"  B: {_describe(spec_b)}")
    if shared is not None:
        common.say(args, f"  one seed for both sides, {shared} (the same keys in the same order)")
    stored = {"A": [], "B": []}

    def line(side, b):
        if not args.quiet:
            print(f"{side} {b.trial + 1}/{repeat}  {output.format_line(b)}", flush=True)

    def keep(side, i, result):
        result.benchmarks = [dataclasses.replace(b, tags=list(dict.fromkeys([*b.tags, *tags[side]])))
                             for b in result]   # new records: the workers' are never changed
        if not args.no_store:
            stored[side].append(store.append(result))

    a, b = run_interleaved(spec_a, spec_b, repeat, on_result=line, on_trial=keep,
                           control=common.progress_control(args), label=label)
    print_trial_warnings([*a, *b])
    partial = any(x.partial for x in (*a, *b))
    if not args.no_store:
        common.say(args, f"stored {len(stored['A'])} + {len(stored['B'])} runs in {store.path} (tags {label}:A, "
                         f"{label}:B)")
    if partial:
        print(f"kvlab: stopped part-way: A ran {len({x.trial for x in a})} trial(s), B {len({x.trial for x in b})}; "
              "the comparison is over what ended (partial phases left out)", file=sys.stderr)
    if not len(a) or not len(b):
        raise errors.ResultsError("stopped before both sides had run; nothing to compare")
    sides = (list(a), list(b)) if args.no_store else (f"tag:{label}:A", f"tag:{label}:B")
    return sides, 130 if partial else 0


BUSY = "machine busy at the start: other processes"   # kvlab.execution.host.system's warning, whichever they were


def print_trial_warnings(benchmarks, out=None) -> None:
    """The warnings of many trials, each kind once: warnings that differ only in their numbers (a load
    average, a duration), or name other busy processes, are one line, the first trial's, with how many trials
    said it (each trial's own are in its provenance and warnings)."""
    out = out or sys.stderr
    def trial(b):
        return ((b.provenance or {}).get("interleaved") or {}).get("side"), b.trial
    total = len({trial(b) for b in benchmarks})
    kinds = {}
    for b in benchmarks:
        for w in b.warnings:
            kind = BUSY if w.startswith(BUSY) else re.sub(r"[0-9][0-9.,]*", "#", w)
            kinds.setdefault(kind, (w, set()))[1].add(trial(b))
    for first, seen in kinds.values():
        said = f" (in {len(seen)} of {total} trials)" if total > 1 and len(seen) > 1 else ""
        print(f"warning: {first}{said}", file=out)


def _describe(spec) -> str:
    settings = ",".join(f"{k}={v}" for k, v in spec.engine_settings.items())
    return (f"{spec.engine}{' (' + settings + ')' if settings else ''}, {','.join(spec.workloads)}, "
            f"num={spec.num:,}, threads={spec.threads}, value_size={spec.value_size}, seed={spec.seed}"
            f"{', db=' + str(spec.db) if spec.db else ''}, "
            + (f"memory budget {spec.memory / 1048576:,.0f} MiB" if spec.memory else "engine defaults for memory"))


# options of `kvlab run` that belong to the comparison, not to a side
_NOT_IN_SPEC = {"json": "--json (the comparison's rows, an option of results compare)",
                "store": "--store (one store for both sides, an option of results compare)",
                "no_store": "--no-store (an option of results compare)", "progress": "--progress",
                "quiet": "--quiet", "repeat": "--repeat N after --run (the trials of both sides)"}


def _side_spec(store, text: str, what: str) -> tuple:
    """(RunSpec, the side's own --tag values, its --seed or None) from a `kvlab run` argument string, or a
    stored run's spec from its id."""
    from .. import run
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{what} {text!r}: {exc} (quote the whole spec once: --run '--engine lmdb ...' ...)") \
            from None
    if not words:
        raise UsageError(f"{what}: empty; allowed: `kvlab run` options ('--engine lmdb --workload readrandom') or "
                         "a stored run id")
    if len(words) == 1 and not words[0].startswith("-"):
        spec = _stored_spec(store, words[0].removeprefix("run:"), what)
        return spec, [], spec.seed
    try:
        ns = _run_parser().parse_args(["run", *words])
    except UsageError as exc:
        raise UsageError(f"{what} {text!r}: {str(exc).removeprefix('run: ')}") from None
    for dest, flag in _NOT_IN_SPEC.items():
        if given(ns, dest):
            raise UsageError(f"{what} {text!r}: {flag.split(' ')[0]} is not a side's option; give {flag}")
    try:
        spec = run.spec_from_args(ns)
    except errors.SpecError as exc:
        raise errors.SpecError(f"{what} {text!r}: {exc}") from None
    return spec, list(ns.tag), spec.seed if given(ns, "seed") else None


def _run_parser():
    """`kvlab run`'s own parser, alone (kvlab.cli.main's would import this module back)."""
    from .. import run
    from ..parsing import Parser
    p = Parser(prog="kvlab")
    sub = p.add_subparsers(dest="command", required=True)
    run.add_parser(sub, lambda s, name, **kw: s.add_parser(name, **kw))
    return p


def _stored_spec(store, run_id: str, what: str):
    """The spec a stored run ran (a unique prefix of its id does), in a fresh temporary database unless it
    reused one (--use-existing-db)."""
    from ...model.spec import RunSpec
    if not store.path.exists():
        raise errors.ResultsError(f"{what} {run_id!r}: no results store at {store.path} to find the run in")
    records = store.load(run_id=run_id)
    if not len(records):
        like = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        ids = list(store.query("SELECT DISTINCT run_id FROM benchmarks WHERE run_id LIKE ? ESCAPE '\\' "
                               "ORDER BY run_id", [like]).run_id)
        if len(ids) != 1:
            raise errors.ResultsError(
                f"{what} {run_id!r}: " + (f"ambiguous: {', '.join(ids[:6])}" if ids else
                                          f"neither `kvlab run` options (they start with --) nor a run id in "
                                          f"{store.path}"))
        records = store.load(run_id=ids[0])
    specs = {json.dumps((b.provenance or {}).get("spec"), sort_keys=True, default=str) for b in records}
    if len(specs) != 1 or "null" in specs:
        raise errors.ResultsError(f"{what} {run_id!r}: the run " + ("has no stored spec" if "null" in specs else
                                  f"ran {len(specs)} specs (kvlab compare stores several as one run)") +
                                  "; give its options as a `kvlab run` argument string instead")
    spec = RunSpec.from_dict(json.loads(specs.pop()))
    if spec.db is not None and not spec.use_existing_db:
        spec = spec.replace(db=None, keep_db=False)
    return spec
