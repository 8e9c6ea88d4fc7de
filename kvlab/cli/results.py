"""`kvlab results list|export|sweeps|compare`: the results store, listed for a reader, exported for a tool,
or two groups of its results compared (medians, intervals of the medians, Mann-Whitney U, a verdict)."""
from __future__ import annotations

import json
import re
import shlex
import sys
import uuid

from .. import errors
from ..results import store as stored
from ..results.formatting import change_text, missing, p_text
from ..results.store import Store
from . import output
from .parsing import UsageError, add_store_option, amount, count, given

NAME = "results"
HELP = "list, export or compare stored results, or list the stored sweeps"


def _filters(p):
    g = p.add_argument_group("which results")
    g.add_argument("--engine", default=None, metavar="NAME", help="only this engine configuration")
    g.add_argument("--workload", default=None, metavar="NAME", help="only this workload")
    g.add_argument("--run-id", default=None, metavar="ID", help="only this run (the id `stored as run ...` printed)")
    g.add_argument("--tag", default=None, metavar="TAG", help="only results stored with this --tag")
    g.add_argument("--sweep", default=None, metavar="NAME",
                   help="one sweep's tidy frame instead: axes as columns, medians and intervals across repeats")


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=HELP)
    actions = r.add_subparsers(dest="action", required=True, metavar="ACTION")
    ls = make(actions, "list", help="stored results as a table", description="stored results as a table")
    _filters(ls)
    add_store_option(ls)
    ex = make(actions, "export", help="stored results to a CSV or Parquet file (read back by pandas or DuckDB)",
              description="stored results to a CSV or Parquet file, written by DuckDB (no pyarrow needed)")
    ex.add_argument("--out", required=True, metavar="FILE", help="the file to write (.csv or .parquet)")
    ex.add_argument("--format", default=None, choices=tuple(stored.FORMATS),
                    help="file format (default: the one --out's suffix names)")
    ex.add_argument("--table", default="benchmarks", choices=("benchmarks", "intervals"),
                    help="benchmarks: one row per benchmark; intervals: the time series (default benchmarks)")
    _filters(ex)
    add_store_option(ex)
    sw = make(actions, "sweeps", help="the stored sweeps and how many of their points are done",
              description="the stored sweeps and how many of their points are done")
    add_store_option(sw)
    _compare_parser(actions, make)
    return r


COMPARE_HELP = "B against A: medians with intervals, change in %, Mann-Whitney p, a verdict per metric"
SIDE_HELP = ("a run id, tag:NAME, sweep:NAME, run:ID, or KEY=VALUE terms (engine=lmdb,workload=readrandom; "
             "'|' between alternatives: threads=1|2), joined by ','")


def _compare_parser(actions, make):
    from ..results import compare
    c = make(actions, "compare", help=COMPARE_HELP,
             description=COMPARE_HELP + ". Benchmarks are matched by workload, phase and threads; the repeats, "
             "trials and runs of one side with the same key are its samples. '~' means no significant change: "
             "p >= 0.05, fewer than 3 samples a side, or a change below the noise floor (--threshold, or the "
             "floor `kvlab noise` measured for the benchmark's host, engine, workload and threads, if larger). "
             "With --run, A and B are run here first, interleaved A B A B ..., and the comparison is over them.")
    c.add_argument("a", metavar="A", nargs="?", default=None, help="the baseline: " + SIDE_HELP)
    c.add_argument("b", metavar="B", nargs="?", default=None, help="compared against A: " + SIDE_HELP)
    c.add_argument("--where", default=None, metavar="TERMS",
                   help="terms both sides must also satisfy (engine=lmdb,workload=readrandom,phase=run)")
    c.add_argument("--threshold", type=amount(0, 1000), default=compare.THRESHOLD_PCT, metavar="PCT",
                   help=f"noise floor in percent: a smaller change is '~' whatever p says (default "
                        f"{compare.THRESHOLD_PCT:g})")
    c.add_argument("--metric", default=None, metavar="LIST",
                   help=f"only these metrics, comma list (default all: {', '.join(compare.BY_NAME)})")
    c.add_argument("--match", default=",".join(compare.MATCH), metavar="LIST",
                   help="the keys benchmarks are matched by, comma list (default workload,phase,threads; leave "
                        "threads out to compare 1 thread against 2)")
    c.add_argument("--json", default=None, metavar="FILE", help="also write the comparison's rows to FILE (JSON "
                   "records, one per benchmark and metric, and the geometric means)")
    c.add_argument("--no-noise-floor", action="store_true",
                   help="ignore the floors `kvlab noise` stored: only --threshold is the noise floor")
    add_store_option(c)
    g = c.add_argument_group("fair trials: run A and B here, interleaved")
    g.add_argument("--run", nargs=2, default=None, metavar="SPEC",
                   help="A's spec, then B's, run here instead of stored sides: each a `kvlab run` argument string "
                        "('--engine lmdb --workload readrandom --num 100000') or a stored run id whose spec is "
                        "reused; A B A B ..., each trial in a fresh database unless the spec gives --db; a side "
                        "without --seed takes the other's seed (the same keys)")
    g.add_argument("--repeat", type=count(1, 1000), default=None, metavar="N",
                   help=f"trials a side with --run (default {RUN_REPEAT}; 4 or more a side can reach p < 0.05)")
    g.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="with --run: label both sides' stored trials (repeatable); each side also gets "
                        "compare:ID:A or compare:ID:B")
    g.add_argument("--no-store", action="store_true",
                   help="with --run: keep the trials out of the store (compared in hand)")
    g.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                   help="with --run: live progress bar on stderr (auto: when stderr is a terminal)")
    g.add_argument("--quiet", "-q", action="store_true",
                   help="with --run: print no header and no line per trial, only warnings and the comparison")
    return c


RUN_REPEAT = 5
_RUN_ONLY = ("repeat", "tag", "no_store", "progress", "quiet")


def handle(args) -> int:
    store = Store(args.store)
    if args.action == "compare":
        return _compare(store, args)
    if args.action == "sweeps":
        return print_sweeps(store)
    if args.sweep:
        return _sweep(store, args)
    filters = {k: getattr(args, k) for k in ("engine", "workload", "run_id") if getattr(args, k)}
    if not store.path.exists():
        raise errors.ResultsError(f"no results store at {store.path}")
    if args.action == "export":
        fmt = args.format or stored.format_of(args.out)
        if fmt is None:
            raise errors.SpecError(f"--out {args.out}: the name says no format; give --format csv or --format "
                                   "parquet, or a name ending in .csv or .parquet")
        path = store.export(args.out, fmt, args.table, **filters, tag=args.tag)
        print(f"exported to {path} ({fmt})")
        return 0
    if args.tag:
        filters["tag"] = args.tag
    rows = _listing(store, filters)
    if not rows:
        print("no stored results" + (" match" if filters else "") + f" in {store.path}")
        return 0
    output.table(rows, LIST_COLUMNS, legend=LIST_LEGEND)
    return 0


LIST_COLUMNS = [
    ("run_id", "run", "<"), ("stored", "stored", "<"), ("engine", "engine", "<"), ("workload", "workload", "<"),
    ("phase", "phase", "<"), ("num", "num", ">"), ("value_size", "value B", ">"), ("threads", "thr", ">"),
    ("trial", "trial", ">"), ("ops_per_sec", "ops/s", ">"), ("p50", "p50", ">"), ("p99", "p99", ">"),
    ("p999", "p99.9", ">"), ("unit", "latency", "<"), ("write_amp", "W-amp", ">"), ("read_amp", "R-amp", ">"),
    ("space_amp", "S-amp", ">"), ("settings", "settings", "<"), ("partial", "partial", "<"), ("tags", "tags", "<"),
]
LIST_LEGEND = ("  p50 ... p99.9 in microseconds per op (or per batch, where latency says so); W-amp: the process's "
               "storage writes / keys and values written; R-amp: device block reads per read op; S-amp: allocated "
               "size / live keys and values ('-': none); partial: stopped early")


def _listing(store, filters) -> list:
    """One row per stored benchmark, with what tells runs apart (num, value size, settings, tags)."""
    rows = []
    for r in store.frame(**filters).to_dict("records"):
        rows.append({**r, "stored": str(r["stored_at"])[:16], "p50": r["p50_us"], "p99": r["p99_us"],
                     "p999": r["p999_us"], "unit": f"us/{r['latency_unit'] or 'op'}",
                     "settings": r["engine_settings"] or "-", "partial": "PARTIAL" if r["partial"] else "",
                     "tags": ",".join(r["tags"] if r["tags"] is not None else ())})
    return rows


def _frame_text(df) -> str:
    """A frame as a table of readable numbers: magnitudes, thousands separators, never scientific notation."""
    rows = df.to_dict("records")
    columns = [(c, c, "<" if any(isinstance(r[c], str) for r in rows) else ">") for c in df.columns]
    import io
    buf = io.StringIO()
    output.table(rows, columns, out=buf)
    return buf.getvalue().rstrip()


def _sweep(store, args) -> int:
    """`kvlab results list|export --sweep NAME`: the sweep's tidy frame, printed or written."""
    from ..results.sweeps import interval_columns, tidy
    df = tidy(store, args.sweep)
    if args.action == "export":
        path = stored.write_frame(df, args.out, args.format)
        print(f"exported the tidy frame of sweep {args.sweep} to {path}")
        return 0
    # the terminal gets throughput and p99 with the intervals of their medians; export has every metric
    shown = [m for m in ("ops_per_sec", "p99_us", "txn_per_sec") if m in df.columns]
    hidden = {c for m in df.columns for c in (m, *interval_columns(m))
              if f"{m}_ci95_lo" in df.columns and m not in shown} | \
             {c for m in shown for c in interval_columns(m)}
    keys = [c for c in df.columns if c not in hidden and c not in shown and c != "hosts"]
    rows, columns = [], [(c, c, "<" if df[c].map(lambda v: isinstance(v, str)).any() else ">") for c in keys]
    for m in shown:
        columns += [(m, m, ">"), (f"{m} interval", f"{m}: median's interval", ">")]
    columns.append(("hosts", "hosts", "<"))
    from ..results.stats import interval_text
    for rec in df.to_dict("records"):
        row = {c: rec[c] for c in keys + ["hosts"] + shown}
        for m in shown:
            lo, hi, level = (rec[c] for c in interval_columns(m))
            summary = {"n": rec["repeats"], "median_ci": None if missing(lo) else [lo, hi],
                       "median_ci_level": None if missing(level) else level}
            row[f"{m} interval"] = interval_text(summary, output.num)
        rows.append(row)
    output.table(rows, columns, legend="  medians across repeats; interval: the median's (exact order statistics: 95% "
                 "or more from 6 repeats; with 3-5 the min-max range, its confidence in brackets; none below 3)")
    return 0




# --- kvlab results compare ------------------------------------------------------------------------

def _compare(store, args) -> int:
    from ..results import compare
    from ..results.result import write_json_atomic
    if args.run is None:
        if args.a is None or args.b is None:
            raise UsageError("results compare: A and B missing: give two sides (" + SIDE_HELP + "), or --run "
                             "SPEC_A SPEC_B to run them here")
        stray = [k for k in _RUN_ONLY if given(args, k) or (k == "tag" and args.tag)]
        if stray:
            raise UsageError(f"results compare: --{stray[0].replace('_', '-')} goes with --run SPEC_A SPEC_B (it "
                             "says how to run the sides); stored sides are compared as they are")
    elif args.a is not None:
        raise UsageError("results compare: give stored sides A B or --run SPEC_A SPEC_B, not both")
    if args.json:
        from .common import check_output_file
        check_output_file(args.json, "--json")
    metrics = [m.strip() for m in args.metric.split(",") if m.strip()] if args.metric else None
    match = [k.strip() for k in args.match.split(",") if k.strip()]
    for m in metrics or ():   # before anything runs
        if m not in compare.BY_NAME:
            raise errors.SpecError(f"metric {m!r} is unknown; allowed: {', '.join(compare.BY_NAME)}")
    sides, code = (args.a, args.b), 0
    if args.run is not None:
        sides, code = _run_sides(store, args)
    floors = None if args.no_noise_floor else StoredFloors(store)
    frame = compare.compare(*sides, where=args.where, store=store, threshold=args.threshold, metrics=metrics,
                            match=match, noise_floor=floors)
    if floors is not None:
        frame.attrs["notes"] = [*frame.attrs.get("notes", []), *floors.notes(frame)]
    if args.run is not None:
        print()
    print_comparison(frame)
    if args.json:
        write_json_atomic(args.json, compare.records(frame))
        print(f"comparison written to {args.json}")
    return code


# --- fair trials: kvlab results compare --run SPEC_A SPEC_B ---------------------------------------

def _run_sides(store, args) -> tuple:
    """Run A and B interleaved (A B A B ...), each trial stored as it ends with the tags compare:ID:A or :B
    and the user's; returns the two sides to compare (the tags, or the results in hand with --no-store) and
    the exit code (130 when stopped part-way)."""
    from ..execution.interleave import run_interleaved
    from . import common
    (spec_a, tags_a, seed_a), (spec_b, tags_b, seed_b) = (_side_spec(store, text, f"--run {side}")
                                                          for text, side in zip(args.run, ("SPEC_A", "SPEC_B")))
    shared = None
    if seed_b is None:
        spec_b, shared = spec_b.replace(seed=spec_a.seed), spec_a.seed
    elif seed_a is None:
        spec_a, shared = spec_a.replace(seed=spec_b.seed), spec_b.seed
    repeat = args.repeat or RUN_REPEAT
    label = f"compare:{uuid.uuid4().hex[:8]}"
    tags = {"A": [f"{label}:A", *args.tag, *tags_a], "B": [f"{label}:B", *args.tag, *tags_b]}
    args.tag = list(dict.fromkeys([*args.tag, *tags_a, *tags_b, *tags["A"][:1], *tags["B"][:1]]))
    for spec in (spec_a, spec_b):
        common.preflight(args, spec.db, spec.use_existing_db)
    common.say(args, f"kvlab results compare --run: {repeat} trial{'s' if repeat > 1 else ''} a side, interleaved "
                     f"A B A B ...; trials tagged {label}:A and {label}:B",
               f"  A: {_describe(spec_a)}", f"  B: {_describe(spec_b)}")
    if shared is not None:
        common.say(args, f"  one seed for both sides, {shared} (the same keys in the same order)")
    stored = {"A": [], "B": []}

    def line(side, b):
        if not args.quiet:
            print(f"{side} {b.trial + 1}/{repeat}  {output.format_line(b)}", flush=True)

    def keep(side, i, result):
        for b in result:
            b.tags = list(dict.fromkeys([*b.tags, *tags[side]]))
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


BUSY = "machine busy at the start: other processes"   # kvlab.execution.system's warning, whichever they were


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
            f"{', db=' + str(spec.db) if spec.db else ''}")


# options of `kvlab run` that belong to the comparison, not to a side
_NOT_IN_SPEC = {"json": "--json (the comparison's rows, an option of results compare)",
                "store": "--store (one store for both sides, an option of results compare)",
                "no_store": "--no-store (an option of results compare)", "progress": "--progress",
                "quiet": "--quiet", "repeat": "--repeat N after --run (the trials of both sides)"}


def _side_spec(store, text: str, what: str) -> tuple:
    """(RunSpec, the side's own --tag values, its --seed or None) from a `kvlab run` argument string, or a
    stored run's spec from its id."""
    from . import run
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
    from . import run
    from .parsing import Parser
    p = Parser(prog="kvlab")
    sub = p.add_subparsers(dest="command", required=True)
    run.add_parser(sub, lambda s, name, **kw: s.add_parser(name, **kw))
    return p


def _stored_spec(store, run_id: str, what: str):
    """The spec a stored run ran (a unique prefix of its id does), in a fresh temporary database unless it
    reused one (--use-existing-db)."""
    from ..model.spec import RunSpec
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


class StoredFloors:
    """kvlab.compare's noise_floor hook over the floors `kvlab noise` stored: for a matched benchmark, the
    largest stored spread of the metric among its hosts and engines (the latest floor of each), or None."""

    def __init__(self, store):
        self.store, self.found = store, {}

    def __call__(self, metric: str, key: dict):
        if key.get("workload") is None or key.get("threads") is None:
            return None   # matched without them (--match): no floor is about such a pair
        best = None
        for host in key.get("hosts") or ():
            for engine in key.get("engines") or ():
                got = self._floor(host, engine, key["workload"], int(key["threads"]), key.get("phase"))
                if got is not None and got.get(metric) is not None:
                    best = got[metric] if best is None else max(best, got[metric])
        return best

    def _floor(self, *k):
        if k not in self.found:
            self.found[k] = self.store.noise_floor(*k)
        return self.found[k]

    def notes(self, frame) -> list:
        """One line per stored floor the comparison used."""
        used = frame[frame.floor_source == "measured"] if "floor_source" in frame else frame.iloc[0:0]
        out = []
        for (host, engine, workload, threads, phase), got in self.found.items():
            if got is None or used[(used.workload == workload) & (used.threads == threads)].empty:
                continue
            spread = ", ".join(f"{m} {got[m]:.1f}%" for m in stored.NOISE_METRICS
                               if got.get(m) is not None and m in set(frame.metric))
            out.append(f"noise floor from `kvlab noise` ({got.get('n')} runs, {str(got.get('measured_at'))[:16]}) "
                       f"for {engine} {workload} {phase or ''} {threads} thr on {host}: {spread}; where it is "
                       "above --threshold it decides '~'")
        return out






def print_comparison(frame, out=None) -> None:
    """benchstat's layout: the two sides, then one table per metric (a row per matched benchmark, then the
    geometric mean), the legend and the notes."""
    import sys

    from ..results import compare, stats
    out = out or sys.stdout
    attrs = frame.attrs
    for side in ("a", "b"):
        engines = ", ".join(attrs.get(f"{side}_engines", [])) or "-"
        runs = attrs.get(f"{side}_runs")
        print(f"{side.upper()}: {attrs.get(side)}  ({'' if runs is None else f'{output.num(runs)} runs, '}"
              f"{output.num(attrs.get(f'{side}_benchmarks'))} benchmarks; {engines})", file=out)
    match = attrs.get("match", list(compare.MATCH))
    below_level, cannot_reach, too_few = set(), set(), set()
    for m in compare.METRICS:
        part = frame[frame.metric == m.name]
        if part.empty:
            continue
        rows = []
        for rec in part.to_dict("records"):
            geomean = rec["workload"] == "geomean" and not missing(rec.get("geomean_of"))
            name = f"geomean of {rec['geomean_of']}" if geomean else \
                compare.key_text({k: rec.get(k) for k in match if k in rec})
            row = {"benchmark": name, "a": rec["a_median"], "b": rec["b_median"],
                   "change": change_text(rec["change_pct"]), "a_ci": "", "b_ci": "", "p": "", "n": "",
                   "verdict": ""}
            if not geomean:
                for side in ("a", "b"):
                    s = {"n": int(rec[f"{side}_n"]), "median_ci_level": rec[f"{side}_ci_level"],
                         "median_ci": None if missing(rec[f"{side}_ci_lo"]) else
                         [rec[f"{side}_ci_lo"], rec[f"{side}_ci_hi"]]}
                    row[f"{side}_ci"] = _short_interval(s)
                    if s["median_ci"] and s["median_ci_level"] < attrs.get("level", stats.LEVEL):
                        below_level.add(s["n"])
                    if s["n"] < stats.MIN_SAMPLES:
                        too_few.add(s["n"])
                row["p"] = p_text(rec["p_value"])
                row["n"] = f"{int(rec['a_n'])}/{int(rec['b_n'])}"
                row["verdict"] = rec["verdict"]
                if not missing(rec.get("min_p")) and rec["min_p"] >= attrs.get("alpha", compare.ALPHA):
                    cannot_reach.add((int(rec["a_n"]), int(rec["b_n"]), rec["min_p"]))
            rows.append(row)
        print(file=out)
        print(f"{m.label}, {'higher' if m.higher_is_better else 'lower'} is better", file=out)
        columns = [("benchmark", "benchmark", "<"), ("a", "A median", ">"),
                   ("a_ci", "A: median's 95% CI", ">"), ("b", "B median", ">"), ("b_ci", "B: median's 95% CI", ">"),
                   ("change", "change", ">"), ("p", "p", ">"), ("n", "n A/B", ">"), ("verdict", "verdict", "<")]
        output.table(rows, columns, out=out)
    alpha, threshold = attrs.get("alpha", compare.ALPHA), attrs.get("threshold_pct", compare.THRESHOLD_PCT)
    measured = ", or the one `kvlab noise` measured where larger: see the notes" \
        if "floor_source" in frame and (frame.floor_source == "measured").any() else ""
    print(file=out)
    print(f"  median: of each side's samples; 95% CI: the median's interval (exact order statistics); change: B's "
          f"median against A's; p: two-sided Mann-Whitney U; ~: p >= {alpha:g}, no p, or |change| < the noise floor "
          f"({threshold:g}%, --threshold{measured})", file=out)
    for n in sorted(below_level):
        level = 1 - 2 / 2 ** n
        print(f"  ({stats._percent(level)}): with {n} samples no interval reaches 95%; the min-max range is a "
              f"{stats._percent(level)} interval of the median ({stats.samples_for()} samples give 95%)", file=out)
    for n in sorted(too_few):
        print(f"  n={n}: no interval and no p-value below {stats.MIN_SAMPLES} samples a side", file=out)
    for na, nb, smallest in sorted(cannot_reach):
        print(f"  n={na}/{nb}: the smallest p these sizes can give is {smallest:.3f}, so no change can be "
              f"significant at {alpha:g}; run more samples", file=out)
    for note in attrs.get("notes", []):
        print(f"  note: {note}", file=out)


def _short_interval(s) -> str:
    """A table cell: 'lo .. hi', 'lo .. hi (75%)' below 95%, or 'n=2: no interval'."""
    from ..results.stats import _percent, interval_text
    text = interval_text({**s, "median_ci_level": 1.0}, output.num)   # the level, if below, comes after
    level = s.get("median_ci_level")
    if s.get("median_ci") and level is not None and level < 0.95:
        text += f" ({_percent(level)})"
    return text


def print_sweeps(store) -> int:
    """The stored sweeps, one row each (`kvlab results sweeps`, `kvlab sweep list`)."""
    if not store.path.exists():
        print(f"no results store at {store.path}")
        return 0
    from ..results import sweeps
    frame = sweeps.list_sweeps(store)
    print("no sweeps stored" if frame.empty else _frame_text(frame))
    return 0
