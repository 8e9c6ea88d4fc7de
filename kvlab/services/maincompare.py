"""The main job (`kvlab compare`): engines loaded once each, then the same timed points run round-robin across
repeats, so that whatever drifts on a shared machine falls on every engine alike; the figures summarised per
engine and point (median, its interval), ranked with a significance test per gap, and the warnings of every
record said once per kind.

    plan = Plan(engines=("lmdb", "rocksdb"), num=200_000, threads=(1, 2), repeat=5, duration=2.0, warmup=0.5)
    seconds = estimate_seconds(plan, rates)            # before anything runs
    outcome = run_plan(plan, on_result=print)          # loads, then the rounds; the databases removed after
    rows = summarize(outcome.results)                  # one per engine and point (and its load)
    ranking = rank(rows)                               # per point: engines by median, each gap tested

Each engine's database lives in a directory this module makes (`kvlab-compare-XXXX` under $KVLAB_TMPDIR or the
temporary folder) and removes when the job ends, however it ends (an error, Ctrl-C); it never removes a directory
it did not make.  A point is one kvlab run on the loaded database (use_existing_db) for `duration` seconds with
the first `warmup` cut, so its figure covers at least sanity.MIN_SECONDS and comes after the engine opened,
not right after the load.
"""
from __future__ import annotations

import dataclasses
import math
import re
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import _signals as signals
from ..engines import VERSION_MARK as engines_mark
from ..execution.dbfiles import jobdir
from ..execution.orchestration import sweep as sweep_execution
from ..execution.run import runner
from ..model.spec import RunSpec
from ..results import blocks, sanity, stats
from ..results import compare as results_compare
from ..results.result import BenchmarkResult

READ = "readrandom"
LOAD = "fillseq"              # what a read workload's load phase runs
DURATION_S = 2.0              # a point's length: the warm-up cut plus at least sanity.MIN_SECONDS measured
WARMUP_S = 0.5
MEMORY = "1GiB"   # the default budget: the same for every engine, many times the data at the default --num
REPEAT = 5                    # 5 a side can reach p = 0.008 (4: 0.029; 3 cannot reach 0.05)
# opening the engine, the system checks, closing, accounting, the memory cgroup: per run, measured on the
# 2-core development VM (the eight engines' 88 runs of a default `kvlab compare`: 0.45 s a run on average, with
# other work on both cores; tiny runs 0.55 s)
RUN_OVERHEAD_S = 0.5
# a counted run (--metric instructions): valgrind's start-up with kvlab's imports, about 25 s on the development VM,
# and twice 20,000 gets (a pass that warms the cache, then the ranked one) at about 1/50 of their native speed
COUNT_RUN_S = 45.0
TEMP_PREFIX = "kvlab-compare-"


@dataclass(frozen=True)
class Point:
    """One measured point: a workload at a thread count (the load is `phase="load"`)."""
    workload: str
    threads: int
    phase: str = "run"

    def label(self) -> str:
        return f"{self.workload} load" if self.phase == "load" else f"{self.workload} {self.threads} thr"


@dataclass(frozen=True)
class Plan:
    engines: tuple
    num: int = 200_000
    threads: tuple = (1, 2)
    workloads: tuple = (READ,)       # each run at every thread count on the loaded database (`kvlab versions`)
    repeat: int = REPEAT
    duration: float = DURATION_S
    warmup: float = WARMUP_S
    seed: int = 0
    memory: int | None = None
    profile: bool = False             # each point's worker sampled with perf (RunSpec.profile)
    count: str | None = None          # --metric instructions: after the timed rounds, one counted run of each engine
                                      # at each point (RunSpec.count), `count_reads` gets a thread, ranked apart
    count_reads: int = 20_000
    label: str = field(default_factory=lambda: f"compare:{uuid.uuid4().hex[:8]}")

    @property
    def points(self) -> tuple:
        return tuple(Point(w, t) for w in self.workloads for t in self.threads)

    def load_spec(self, engine: str, db: str) -> RunSpec:
        return RunSpec(engine=engine, workloads=(READ,), num=self.num, seed=self.seed, db=db, memory=self.memory)

    def point_spec(self, engine: str, point: Point, db: str, repeat: int) -> RunSpec:
        # the same keys for every engine within a repeat; another stream each repeat
        return RunSpec(engine=engine, workloads=(point.workload,), num=self.num, threads=point.threads,
                       seed=(self.seed + repeat) % 2 ** 64, db=db, use_existing_db=True, duration=self.duration,
                       warmup=self.warmup, memory=self.memory, profile=self.profile)


    def count_spec(self, engine: str, point: Point, db: str) -> RunSpec:
        # the first repeat's keys, a stated count of them, twice: the first pass warms the engine's cache (a freshly
        # opened engine reads its pages in, and decompresses them, on the first gets), the second is ranked;
        # instructions do not drift, so one run gives the figure
        return RunSpec(engine=engine, workloads=(point.workload, point.workload), num=self.num, threads=point.threads,
                       seed=self.seed % 2 ** 64, db=db, use_existing_db=True, reads=self.count_reads, interval=0,
                       memory=self.memory, count=self.count)


def schedule(plan: Plan) -> list:
    """(repeat, engine, point) in the order they run: each repeat runs every engine at every point once; within a
    repeat the points take turns (their order reversed every other repeat) and at each point every engine runs,
    the engine that goes first rotating from repeat to repeat (lmdb leveldb rocksdb, leveldb rocksdb lmdb, ...),
    so that the engines alternate in time and none is always first or last."""
    out = []
    names = list(plan.engines)
    for r in range(plan.repeat):
        shift = r % len(names) if names else 0
        order = names[shift:] + names[:shift]
        points = plan.points if r % 2 == 0 else plan.points[::-1]
        for point in points:
            out += [(r, name, point) for name in order]
    return out


def estimate_seconds(plan: Plan, rates: dict | None = None) -> float:
    """The job's length before it starts: each load at the stored (else the assumed) fillseq load rate, each
    point its duration, plus RUN_OVERHEAD_S a run.  `rates`: the sweep model's {(engine, workload, phase):
    ops/s a thread} (kvlab.services.estimate.stored_rates)."""
    rates = rates or {}
    total = 0.0
    for name in plan.engines:
        rate = rates.get((name, LOAD, "load")) or sweep_execution.ASSUMED_LOAD_OPS_PER_SEC
        total += plan.num / rate + RUN_OVERHEAD_S
    counted = len(plan.engines) * len(plan.points) * COUNT_RUN_S * max(plan.count_reads / 20_000, 1) if plan.count else 0
    return total + len(schedule(plan)) * (plan.duration + RUN_OVERHEAD_S) + counted


@dataclass
class Outcome:
    results: list                    # every record, loads first, then the points in the order they ran
    stopped: str | None = None       # the signal that stopped the job part-way (its records are kept)
    folder: str | None = None        # where the databases were (removed)


def run_plan(plan: Plan, on_result: Callable[[BenchmarkResult], None] | None = None, control=None,
             base: str | None = None) -> Outcome:
    """Load every engine once, then run the schedule, each record tagged with the plan's label (and
    label:ENGINE) and, for a point, its repeat as `trial` and its place in `provenance.compare`; `on_result` is
    called as each record ends.  A stop signal ends the job after what ran (Outcome.stopped); the databases are
    removed whatever happens (`base`: where their folder goes, default $KVLAB_TMPDIR or the temporary folder)."""
    with jobdir.job_folder(TEMP_PREFIX, base) as folder:
        return _run_in(plan, folder, on_result, control)


def _run_in(plan: Plan, folder: Path, on_result, control) -> Outcome:
    out = Outcome([], folder=str(folder))
    runs = schedule(plan)
    try:
        for name in plan.engines:
            got = runner.run_spec(plan.load_spec(name, str(folder / name)), load_only=True, control=control)
            _keep(plan, out, got, name, on_result, {"load": True})
            if _stopped(got, out):
                return out
        for j, (r, name, point) in enumerate(runs):
            got = runner.run_spec(plan.point_spec(name, point, str(folder / name), r), control=control)
            first = runs[j - j % len(plan.engines)][1]   # the engine that went first at this point this repeat
            _keep(plan, out, got, name, on_result, {"repeat": r, "of": plan.repeat, "order": j,
                                                    "first_at_point": first}, trial=r)
            if _stopped(got, out):
                return out
        if plan.count:   # the counted round, after the timed ones (its runs are 30-100x slower)
            for point in plan.points:
                for name in plan.engines:
                    got = runner.run_spec(plan.count_spec(name, point, str(folder / name)), control=control)
                    _keep(plan, out, got[:1], name, on_result, {"counted": plan.count, "pass": "warm-up"})
                    _keep(plan, out, got[1:], name, on_result, {"counted": plan.count, "pass": "ranked"})
                    if _stopped(got, out):
                        return out
    except KeyboardInterrupt as exc:   # between runs: what ended is kept
        out.stopped = signals.name_of(exc)
    finally:
        arrived: list = []
        with signals.held(arrived):   # a signal now waits for the removal, then ends the job as one between runs
            shutil.rmtree(folder, ignore_errors=True)
        out.stopped = out.stopped or (arrived[0] if arrived else None)
    return out


def _keep(plan, out, got, name, on_result, where, trial=None) -> None:
    for b in got:   # the job's labels on a new record: the worker's is never changed
        b = dataclasses.replace(b, tags=list(dict.fromkeys([*b.tags, plan.label, f"{plan.label}:{name}"])),
                                provenance={**(b.provenance or {}), "compare": {"label": plan.label, **where}},
                                trial=b.trial if trial is None else trial)
        out.results.append(b)
        if on_result is not None:
            on_result(b)


def _stopped(got, out) -> bool:
    for b in got:
        by = (b.params or {}).get("stopped_by")
        if b.partial or by:
            out.stopped = by or "SIGINT"
            return True
    return False


def finish(results: list) -> list:
    """Across the whole job: each engine and point's last record, as a new record, gets the statistics across its
    repeats (as `kvlab run --repeat` gives them), and thread-scaling steps are checked on the medians; returns the
    job's records in order (the workers' are never changed)."""
    groups: dict = {}
    for b in results:
        if b.phase == "run" and not b.partial and not counted(b):
            groups.setdefault((b.engine, b.workload, b.threads), []).append([b])
    new: dict = {}
    for trials in groups.values():
        if len(trials) > 1:
            for old, fresh in zip(trials, stats.with_repetitions(trials)):
                new[id(old[0])] = fresh[0]
    out = [new.get(id(b), b) for b in results]
    whole = sanity.with_scaling([b for b in out if not b.partial and not counted(b)])
    it = iter(whole)
    return [b if b.partial or counted(b) else next(it) for b in out]


def counted(b: BenchmarkResult) -> bool:
    """A record of the counted round (its ops/s are valgrind's: never summarised with the timed runs)."""
    return bool((b.params or {}).get("instructions"))


# --- the summary and the ranking ----------------------------------------------------------------

def point_of(b: BenchmarkResult) -> Point:
    return Point(LOAD if b.phase == "load" else b.workload, b.threads if b.phase != "load" else 1, b.phase)


def row_name(b: BenchmarkResult) -> str:
    """'lmdb readrandom 1 thr', 'lmdb fillseq load'."""
    return f"{b.engine} {point_of(b).label()}"


def summarize(results, level: float = stats.LEVEL) -> list:
    """One row per engine and point (loads included, whole records only), in the engines' order: n, the
    median ops/s with its interval (`summary`, results.stats.summarize), the median p50 and p99 latency."""
    groups: dict = {}
    for b in results:
        if not b.partial and not counted(b):
            groups.setdefault((b.engine, point_of(b)), []).append(b)
    rows = []
    for (engine, point), bs in groups.items():
        s = stats.summarize([b.ops_per_sec for b in bs], level)
        rows.append({"engine": engine, "point": point, "n": s["n"], "summary": s, "median": s["median"],
                     "blocks": {b.trial: b.ops_per_sec for b in bs},   # each repeat's figure (the design's block)
                     "p50": stats.summarize([b.latency_us.get("p50") for b in bs])["median"],
                     "p99": stats.summarize([b.latency_us.get("p99") for b in bs])["median"]})
    order = list(dict.fromkeys(r["engine"] for r in rows))
    rows.sort(key=lambda r: (order.index(r["engine"]), r["point"].phase != "load", r["point"].threads))
    return rows


def rank(rows, loads: bool = False, alpha: float = results_compare.ALPHA,
         threshold: float = results_compare.THRESHOLD_PCT) -> list:
    """Per point (loads only with `loads`): (point, [entry, ...] by median ops/s, highest first).  Every pair of
    engines at the point is compared within repeats (results.blocks: paired log ratios, Student's t, Holm over the
    point's pairs, family-wise error `alpha`; a difference also needs `threshold` %): each entry has its `row`, its
    ratio to the best with an interval (`vs_best`: ratio, ci, p), `same_as` (the engines it is indistinguishable
    from: groups may overlap; none is a chain) and `family` (the pairs tested, alpha, threshold)."""
    by_point: dict = {}
    for r in rows:
        if r["median"] is not None and (loads or r["point"].phase != "load"):
            by_point.setdefault(r["point"], []).append(r)
    out = []
    for point, group in by_point.items():
        # by the geometric mean over the repeats, the statistic the paired ratios estimate: the order then agrees
        # with each engine's ratio to the best (the median, shown beside, may not)
        ranked = sorted(group, key=lambda r: -_geomean(r["blocks"].values(), r["median"]))
        got = blocks.compare_point({r["engine"]: r["blocks"] for r in ranked}, alpha, threshold)
        family = {"pairs": got["m"], "alpha": alpha, "threshold_pct": threshold}
        out.append((point, [{"row": r, "vs_best": got["vs_best"][r["engine"]], "same_as": got["same_as"][r["engine"]],
                             "family": family} for r in ranked]))
    return out


def rank_instructions(results, rows=None) -> list:
    """The counted round, per point: (point, [entry, ...] by instructions per op in kvlab's loop threads, fewest
    first); each entry: engine, instructions per op (loop threads; the engine's own threads apart; both), its ratio
    to the fewest, the median ops/s of the timed runs beside it (`rows`: summarize's)."""
    from ..results import instructions as ins
    wall = {(r["engine"], r["point"]): r["median"] for r in (rows or ())}
    by_point: dict = {}
    for b in results:
        where = (b.provenance or {}).get("compare") or {}
        if counted(b) and not b.partial and where.get("pass") != "warm-up":
            rec = b.params["instructions"]
            by_point.setdefault(point_of(b), []).append({
                "engine": b.engine, "per_op": ins.per_op(rec), "background": ins.per_op(rec, "background"),
                "all": ins.per_op(rec, "all"), "ops": rec["ops"], "components": ins.components_per_op(rec),
                "median_ops_s": wall.get((b.engine, point_of(b)))})
    out = []
    for point, entries in by_point.items():
        entries = [e for e in entries if e["per_op"]]
        entries.sort(key=lambda e: e["per_op"])
        for e in entries:
            e["x_fewest"] = e["per_op"] / entries[0]["per_op"]
        out.append((point, entries))
    return out


def same_library(described) -> dict:
    """{a version's name: the configuration it is the very same library as}, from native.describe()'s rows: a
    version built from the Debian package (lmdb@0.9.24) whose library the extension links too (lmdb, Debian's
    0.9.24).  Run side by side they are an A/A: their gap is kvlab's noise (and a loaded object's dispatch), not
    the engine's."""
    plain = {(r["adapter"], r["version"]): r["engine"] for r in described
             if r["built"] and engines_mark not in r["engine"] and str(r["origin"] or "").startswith("Debian package")}
    return {r["engine"]: plain[(r["adapter"], r["version"])] for r in described
            if r["built"] and engines_mark in r["engine"] and "Debian" in str(r["origin"] or "")
            and (r["adapter"], r["version"]) in plain}


def aa_checks(rows, pairs: dict) -> list:
    """Per A/A pair (version -> configuration) and point: the paired ratio within repeats (results.blocks.paired),
    the configuration's over the version's."""
    by = {(r["engine"], r["point"]): r for r in rows if r["point"].phase != "load"}
    out = []
    for version, base in pairs.items():
        for (engine, point), r in by.items():
            if engine == base and (version, point) in by:
                out.append({"a": base, "b": version, "point": point,
                            **blocks.paired(r["blocks"], by[(version, point)]["blocks"])})
    return out


def _geomean(values, fallback) -> float:
    logs = [math.log(v) for v in values if v and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else (fallback or 0.0)


# --- warnings, once per kind ---------------------------------------------------------------------

MACHINE = "machine "   # kvlab.execution.host.system's warnings all start so: about the machine, not a row


def warning_kind(text: str, b: BenchmarkResult | None = None) -> tuple:
    """(key, label) of a warning: its first clause (up to the first ':' or ';' outside brackets, the
    bracketed parts and a leading 'ENGINE: ' left out), the names of the record's engine and workload and every
    number taken out of the key, so that the same warning about other rows, runs or figures is one kind.
    The label is the clause as the first record said it, without the engine's name ('the engine' within it)."""
    names = [n for n in ((b.engine, b.workload) if b is not None else ()) if n]
    head = text
    if b is not None and head.startswith(f"{b.engine}: "):
        head = head[len(b.engine) + 2:]
    clause, depth = [], 0
    for i, ch in enumerate(head):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch in ":;" or (ch == "." and head[i + 1:i + 2] in (" ", ""))):
            break
        elif depth == 0:
            clause.append(ch)
    label = " ".join("".join(clause).split()) or " ".join(head.split())[:80]
    key = label
    for n in sorted(names, key=len, reverse=True):
        key = re.sub(rf"(?<![\w-]){re.escape(n)}(?![\w-])", "{%s}" % ("engine" if n == b.engine else "workload"),
                     key)
    key = re.sub(r"[0-9][0-9.,]*", "#", key)
    if b is not None:   # 'lmdb readrandom at ...' -> 'readrandom at ...'; "lmdb's cache" -> "the engine's cache"
        label = re.sub(rf"^{re.escape(b.engine)}\s+", "", label)
        label = " ".join(re.sub(rf"(?<![\w-]){re.escape(b.engine)}(?![\w-])", "the engine", label).split())
    return key, label


def is_build_fact(text: str, b: BenchmarkResult) -> bool:
    """Whether a record's warning is a fact about the engine's build (a library with assertions compiled in),
    the same for every run of the engine whatever the machine does: the job says it as a note, not a warning."""
    from ..execution.host import buildfacts
    return text == buildfacts.warning_for(b.engine, (b.versions or {}).get("engine_build") or {})


@dataclass
class WarningKind:
    key: str
    label: str
    machine: bool
    build: bool = False      # a fact about a build (is_build_fact): said as a note
    rows: dict = field(default_factory=dict)     # row name -> the records of that row that said it (their ids)
    texts: dict = field(default_factory=dict)    # each full text -> the rows that said it
    records: set = field(default_factory=set)    # the ids of the records that said it

    def line(self, every: dict | None = None, total: int | None = None, most: int = 6) -> str:
        """'LABEL: lmdb readrandom 1 thr (x3), rocksdb readrandom 2 thr': the rows it covers, each with how many
        of its records said it where more than one; an engine all of whose rows said it every time is named
        alone ('leveldb (every run)'), and a machine's warning says in how many of the `total` runs.  `every`:
        row name -> its records, engine -> its rows (summarize's, from rows_of)."""
        if self.machine and total:
            return f"{self.label}: {len(self.records)} of {total} runs"
        every = every or {}
        names, said = [], set()
        for row in self.rows:
            engine = row.split(" ", 1)[0]
            if engine in said:
                continue
            whole = every.get(engine)
            if whole and len(whole) > 1 and all(len(self.rows.get(r, ())) == every.get(r, -1) for r in whole):
                names.append(f"{engine} (every run)")
                said.add(engine)
                continue
            n = len(self.rows[row])
            names.append(f"{row} (x{n})" if n > 1 else row)
        more = f", and {len(names) - most} more" if len(names) > most else ""
        return f"{self.label}: {', '.join(names[:most])}{more}"


def rows_of(results) -> dict:
    """row name -> how many records it has, and engine -> its row names (for WarningKind.line)."""
    out: dict = {}
    for b in results:
        name = row_name(b)
        out[name] = out.get(name, 0) + 1
        rows = out.setdefault(b.engine, [])
        if name not in rows:
            rows.append(name)
    return out


def collapse_warnings(results) -> list:
    """Every warning of every record as WarningKinds (in the order first said): the rows each covers and how
    often, and its full texts.  Each record keeps its own warnings; this is only how they are said."""
    kinds: dict = {}
    for b in results:
        for text in b.warnings:
            key, label = warning_kind(text, b)
            k = kinds.setdefault(key, WarningKind(key, label, text.startswith(MACHINE), is_build_fact(text, b)))
            name = row_name(b)
            k.rows.setdefault(name, set()).add(id(b))
            k.records.add(id(b))
            k.texts.setdefault(text, [])
            if name not in k.texts[text]:
                k.texts[text].append(name)
    return list(kinds.values())
