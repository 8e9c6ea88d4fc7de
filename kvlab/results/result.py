"""Results: what one benchmark measured, as versioned data.

A BenchmarkResult is one workload on one engine (db_bench's one output line);
a RunResult is the list a run produced, in order.  `to_dict()` is the JSON
schema documented in docs/results.md (SCHEMA names its version); `load_json()`
refuses files it cannot read rather than skipping them.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import errors
from .._files import write_atomic
from .histogram import Histogram

SCHEMA = "kvlab.result/7"
# Older schemas this version reads, each with the step that brings a record one version on.
UPGRADES = {
    # /1 (foundation) had no accounting, time series, warm-up, provenance or trials
    "kvlab.result/1": lambda d: {**d, "schema": "kvlab.result/2", "accounting": None, "intervals": [],
                                 "warmup": None, "engine_stats": None, "provenance": None, "trial": 0,
                                 "repetitions": None},
    # /2 had no workload mixes
    "kvlab.result/2": lambda d: {**d, "schema": "kvlab.result/3", "mix": None},
    # /3 had no LinkBench graph record
    "kvlab.result/3": lambda d: {**d, "schema": "kvlab.result/4", "graph": None},
    # /4 had no tags
    "kvlab.result/4": lambda d: {**d, "schema": "kvlab.result/5", "tags": []},
    # /5 kept a few percentiles of each latency histogram, not the histograms
    "kvlab.result/5": lambda d: {**d, "schema": "kvlab.result/6", "histograms": None},
    # /6 had no amplification figures (a phase's, and each interval's)
    "kvlab.result/6": lambda d: {**d, "schema": "kvlab.result/7", "amplification": None},
}


def upgrade(d: dict) -> dict:
    """Bring a stored record to the current schema, or raise ResultsError."""
    seen = set()
    while d.get("schema") != SCHEMA:
        schema = d.get("schema")
        step = UPGRADES.get(schema) if isinstance(schema, str) else None
        if step is None or d.get("schema") in seen:
            raise errors.ResultsError(f"result schema {d.get('schema')!r} is unknown; this kvlab reads "
                                      f"{SCHEMA!r} and upgrades {', '.join(UPGRADES)}")
        seen.add(d.get("schema"))
        d = step(d)
    return d


@dataclass
class BenchmarkResult:
    engine: str
    workload: str
    phase: str                  # "load" (kvlab filled a fresh db first) or "run"
    threads: int
    ops: int
    seconds: float              # wall: first thread start to last thread end
    thread_seconds: float       # summed per-thread time (db_bench's micros/op basis)
    found: int | None
    not_found: int | None
    bytes: int
    latency_us: dict
    latency_by_op: dict
    latency_unit: str           # "op", or "batch" when writes were batched
    seed: int
    params: dict
    versions: dict
    key_encoding: str
    writer: dict | None = None  # readwhilewriting: the writer thread, apart from the readers
    partial: bool = False       # stopped before its end (Ctrl-C / stop request)
    warnings: list = field(default_factory=list)
    started_at: str = ""
    ended_at: str = ""
    per_thread_ops: list = field(default_factory=list)
    accounting: dict | None = None      # CPU, context switches, I/O, sizes, memory (execution/host/accounting.py)
    intervals: list = field(default_factory=list)   # the time series, one record per interval
    warmup: dict | None = None          # what the warm-up excluded
    engine_stats: dict | None = None    # the engine's own statistics after the phase
    provenance: dict | None = None      # spec, configs, versions, machine, storage, times
    trial: int = 0
    repetitions: dict | None = None     # across trials: median and 95% CI (results/stats.py)
    mix: dict | None = None             # a workload mix: transactions, rates, per-template latency, retries
    graph: dict | None = None           # LinkBench: nodes and links loaded, links listed, the graph's settings
    tags: list = field(default_factory=list)   # the user's labels (`--tag`), to find runs again
    # the merged latency histograms, whole (read one with histogram(op, kind, template)): {all, by_op: {op:
    # ..}, templates: {name: {service, response}}, writer}, each {bounds, ns_per_tick, count, min, max, counts:
    # runs [first bucket, counts...]} or the name of the by_op entry it equals
    histograms: dict | None = None
    # write, read and space amplification of the phase, each figure with its source, None with the reason in
    # notes where it cannot be had (results/amplification.py); each interval has its own under "amplification"
    amplification: dict | None = None

    @property
    def ops_per_sec(self) -> float:
        return self.ops / self.seconds if self.seconds > 0 else 0.0

    @property
    def micros_per_op(self) -> float:
        """db_bench's figure: summed thread time / ops (not wall / ops)."""
        return self.thread_seconds * 1e6 / self.ops if self.ops else 0.0

    @property
    def mb_per_sec(self) -> float:
        return self.bytes / 1048576.0 / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {
            "schema": SCHEMA, "engine": self.engine, "workload": self.workload, "phase": self.phase,
            "threads": self.threads, "ops": self.ops, "seconds": self.seconds,
            "thread_seconds": self.thread_seconds, "ops_per_sec": self.ops_per_sec,
            "micros_per_op": self.micros_per_op, "mb_per_sec": self.mb_per_sec, "found": self.found,
            "not_found": self.not_found, "bytes": self.bytes, "latency_us": self.latency_us,
            "latency_by_op": self.latency_by_op, "latency_unit": self.latency_unit, "writer": self.writer,
            "seed": self.seed, "key_encoding": self.key_encoding, "params": self.params,
            "versions": self.versions, "partial": self.partial, "warnings": list(self.warnings),
            "started_at": self.started_at, "ended_at": self.ended_at, "per_thread_ops": self.per_thread_ops,
            "accounting": self.accounting, "intervals": self.intervals, "warmup": self.warmup,
            "engine_stats": self.engine_stats, "provenance": self.provenance, "trial": self.trial,
            "repetitions": self.repetitions, "mix": self.mix, "graph": self.graph, "tags": list(self.tags),
            "histograms": self.histograms, "amplification": self.amplification,
        }

    def histogram(self, op: str = "all", kind: str = "service", template: str | None = None) -> Histogram:
        """A latency histogram this benchmark kept, whole: `op` "all" (what latency_us summarises), an op
        type of latency_by_op, or "writer" (readwhilewriting's writer); `kind` "service" (from the op's
        start) or "response" (open loop: from its intended start); `template` a mix's template by name.
        Every percentile, the mean and the CDF follow from it exactly as the run computed them."""
        where = f"{self.engine} {self.workload} ({self.phase})"
        if self.histograms is None:
            raise errors.ResultsError(f"{where} keeps no histograms (a record older than kvlab.result/6); "
                                      f"its latency_us and latency_by_op hold the percentiles it saved")
        if kind not in ("service", "response"):
            raise errors.SpecError(f"kind {kind!r} is unknown; allowed: service, response")
        h = self.histograms
        if template is not None:
            templates = h.get("templates") or {}
            if template not in templates:
                raise errors.ResultsError(f"{where} has no template {template!r}; it has: "
                                          f"{', '.join(templates) or 'none (not a mix)'}")
            rec, what = templates[template].get(kind), f"template {template!r}"
        elif op == "writer":
            rec, what = (h.get("writer") if kind == "service" else None), "a writer"
        elif kind == "response":
            if op not in ("all", "txn"):
                raise errors.SpecError(f"response time is kept per transaction (op 'all' or a template), not "
                                       f"for op {op!r}")
            rec, what = h.get("by_op", {}).get("response"), "response times (an open-loop mix only)"
        elif op == "all":
            rec, what = h.get("all"), "an overall histogram"
        else:
            rec, what = h.get("by_op", {}).get(op), f"op type {op!r}"
        if rec is None:
            ops = ", ".join(["all", *h.get("by_op", {}), *(["writer"] if h.get("writer") else [])])
            raise errors.ResultsError(f"{where} has no {kind} histogram for {what}; its ops: {ops}")
        return Histogram.from_record(_shared(h, rec))

    @classmethod
    def from_dict(cls, d: dict) -> "BenchmarkResult":
        d = upgrade(d)
        names = cls.__dataclass_fields__
        try:
            return cls(**{k: v for k, v in d.items() if k in names})
        except TypeError as exc:
            raise errors.ResultsError(f"result record is incomplete: {exc}") from None


class RunResult:
    """The benchmarks one run produced, in the order they ran."""

    def __init__(self, benchmarks, spec=None):
        self.benchmarks = list(benchmarks)
        self.spec = spec

    def __iter__(self):
        return iter(self.benchmarks)

    def __len__(self):
        return len(self.benchmarks)

    def __getitem__(self, i):
        return self.benchmarks[i]

    def __repr__(self):
        rows = ", ".join(f"{b.workload}={b.ops_per_sec:,.0f} ops/s" for b in self.benchmarks)
        return f"<RunResult {self.benchmarks[0].engine if self.benchmarks else ''}: {rows}>"

    def by_workload(self, name, phase="run") -> BenchmarkResult:
        for b in self.benchmarks:
            if b.workload == name and b.phase == phase:
                return b
        raise KeyError(name)

    def to_dict(self) -> dict:
        return {"schema": SCHEMA, "benchmarks": [b.to_dict() for b in self.benchmarks]}

    def to_list(self) -> list:
        return [b.to_dict() for b in self.benchmarks]

    def to_frame(self, kind: str = "summary"):
        """Tidy pandas frames: "summary" (one row per benchmark: throughput, latency
        percentiles in us, accounting), "latency" (one row per benchmark x op type x
        percentile), "histogram" (one row per benchmark x op type x non-empty bucket:
        value_us, its bucket's bounds, count, cumulative fraction) or "intervals" (one
        row per benchmark x interval x op type)."""
        import pandas as pd
        return pd.DataFrame(frame_rows(self.benchmarks, kind))

    def write_json(self, path):
        write_json_atomic(path, self.to_list())


_ID = ("engine", "workload", "phase", "threads", "trial")


def frame_rows(benchmarks, kind="summary") -> list:
    rows = []
    for b in benchmarks:
        ident = {k: getattr(b, k) for k in _ID}
        if kind == "summary":
            row = {**ident, "ops": b.ops, "seconds": b.seconds, "ops_per_sec": b.ops_per_sec,
                   "micros_per_op": b.micros_per_op, "mb_per_sec": b.mb_per_sec, "found": b.found,
                   "seed": b.seed, "partial": b.partial}
            if b.mix:
                row.update({f"mix.{k}": b.mix[k] for k in ("transactions", "txn_per_sec", "reads_per_sec",
                                                            "writes_per_sec", "keys_per_sec", "retries", "aborts")})
            for k, v in b.latency_us.items():
                row[f"latency_us.{k}"] = v
            if b.writer:
                row["writer.ops_per_sec"] = b.writer.get("ops_per_sec")
            for k, v in (b.accounting or {}).items():
                if not isinstance(v, (dict, list)):
                    row[f"accounting.{k}"] = v
            for k, v in (b.amplification or {}).items():
                if not isinstance(v, (dict, list, str)):
                    row[f"amplification.{k}"] = v
            rows.append(row)
        elif kind == "latency":
            for op, lat in {"all": b.latency_us, **b.latency_by_op}.items():
                for pct, v in lat.items():
                    if pct not in ("count", "mean", "stddev", "min"):
                        rows.append({**ident, "op": op, "percentile": pct, "latency_us": v})
            for name, t in ((b.mix or {}).get("templates") or {}).items():
                for pct, v in t["latency_us"].items():
                    if pct not in ("count", "mean", "stddev", "min"):
                        rows.append({**ident, "op": f"template:{name}", "percentile": pct, "latency_us": v})
            if b.writer:
                for pct, v in b.writer["latency_us"].items():
                    if pct not in ("count", "mean", "stddev", "min"):
                        rows.append({**ident, "op": "writer", "percentile": pct, "latency_us": v})
        elif kind == "histogram":
            rows.extend(_histogram_rows(b, ident))
        elif kind == "intervals":
            for i, iv in enumerate(b.intervals):
                base = {**ident, "interval": i, "t_start_s": iv["t_start_s"], "t_end_s": iv["t_end_s"],
                        "cpu_pct": iv.get("cpu_pct"), "io_read_bytes": iv.get("io_read_bytes"),
                        "io_write_bytes": iv.get("io_write_bytes"),
                        "target_txn_per_sec": iv.get("workers", {}).get("target_txn_per_sec"),
                        **{f"amplification.{k}": v for k, v in (iv.get("amplification") or {}).items()}}
                for side in ("workers", "writer"):
                    for op, n in iv.get(side, {}).get("ops", {}).items():
                        lat = iv[side]["latency_us"].get(op, {})
                        rows.append({**base, "side": side, "op": op, "ops": n,
                                     "ops_per_sec": iv[side]["ops_per_sec"][op],
                                     **{f"latency_us.{k}": v for k, v in lat.items()}})
        else:
            raise errors.SpecError(f"frame kind {kind!r} is unknown; allowed: summary, latency, histogram, "
                                   f"intervals")
    return rows


def histograms_record(overall, by_op: dict, templates: dict | None = None, writer=None) -> dict:
    """A result's `histograms` from the run's merged Histograms: overall, by op type, per template
    ({name: {"service": h, "response": h}}), the writer.  One that equals an op type's histogram (the
    overall one of a single-op workload, a template that is one op) is stored as that op type's name."""
    ops = {op: h.to_record() for op, h in by_op.items()}

    def keep(h):
        rec = h.to_record()
        return next((op for op, r in ops.items() if r == rec), rec)

    out = {"all": keep(overall), "by_op": ops}
    if templates is not None:
        out["templates"] = {name: {kind: keep(h) for kind, h in t.items()} for name, t in templates.items()}
    if writer is not None:
        out["writer"] = writer.to_record()
    return out


def _shared(histograms: dict, rec):
    """A stored histogram, or the by_op entry its name points to."""
    if isinstance(rec, str):
        try:
            return histograms["by_op"][rec]
        except KeyError:
            raise errors.ResultsError(f"a stored histogram points to op type {rec!r}, which the record "
                                      f"does not have") from None
    return rec


def _histogram_rows(b, ident) -> list:
    """One row per non-empty bucket of every histogram the benchmark kept (none for an older record)."""
    from .histogram import bucket_bounds
    h = b.histograms
    if not h:
        return []
    kinds = {"response": ("all", "response"), "lag": ("all", "start_lag")}
    named = [("all", "service", h.get("all"))]
    named += [(*kinds.get(op, (op, "service")), rec) for op, rec in (h.get("by_op") or {}).items()]
    for name, t in (h.get("templates") or {}).items():
        named += [(f"template:{name}", kind, t.get(kind)) for kind in ("service", "response")]
    named.append(("writer", "service", h.get("writer")))
    rows = []
    for op, kind, rec in named:
        rec = _shared(h, rec) if rec is not None else None
        if not rec or not rec["count"]:
            continue
        hist = Histogram.from_record(rec)
        values, frac = hist.cdf()
        buckets = np.flatnonzero(hist.counts)
        low, high = bucket_bounds(len(hist.counts))
        scale = hist.ns_per_tick / 1000.0
        for i, v, f in zip(buckets.tolist(), values.tolist(), frac.tolist()):
            rows.append({**ident, "op": op, "kind": kind, "bucket": i, "value_us": v / 1000.0,
                         "low_us": low[i] * scale, "high_us": high[i] * scale, "count": int(hist.counts[i]),
                         "cumulative_fraction": f})
    return rows


def write_json_atomic(path, data):
    """Write to a temp file in the same directory, fsync, rename: a reader sees the old file or the new
    one, never half of one; the file's mode is the one the umask gives a new file (kvlab._files)."""
    write_atomic(path, _dumps(data) + "\n")


# a histogram's [[bucket, count], ...] on one line, not four lines a bucket.  No JSON string can hold the
# match (its quotes would be escaped), and a match that is not a whole list of integers stays as it was.
_COUNTS = re.compile(r'("counts": )(\[[\s\d,\[\]]*\])')


def _one_line(m) -> str:
    try:
        return m.group(1) + json.dumps(json.loads(m.group(2)), separators=(",", ":"))
    except ValueError:
        return m.group(0)


def _dumps(data) -> str:
    return _COUNTS.sub(_one_line, json.dumps(data, indent=1, default=_jsonable))


def _jsonable(o):
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, (set, tuple)):
        return list(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def load_json(path) -> RunResult:
    """Read a --json file back; a broken or foreign file raises ResultsError."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise errors.ResultsError(f"{path}: cannot read results ({exc})") from None
    if isinstance(data, dict) and "benchmarks" in data:
        data = data["benchmarks"]
    if not isinstance(data, list):
        raise errors.ResultsError(f"{path}: expected a list of benchmark records")
    return RunResult([BenchmarkResult.from_dict(d) for d in data])
