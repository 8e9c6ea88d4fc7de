"""The best rate under a latency bound (`kvlab sla`, `kvlab.sla`): the highest open-loop rate at which a mix's
response-time percentile stays under a bound, "max sustainable throughput for a given SLA".

    bound = Bound(parse_latency("2ms"), 99.0)
    outcome = search(spec, bound, repeat=3)          # capacity first, then bisection on the target rate
    outcome.answer, outcome.bracket, outcome.probes  # the rate, [highest pass, lowest non-pass], the walk

The walk: one closed-loop run on the loaded database (the capacity: the default top of the range), then
probes.  The top of the range first (passing there ends it: the answer is at least that), then the bottom
(failing there ends it: no rate in the range), then the geometric midpoint of the bracket until its ends are
within `tolerance_pct` of each other, or `max_probes` were spent.  The midpoint is geometric because the range
spans decades (1% to 100% of capacity by default): the bracket's ratio halves in log each step whatever the
answer's magnitude, 7 probes from 100x to 5%.

A probe is `repeat` open-loop runs at the target rate, each with its own seed (repeat k has the same seed at
every rate: common random numbers, so two rates differ in their rate, not their key stream).  Each run gives
the percentile of its response time (from each transaction's intended start: the queueing an overloaded engine
builds is in it; coordinated-omission free) and its achieved rate.  The verdict (`decide`):
- overloaded: the median achieved rate is more than SHORTFALL_PCT below the target (the engine did not keep
  up; its latency then says nothing of the target);
- pass: the whole interval of the percentile's median (kvlab's order-statistic interval, results/stats.py: the
  inversion of the sign test, at 95% or what the repeats can give) is at or under the bound;
- fail: the whole interval is above the bound;
- undecided: the interval straddles the bound.  The probe runs `repeat` more times once, and is decided
  again; still undecided, it counts as not shown to pass (the answer is the highest rate shown to pass, so
  the search goes on below it) and is marked undecided in the walk.
With fewer than 3 runs there is no interval: the median alone decides, and the outcome says so.

Nothing here prints: the CLI (kvlab/cli/sla.py) and the notebook face (`kvlab.sla`) show the outcome, and
kvlab/lab/plots/sla.py draws it.
"""
from __future__ import annotations

import dataclasses
import math
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import _signals as signals
from .. import errors
from ..execution.dbfiles import jobdir
from ..execution.run import runner
from ..model import workloads
from ..model.spec import RunSpec
from ..results import stats
from ..results.result import BenchmarkResult

PERCENTILE = 99.0          # --p99
TOLERANCE_PCT = 5.0        # the bracket's ends within this of each other: converged
SHORTFALL_PCT = 1.0        # achieved more than this below the target: overloaded
MIN_RATE_FRACTION = 0.01   # the default bottom of the range: 1% of its top
MAX_PROBES = 12            # 2 ends + 7 bisections reach 5% from a 100x range; room for 3 more
REPEAT = 3
DURATION_S = 2.0           # a probe's run length when neither the run nor the mix says one
MAX_REPEAT = 50
TEMP_PREFIX = "kvlab-sla-"
VERDICTS = ("pass", "fail", "overloaded", "undecided")

_UNITS = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "μs": 1.0, "ms": 1e3, "s": 1e6}
_MAX_LATENCY_US = 3600e6


def parse_latency(text) -> float:
    """Microseconds from '2ms', '500us', '500 µs', '0.25s', '750ns'; a SpecError says what is allowed.  A bare
    number is refused: 2 could be microseconds or milliseconds."""
    allowed = "allowed: a number with its unit, such as 500us, 2ms or 0.5s (us, ms, s; ns)"
    if isinstance(text, bool) or not isinstance(text, str):
        raise errors.SpecError(f"latency bound {text!r} is not a latency with a unit; {allowed}")
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*([a-zA-Zµμ]*)\s*", text)
    if not m:
        raise errors.SpecError(f"latency bound {text!r} is not a latency; {allowed}")
    unit = m.group(2).lower().replace("μ", "µ")
    if not unit:
        raise errors.SpecError(f"latency bound {text!r} has no unit; {allowed}")
    if unit not in _UNITS:
        raise errors.SpecError(f"latency bound {text!r}: unit {m.group(2)!r} is unknown; {allowed}")
    value = float(text.strip()[:len(text.strip()) - len(m.group(2))]) * _UNITS[unit]
    if not 0 < value <= _MAX_LATENCY_US or not math.isfinite(value):
        raise errors.SpecError(f"latency bound {text!r} is out of range; allowed: more than 0, up to 1 hour")
    return value


def parse_percentile(value) -> float:
    """The percentile from 99, '99.9', 'p99.9', '99.9%'; 0 < q < 100, else a SpecError."""
    allowed = "allowed: a percentile above 0 and below 100, such as 99, 99.9 or p99.99"
    if isinstance(value, bool):
        raise errors.SpecError(f"percentile {value!r} is not a number; {allowed}")
    if isinstance(value, (int, float)):
        q = float(value)
    else:
        m = re.fullmatch(r"\s*[pP]?\s*([0-9]+(?:\.[0-9]+)?)\s*%?\s*", str(value))
        if not m:
            raise errors.SpecError(f"percentile {value!r} is not a number; {allowed}")
        q = float(m.group(1))
    if not 0 < q < 100:
        raise errors.SpecError(f"percentile {value!r} is out of range; {allowed}")
    return q


def latency_text(us: float) -> str:
    """'2 ms', '500 µs', '1.5 s': a latency in its own unit."""
    for div, unit in ((1e6, "s"), (1e3, "ms")):
        if us >= div:
            return f"{us / div:.4g} {unit}"
    return f"{us:.4g} µs"


def percentile_name(q: float) -> str:
    """'p99', 'p99.9'."""
    return f"p{q:g}"


@dataclass(frozen=True)
class Bound:
    latency_us: float
    percentile: float = PERCENTILE

    def __post_init__(self):
        parse_percentile(self.percentile)
        if isinstance(self.latency_us, bool) or not isinstance(self.latency_us, (int, float)) \
                or not 0 < self.latency_us <= _MAX_LATENCY_US:
            raise errors.SpecError(f"latency bound {self.latency_us!r} µs is out of range; allowed: more than 0, "
                                   "up to 1 hour")

    def text(self) -> str:
        """'p99 <= 2 ms'."""
        return f"{percentile_name(self.percentile)} <= {latency_text(self.latency_us)}"


@dataclass(frozen=True)
class Sample:
    """One run at a target rate: what it achieved, its response-time percentile (µs) and its transactions."""
    achieved_rate: float
    latency_us: float
    ops: int = 0


@dataclass
class Probe:
    """One target rate of the walk: its runs and the verdict on them."""
    target_rate: float
    samples: list
    verdict: str
    reason: str
    latency: dict          # stats.summarize of the runs' percentiles: median, median_ci, its level, values
    achieved: dict         # stats.summarize of the achieved rates
    extra_repeats: int = 0

    @property
    def achieved_ratio(self) -> float | None:
        m = self.achieved.get("median")
        return m / self.target_rate if m is not None and self.target_rate else None

    def to_dict(self) -> dict:
        return {"target_rate": self.target_rate, "verdict": self.verdict, "reason": self.reason,
                "achieved_rate": self.achieved, "latency_us": self.latency, "extra_repeats": self.extra_repeats,
                "samples": [dataclasses.asdict(s) for s in self.samples]}


@dataclass
class Walk:
    """What the bisection found: the probes in the order walked, the answer (the highest rate shown to pass;
    None when none was) and the bracket [highest pass, lowest rate above it that did not pass] (None for an end
    the range did not close), why it stopped, and the signal that stopped it part-way."""
    probes: list = field(default_factory=list)
    answer: float | None = None
    bracket: tuple = (None, None)
    ended: str = ""
    converged: bool = False
    stopped: str | None = None


def decide(samples, target_rate: float, bound: Bound, level: float = stats.LEVEL) -> tuple:
    """(verdict, reason) of one probe's runs (module docstring: overloaded, pass, fail, undecided)."""
    lat = stats.summarize([s.latency_us for s in samples], level)
    got = stats.summarize([s.achieved_rate for s in samples], level)
    name = percentile_name(bound.percentile)
    if not lat["n"] or got["median"] is None:
        return "fail", "no run measured it"
    short = 100 * (1 - got["median"] / target_rate) if target_rate else 0.0
    if short > SHORTFALL_PCT:
        return "overloaded", f"achieved {short:.1f}% below the target (more than {SHORTFALL_PCT:g}%)"
    limit = latency_text(bound.latency_us)
    if lat["median_ci"] is None:
        ok = lat["median"] <= bound.latency_us
        return ("pass" if ok else "fail"), (f"median {name} {'<=' if ok else '>'} {limit} ({lat['n']} run"
                                            f"{'s' if lat['n'] != 1 else ''}: no interval)")
    lo, hi = lat["median_ci"]
    level_text = f"{lat['median_ci_level']:.0%}"
    if hi <= bound.latency_us:
        return "pass", f"the {level_text} interval of the median {name} is under {limit}"
    if lo > bound.latency_us:
        return "fail", f"the {level_text} interval of the median {name} is above {limit}"
    return "undecided", f"the {level_text} interval of the median {name} holds {limit}"


def bisect(measure: Callable[[float, int, int], list | None], lo: float, hi: float, bound: Bound,
           repeat: int = REPEAT, tolerance_pct: float = TOLERANCE_PCT, max_probes: int = MAX_PROBES,
           on_probe: Callable[[Probe], None] | None = None, walk: Walk | None = None) -> Walk:
    """The search on the target rate over [lo, hi]: `measure(rate, n, first)` runs n runs at `rate` (repeats
    first .. first + n - 1) and returns their Samples, or None when a stop signal ended one part-way (the walk
    then ends, Walk.stopped set by the caller).  `walk`: the Walk to fill as it goes (a new one by default).
    Pure logic: tests give it a fake."""
    _check_range(lo, hi)
    walk = walk if walk is not None else Walk()

    def probe(rate: float) -> str | None:
        samples = measure(rate, repeat, 0)
        if samples is None:
            return None
        verdict, reason = decide(samples, rate, bound)
        extra = 0
        if verdict == "undecided":
            more = measure(rate, repeat, repeat)
            if more is None:
                return None
            samples, extra = samples + more, repeat
            verdict, reason = decide(samples, rate, bound)
            if verdict == "undecided":
                reason += f"; after {len(samples)} runs: not shown to pass"
        p = Probe(rate, samples, verdict, reason, stats.summarize([s.latency_us for s in samples]),
                  stats.summarize([s.achieved_rate for s in samples]), extra)
        walk.probes.append(p)
        if on_probe is not None:
            on_probe(p)
        return verdict

    top = probe(hi)
    if top is None:
        walk.ended = "stopped"
        return walk
    if top == "pass":
        walk.answer, walk.bracket, walk.converged = hi, (hi, None), False
        walk.ended = "the top of the range passed: the answer is at least it (raise --max-rate)"
        return walk
    bottom = probe(lo)
    if bottom is None:
        walk.bracket, walk.ended = (None, hi), "stopped"
        return walk
    if bottom != "pass":
        walk.bracket = (None, lo)
        walk.ended = "the bottom of the range did not pass: no rate in the range meets the bound (lower --min-rate)"
        return walk
    good, bad = lo, hi
    while bad > good * (1 + tolerance_pct / 100) and len(walk.probes) < max_probes:
        mid = math.sqrt(good * bad)
        verdict = probe(mid)
        if verdict is None:
            walk.answer, walk.bracket, walk.ended = good, (good, bad), "stopped"
            return walk
        if verdict == "pass":
            good = mid
        else:
            bad = mid
    walk.answer, walk.bracket = good, (good, bad)
    walk.converged = bad <= good * (1 + tolerance_pct / 100)
    walk.ended = (f"converged: the bracket is within {tolerance_pct:g}%" if walk.converged
                  else f"out of probes ({max_probes}): the bracket is {100 * (bad / good - 1):.0f}% wide")
    return walk


def _check_range(lo, hi):
    for name, v in (("min_rate", lo), ("max_rate", hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise errors.SpecError(f"{name}={v!r}: allowed: a rate in transactions/s, more than 0")
    if lo >= hi:
        raise errors.SpecError(f"min_rate={lo:g} is not below max_rate={hi:g}; allowed: min_rate < max_rate")


# --- the search on a real engine ----------------------------------------------------------------------

@dataclass
class Outcome:
    """A whole `kvlab sla`: the settings, the capacity run's rate, the walk, and every record (the load, the
    capacity run, each probe's runs, in the order they ran; tagged `sla` and the search's label)."""
    spec: RunSpec
    bound: Bound
    label: str
    repeat: int
    tolerance_pct: float
    capacity: float | None
    min_rate: float | None
    max_rate: float | None
    walk: Walk
    records: list
    notes: list

    @property
    def answer(self):
        return self.walk.answer

    @property
    def bracket(self):
        return self.walk.bracket

    @property
    def probes(self):
        return self.walk.probes

    @property
    def stopped(self):
        return self.walk.stopped

    def answer_text(self) -> str:
        """'highest rate under p99 <= 2 ms: 41,200 txn/s (bracket [41,200, 43,000])'."""
        from ..results.formatting import num
        lo, hi = self.bracket
        ends = f"[{num(lo) if lo is not None else '-'}, {num(hi) if hi is not None else 'above'}]"
        if self.answer is None:
            return f"no rate in the range meets {self.bound.text()} (bracket {ends})"
        return f"highest rate under {self.bound.text()}: {num(self.answer)} txn/s (bracket {ends})"

    def to_dict(self) -> dict:
        return {"label": self.label, "engine": self.spec.engine, "workload": ",".join(self.spec.workloads),
                "percentile": self.bound.percentile, "bound_us": self.bound.latency_us, "repeat": self.repeat,
                "tolerance_pct": self.tolerance_pct, "capacity": self.capacity, "min_rate": self.min_rate,
                "max_rate": self.max_rate, "answer": self.answer, "bracket": list(self.bracket),
                "converged": self.walk.converged, "ended": self.walk.ended, "stopped": self.walk.stopped,
                "probes": [p.to_dict() for p in self.probes], "notes": list(self.notes)}

    def to_frame(self):
        """One row per probe, in the order walked."""
        import pandas as pd
        return pd.DataFrame([{"probe": i + 1, "target_rate": p.target_rate, "achieved_rate": p.achieved["median"],
                              "latency_us": p.latency["median"],
                              "latency_lo_us": (p.latency["median_ci"] or [None, None])[0],
                              "latency_hi_us": (p.latency["median_ci"] or [None, None])[1],
                              "runs": p.latency["n"], "verdict": p.verdict} for i, p in enumerate(self.probes)])


class SlaError(errors.KvlabError):
    """The search could not go on; `outcome` holds what ran before (its records are worth keeping)."""

    def __init__(self, message: str, outcome: Outcome):
        super().__init__(message)
        self.outcome = outcome


def check_spec(spec: RunSpec) -> str:
    """The one mix the search paces; a SpecError for anything else."""
    if len(spec.workloads) != 1:
        raise errors.SpecError(f"the search paces one mix; got {len(spec.workloads)} workloads "
                               f"({','.join(spec.workloads)}): give one, such as ycsb-a")
    name = spec.workloads[0]
    if workloads.get(name, spec.mixes).mix is None:
        raise errors.SpecError(f"workload {name!r} is one of db_bench's loops, which have no open loop; allowed: a "
                               "mix (ycsb-a..f, txn:SPEC, a TOML or YCSB file)")
    if spec.target_rate or spec.rate_schedule:
        raise errors.SpecError("the search sets the target rate itself; give no target_rate (--target-rate) or "
                               "rate_schedule (--rate-schedule), give min_rate and max_rate (--min-rate, --max-rate) "
                               "for its range")
    if spec.repeat != 1:
        raise errors.SpecError("give the runs per probed rate as the search's repeat, not the run's")
    if not spec.duration:
        raise errors.SpecError("each probe runs by time: give duration > 0 (seconds)")
    if spec.db is None and spec.use_existing_db:
        raise errors.SpecError("use_existing_db needs db, the database to reopen")
    return name


def search(spec: RunSpec, bound: Bound, *, repeat: int = REPEAT, min_rate: float | None = None,
           max_rate: float | None = None, tolerance_pct: float = TOLERANCE_PCT, max_probes: int = MAX_PROBES,
           on_result: Callable[[BenchmarkResult], None] | None = None,
           on_probe: Callable[[Probe], None] | None = None, control=None, label: str | None = None) -> Outcome:
    """The best rate under `bound` for `spec` (one mix, a duration; `check_spec`): the database loaded once
    (into spec.db when given, kept; else a folder this search makes and removes), unless spec.use_existing_db;
    then the capacity (one closed-loop run) when max_rate is not given; then `bisect`.  Every record is
    tagged `sla` and the search's label, its place in provenance["sla"]; `on_result` is called as each ends,
    `on_probe` as each probe is decided.  A stop signal ends the search with what ran (Outcome.stopped)."""
    check_spec(spec)
    _check_search(repeat, min_rate, max_rate, tolerance_pct, max_probes)
    label = label or f"sla:{uuid.uuid4().hex[:8]}"
    out = Outcome(spec, bound, label, repeat, tolerance_pct, None, min_rate, max_rate, Walk(), [], [])
    if repeat < stats.MIN_SAMPLES:
        out.notes.append(f"repeat {repeat}: no interval with fewer than {stats.MIN_SAMPLES} runs a probe; the "
                         "median alone decides each probe")
    if spec.db is not None:
        _search_in(out, spec.replace(keep_db=True), max_probes, on_result, on_probe, control)
        return out
    with jobdir.job_folder(TEMP_PREFIX) as folder:
        try:
            _search_in(out, spec.replace(db=str(Path(folder) / "db"), keep_db=True), max_probes, on_result,
                       on_probe, control)
        finally:
            arrived: list = []
            with signals.held(arrived):   # a signal now waits for the removal, then ends the search
                import shutil
                shutil.rmtree(Path(folder) / "db", ignore_errors=True)
            out.walk.stopped = out.walk.stopped or (arrived[0] if arrived else None)
    return out


def _check_search(repeat, min_rate, max_rate, tolerance_pct, max_probes):
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
        raise errors.SpecError(f"repeat={repeat!r}: allowed: 1 to {MAX_REPEAT} runs a probed rate")
    if isinstance(max_probes, bool) or not isinstance(max_probes, int) or not 2 <= max_probes <= 100:
        raise errors.SpecError(f"max_probes={max_probes!r}: allowed: 2 to 100")
    if isinstance(tolerance_pct, bool) or not isinstance(tolerance_pct, (int, float)) \
            or not 0.1 <= tolerance_pct <= 100:
        raise errors.SpecError(f"tolerance_pct={tolerance_pct!r}: allowed: 0.1 to 100 (%)")
    for name, v in (("min_rate", min_rate), ("max_rate", max_rate)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                              or not 0 < v <= 1e9):
            raise errors.SpecError(f"{name}={v!r}: allowed: a rate in transactions/s, more than 0, up to 1e9")
    if min_rate is not None and max_rate is not None and min_rate >= max_rate:
        raise errors.SpecError(f"min_rate={min_rate:g} is not below max_rate={max_rate:g}; allowed: min_rate < "
                               "max_rate")


def _closed(spec: RunSpec) -> RunSpec:
    """The spec in closed loop: no target rate, and no mix of its own pacing."""
    mixes = {n: dataclasses.replace(m, pacing=dataclasses.replace(m.pacing, target_rate=0.0, schedule=None))
             if m.pacing.open_loop else m for n, m in spec.mixes.items()}
    return spec.replace(target_rate=0.0, mixes=mixes)


def _search_in(out: Outcome, spec: RunSpec, max_probes, on_result, on_probe, control) -> None:
    seed = spec.seed or 0

    def keep(got, where) -> str | None:
        for b in got:   # the search's labels on a new record (a record is never changed once built)
            b = dataclasses.replace(b, tags=list(dict.fromkeys([*b.tags, "sla", out.label])), provenance={
                **(b.provenance or {}), "sla": {"label": out.label, "bound": out.bound.text(), **where}})
            out.records.append(b)
            if on_result is not None:
                on_result(b)
        for b in got:
            by = (b.params or {}).get("stopped_by")
            if b.partial or by:
                return by or "SIGINT"
        return None

    try:
        if not spec.use_existing_db:
            got = runner.run_spec(_closed(spec), load_only=True, control=control)
            out.walk.stopped = keep(got, {"role": "load"})
            if out.walk.stopped:
                return
        probe_spec = spec.replace(use_existing_db=True)
        top = out.max_rate
        if top is None:
            got = runner.run_spec(_closed(probe_spec), control=control)
            out.walk.stopped = keep(got, {"role": "capacity"})
            if out.walk.stopped:
                return
            out.capacity = _capacity(got)
            if not out.capacity:
                raise SlaError(f"the closed-loop run of {spec.workloads[0]} measured no rate; give --max-rate", out)
            top = out.capacity
            out.max_rate = top
        bottom = out.min_rate if out.min_rate is not None else top * MIN_RATE_FRACTION
        out.min_rate = bottom
        if bottom >= top:
            raise SlaError(f"min_rate={bottom:g} is not below the top of the range, {top:g} txn/s (the closed-loop "
                           "capacity); give a lower --min-rate or a --max-rate", out)
        probes = [0]

        def measure(rate, n, first):
            probes[0] += 0 if first else 1
            samples = []
            for k in range(first, first + n):
                s = probe_spec.replace(target_rate=float(rate), seed=(seed + k) % 2 ** 64)
                got = runner.run_spec(s, control=control)
                stopped = keep(got, {"role": "probe", "probe": probes[0], "target_rate": float(rate), "repeat": k})
                if stopped:
                    out.walk.stopped = stopped
                    return None
                samples.append(_sample(got, rate, out.bound, out))
            return samples

        bisect(measure, bottom, top, out.bound, out.repeat, out.tolerance_pct, max_probes, on_probe, out.walk)
    except KeyboardInterrupt as exc:   # between runs: what ended is kept
        out.walk.stopped = signals.name_of(exc)
    finally:
        if out.walk.stopped:
            _stopped_bracket(out.walk)
        _note_few_ops(out)


def _stopped_bracket(walk: Walk) -> None:
    """A walk a signal cut short: the answer and bracket from the probes it decided."""
    passed = [p.target_rate for p in walk.probes if p.verdict == "pass"]
    good = max(passed) if passed else None
    above = [p.target_rate for p in walk.probes if p.verdict != "pass" and (good is None or p.target_rate > good)]
    walk.answer, walk.bracket = good, (good, min(above) if above else None)
    walk.converged, walk.ended = False, "stopped part-way"


def _capacity(got) -> float | None:
    for b in got:
        if b.phase == "run":
            return (b.mix or {}).get("txn_per_sec") or b.ops_per_sec
    return None


def _sample(got, rate, bound: Bound, out: Outcome) -> Sample:
    b = next((b for b in got if b.phase == "run"), None)
    pacing = ((b.mix or {}).get("pacing") or {}) if b is not None else {}
    try:
        h = b.histogram("all", kind="response") if b is not None and pacing.get("mode") == "open" else None
    except errors.KvlabError:
        h = None
    if h is None or not h.count:
        raise SlaError(f"the run at {rate:g} txn/s kept no open-loop response time (its record is not a paced "
                       "mix's); the search cannot decide it", out)
    return Sample(float(pacing.get("achieved_rate") or 0.0), h.percentile(bound.percentile) / 1000.0, int(h.count))


def _note_few_ops(out: Outcome) -> None:
    """A percentile of too few transactions is a maximum, not a tail: say where a probe had fewer than 10
    transactions beyond the percentile."""
    need = 10 / (1 - out.bound.percentile / 100)
    few = [p for p in out.probes if p.samples and min(s.ops for s in p.samples) < need]
    if few:
        rates = ", ".join(f"{p.target_rate:,.0f}" for p in few[:4]) + (" ..." if len(few) > 4 else "")
        out.notes.append(f"{len(few)} probe(s) ({rates} txn/s) ran fewer than {need:,.0f} transactions, 10 beyond "
                         f"{percentile_name(out.bound.percentile)}: their percentile is near their maximum; run "
                         "longer (duration) or raise min_rate")


def bound_from(p99=None, bound=None, percentile=None) -> Bound:
    """The Bound from the ways to say one: p99="2ms" (the 99th percentile), or bound="2ms" with percentile=99.9
    (default 99); latencies with their unit (parse_latency), or µs as a number."""
    if p99 is not None and bound is not None:
        raise errors.SpecError("give p99 or bound (with percentile), not both")
    if p99 is not None and percentile is not None and parse_percentile(percentile) != PERCENTILE:
        raise errors.SpecError(f"p99 is the 99th percentile; for percentile {percentile} give bound= with it")
    given = p99 if p99 is not None else bound
    if given is None:
        raise errors.SpecError("give the latency bound: p99='2ms', or bound='2ms' with percentile=99.9")
    us = parse_latency(given) if isinstance(given, str) else given
    q = PERCENTILE if p99 is not None or percentile is None else parse_percentile(percentile)
    return Bound(us, q)


def sla(engine: str = "lmdb", workload: str = "ycsb-a", *, p99=None, bound=None, percentile=None,
        repeat: int = REPEAT, min_rate: float | None = None, max_rate: float | None = None,
        tolerance: float = TOLERANCE_PCT, max_probes: int = MAX_PROBES, on_probe=None, **params) -> Outcome:
    """The highest open-loop rate of `workload` (one mix) on `engine` whose response-time percentile stays
    under the bound, as `kvlab sla` finds it (module docstring: the walk and the rule):

        out = kvlab.sla("lmdb", "ycsb-a", p99="2ms", num=100_000, duration=2, repeat=3)
        out.answer, out.bracket, out.to_frame()          # the rate, its bracket, the walk
        kvlab.lab.plots.sla(out)                         # the curve, the bound and the answer

    `params` are kvlab.run's (num, threads/clients, duration, warmup, seed, db, engine settings, ...); each
    probe runs by time, DURATION_S seconds unless the run or the mix says.  `tolerance` is in %."""
    b = bound_from(p99, bound, percentile)
    from ..model.spec import make_spec
    spec = make_spec(engine, workload, **params)
    if not spec.duration and params.get("duration") is None:
        spec = spec.replace(duration=DURATION_S)
    return search(spec, b, repeat=repeat, min_rate=min_rate, max_rate=max_rate, tolerance_pct=tolerance,
                  max_probes=max_probes, on_probe=on_probe)
