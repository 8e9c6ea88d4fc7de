"""A run as a plan of immutable phases, and what each phase counted.

A Phase is one native run on the open engine: the workload's registry row, the loop it runs, its counts (num,
reads, threads, duration, batch, sizes) and what it counts (found, a writer reported apart, one thread only, how
it changes the live set), copied as fields from the row, never read from a name.  `plan(spec, loaded)` compiles a
spec into the phases a trial runs, in order: a load before the first workload that needs data on an empty
database.

`count(phase, threads, warm, mix_plan)` is the one place that decides what a phase counted: the workers' and the
writer's totals from the native per-thread records, less what they had done at the warm-up's cut (the sampler's
snapshot `warm`).  Every counter is cut there: ops, per-op histograms (their min and max read from the buckets
after the cut), found and not found, bytes, each thread's ops, the writer's ops, time, bytes and histogram, a
mix's transactions, ops per type, per-template counts and histograms, its start lag, retries and aborts.  What the
snapshot does not read at the cut (bytes, retries and aborts, and found where the loop publishes it only as it
ends) is pro-rated by the share of ops after the cut, and the warm-up record names each such figure; the threads'
CPU times cover the whole phase (the record says so too).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from ... import errors
from ...model import workloads
from ...model.workloads import Workload
from ...model.workloads.mix import Mix
from ...results.histogram import Histogram, bucket_bounds, merge_all
from ..traces import replay as traces
from . import loads, mixrecord

LOAD, RUN = "load", "run"


@dataclass(frozen=True)
class Phase:
    """One phase of a trial: what it runs, with which counts, and what it counts."""
    workload: Workload
    kind: str                     # LOAD or RUN
    loop: str                     # the native loop (bulkload for a bulk load's fillseq)
    num: int                      # the key space (a LinkBench graph's nodes)
    reads: int                    # per thread (RunSpec.reads_per_thread)
    threads: int
    duration: float               # seconds; 0: bounded by its counts
    key_size: int
    value_size: int
    batch: int
    seed: int
    compression_ratio: float
    seek_nexts: int
    writes_per_second: float
    read_percent: int             # readrandomwriterandom: reads in each 100 ops (RunSpec.readwritepercent)
    key_hash: bool                # records under hashed keys (YCSB's insertorder=hashed)
    settings: Mapping[str, Any]   # the engine settings it opens with (a workload's sync included)
    warmup: float | str           # seconds cut from its start, "auto" (MSER-5 finds them), 0 for a load
    load: str | None = None       # a fill in key order: RunSpec.load ("batched" or "bulk"); resume applies
    mix: Mix | None = None        # the mix as run (the run's distribution and target rate)
    graph: Mapping[str, Any] | None = None   # the LinkBench graph it loads or queries
    replay: Any = None            # workload replay: the recorded phase it replays (traces.replay.ReplayPhase)
    # what it counts
    counts_found: bool = False
    one_thread_only: bool = False
    has_writer: bool = False
    uniform_reads: bool = False
    live_pattern: str = "none"
    fills: str | None = None
    writes: bool = False
    needs_data: bool = False

    @property
    def name(self) -> str:
        return self.workload.name

    def params(self) -> dict:
        """The parameters the native Run takes (a new dict: a resumed load adds its first key to it)."""
        out: dict[str, Any] = {
            "num": self.num, "reads": self.reads, "threads": self.threads, "duration": self.duration,
            "key_size": self.key_size, "value_size": self.value_size, "batch": self.batch, "seed": self.seed,
            "compression_ratio": self.compression_ratio, "seek_nexts": self.seek_nexts,
            "writes_per_second": self.writes_per_second, "key_hash": self.key_hash}
        if self.loop == "readrandomwriterandom":
            out["read_percent"] = self.read_percent
        if self.load is not None:
            out.update(load=self.load, first_key=0)
        if self.loop != self.workload.native:
            out["native_loop"] = self.loop
        return out


def graph_of(spec) -> dict | None:
    """The LinkBench graph a spec's workloads load and query (kv_graph.h), or None."""
    mixes = [wl.mix for wl in (workloads.get(name, spec.mixes) for name in spec.workloads) if wl.mix is not None]
    graphs = [m.graph for m in (*mixes, *spec.mixes.values()) if getattr(m, "graph", None) is not None]
    if any(g != graphs[0] for g in graphs):
        raise errors.SpecError("the workloads of one run describe different LinkBench graphs; run them apart")
    return dict(graphs[0]) if graphs else None


def plan(spec, loaded: bool = False, load_only: bool = False) -> tuple[Phase, ...]:
    """The phases one trial of `spec` runs, in order, on a database that holds data (`loaded`) or not: each
    workload's run phase, with a load phase before the first that needs data where there is none (auto_load).
    `load_only`: just the load of the first workload, if it needs one (YCSB's -load)."""
    if spec.replay is not None:
        return _replay_phases(spec)
    graph = graph_of(spec)
    key_hash = loads.hashed_keys(spec)
    out = []
    for name in spec.workloads:
        wl = workloads.get(name, spec.mixes)
        if wl.needs_data and not loaded and (spec.auto_load or load_only):
            fill = workloads.get("linkbench-load" if graph else "fillseq")
            out.append(_phase(spec, fill, LOAD, graph, key_hash, mixrecord.value_size(wl, spec)))
            loaded = True
        if load_only:
            break
        out.append(_phase(spec, wl, RUN, graph, key_hash, mixrecord.value_size(wl, spec)))
        loaded = loaded or wl.writes
    return tuple(out)


def _replay_phases(spec) -> tuple[Phase, ...]:
    """A replay's phases: one per recorded phase with ops, each thread's ops in order (traces.replay); `reads`, which
    the replay loop does not read, is the ops a thread on average (what a progress display counts to)."""
    r = spec.replay
    trace = traces.load(r["path"], r.get("format"))
    wl = workloads.get("replay")
    out = []
    for rp in traces.phases(trace, traces.parse_speed(r.get("speed", "recorded")), r.get("threads")):
        out.append(Phase(workload=wl, kind=LOAD if rp.info.get("kind") == LOAD else RUN, loop=wl.native,
                         num=rp.num, reads=-(-rp.ops // len(rp.threads)), threads=len(rp.threads), duration=0.0, key_size=rp.key_size,
                         value_size=rp.value_size, batch=1, seed=spec.seed,
                         compression_ratio=float(spec.compression_ratio), seek_nexts=0, writes_per_second=0.0,
                         read_percent=spec.readwritepercent, key_hash=False,
                         settings=MappingProxyType(dict(spec.engine_settings)),
                         warmup=0.0 if rp.info.get("kind") == LOAD else spec.warmup, replay=rp,
                         counts_found=wl.counts_found and rp.reads, live_pattern=wl.live_pattern, writes=wl.writes))
    return tuple(out)


def _phase(spec, wl: Workload, kind: str, graph, key_hash: bool, value_size: int) -> Phase:
    """One phase of `wl`: the spec's counts, with what the workload implies (sync, a smaller key space, a batch)
    and what a load, a mix or a graph needs."""
    load = kind == LOAD
    implies = dict(wl.implies)
    settings = dict(spec.engine_settings)
    if "sync" in implies:
        settings["sync"] = implies.pop("sync")
    num = spec.num // implies.pop("num_divisor", 1) or 1
    f: dict[str, Any] = dict(num=spec.num if load else num, reads=spec.reads_per_thread,
                             threads=1 if load else implies.pop("threads", spec.threads), duration=0.0 if load else float(spec.duration),
                             batch=loads.LOAD_BATCH if load else implies.pop("batch", spec.batch), loop=wl.native,
                             load=None, mix=None, graph=None)
    if wl.fills == "records":   # the load phase or a fillseq workload: a load (RunSpec.load, resume)
        f["load"] = spec.load
        if spec.load == "bulk":
            # records a chunk: the batch the caller gave a fillseq workload, else about BULK_CHUNK_BYTES of them
            f.update(loop="bulkload", threads=1,
                     batch=spec.batch if not load and spec.batch > 1 else loads.bulk_chunk(spec.key_size,
                                                                                          value_size))
    if wl.mix is not None:
        f.update(mix=mixrecord.mix_as_run(wl.mix, spec), batch=1)
    if wl.graph:
        if graph is None:
            raise errors.SpecError(f"workload {wl.name!r} runs on a LinkBench graph: run it with a LinkBench "
                                   "workload (kvlab linkbench, kvlab.linkbench)")
        f.update(graph=MappingProxyType(dict(graph)), num=graph["nodes"])
        if load:
            f.update(threads=graph["loaders"], batch=1)
    return Phase(workload=wl, kind=kind, key_size=spec.key_size, value_size=value_size, seed=spec.seed,
                 compression_ratio=float(spec.compression_ratio), seek_nexts=spec.seek_nexts,
                 writes_per_second=float(spec.writes_per_second), read_percent=spec.readwritepercent,
                 key_hash=key_hash and (load or wl.mix is not None), settings=MappingProxyType(settings),
                 warmup=0.0 if load else spec.warmup, counts_found=wl.counts_found,
                 one_thread_only=wl.one_thread_only, has_writer=wl.has_writer, uniform_reads=wl.uniform_reads,
                 live_pattern=wl.live_pattern, fills=wl.fills, writes=wl.writes, needs_data=wl.needs_data, **f)


# --- what a phase counted -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WriterCount:
    """readwhilewriting's writer thread, after the cut."""
    ops: int
    seconds: float
    bytes: int
    hist: Histogram
    cpu_user_s: float             # the whole phase's (a thread's CPU time is not read at the cut)
    cpu_sys_s: float
    ctx_voluntary: int
    ctx_involuntary: int


@dataclass(frozen=True)
class MixCount:
    """A mix's own counters, after the cut."""
    txns: int
    ops: Mapping[str, int]        # per op type
    templates: Mapping[str, dict]   # name -> {"count", "hist": Histogram, "response_hist": Histogram or None}
    retries: int
    aborts: int


@dataclass(frozen=True)
class Counted:
    """What a phase counted: the workers' figures (only the first worker's for a one-thread phase), the writer's
    and a mix's, all after the warm-up's cut."""
    ops: int                      # a mix's ops, not its transactions
    t0: int                       # monotonic ns: the first worker's start, or the cut
    t1: int
    started: int                  # monotonic ns: the first worker's start (the whole phase's)
    by_op: Mapping[str, Histogram]
    found: int | None
    not_found: int | None
    bytes: int
    per_thread_ops: tuple[int, ...]
    thread_seconds: float
    writer: WriterCount | None = None
    mix: MixCount | None = None
    warmup: dict | None = None    # what the cut took out, what it pro-rated; None without a warm-up

    @property
    def seconds(self) -> float:
        return (self.t1 - self.t0) / 1e9


def after_cut(h: Histogram, at_cut) -> Histogram:
    """`h`, a whole phase's histogram, less `at_cut`, the bucket counts a snapshot read at the cut: the histogram
    of the ops after the cut, whose min and max are its own (the lowest non-empty bucket's low end, the highest's
    high end, bounded by the whole phase's exact extremes), never the warm-up's.  None leaves `h` whole."""
    if at_cut is None or h.counts is None:
        return h
    counts = h.counts - np.minimum(np.asarray(at_cut, dtype=h.counts.dtype), h.counts)
    n = int(counts.sum())
    if not n:
        return Histogram(counts, 0, 0, 0, h.ns_per_tick)
    nonzero = np.flatnonzero(counts)
    low, high = bucket_bounds(len(counts))
    top = min(h.max, int(high[nonzero[-1]]) - 1)
    return Histogram(counts, n, min(max(h.min, int(low[nonzero[0]])), top), top, h.ns_per_tick)


def _merged(threads) -> dict:
    out: dict[str, Histogram] = {}
    for t in threads:
        for op, h in t["hist"].items():
            out[op] = out.get(op, Histogram()).merge(Histogram.from_native(h))
    return out


def _share(part: float, whole: float) -> float:
    return min(1.0, max(0.0, part / whole)) if whole > 0 else 0.0


def count(phase: Phase, threads: list, warm=None, mix_plan: dict | None = None) -> Counted:
    """What `phase` counted, from the native per-thread records `threads` (Run.execute), less what the workers
    and the writer had done at `warm`, the sampler's (monotonic ns, native snapshot, accounting) sample at the
    warm-up's end (None: nothing is cut).  `mix_plan`: a mix's compiled plan (execution.run.mixplan)."""
    workers = [t for t in threads if t["role"] == "worker"]
    if phase.one_thread_only:
        workers = workers[:1]
    writer = next((t for t in threads if t["role"] == "writer"), None) if phase.has_writer else None
    t0 = min(t["t_start_ns"] for t in workers)
    whole = Counted(
        ops=sum(n for t in workers for op, n in t["ops"].items() if op != "txn"),   # a mix's ops, not its txns
        t0=t0, t1=max(t["t_end_ns"] for t in workers), started=t0, by_op=_merged(workers),
        found=sum(t["found"] for t in workers) if phase.counts_found else None,
        not_found=sum(t["not_found"] for t in workers) if phase.counts_found else None,
        bytes=sum(t["bytes"] for t in workers), per_thread_ops=tuple(sum(n for op, n in t["ops"].items() if op != "txn") for t in workers),
        thread_seconds=sum(t["t_end_ns"] - t["t_start_ns"] for t in workers) / 1e9,
        writer=_writer(writer), mix=_mix(workers, mix_plan) if mix_plan is not None else None)
    if warm is None:
        return whole
    return _cut(phase, whole, workers, writer, warm, mix_plan)


def _writer(t) -> WriterCount | None:
    if t is None:
        return None
    return WriterCount(ops=sum(t["ops"].values()), seconds=(t["t_end_ns"] - t["t_start_ns"]) / 1e9,
                       bytes=t["bytes"], hist=merge_all(Histogram.from_native(h) for h in t["hist"].values()),
                       cpu_user_s=t["cpu_user_s"], cpu_sys_s=t["cpu_sys_s"], ctx_voluntary=t["nvcsw"],
                       ctx_involuntary=t["nivcsw"])


def _mix(workers, plan) -> MixCount:
    ops: dict[str, int] = {}
    for t in workers:
        for op, n in t["ops"].items():
            ops[op] = ops.get(op, 0) + n
    templates = {}
    for name in plan["template_names"]:
        resp = None
        if plan["pacing"]["mode"] == "open":   # response time: from the intended start (no coordinated omission)
            resp = merge_all(Histogram.from_native(t["templates"][name]["response_hist"]) for t in workers)
        templates[name] = {"count": sum(t["templates"][name]["count"] for t in workers),
                           "hist": merge_all(Histogram.from_native(t["templates"][name]["hist"]) for t in workers),
                           "response_hist": resp}
    return MixCount(txns=ops.pop("txn", 0), ops=ops, templates=templates,
                    retries=sum(t["retries"] for t in workers), aborts=sum(t["aborts"] for t in workers))


def _cut(phase: Phase, whole: Counted, workers, writer, warm, plan) -> Counted:
    """`whole` less what the sample `warm` says had been done at the cut: the one place a warm-up is cut."""
    wt, wsnap, _ = warm
    at = wsnap["workers"]
    pro_rated: list[str] = []
    # ops: a mix's progress counts transactions; each op is in its type's histogram (mixrecord.warm_mix)
    warm_mix = mixrecord.warm_mix(wsnap, plan) if plan is not None else None
    ops_at = sum(warm_mix["ops"].values()) if warm_mix is not None else sum(at["ops"].values())
    ops = max(0, whole.ops - ops_at)
    share = _share(ops, whole.ops)
    by_op = {op: after_cut(h, at["hist"].get(op)) for op, h in whole.by_op.items()
             if not (op == "txn" and warm_mix is not None)}
    if warm_mix is not None and "txn" in whole.by_op:   # the simple templates' transactions too
        by_op["txn"] = after_cut(whole.by_op["txn"], warm_mix["txn_hist"])
    found = not_found = None
    found_excluded = None
    if whole.found is not None:
        found, how = _found_after(whole.found, at["found"], ops_at, share)
        if how:
            pro_rated.append("found")
        if warm_mix is None:   # one outcome per op: the rest were not found (readseq finds every one)
            # readrandomwriterandom: only its reads have an outcome
            outcomes = by_op["read"].count if "read" in by_op and "write" in by_op else ops
            found = min(found, outcomes)
            not_found = outcomes - found
        else:
            not_found = round((whole.not_found or 0) * share)
            pro_rated.append("not_found")
        found_excluded = whole.found - found
    pro_rated.append("bytes")
    per_thread = _per_thread_after(workers, wsnap.get("progress"), warm_mix is not None)
    if per_thread is None:
        per_thread = tuple(round(n * share) for n in whole.per_thread_ops)
        pro_rated.append("per_thread_ops")
    warmup: dict[str, Any] = {"seconds": (wt - whole.t0) / 1e9, "ops_excluded": ops_at, "excluded": True}
    if found_excluded is not None:
        warmup["found_excluded"] = found_excluded
    mix = None
    if warm_mix is not None:
        mix = _mix_after(whole.mix, warm_mix)
        warmup["transactions_excluded"] = warm_mix["txns"]
        pro_rated += ["mix.retries", "mix.aborts"]
    w = None
    if whole.writer is not None:
        w = _writer_after(whole.writer, writer, wt, wsnap["writer"])
        warmup["writer_ops_excluded"] = whole.writer.ops - w.ops
        pro_rated.append("writer.bytes")
    warmup["pro_rated"] = pro_rated
    warmup["whole_phase"] = ["the threads' CPU times and context switches (accounting.threads"
                             + (", writer.cpu_*" if w is not None else "") + ")"]
    return replace(whole, ops=ops, t0=wt, by_op=by_op, found=found, not_found=not_found,
                   bytes=round(whole.bytes * share), per_thread_ops=per_thread,
                   thread_seconds=sum(t["t_end_ns"] - max(t["t_start_ns"], wt) for t in workers) / 1e9,
                   writer=w, mix=mix, warmup=warmup)


def _found_after(found: int, found_at: int, ops_at: int, share: float) -> tuple[int, bool]:
    """(found after the cut, whether it is pro-rated).  The read loops and the mix keep found in the thread until
    their loop ends (no store per op), so a snapshot during the loop reads 0 there: then the whole phase's found
    is pro-rated by the share of ops after the cut; a loop that counts as it goes (readseq, seekrandom,
    deleterandom) is cut exactly."""
    if found_at == 0 and ops_at > 0 and found > 0:
        return round(found * share), True
    return max(0, found - found_at), False


def _per_thread_after(workers, progress, mix: bool):
    """Each worker's ops after the cut, from each thread's progress counter at the cut (a mix's counts
    transactions: its ops are pro-rated by them); None where the snapshot did not read them."""
    if progress is None or len(progress) < max((t["index"] for t in workers), default=-1) + 1:
        return None
    out = []
    for t in workers:
        total = sum(t["ops"].values())
        done = progress[t["index"]]
        if mix:
            txns = t["ops"].get("txn", 0)
            out.append(round(total * _share(txns - done, txns)))
        else:
            out.append(max(0, total - done))
    return tuple(out)


def _writer_after(w: WriterCount, t, wt: int, at: dict) -> WriterCount:
    ops = max(0, w.ops - sum(at["ops"].values()))
    hist = after_cut(w.hist, _summed(at["hist"].values()))
    return replace(w, ops=ops, seconds=(t["t_end_ns"] - max(t["t_start_ns"], wt)) / 1e9,
                   bytes=round(w.bytes * _share(ops, w.ops)), hist=hist)


def _summed(counts):
    out = None
    for c in counts:
        out = c.copy() if out is None else out + c
    return out


def _mix_after(m: MixCount | None, warm_mix: dict) -> MixCount:
    assert m is not None
    txns = m.txns - warm_mix["txns"]
    templates = {}
    for name, t in m.templates.items():
        w = warm_mix["templates"][name]
        templates[name] = {"count": t["count"] - w["count"], "hist": after_cut(t["hist"], w["hist"]),
                           "response_hist": after_cut(t["response_hist"], w["response_hist"])
                           if t["response_hist"] is not None else None}
    share = _share(txns, m.txns)
    return MixCount(txns=txns, ops={op: n - warm_mix["ops"].get(op, 0) for op, n in m.ops.items()},
                    templates=templates, retries=round(m.retries * share), aborts=round(m.aborts * share))
