"""The runner: turns a RunSpec into native runs and results.

It prepares the database directory, opens the engine once, runs each workload
through the native driver (GIL released for the whole run, on a helper thread),
and builds one BenchmarkResult per workload.  While the native threads run, the
calling thread samples their counters every `interval` seconds without pausing
them (the time series), takes the warm-up snapshot, and turns Ctrl-C into a
clean stop with a partial result.  A read workload on a fresh database first
gets a load phase (fillseq in batches of 1000, reported with phase="load").
"""
from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable

from .. import errors
from ..model import workloads
from ..model.spec import RunSpec, cpu_set, make_spec
from ..model.workloads.distributions import distribution as make_distribution
from ..results import amplification, sanity, stats, steady
from ..results.histogram import Histogram, merge_all
from ..results.result import BenchmarkResult, RunResult, histograms_record
from . import accounting, buildfacts, dbdir, mixplan, native, system
from .progress import ProgressTracker, RunControl

LOAD_BATCH = 1000
OP_NAMES = ("read", "write", "delete", "seek", "compact")


def run(engine: str = "lmdb", workload="fillseq,readrandom", *, control: RunControl | None = None,
        **params) -> RunResult:
    """Run `workload` (a name or comma list, in order) on `engine`; `params` are RunSpec fields
    and engine settings (see kvlab.model.spec.make_spec).  Progress reaches whoever watches
    through `control`'s observers: the runner knows only that protocol, and the faces
    (kvlab.run's progress=True, the CLI's bar) decide what to show."""
    return run_spec(make_spec(engine, workload, **params), control=control)


def run_spec(spec: RunSpec, on_result: Callable[[BenchmarkResult], None] | None = None,
             control: RunControl | None = None, load_only: bool = False) -> RunResult:
    """Run a spec: its trials, each phase reported to on_result as it ends.  `load_only` runs just
    the load phase of the first workload that needs data (YCSB's -load), into spec.db."""
    dbdir.check(spec.db, spec.use_existing_db)
    trials = []
    for trial in range(spec.repeat):
        trials.append(_run_trial(spec, trial, on_result, control, load_only))
        if any(b.partial for b in trials[-1]):
            break
    results = [b for t in trials for b in t]
    if len(trials) > 1:
        stats.attach_repetitions(trials)
    sanity.annotate_scaling(results)
    return RunResult(results, spec)


def _pin(cpus):
    """Pin the whole process to `cpus` (a spec's "0-1") for a trial: every thread that exists now
    (the engines' process-wide pools among them: RocksDB's start with the first open and live on)
    and, by inheritance, every thread started meanwhile.  Returns {tid: mask} to restore, or None."""
    if cpus is None:
        return None
    import os
    wanted, allowed = cpu_set(cpus), os.sched_getaffinity(0)
    if not wanted <= allowed:
        raise errors.SpecError(f"cpus={cpus!r}: CPU(s) {', '.join(map(str, sorted(wanted - allowed)))} are not "
                               f"available; allowed: {', '.join(map(str, sorted(allowed)))}")
    saved = {}
    for tid in _tasks():
        try:
            saved[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, wanted)
        except OSError:   # the thread ended meanwhile
            pass
    return saved


def _tasks() -> list:
    import os
    return [int(t) for t in os.listdir("/proc/self/task")]


def _unpin(saved):
    import os
    for tid, mask in saved.items():
        try:
            os.sched_setaffinity(tid, mask)
        except OSError:
            pass
    # threads started during the run inherited the pinned mask: give them the caller's again
    for tid in set(_tasks()) - set(saved):
        try:
            os.sched_setaffinity(tid, saved.get(threading.get_native_id(), os.sched_getaffinity(0)))
        except OSError:
            pass


def _run_trial(spec, trial, on_result, control=None, load_only=False):
    saved = _pin(spec.cpus)
    try:
        return _run_trial_pinned(spec, trial, on_result, control, load_only)
    finally:
        if saved is not None:
            _unpin(saved)


def _run_trial_pinned(spec, trial, on_result, control=None, load_only=False):
    cfg = native.require_built(spec.engine)
    lib = native.load()
    warnings = [f"{spec.engine} ignores {k} (it has no such setting)" for k in cfg.ignored(spec.engine_settings)]
    where = dbdir.prepare(spec.db, spec.engine, lib.KEY_ENCODING, spec.use_existing_db)
    session = _Session(spec, cfg, lib, where, warnings, trial, control)
    try:
        for name in spec.workloads:
            wl = workloads.get(name, spec.mixes)
            if wl.needs_data and not session.loaded and (spec.auto_load or load_only):
                # a LinkBench mix loads its graph; everything else a key space (fillseq)
                load = workloads.get("linkbench-load" if session.graph else "fillseq")
                session.add(session.run_one(load, phase="load", value_size=_mix_value_size(wl, spec)), on_result)
                if session.results[-1].partial:
                    break
            if load_only:
                break
            session.add(session.run_one(wl, phase="run"), on_result)
            if session.results[-1].partial:
                break
    finally:
        session.close()
        where.release()
        # engines that keep data in their cache until close (WiredTiger without a checkpoint)
        # show their real size only now; seed 001 measured after the process ended
        if session.results and session.results[-1].accounting is not None:
            session.results[-1].accounting["db_size_after_close_bytes"] = dbdir.size_on_disk(where.path)
        if not spec.keep_db:
            where.cleanup()
    return session.results


class _Session:
    """One open engine across the workloads of a trial."""

    def __init__(self, spec, cfg, native, where, warnings, trial, control=None):
        self.spec, self.cfg, self.native, self.where, self.warnings = spec, cfg, native, where, warnings
        self.trial, self.control = trial, control
        self.loaded = where.existed
        self.results = []
        self.engine = None
        self.engine_settings = None
        self.device, self.device_note = accounting.block_device(where.path)
        self.storage = accounting.storage(where.path)
        # what the workload believes the database holds (space amplification), and why a figure cannot be had here
        self.live = amplification.live_start(known=not where.existed)
        self.storage_why = amplification.storage_notes(self.storage, self.device, self.device_note)
        self.engine_log_state = {}
        self.engine_counted = None   # (engine handle, its statistics, its log's mark) where the last phase ended
        # the machine as this trial starts (load, other busy processes, governor, clocksource, memory)
        self.system = system.snapshot()
        self.warnings.extend(w for w in system.warnings(self.system) if w not in self.warnings)
        # a mix with write transactions opens the engine in its transactional mode from the start
        mixes = [wl.mix for wl in (workloads.get(name, spec.mixes) for name in spec.workloads) if wl.mix is not None]
        self.transactions = any(mixplan.needs_transactions(m) for m in mixes)
        # YCSB's insertorder=hashed: the load and the mix store record i under a hashed key
        self.key_hash = any(m.insert_order == "hashed" for m in mixes)
        # LinkBench: the graph its load writes and its operations query (kv_graph.h)
        graphs = [m.graph for m in (*mixes, *spec.mixes.values()) if getattr(m, "graph", None) is not None]
        if any(g != graphs[0] for g in graphs):
            raise errors.SpecError("the workloads of one run describe different LinkBench graphs; run them apart")
        self.graph = dict(graphs[0]) if graphs else None

    def open(self, settings: dict):
        if self.engine is not None and settings == self.engine_settings:
            return self.engine
        self.close()
        asked = settings
        # the database's own record decides what a reopen keeps (format, a recovery log that stays on)
        settings, notes = dbdir.reconcile(self.where, self.cfg, settings)
        self.warnings.extend(n for n in notes if n not in self.warnings)
        threads = max(self.spec.threads, self.graph["loaders"] if self.graph else 0)
        config = self.cfg.config(settings, max_threads=threads + 2)
        if self.transactions:
            config["transactions"] = True
        try:
            self.engine = self.native.Engine(self.cfg.adapter, str(self.where.path), config)
        except BaseException:
            self.where.release()   # it never opened: nothing left unclosed
            raise
        self.engine_settings = asked
        self.given_config = dict(settings)
        self.effective_config = {k: v for k, v in config.items() if v not in (None, "")}
        return self.engine

    def close(self):
        if self.engine is not None:
            self.engine.close()
            self.engine = None
            self.where.release()   # closed cleanly: the next open need not wonder

    def add(self, result, on_result):
        sanity.annotate(result, earlier=self.results)
        self.results.append(result)
        if on_result:
            on_result(result)

    def run_one(self, wl: workloads.Workload, phase: str, value_size: int | None = None) -> BenchmarkResult:
        spec = self.spec
        implies = dict(wl.implies)
        settings = dict(spec.engine_settings)
        if "sync" in implies:
            settings["sync"] = implies.pop("sync")
        num = spec.num // implies.pop("num_divisor", 1) or 1
        load = phase == "load"
        params = {
            "num": spec.num if load else num,
            "reads": spec.reads_per_thread, "threads": 1 if load else spec.threads,
            "duration": 0.0 if load else float(spec.duration),
            "key_size": spec.key_size, "value_size": value_size or _mix_value_size(wl, spec),
            "batch": LOAD_BATCH if load else implies.pop("batch", spec.batch),
            "seed": spec.seed, "compression_ratio": float(spec.compression_ratio),
            "seek_nexts": spec.seek_nexts, "writes_per_second": float(spec.writes_per_second),
            "key_hash": self.key_hash and (load or wl.mix is not None),
        }
        graph = self.graph if (wl.native == "graphload" or (wl.mix is not None and wl.mix.graph)) else None
        if wl.native == "graphload" and graph is None:
            raise errors.SpecError("workload 'linkbench-load' loads a LinkBench graph: run it with a LinkBench "
                                   "workload (kvlab linkbench, kvlab.linkbench)")
        if graph is not None:
            params["num"] = graph["nodes"]
            if load:
                params["threads"] = graph["loaders"]
                params["batch"] = 1
        engine = self.open(settings)
        plan = None
        if wl.mix is not None:
            plan = mixplan.compile_mix(_mix_as_run(wl.mix, spec), spec.value_size, clients=spec.threads,
                                       target_rate=spec.target_rate)
            params["value_size"] = plan["value_max"]
            params["batch"] = 1
        run = self.native.Run(engine, wl.native, params, mix=plan, graph=graph)
        amp = _PhaseAmp(self, wl, params, plan, engine, graph is not None)
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        peak_scope = "phase" if accounting.reset_peak_rss() else "process"
        before = accounting.snapshot(self.device)
        tracker = None
        if self.control is not None:
            tracker = ProgressTracker(run, spec.engine, wl.name, phase, wl.native, params)
        auto = spec.warmup == "auto" and not load
        sampler = _Sampler(run, spec.interval, 0.0 if load or auto else spec.warmup, self.device, self.control,
                           tracker, self.where.path)
        threads, partial = sampler.execute()
        cut = _auto_warmup(sampler) if auto else None
        after = accounting.snapshot(self.device)
        params["latency_clock"], params["ns_per_tick"] = run.latency_clock
        ended = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if wl.writes or wl.native in ("fillseq", "fillrandom"):
            self.loaded = True
        engine_stats = None
        if spec.engine_stats:
            got = engine.stats()
            if got is not None:
                engine_stats = {"numbers": got[0], "text": got[1]}
        result = _build(self, wl, phase, params, threads, partial, started, ended, before, after, sampler,
                        peak_scope, engine_stats, plan, amp)
        if not load:
            _steady_state(result, sampler, cut)
        return result


class _Sampler:
    """Runs the native Run on a helper thread and samples it from this one."""

    def __init__(self, run, interval, warmup, device, control=None, tracker=None, db_path=None):
        self.run, self.interval, self.warmup, self.device = run, interval, warmup, device
        self.db_path = db_path   # each sample's allocated size of the database (space amplification per interval)
        self.control, self.tracker = control, tracker
        self.samples = []        # (monotonic ns, native snapshot, accounting snapshot)
        self.warm = None         # the sample at the end of the warm-up

    def _sample(self):
        return time.monotonic_ns(), self.run.snapshot(), accounting.snapshot(self.device, self.db_path)

    def execute(self):
        box = {}
        # completion is signalled by an Event, not Thread.is_alive(): a KeyboardInterrupt that
        # lands inside Thread.join() can leave is_alive() False while the thread still runs
        finished = threading.Event()

        def target():
            try:
                box["threads"] = self.run.execute()
            except BaseException as exc:  # re-raised on the caller's thread
                box["error"] = exc
            finally:
                finished.set()

        t = threading.Thread(target=target, name="kvlab-native-run", daemon=True)
        try:
            t0 = time.monotonic_ns()
            t.start()
            partial = self._watch(finished, t0)
        except BaseException:
            # whatever escapes the watch (a failing sample or observer, a second signal) must not leave
            # native threads running on an engine the caller is about to close
            self.run.request_stop()
            while not finished.is_set():
                try:
                    finished.wait(0.1)
                except KeyboardInterrupt:
                    pass
            t.join()
            raise
        t.join()
        if "error" in box:
            raise box["error"]
        try:
            if self.interval:
                self.samples.append(self._sample())
            if self.tracker is not None:
                self.control.publish(self.tracker.read(finished=True, stopping=partial))
        except KeyboardInterrupt:  # it came as the run ended: keep the result, marked as interrupted
            partial = True
        return box["threads"], partial

    def _watch(self, finished, t0) -> bool:
        """Sample, publish progress and honour stop requests until the run ends; True if stopped early.
        A KeyboardInterrupt anywhere in here (not only in the wait) becomes a stop request."""
        partial = False
        control = self.control
        next_sample = t0 + int(self.interval * 1e9) if self.interval else None
        warm_at = t0 + int(self.warmup * 1e9) if self.warmup else None
        next_progress = t0 + int(control.every * 1e9) if self.tracker else None
        first = bool(self.interval)
        while first or not finished.is_set():
            try:
                if first:
                    self.samples.append(self._sample())
                    first = False
                if control is not None and control.stop_requested and not partial:
                    self.run.request_stop()
                    partial = True
                now = time.monotonic_ns()
                due = [x for x in (next_sample, warm_at, next_progress) if x is not None]
                finished.wait(min([0.1] + [max(0.0, (x - now) / 1e9) for x in due]))
                now = time.monotonic_ns()
                if finished.is_set():
                    break
                if next_progress is not None and now >= next_progress:
                    control.publish(self.tracker.read(stopping=partial))
                    next_progress = now + int(control.every * 1e9)
                if warm_at is not None and now >= warm_at:
                    self.warm = self._sample()
                    warm_at = None
                if next_sample is not None and now >= next_sample:
                    self.samples.append(self._sample())
                    next_sample += int(self.interval * 1e9)
            except KeyboardInterrupt:
                self.run.request_stop()
                partial = True
                if control is not None:
                    control.stop()
        return partial


class _PhaseAmp:
    """A phase's amplification (kvlab.results.amplification): the engine's own counters before it, the live set
    it starts from, then the figures of the phase (whole, warm-up included, as its accounting) and of each
    interval."""

    def __init__(self, session, wl, params, plan, engine, graph: bool):
        self.session, self.native, self.plan, self.graph = session, wl.native, plan, graph
        self.n, self.key_size, self.threads = params["num"], params["key_size"], params["threads"]
        self.seed = params["seed"]
        self.value_size = (plan["value_min"] + plan["value_max"]) / 2 if plan else params["value_size"]
        self.live0 = session.live
        counters = amplification.ENGINE_COUNTERS.get(session.cfg.adapter)
        self.counters = counters if session.spec.engine_stats else None
        self.engine, self.stats_before, self.log_mark = engine, None, None
        self.log = session.where.path / counters.log_file if self.counters and counters.log_file else None
        if self.counters is not None:
            last = session.engine_counted
            if last is not None and last[0] is engine:
                # on from where the last phase's account ended: what the engine did between phases counts too
                _, self.stats_before, self.log_mark = last
            else:
                got = engine.stats()
                self.stats_before = {"numbers": got[0], "text": got[1]} if got is not None else None
                self.log_mark = accounting.log_mark(self.log) if self.log else None

    def _ops(self, snap) -> dict:
        """Ops per op type so far, workers and writer together, from a native snapshot (a mix's from its op
        histograms: its progress counts transactions)."""
        out = {}
        for side in ("workers", "writer"):
            s = snap[side]
            counts = ({op: int(c.sum()) for op, c in s["hist"].items() if op not in ("txn", "response", "lag")}
                      if self.plan is not None else s["ops"])
            for op, k in counts.items():
                out[op] = out.get(op, 0) + k
        return out

    def _live(self, ops, arcs=None, streams=None) -> dict:
        return amplification.apply_phase(self.live0, self.native, self.n, ops, self.key_size + self.value_size,
                                         arcs=arcs, streams=streams, graph=self.graph)

    def _stream(self, role, index):
        """The key stream a write thread draws from (kv_driver: the seed, the writer's or the writers' stream,
        the thread's index): the same in every phase of this seed, so an overwrite retraces a fillrandom."""
        return (self.seed, role, index)

    def interval(self, na, nb, acct, db_bytes) -> dict:
        a, b = self._ops(na), self._ops(nb)
        ops = {op: k - a.get(op, 0) for op, k in b.items()}
        # the threads' own counts are known only at the end: so far, the workers' writes shared evenly
        workers = nb["workers"]["ops"].get("write", 0)
        streams = [(self._stream("worker", i), workers / self.threads) for i in range(self.threads)]
        streams.append((self._stream("writer", self.threads), nb["writer"]["ops"].get("write", 0)))
        return amplification.interval_figures(
            user_bytes=amplification.user_write_bytes(ops, self.key_size, self.value_size),
            reads=amplification.read_ops(ops), delta=acct, allocated=db_bytes,
            live_bytes=self._live(b, streams=streams).get("bytes"), storage_why=self.session.storage_why)

    def phase(self, threads, before, after, acct, engine_stats) -> dict:
        ops = {}
        for t in threads:
            for op, k in t["ops"].items():
                ops[op] = ops.get(op, 0) + k
        # fillseq: each thread writes its share of the key space from its first key on (kv_driver's split)
        arcs = [(self.n * t["index"] // self.threads, t["ops"].get("write", 0)) for t in threads
                if t["role"] == "worker"]
        streams = [(self._stream(t["role"], t["index"]), t["ops"].get("write", 0)) for t in threads]
        live = self._live(ops, arcs, streams)
        self.session.live = live
        engine = None
        if self.counters is not None:
            text, mark = accounting.log_since(self.log, self.log_mark) if self.log else ("", None)
            if self.log is not None and not self.log.exists():
                text = None   # the engine keeps its info log elsewhere (an options string's db_log_dir)
            engine = self.counters.read(self.stats_before, engine_stats, text, self.session.engine_log_state)
            self.session.engine_counted = (self.engine, engine_stats, mark)
        elif amplification.ENGINE_COUNTERS.get(self.session.cfg.adapter) is not None:
            engine = {"bytes_written": None, "blocks_read": None, "source": None,
                      "note": "the engine's statistics were not collected (engine_stats=False)"}
        return amplification.figures(
            user_bytes=amplification.user_write_bytes(ops, self.key_size, self.value_size),
            reads=amplification.read_ops(ops), delta=accounting.delta(before, after),
            allocated=acct.get("db_size_bytes"), live=live, storage_why=self.session.storage_why, engine=engine)


def _throughput_series(samples) -> tuple:
    """(ops/s, mid-time s, index of the sample it starts at) of each interval between samples, workers only (a
    mix's transactions), the last interval (the run's end, threads finishing) left out."""
    xs, ts, idx = [], [], []
    if not samples:
        return xs, ts, idx
    t0 = samples[0][0]
    for i, ((ta, na, _), (tb, nb, _)) in enumerate(zip(samples, samples[1:])):
        secs = (tb - ta) / 1e9
        if secs <= 0:
            continue
        done = sum(nb["workers"]["ops"].values()) - sum(na["workers"]["ops"].values())
        xs.append(done / secs)
        ts.append(((ta + tb) / 2 - t0) / 1e9)
        idx.append(i)
    return xs[:-1], ts[:-1], idx[:-1]


def _auto_warmup(sampler) -> dict:
    """warmup="auto": MSER-5 over the interval throughput; the cut becomes the sampler's warm-up snapshot (an
    interval boundary, where every counter and histogram was read), so the summary leaves it out exactly as a
    fixed warm-up ending there would."""
    xs, ts, idx = _throughput_series(sampler.samples)
    cut = steady.mser5(xs)
    cut["intervals"] = len(xs)
    if cut["cut"]:
        sampler.warm = sampler.samples[idx[cut["cut"]]]
    return cut


def _steady_state(b, sampler, cut):
    """After the warm-up (fixed or auto): does throughput still trend over the last half?  A warning if so; with
    warmup="auto", the method, the cut and the test go into b.warmup."""
    xs, ts, _ = _throughput_series(sampler.samples)
    if cut is not None:
        k = cut["cut"]
    else:
        k = sum(1 for t in ts if b.warmup and t < b.warmup.get("seconds", 0))
    tr = steady.trend(xs[k:], ts[k:])
    warning = steady.not_steady_warning(tr)
    if warning and warning not in b.warnings:
        b.warnings.append(warning)
    if cut is not None:
        base = b.warmup or {"seconds": 0.0, "ops_excluded": 0, "excluded": False}
        b.warmup = {**base, "method": "MSER-5", "cut_intervals": k, "intervals": cut["intervals"],
                    "batch": cut["batch"], "batches": cut["batches"], "note": cut["note"], "steady_state": tr}


def _interval_hist(counts, ns_per_tick) -> Histogram:
    return Histogram(counts, int(counts.sum()), 0, 2 ** 62, ns_per_tick)


def _template_intervals(a, b, secs, plan, ns_per_tick) -> dict:
    """Per template in one interval: transactions, their rate and service latency."""
    ta, tb = a.get("templates"), b.get("templates")
    if not tb or plan is None:
        return {}
    out = {}
    for ti, name in enumerate(plan["template_names"]):
        first, n, kind, simple, _ = plan["txns"][ti]
        count = tb["count"][ti] - (ta["count"][ti] if ta else 0)
        if simple:   # its transactions are its op: that op's histogram
            op = native.load().OP_TYPES[plan["ops"][first][0]]
            hb, ha = b["hist"].get(op), a["hist"].get(op)
        else:
            hb, ha = tb["hist"][ti], (ta["hist"][ti] if ta else None)
        rec = {"count": count, "per_sec": count / secs}
        if hb is not None:
            d = hb - ha if ha is not None else hb
            if d.sum():
                h = _interval_hist(d, ns_per_tick)
                rec["latency_us"] = {k: h.percentile(q) / 1000 for k, q in
                                     (("p50", 50), ("p99", 99), ("p999", 99.9), ("max", 100))}
        out[name] = rec
    return out


def _intervals(samples, t_origin, plan=None, amp=None) -> list:
    out = []
    for (ta, na, aa), (tb, nb, ab) in zip(samples, samples[1:]):
        secs = (tb - ta) / 1e9
        if secs <= 0:
            continue
        rec = {"t_start_s": (ta - t_origin) / 1e9, "t_end_s": (tb - t_origin) / 1e9, "seconds": secs}
        for side in ("workers", "writer"):
            a, b = na[side], nb[side]
            ops = {op: b["ops"].get(op, 0) - a["ops"].get(op, 0) for op in b["ops"]}
            if side == "writer" and not any(ops.values()):
                continue
            lat = {}
            for op, counts in b["hist"].items():
                prev = a["hist"].get(op)
                d = counts - prev if prev is not None else counts
                if d.sum():
                    h = _interval_hist(d, nb["ns_per_tick"])
                    lat[op] = {k: h.percentile(q) / 1000 for k, q in
                               (("p50", 50), ("p99", 99), ("p999", 99.9), ("max", 100))}
            rec[side] = {"ops": ops, "ops_per_sec": {op: v / secs for op, v in ops.items()},
                         "latency_us": lat}
            if side == "workers" and plan is not None:
                rec[side]["templates"] = _template_intervals(a, b, secs, plan, nb["ns_per_tick"])
        acct = accounting.delta(aa, ab)
        rec.update({k: acct[k] for k in ("cpu_user_s", "cpu_sys_s", "cpu_pct", "io_read_bytes", "io_write_bytes",
                                         "ctx_voluntary", "ctx_involuntary") if k in acct})
        for k in ("disk_reads", "disk_writes"):
            if k in acct:
                rec[k] = acct[k]
        if amp is not None:
            rec["amplification"] = amp.interval(na, nb, acct, ab.db_bytes)
        out.append(rec)
    return out


def _mix_value_size(wl, spec) -> int:
    """A mix that says its value size (YCSB's records, seed 003's 8-100 bytes) writes and loads
    values of its largest size; the rest use the spec's."""
    return wl.mix.value_size[1] if wl.mix is not None and wl.mix.value_size else spec.value_size


# what a mix's op types count as in reads/s and writes/s
_READ_OPS, _WRITE_OPS = ("read", "rmw", "range", "scan"), ("write", "insert", "delete", "rmw", "clear_range")


def _warm_mix(wsnap, plan) -> dict:
    """What a mix had done by the end of its warm-up, from the snapshot taken then: transactions, ops per
    type (each op is recorded once in its type's histogram), and per template the count and histograms
    (a simple template's are its op's, which the loop derives only at the end)."""
    w = wsnap["workers"]
    hist, tpl = w["hist"], w.get("templates") or {}
    op_names = native.load().OP_TYPES
    ops = {op: int(c.sum()) for op, c in hist.items() if op not in ("txn", "response", "lag")}
    # every count comes from a histogram read in the same pass, so the figures agree with each other
    # (the threads run on while the snapshot is taken; counters and histograms are not read at one instant)
    per, txn_hist = {}, None
    for ti, name in enumerate(plan["template_names"]):
        first, _, _, simple, _ = plan["txns"][ti]
        h = hist.get(op_names[plan["ops"][first][0]]) if simple else (tpl["hist"][ti] if tpl else None)
        if h is not None:
            txn_hist = h.copy() if txn_hist is None else txn_hist + h
        resp = tpl["response_hist"][ti] if tpl and tpl.get("response_hist") else None
        per[name] = {"count": int(h.sum()) if h is not None else 0, "hist": h, "response_hist": resp}
    return {"txns": sum(p["count"] for p in per.values()), "ops": ops, "templates": per, "txn_hist": txn_hist}


def _minus(h: Histogram, counts) -> Histogram:
    if counts is None:
        return h
    return Histogram(h.counts - counts, h.count - int(counts.sum()), h.min, h.max, h.ns_per_tick)


def _mix_record(threads, plan, seconds, found, isolation, warm=None):
    """Transactions, rates and per-template latency of a mix run (after its warm-up, if it had one),
    and the per-template histograms the result keeps ({name: {"service": .., "response": ..}})."""
    workers = [t for t in threads if t["role"] == "worker"]
    ops = {}
    for t in workers:
        for op, n in t["ops"].items():
            ops[op] = ops.get(op, 0) + n
    if warm is not None:
        ops["txn"] = ops.get("txn", 0) - warm["txns"]
        for op, n in warm["ops"].items():
            if op in ops:
                ops[op] -= n
    txns = ops.get("txn", 0)
    templates, kept = {}, {}
    for name in plan["template_names"]:
        w = warm["templates"][name] if warm is not None else None
        count = sum(t["templates"][name]["count"] for t in workers) - (w["count"] if w else 0)
        hist = merge_all(Histogram.from_native(t["templates"][name]["hist"]) for t in workers)
        hist = _minus(hist, w["hist"] if w else None)
        templates[name] = {"count": count, "share": count / txns if txns else 0.0, "latency_us": hist.summary_us()}
        kept[name] = {"service": hist}
        if plan["pacing"]["mode"] == "open":   # response time: from the intended start (no coordinated omission)
            resp = merge_all(Histogram.from_native(t["templates"][name]["response_hist"]) for t in workers)
            resp = _minus(resp, w["response_hist"] if w else None)
            templates[name]["response_latency_us"] = resp.summary_us()
            kept[name]["response"] = resp
    rate = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
    pacing = dict(plan["pacing"])
    if pacing["mode"] == "open":
        pacing["achieved_rate"] = rate(txns)
        pacing["achieved_ratio"] = rate(txns) / pacing["target_rate"] if pacing["target_rate"] else None
        lag = merge_all(Histogram.from_native(t["hist"]["lag"]) for t in workers if "lag" in t["hist"])
        pacing["start_lag_us"] = lag.summary_us()
    return ({
        "transactions": txns, "txn_per_sec": rate(txns),
        "reads_per_sec": rate(sum(ops.get(k, 0) for k in _READ_OPS)),
        "writes_per_sec": rate(sum(ops.get(k, 0) for k in _WRITE_OPS)),
        "keys_per_sec": rate(found or 0), "ops_by_type": {k: v for k, v in ops.items() if k != "txn"},
        "templates": templates, "retries": sum(t["retries"] for t in workers),
        "aborts": sum(t["aborts"] for t in workers), "pacing": pacing,
        "isolation": isolation, "template_txn": plan["template_txn"],
    }, kept)


def _mix_as_run(mix, spec):
    """The mix a run executes: the workload's own, with the run's distribution (--distribution) and target
    rate (--target-rate, in total) in place of the mix's.  A result records the mix as defined
    (mix.definition) and, beside it, the distribution and pacing it ran with (mix.distribution, mix.pacing)."""
    if spec.distribution is not None:
        mix = dataclasses.replace(mix, distribution=make_distribution(spec.distribution))
    if spec.target_rate:
        mix = dataclasses.replace(mix, pacing=dataclasses.replace(mix.pacing, target_rate=spec.target_rate,
                                                                  per_client=False))
    return mix


def _build(session, wl, phase, params, threads, partial, started, ended, before, after, sampler,
           peak_scope, engine_stats, plan=None, amp=None) -> BenchmarkResult:
    spec = session.spec
    workers = [t for t in threads if t["role"] == "worker"]
    writer = next((t for t in threads if t["role"] == "writer"), None)
    if wl.native == "compact":
        workers = workers[:1]
    ops = sum(n for t in workers for op, n in t["ops"].items() if op != "txn")   # a mix's ops, not its txns
    t0 = min(t["t_start_ns"] for t in workers)
    t1 = max(t["t_end_ns"] for t in workers)
    by_op = {}
    for t in workers:
        for op, h in t["hist"].items():
            by_op[op] = by_op.get(op, Histogram()).merge(Histogram.from_native(h))
    reads = not wl.writes or wl.native in ("readwhilewriting", "deleterandom", "mix")
    found = sum(t["found"] for t in workers) if reads else None
    not_found = sum(t["not_found"] for t in workers) if reads else None
    warmup = warm_mix = None
    if sampler.warm is not None:
        wt, wsnap, _ = sampler.warm
        w_ops = sum(wsnap["workers"]["ops"].values())
        if plan is not None:   # a mix's progress counts transactions; its ops are in the op histograms
            warm_mix = _warm_mix(wsnap, plan)
            w_ops = sum(warm_mix["ops"].values())
        warmup = {"seconds": (wt - t0) / 1e9, "ops_excluded": w_ops, "excluded": True}
        if warm_mix is not None:
            warmup["transactions_excluded"] = warm_mix["txns"]
        ops -= w_ops
        if found is not None:
            found -= wsnap["workers"]["found"]
            not_found = None
        for op, counts in wsnap["workers"]["hist"].items():
            if op in by_op and not (op == "txn" and warm_mix is not None):
                by_op[op] = _minus(by_op[op], counts)
        if warm_mix is not None and "txn" in by_op:   # the simple templates' transactions too
            by_op["txn"] = _minus(by_op["txn"], warm_mix["txn_hist"])
        t0 = wt
    overall = by_op["txn"] if plan and "txn" in by_op else merge_all(by_op.values())
    mix_record = template_hists = w_hist = None
    if plan:
        mix_record, template_hists = _mix_record(threads, plan, (t1 - t0) / 1e9, found, session.engine.isolation,
                                                 warm_mix)
    writer_record = None
    if writer is not None:
        w_ops = sum(writer["ops"].values())
        w_secs = (writer["t_end_ns"] - writer["t_start_ns"]) / 1e9
        w_hist = merge_all(Histogram.from_native(h) for h in writer["hist"].values())
        writer_record = {"ops": w_ops, "seconds": w_secs, "ops_per_sec": w_ops / w_secs if w_secs > 0 else 0.0,
                         "bytes": writer["bytes"], "latency_us": w_hist.summary_us(),
                         "cpu_user_s": writer["cpu_user_s"], "cpu_sys_s": writer["cpu_sys_s"],
                         "ctx_voluntary": writer["nvcsw"], "ctx_involuntary": writer["nivcsw"]}
    acct = accounting.phase_record(before, after, ops, session.where.path, session.device or session.device_note,
                                   peak_scope)
    acct["threads"] = [{"index": t["index"], "role": t["role"], "cpu_user_s": t["cpu_user_s"],
                        "cpu_sys_s": t["cpu_sys_s"], "ctx_voluntary": t["nvcsw"],
                        "ctx_involuntary": t["nivcsw"]} for t in threads]
    worker_cpu = sum(t["cpu_user_s"] + t["cpu_sys_s"] for t in workers)
    acct["workers_cpu_pct"] = worker_cpu / ((t1 - t0) / 1e9) * 100 if t1 > t0 else None
    adapter_version = session.native.adapters()[session.cfg.adapter]
    build = native.facts_for_result(session.cfg.adapter, session.where.path)
    build_warning = buildfacts.warning_for(spec.engine, build)
    warnings_all = list(session.warnings) + ([build_warning] if build_warning else [])
    if writer_record is not None and writer_record["ops"] == 0 and ops > 0:
        # the readers finished before the scheduler ran the writer (more threads than cores, a short run)
        warnings_all.append("readwhilewriting: the writer made no writes before the readers finished, so this "
                            "measured reads alone; give the readers more work (reads, or duration) than a "
                            "scheduler time slice")
    provenance = {
        "spec": spec.to_dict(), "trial": session.trial, "key_encoding": session.native.KEY_ENCODING,
        "engine_config_given": session.given_config, "engine_config_effective": session.effective_config,
        "machine": {**accounting.machine(), "system": session.system}, "storage": session.storage,
        "build": accounting.kvlab_build(),
        "library_prefix": native.build_config().get("engines", {}).get(session.cfg.adapter, {}).get("prefix"),
        "process": {"glibc_static_tls_room": native.started_with_static_tls_room()},
        "started_at": started, "ended_at": ended,
    }
    return BenchmarkResult(
        engine=spec.engine, workload=wl.name, phase=phase, threads=params["threads"], ops=ops,
        seconds=(t1 - t0) / 1e9,
        thread_seconds=sum(t["t_end_ns"] - max(t["t_start_ns"], t0) for t in workers) / 1e9,
        found=found, not_found=not_found, bytes=sum(t["bytes"] for t in workers),
        latency_us=overall.summary_us(),
        latency_by_op={op: h.summary_us() for op, h in by_op.items()},
        latency_unit="txn" if plan else "batch" if params["batch"] > 1 and wl.writes else "op",
        seed=spec.seed, params={**params, "workload": wl.name, "native_loop": wl.native,
                                "engine_config": session.effective_config},
        versions={"engine_library": adapter_version, "adapter": session.cfg.adapter,
                  "kvlab": provenance["build"]["kvlab"], "git_commit": provenance["build"]["git_commit"],
                  "engine_build": build},
        key_encoding=session.native.KEY_ENCODING, writer=writer_record, partial=partial,
        warnings=warnings_all, started_at=started, ended_at=ended,
        per_thread_ops=[sum(t["ops"].values()) for t in workers],
        accounting=acct,
        intervals=_intervals(sampler.samples, sampler.samples[0][0] if sampler.samples else t0, plan, amp),
        amplification=amp.phase(threads, before, after, acct, engine_stats) if amp is not None else None,
        warmup=warmup, engine_stats=engine_stats, provenance=provenance, trial=session.trial,
        mix=({**mix_record, "distribution": _mix_as_run(wl.mix, spec).distribution.to_dict(),
              "definition": wl.mix.to_dict()} if plan else None),
        graph=_graph_record(threads, workers, session.graph, (t1 - t0) / 1e9)
        if "graph" in threads[0] else None,
        histograms=histograms_record(overall, by_op, template_hists, w_hist),
    )


def _graph_record(threads, workers, graph, seconds) -> dict:
    """LinkBench: what the load wrote (nodes, links, their rates) or what get_links_list returned."""
    nodes = sum(t["graph"]["nodes_loaded"] for t in threads)
    links = sum(t["graph"]["links_loaded"] for t in threads)
    listed = sum(t["graph"]["links_listed"] for t in workers)
    rate = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
    return {"nodes_loaded": nodes, "links_loaded": links, "nodes_per_sec": rate(nodes), "links_per_sec": rate(links),
            "links_listed": listed, "settings": dict(graph) if graph else None}
