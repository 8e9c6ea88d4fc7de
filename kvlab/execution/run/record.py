"""The record builder: one phase's BenchmarkResult as a pure function of the phase (execution.run.phases.Phase),
what was measured (a Measurement: the native records, what the phase counted after its warm-up, accounting,
samples, amplification) and the trial's facts (TrialFacts: the spec, the engine as opened, the database's and
the machine's facts).  It reads no Trial and writes nothing: the time series, a mix's and a LinkBench graph's
records, warnings, provenance and the histograms kept whole all come from its arguments."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ... import engines
from ...results.histogram import merge_all
from ...results.result import BenchmarkResult, histograms_record
from . import mixrecord
from .intervals import intervals
from .phaseamp import PhaseAmp
from .phases import Counted, Phase


@dataclass
class Measurement:
    """What one phase produced, as the session gathered it."""
    params: dict                   # what the native Run was given, and its latency clock
    threads: list                  # the native per-thread records (workers and the writer)
    counted: Counted               # what the phase counted, after its warm-up (phases.count)
    partial: bool = False          # stopped early (Ctrl-C, a stop request)
    started: str = ""              # wall-clock start and end, ISO 8601 (provenance only)
    ended: str = ""
    accounting: dict | None = None   # the process's and the device's counters after the cut (accounting.phase_record)
    samples: list = field(default_factory=list)   # the sampler's (monotonic ns, native, accounting) samples
    engine_stats: dict | None = None
    plan: dict | None = None       # a mix's compiled plan (execution.run.mixplan)
    amp: PhaseAmp | None = None    # the interval figures' arithmetic
    amplification: dict | None = None   # the phase's figures (PhaseAmp.phase)
    stopped_by: str | None = None  # the signal that stopped it part-way


@dataclass(frozen=True)
class TrialFacts:
    """What a record needs of the trial it ran in: the spec, the engine as opened for the phase, the
    database's and the machine's facts, the warnings the trial has gathered so far."""
    spec: Any                      # the RunSpec
    trial: int = 0
    adapter: str = ""
    engine_library: str | None = None   # the library's version string
    key_encoding: str | None = None
    given_config: Mapping[str, Any] = field(default_factory=dict)
    effective_config: Mapping[str, Any] = field(default_factory=dict)
    isolation: str | None = None
    warnings: tuple[str, ...] = ()
    build_facts: Mapping[str, Any] = field(default_factory=dict)
    build_warning: str | None = None
    machine: Mapping[str, Any] = field(default_factory=dict)   # accounting.machine() and the system snapshot
    storage: Mapping[str, Any] | None = None
    kvlab_build: Mapping[str, Any] = field(default_factory=dict)   # {kvlab, git_commit}
    # what the engine reports about its own configuration ({setting: value} or None, and why there is none)
    reported_config: tuple = (None, None)
    library_prefix: str | None = None
    static_tls_room: bool | None = None
    instruments: Mapping[str, Any] = field(default_factory=dict)   # what measured the run (trial.instruments)


def _overall(phase: Phase, by_op):
    """The phase's latency: every op's, but a paced replay's is its response time from each op's intended start
    (the open loop's measure: a late start counts its wait)."""
    if phase.replay is not None and "response" in by_op:
        return by_op["response"]
    return merge_all(by_op.values())


def build(phase: Phase, m: Measurement, facts: TrialFacts) -> BenchmarkResult:
    """The BenchmarkResult of `phase`, from what was measured and the trial's facts."""
    spec, wl, plan, c = facts.spec, phase.workload, m.plan, m.counted
    workers = [t for t in m.threads if t["role"] == "worker"]
    if phase.one_thread_only:
        workers = workers[:1]
    overall = c.by_op["txn"] if plan and "txn" in c.by_op else _overall(phase, c.by_op)
    mix_record = template_hists = None
    if plan:
        mix_record, template_hists = mixrecord.mix_record(c.mix, plan, c.seconds, c.found, facts.isolation,
                                                          c.by_op.get("lag"))
    writer_record = _writer_record(c)
    w_hist = c.writer.hist if c.writer is not None else None
    provenance = _provenance(facts, m)
    return BenchmarkResult(
        engine=engines.result_name(spec.engine), workload=wl.name, phase=phase.kind, threads=m.params["threads"],
        ops=c.ops,
        seconds=c.seconds, thread_seconds=c.thread_seconds, found=c.found, not_found=c.not_found, bytes=c.bytes,
        latency_us=overall.summary_us(),
        latency_by_op={op: h.summary_us() for op, h in c.by_op.items()},
        latency_unit="txn" if plan else "batch" if m.params["batch"] > 1 and wl.batches
        else "op",
        seed=spec.seed, params={**m.params, "workload": wl.name, "native_loop": phase.loop,
                                "engine_config": dict(facts.effective_config),
                                "instruments": dict(facts.instruments),
                                **({"stopped_by": m.stopped_by} if m.partial and m.stopped_by else {})},
        versions={"engine_library": facts.engine_library, "adapter": facts.adapter,
                  "kvlab": provenance["build"].get("kvlab"), "git_commit": provenance["build"].get("git_commit"),
                  "engine_build": dict(facts.build_facts)},
        key_encoding=facts.key_encoding or "", writer=writer_record, partial=m.partial,
        warnings=_warnings(facts, writer_record, c.ops), started_at=m.started, ended_at=m.ended,
        per_thread_ops=list(c.per_thread_ops),
        accounting=_accounting(m, c, workers),
        intervals=intervals(m.samples, m.samples[0][0] if m.samples else c.t0, plan, m.amp),
        amplification=m.amplification,
        warmup=c.warmup, engine_stats=m.engine_stats, provenance=provenance, trial=facts.trial,
        mix=_mix(mix_record, phase),
        graph=_graph_record(m.threads, workers, phase.graph, c.seconds) if "graph" in m.threads[0] else None,
        histograms=histograms_record(overall, dict(c.by_op), template_hists, w_hist),
    )


def _mix(mix_record: dict | None, phase: Phase) -> dict | None:
    """A mix's record, with the mix as defined and the distribution and pacing it ran with."""
    if mix_record is None or phase.mix is None or phase.workload.mix is None:
        return None
    return {**mix_record, "distribution": phase.mix.distribution.to_dict(),
            "definition": phase.workload.mix.to_dict()}


def _writer_record(c: Counted) -> dict | None:
    """readwhilewriting's writer thread, after the cut."""
    w = c.writer
    if w is None:
        return None
    return {"ops": w.ops, "seconds": w.seconds, "ops_per_sec": w.ops / w.seconds if w.seconds > 0 else 0.0,
            "bytes": w.bytes, "latency_us": w.hist.summary_us(),
            "cpu_user_s": w.cpu_user_s, "cpu_sys_s": w.cpu_sys_s,
            "ctx_voluntary": w.ctx_voluntary, "ctx_involuntary": w.ctx_involuntary}


def _accounting(m: Measurement, c: Counted, workers) -> dict | None:
    if m.accounting is None:
        return None
    acct = dict(m.accounting)
    acct["threads"] = [{"index": t["index"], "role": t["role"], "cpu_user_s": t["cpu_user_s"],
                        "cpu_sys_s": t["cpu_sys_s"], "ctx_voluntary": t["nvcsw"],
                        "ctx_involuntary": t["nivcsw"]} for t in m.threads]
    # the threads' CPU times cover the whole phase (they are not read at a warm-up's cut): so does this share
    worker_cpu = sum(t["cpu_user_s"] + t["cpu_sys_s"] for t in workers)
    acct["workers_cpu_pct"] = worker_cpu / ((c.t1 - c.started) / 1e9) * 100 if c.t1 > c.started else None
    return acct


def _warnings(facts: TrialFacts, writer_record, ops) -> list:
    out = list(facts.warnings) + ([facts.build_warning] if facts.build_warning else [])
    if writer_record is not None and writer_record["ops"] == 0 and ops > 0:
        # the readers finished before the scheduler ran the writer (more threads than cores, a short run)
        out.append("readwhilewriting: the writer made no writes before the readers finished, so this "
                   "measured reads alone; give the readers more work (reads, or duration) than a "
                   "scheduler time slice")
    return out


def _provenance(facts: TrialFacts, m: Measurement) -> dict:
    return {
        "spec": facts.spec.to_dict(), "trial": facts.trial, "key_encoding": facts.key_encoding,
        "engine_config_given": dict(facts.given_config), "engine_config_effective": dict(facts.effective_config),
        "engine_config_reported": _reported(facts.reported_config[0]),
        **({"engine_config_reported_note": facts.reported_config[1]} if facts.reported_config[1] else {}),
        "machine": dict(facts.machine), "storage": facts.storage,
        "build": dict(facts.kvlab_build),
        "library_prefix": facts.library_prefix,
        "process": {"glibc_static_tls_room": facts.static_tls_room},
        "started_at": m.started, "ended_at": m.ended,
    }


def _reported(config: Mapping | None) -> dict | None:
    """The engine's own account, its values as JSON keeps them (numbers and text)."""
    if config is None:
        return None
    return {str(k): v if isinstance(v, (int, float, str, bool)) or v is None else str(v) for k, v in config.items()}


def _graph_record(threads, workers, graph, seconds) -> dict:
    """LinkBench: what the load wrote (nodes, links, their rates) or what get_links_list returned."""
    nodes = sum(t["graph"]["nodes_loaded"] for t in threads)
    links = sum(t["graph"]["links_loaded"] for t in threads)
    listed = sum(t["graph"]["links_listed"] for t in workers)
    rate = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
    return {"nodes_loaded": nodes, "links_loaded": links, "nodes_per_sec": rate(nodes), "links_per_sec": rate(links),
            "links_listed": listed, "settings": dict(graph) if graph else None}
