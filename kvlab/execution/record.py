"""The record builder: one phase's BenchmarkResult from what the session measured (a Measurement) and what the
session knows (its spec, engine, database directory, machine): totals after the warm-up, the writer's record,
accounting, warnings, provenance, the time series, amplification, a mix's and a LinkBench graph's records, and
the histograms kept whole."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..model import workloads
from ..results.histogram import Histogram, merge_all
from ..results.result import BenchmarkResult, histograms_record
from . import accounting, buildfacts, mixrecord, native
from .intervals import intervals
from .phaseamp import PhaseAmp


@dataclass
class Measurement:
    """What one phase produced, as the session gathered it."""
    workload: workloads.Workload
    phase: str                     # "load" or "run"
    params: dict                   # what the native Run was given, and its latency clock
    threads: list                  # the native per-thread records (workers and the writer)
    partial: bool                  # stopped early (Ctrl-C, a stop request)
    started: str                   # wall-clock start and end, ISO 8601 (provenance only)
    ended: str
    before: accounting.Snapshot    # the process's and the device's counters around the phase
    after: accounting.Snapshot
    peak_scope: str                # "phase" when the peak RSS was reset for it, else "process"
    samples: list = field(default_factory=list)   # the sampler's (monotonic ns, native, accounting) samples
    warm: tuple | None = None      # the sample at the end of the warm-up, if one is left out
    engine_stats: dict | None = None
    plan: dict | None = None       # a mix's compiled plan (execution.mixplan)
    amp: PhaseAmp | None = None
    stopped_by: str | None = None  # the signal that stopped it part-way


@dataclass
class _Totals:
    """The workers' figures, then the same after the warm-up is taken out."""
    ops: int
    t0: int                        # monotonic ns: the first worker's start (the warm-up's end, once excluded)
    t1: int
    by_op: dict                    # op -> merged Histogram
    found: int | None
    not_found: int | None

    @property
    def seconds(self) -> float:
        return (self.t1 - self.t0) / 1e9


def build(session, m: Measurement) -> BenchmarkResult:
    """The BenchmarkResult of one phase of `session` (runner's session: spec, engine, directory, machine)."""
    spec, wl, plan, threads = session.spec, m.workload, m.plan, m.threads
    workers = [t for t in threads if t["role"] == "worker"]
    writer = next((t for t in threads if t["role"] == "writer"), None)
    if wl.native == "compact":
        workers = workers[:1]
    tot = _totals(workers, reads=not wl.writes or wl.native in ("readwhilewriting", "deleterandom", "mix"))
    warmup, warm_mix = _exclude_warmup(tot, m.warm, plan)
    overall = tot.by_op["txn"] if plan and "txn" in tot.by_op else merge_all(tot.by_op.values())
    mix_record = template_hists = None
    if plan:
        mix_record, template_hists = mixrecord.mix_record(threads, plan, tot.seconds, tot.found,
                                                          session.engine.isolation, warm_mix)
    writer_record, w_hist = _writer_record(writer)
    acct = _accounting(session, m, tot, workers)
    build_facts = native.facts_for_result(session.cfg.adapter, session.where.path)
    provenance = _provenance(session, m)
    return BenchmarkResult(
        engine=spec.engine, workload=wl.name, phase=m.phase, threads=m.params["threads"], ops=tot.ops,
        seconds=tot.seconds,
        thread_seconds=sum(t["t_end_ns"] - max(t["t_start_ns"], tot.t0) for t in workers) / 1e9,
        found=tot.found, not_found=tot.not_found, bytes=sum(t["bytes"] for t in workers),
        latency_us=overall.summary_us(),
        latency_by_op={op: h.summary_us() for op, h in tot.by_op.items()},
        latency_unit="txn" if plan else "batch" if m.params["batch"] > 1 and wl.writes else "op",
        seed=spec.seed, params={**m.params, "workload": wl.name, "native_loop": m.params.get("native_loop", wl.native),
                                "engine_config": session.effective_config,
                                **({"stopped_by": m.stopped_by} if m.partial and m.stopped_by else {})},
        versions={"engine_library": session.native.adapters()[session.cfg.adapter], "adapter": session.cfg.adapter,
                  "kvlab": provenance["build"]["kvlab"], "git_commit": provenance["build"]["git_commit"],
                  "engine_build": build_facts},
        key_encoding=session.native.KEY_ENCODING, writer=writer_record, partial=m.partial,
        warnings=_warnings(session, build_facts, writer_record, tot.ops), started_at=m.started, ended_at=m.ended,
        per_thread_ops=[sum(t["ops"].values()) for t in workers],
        accounting=acct,
        intervals=intervals(m.samples, m.samples[0][0] if m.samples else tot.t0, plan, m.amp),
        amplification=m.amp.phase(threads, m.before, m.after, acct, m.engine_stats) if m.amp is not None else None,
        warmup=warmup, engine_stats=m.engine_stats, provenance=provenance, trial=session.trial,
        mix=({**mix_record, "distribution": mixrecord.mix_as_run(wl.mix, spec).distribution.to_dict(),
              "definition": wl.mix.to_dict()} if plan else None),
        graph=_graph_record(threads, workers, session.graph, tot.seconds) if "graph" in threads[0] else None,
        histograms=histograms_record(overall, tot.by_op, template_hists, w_hist),
    )


def _totals(workers, reads: bool) -> _Totals:
    by_op = {}
    for t in workers:
        for op, h in t["hist"].items():
            by_op[op] = by_op.get(op, Histogram()).merge(Histogram.from_native(h))
    return _Totals(
        ops=sum(n for t in workers for op, n in t["ops"].items() if op != "txn"),   # a mix's ops, not its txns
        t0=min(t["t_start_ns"] for t in workers), t1=max(t["t_end_ns"] for t in workers), by_op=by_op,
        found=sum(t["found"] for t in workers) if reads else None,
        not_found=sum(t["not_found"] for t in workers) if reads else None)


def _exclude_warmup(tot: _Totals, warm, plan) -> tuple:
    """Take what the workers did before the warm-up snapshot `warm` out of `tot`: (the warm-up's record, a mix's
    warm-up figures), both None without a warm-up."""
    if warm is None:
        return None, None
    wt, wsnap, _ = warm
    w_ops = sum(wsnap["workers"]["ops"].values())
    warm_mix = None
    if plan is not None:   # a mix's progress counts transactions; its ops are in the op histograms
        warm_mix = mixrecord.warm_mix(wsnap, plan)
        w_ops = sum(warm_mix["ops"].values())
    warmup = {"seconds": (wt - tot.t0) / 1e9, "ops_excluded": w_ops, "excluded": True}
    if warm_mix is not None:
        warmup["transactions_excluded"] = warm_mix["txns"]
    tot.ops -= w_ops
    if tot.found is not None:
        tot.found -= wsnap["workers"]["found"]
        tot.not_found = None
    for op, counts in wsnap["workers"]["hist"].items():
        if op in tot.by_op and not (op == "txn" and warm_mix is not None):
            tot.by_op[op] = mixrecord.minus(tot.by_op[op], counts)
    if warm_mix is not None and "txn" in tot.by_op:   # the simple templates' transactions too
        tot.by_op["txn"] = mixrecord.minus(tot.by_op["txn"], warm_mix["txn_hist"])
    tot.t0 = wt
    return warmup, warm_mix


def _writer_record(writer) -> tuple:
    """(readwhilewriting's writer thread: its record, its merged histogram), or (None, None)."""
    if writer is None:
        return None, None
    w_ops = sum(writer["ops"].values())
    w_secs = (writer["t_end_ns"] - writer["t_start_ns"]) / 1e9
    w_hist = merge_all(Histogram.from_native(h) for h in writer["hist"].values())
    return {"ops": w_ops, "seconds": w_secs, "ops_per_sec": w_ops / w_secs if w_secs > 0 else 0.0,
            "bytes": writer["bytes"], "latency_us": w_hist.summary_us(),
            "cpu_user_s": writer["cpu_user_s"], "cpu_sys_s": writer["cpu_sys_s"],
            "ctx_voluntary": writer["nvcsw"], "ctx_involuntary": writer["nivcsw"]}, w_hist


def _accounting(session, m: Measurement, tot: _Totals, workers) -> dict:
    acct = accounting.phase_record(m.before, m.after, tot.ops, session.where.path,
                                   session.device or session.device_note, m.peak_scope)
    acct["threads"] = [{"index": t["index"], "role": t["role"], "cpu_user_s": t["cpu_user_s"],
                        "cpu_sys_s": t["cpu_sys_s"], "ctx_voluntary": t["nvcsw"],
                        "ctx_involuntary": t["nivcsw"]} for t in m.threads]
    worker_cpu = sum(t["cpu_user_s"] + t["cpu_sys_s"] for t in workers)
    acct["workers_cpu_pct"] = worker_cpu / tot.seconds * 100 if tot.t1 > tot.t0 else None
    return acct


def _warnings(session, build_facts, writer_record, ops) -> list:
    build_warning = buildfacts.warning_for(session.spec.engine, build_facts)
    out = list(session.warnings) + ([build_warning] if build_warning else [])
    if writer_record is not None and writer_record["ops"] == 0 and ops > 0:
        # the readers finished before the scheduler ran the writer (more threads than cores, a short run)
        out.append("readwhilewriting: the writer made no writes before the readers finished, so this "
                   "measured reads alone; give the readers more work (reads, or duration) than a "
                   "scheduler time slice")
    return out


def _provenance(session, m: Measurement) -> dict:
    return {
        "spec": session.spec.to_dict(), "trial": session.trial, "key_encoding": session.native.KEY_ENCODING,
        "engine_config_given": session.given_config, "engine_config_effective": session.effective_config,
        "machine": {**accounting.machine(), "system": session.system}, "storage": session.storage,
        "build": accounting.kvlab_build(),
        "library_prefix": native.build_config().get("engines", {}).get(session.cfg.adapter, {}).get("prefix"),
        "process": {"glibc_static_tls_room": native.started_with_static_tls_room()},
        "started_at": m.started, "ended_at": m.ended,
    }


def _graph_record(threads, workers, graph, seconds) -> dict:
    """LinkBench: what the load wrote (nodes, links, their rates) or what get_links_list returned."""
    nodes = sum(t["graph"]["nodes_loaded"] for t in threads)
    links = sum(t["graph"]["links_loaded"] for t in threads)
    listed = sum(t["graph"]["links_listed"] for t in workers)
    rate = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
    return {"nodes_loaded": nodes, "links_loaded": links, "nodes_per_sec": rate(nodes), "links_per_sec": rate(links),
            "links_listed": listed, "settings": dict(graph) if graph else None}
