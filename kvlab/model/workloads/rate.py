"""An open loop's target rate over time, as validated data: constant, a sine (db_bench's mixgraph rate,
a*sin(b*t + c) + d), steps (a spike or a daily cycle written as (time, rate) pairs), or a rate file of
`time,rate` lines, which becomes steps.

Every kind compiles to the same thing (`segments`): piecewise-constant rates from given times, then either the
last rate holds or the whole repeats with a period.  The C loop (cython_ext/include/kv_rate.h) computes each
transaction's intended start from the running count of arrivals by inverting the schedule's integral, so the
starts follow it without drift; a sine is cut into segments each holding the sine's exact mean over it, so the
count asked for by the end of every segment is the sine's own integral.  The same segments give each interval's
target in a result (`expected`).

Written as text (a run's --rate-schedule, a TOML mix's [pacing] schedule):

    constant:5000                               5000 transactions/s
    sine:a=1000,b=0.1,c=0,d=5000                1000*sin(0.1*t + 0) + 5000 (t in seconds; below 0: none)
    sine:a=1000,b=0.1,d=5000,interval=0.5       the sine cut into 0.5 s segments (default: 1/100 of a period,
                                                at most 1 s)
    steps:0=1000,10=8000,11=1000                1000/s, a spike to 8000/s from t=10 s to 11 s, then 1000/s
    steps:0=1000,30=5000,repeat=60              a cycle of 60 s (without repeat the last rate holds)
    file:rates.csv                              lines `time,rate` (seconds, transactions/s; # comments)
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping

from ... import errors

KINDS = {
    "constant": "one rate throughout",
    "sine": "a*sin(b*t + c) + d transactions/s (db_bench's mixgraph sine_a..sine_d), none where it is below 0",
    "steps": "(time, rate) pairs: each rate from its time on; the last holds, or all repeat every `repeat` s",
    "file": "a file of `time,rate` lines (seconds, transactions/s), read into steps",
}
MAX_RATE = 1e9               # transactions/s, as Pacing.target_rate
MAX_SEGMENTS = 1 << 20       # a sine's segments at most (a day's cycle in 1 s segments is 86,400)
MAX_STEPS = 1_000_000
_FORMS = ("constant:RATE, sine:a=A,b=B,c=C,d=D[,interval=S], steps:T=RATE,T=RATE,...[,repeat=S] (the first "
          "time 0), or file:PATH (lines time,rate)")


def _num(value, what: str, lo: float = -math.inf, hi: float = math.inf, lo_open: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (lo < value if lo_open else lo <= value) and value <= hi
    if not ok:
        bound = f"{'more than' if lo_open else 'at least'} {lo:g}" if lo > -math.inf else "any finite number"
        raise errors.SpecError(f"rate schedule: {what}={value!r} is out of range; allowed: {bound}"
                               + (f" and at most {hi:g}" if hi < math.inf else ""))
    return float(value)


@dataclass(frozen=True)
class RateSchedule:
    """A target rate over time, in transactions/s in total (or per client, as the Pacing says)."""
    kind: str
    rate: float = 0.0                 # constant
    a: float = 0.0                    # sine: a*sin(b*t + c) + d
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0
    interval: float = 0.0             # sine: seconds a segment (0: a period / 100, at most 1 s)
    steps: tuple = ()                 # steps: ((seconds, rate), ...) from 0, times increasing
    repeat: float = 0.0               # steps: > 0: the steps repeat with this period (s); 0: the last rate holds

    def __post_init__(self):
        if self.kind not in KINDS or self.kind == "file":
            raise errors.SpecError(f"rate schedule kind {self.kind!r} is unknown; allowed: constant, sine, steps "
                                   "(a file is read into steps)")
        if self.kind == "constant":
            _num(self.rate, "rate", 0, MAX_RATE, lo_open=True)
        elif self.kind == "sine":
            for name in ("a", "c", "d"):
                _num(getattr(self, name), name, -MAX_RATE, MAX_RATE)
            _num(self.b, "b", 0, 1e6)
            _num(self.interval, "interval", 0, 86400)
            if self.d + abs(self.a) <= 0:
                raise errors.SpecError(f"rate schedule sine: a={self.a:g}, d={self.d:g} is never above 0 "
                                       "transactions/s; allowed: a sine that is somewhere (d + |a| > 0)")
            if self.b == 0 and self.a * math.sin(self.c) + self.d <= 0:
                raise errors.SpecError("rate schedule sine: with b=0 the rate is a*sin(c) + d, which is not above 0; "
                                       "allowed: a positive rate")
        else:
            self._check_steps()

    def _check_steps(self):
        steps = tuple((float(t), float(r)) for t, r in self.steps) if _pairs(self.steps) else None
        if not steps:
            raise errors.SpecError(f"rate schedule steps: {self.steps!r}; allowed: one or more (time, rate) pairs")
        if len(steps) > MAX_STEPS:
            raise errors.SpecError(f"rate schedule steps: {len(steps):,} steps; allowed: at most {MAX_STEPS:,}")
        for t, r in steps:
            _num(t, "time", 0)
            _num(r, f"rate at {t:g} s", 0, MAX_RATE)
        if steps[0][0] != 0:
            raise errors.SpecError(f"rate schedule steps: the first time is {steps[0][0]:g} s; allowed: 0 (the rate "
                                   "from the start)")
        for (t0, _), (t1, _) in zip(steps, steps[1:]):
            if t1 <= t0:
                raise errors.SpecError(f"rate schedule steps: time {t1:g} s follows {t0:g} s; allowed: times that "
                                       "increase")
        _num(self.repeat, "repeat", 0)
        if self.repeat:
            if self.repeat <= steps[-1][0]:
                raise errors.SpecError(f"rate schedule steps: repeat={self.repeat:g} s ends before the last step "
                                       f"({steps[-1][0]:g} s); allowed: a period longer than the last time")
            if not any(r > 0 for _, r in steps):
                raise errors.SpecError("rate schedule steps: every rate is 0; allowed: some rate above 0")
        elif steps[-1][1] <= 0:
            raise errors.SpecError("rate schedule steps: the last rate is 0 and holds for good, so the run would wait "
                                   "forever; allowed: a last rate above 0, or repeat=S")
        object.__setattr__(self, "steps", steps)

    # --- the one form everything compiles to ---------------------------------------------------------------

    def segments(self) -> tuple[list, list, float]:
        """(starts in s, rates in transactions/s, period in s): rate i from starts[i] to starts[i + 1]; after the
        last, the schedule repeats every `period` (> 0), or the last rate holds (0)."""
        if self.kind == "constant":
            return [0.0], [self.rate], 0.0
        if self.kind == "steps":
            return [t for t, _ in self.steps], [r for _, r in self.steps], self.repeat
        if self.b == 0:
            return [0.0], [max(0.0, self.a * math.sin(self.c) + self.d)], 0.0
        period = 2 * math.pi / self.b
        width = self.interval or min(period / 100, 1.0)
        n = max(1, min(MAX_SEGMENTS, math.ceil(period / width - 1e-9)))
        edges = [period * i / n for i in range(n + 1)]
        return edges[:-1], [self._sine_mean(t0, t1) for t0, t1 in zip(edges, edges[1:])], period

    def _sine_mean(self, t0: float, t1: float) -> float:
        """The mean of max(0, a*sin(b*t + c) + d) over [t0, t1]: exact where the sine stays above 0, else by
        Simpson's rule over 16 panels."""
        a, b, c, d = self.a, self.b, self.c, self.d
        if d >= abs(a):
            return d + a * (math.cos(b * t0 + c) - math.cos(b * t1 + c)) / (b * (t1 - t0))
        f = [max(0.0, a * math.sin(b * (t0 + (t1 - t0) * i / 32) + c) + d) for i in range(33)]
        return (f[0] + f[-1] + 4 * sum(f[1:-1:2]) + 2 * sum(f[2:-1:2])) / 96

    @cached_property
    def _table(self) -> tuple[list, list, float, list]:
        """segments(), with the transactions asked for before each segment (and, last, in a period)."""
        starts, rates, period = self.segments()
        ends = starts[1:] + ([period] if period > 0 else [])
        cum = [0.0]
        for s, e, r in zip(starts, ends, rates):
            cum.append(cum[-1] + (e - s) * r)
        return starts, rates, period, cum

    def expected(self, t0: float, t1: float) -> float:
        """The transactions the schedule asks for between t0 and t1 seconds (in total, as its rates are)."""
        return self._integral(t1) - self._integral(t0)

    def _integral(self, t: float) -> float:
        starts, rates, period, cum = self._table
        base = 0.0
        if period > 0:
            k = math.floor(t / period)
            base, t = k * cum[-1], t - k * period
        i = max(0, bisect.bisect_right(starts, t) - 1)
        return base + cum[i] + (t - starts[i]) * rates[i]

    def rate_at(self, t: float) -> float:
        """The target (transactions/s) at t seconds: the rate of the segment t falls in."""
        starts, rates, period, _ = self._table
        if period > 0:
            t -= math.floor(t / period) * period
        return rates[max(0, bisect.bisect_right(starts, t) - 1)]

    def compile(self, share: float = 1.0) -> dict:
        """The C loop's table (kv_rate in kv_rate.h) for one client taking `share` of the rates: each segment's
        start (ns), arrivals per ns, and the arrivals before it; the period and the arrivals in one."""
        starts, rates, period, _ = self._table
        per_ns = [r * share / 1e9 for r in rates]
        t_ns = [s * 1e9 for s in starts]
        cum = [0.0]
        for i in range(1, len(t_ns)):
            cum.append(cum[-1] + (t_ns[i] - t_ns[i - 1]) * per_ns[i - 1])
        period_cum = cum[-1] + (period * 1e9 - t_ns[-1]) * per_ns[-1] if period > 0 else 0.0
        return {"t_ns": t_ns, "per_ns": per_ns, "cum": cum, "period_ns": period * 1e9, "period_cum": period_cum}

    def mean_rate(self) -> float:
        """The mean target over one period (or, for a rate that ends holding, the rate it holds)."""
        starts, rates, period, cum = self._table
        if period > 0:
            return cum[-1] / period
        return rates[-1]

    # --- text and dicts ------------------------------------------------------------------------------------

    def to_text(self) -> str:
        """The schedule as --rate-schedule writes it (a file's steps inlined); `parse` reads it back."""
        if self.kind == "constant":
            return f"constant:{self.rate:g}"
        if self.kind == "sine":
            extra = f",interval={self.interval:g}" if self.interval else ""
            return f"sine:a={self.a!r},b={self.b!r},c={self.c!r},d={self.d!r}{extra}"
        text = ",".join(f"{t:g}={r:g}" for t, r in self.steps)
        return f"steps:{text}" + (f",repeat={self.repeat:g}" if self.repeat else "")

    def to_dict(self) -> dict:
        if self.kind == "constant":
            return {"kind": "constant", "rate": self.rate}
        if self.kind == "sine":
            return {"kind": "sine", "a": self.a, "b": self.b, "c": self.c, "d": self.d, "interval": self.interval}
        return {"kind": "steps", "steps": [list(s) for s in self.steps], "repeat": self.repeat}

    def describe(self) -> str:
        if self.kind == "constant":
            return f"{self.rate:g} txn/s"
        if self.kind == "sine":
            return f"{self.a:g}*sin({self.b:g}*t + {self.c:g}) + {self.d:g} txn/s"
        return f"{len(self.steps)} steps ({self.to_text()[:60]}{'...' if len(self.to_text()) > 60 else ''})"


def _pairs(steps) -> bool:
    try:
        return all(len(s) == 2 for s in steps) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                       for s in steps for x in s)
    except TypeError:
        return False


def parse(value, base: Path | None = None) -> RateSchedule:
    """A RateSchedule from its text (module docstring), its dict (`to_dict`, a TOML table) or itself; a file is
    read now (relative to `base` when given), so the schedule is data from here on."""
    if isinstance(value, RateSchedule):
        return value
    if isinstance(value, Mapping):
        d = dict(value)
        kind = d.pop("kind", None)
        if kind == "file":
            if set(d) - {"path"} or "path" not in d:
                raise errors.SpecError(f"rate schedule file: {value!r}; allowed: {{ kind = \"file\", path = ... }}")
            return read_file(d["path"], base)
        allowed = {"constant": ("rate",), "sine": ("a", "b", "c", "d", "interval"),
                   "steps": ("steps", "repeat")}.get(kind)
        if allowed is None:
            raise errors.SpecError(f"rate schedule kind {kind!r} is unknown; allowed: {', '.join(KINDS)}")
        extra = sorted(set(d) - set(allowed))
        if extra:
            raise errors.SpecError(f"rate schedule {kind}: {', '.join(extra)} unknown; allowed: {', '.join(allowed)}")
        if kind == "steps":
            d["steps"] = tuple(tuple(s) if isinstance(s, (list, tuple)) else s for s in d.get("steps", ()))
        return RateSchedule(kind, **d)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return RateSchedule("constant", rate=value)
    if not isinstance(value, str) or not value.strip():
        raise errors.SpecError(f"rate schedule {value!r}; allowed: {_FORMS}")
    kind, colon, rest = value.strip().partition(":")
    kind = kind.strip().lower()
    if not colon:
        try:
            return RateSchedule("constant", rate=float(kind))
        except ValueError:
            raise errors.SpecError(f"rate schedule {value!r}; allowed: {_FORMS}") from None
    if kind == "file":
        return read_file(rest.strip(), base)
    if kind == "constant":
        return RateSchedule("constant", rate=_float(rest, "rate"))
    if kind not in ("sine", "steps"):
        raise errors.SpecError(f"rate schedule kind {kind!r} is unknown; allowed: {_FORMS}")
    pairs = []
    for part in (p.strip() for p in rest.split(",") if p.strip()):
        key, eq, v = part.partition("=")
        if not eq:
            raise errors.SpecError(f"rate schedule {kind}: {part!r} is not name=value; allowed: {_FORMS}")
        pairs.append((key.strip(), v.strip()))
    if kind == "sine":
        args: dict[str, Any] = {}
        for key, v in pairs:
            if key not in ("a", "b", "c", "d", "interval"):
                raise errors.SpecError(f"rate schedule sine: {key!r} unknown; allowed: a, b, c, d, interval")
            args[key] = _float(v, key)
        return RateSchedule("sine", **args)
    steps, repeat = [], 0.0
    for key, v in pairs:
        if key == "repeat":
            repeat = _float(v, "repeat")
        else:
            steps.append((_float(key, "time"), _float(v, f"rate at {key}")))
    return RateSchedule("steps", steps=tuple(steps), repeat=repeat)


def _float(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise errors.SpecError(f"rate schedule: {what}={text!r} is not a number") from None


def read_file(path, base: Path | None = None) -> RateSchedule:
    """Steps from a rate file: one `time,rate` a line (seconds from the start, transactions/s; a comma, spaces
    or a tab between), `#` comments and blank lines skipped; a last line `repeat,S` repeats the steps."""
    p = Path(path)
    if base is not None and not p.is_absolute():
        p = base / p
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise errors.SpecError(f"rate file {str(p)!r} cannot be read: {getattr(exc, 'strerror', None) or exc}; "
                               "expected: lines of time,rate") from None
    steps, repeat = [], 0.0
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = line.replace(",", " ").split()
        if len(fields) != 2:
            raise errors.SpecError(f"rate file {str(p)!r}, line {n}: {line!r}; allowed: time,rate (two numbers)")
        if fields[0].lower() == "repeat":
            repeat = _float(fields[1], f"line {n}: repeat")
            continue
        steps.append((_float(fields[0], f"line {n}: time"), _float(fields[1], f"line {n}: rate")))
    if not steps:
        raise errors.SpecError(f"rate file {str(p)!r} has no time,rate lines")
    return RateSchedule("steps", steps=tuple(steps), repeat=repeat)
