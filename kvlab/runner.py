"""The runner: turns a RunSpec into native runs and results.

It prepares the database directory, opens the engine once, runs each workload
through the native driver (GIL released for the whole run, on a helper thread
so Ctrl-C in the main thread can stop the native threads and keep a partial
result), and builds one BenchmarkResult per workload.  A read workload on a
fresh database first gets a load phase (fillseq in batches of 1000, reported
with phase="load").
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from . import __version__, dbdir, engines, errors, workloads
from .histogram import Histogram, merge_all
from .results import BenchmarkResult, RunResult
from .spec import RunSpec, make_spec

LOAD_BATCH = 1000


def run(engine: str = "lmdb", workload="fillseq,readrandom", **params) -> RunResult:
    """Run `workload` (a name or comma list, in order) on `engine`.

    Parameters are RunSpec fields (num, reads, threads, duration, value_size,
    key_size, batch, seed, db, ...) and engine settings (cache_size, sync,
    compression, options, ...).  Unknown names raise SpecError listing the allowed ones.
    """
    return run_spec(make_spec(engine, workload, **params))


def run_spec(spec: RunSpec, on_result: Callable[[BenchmarkResult], None] | None = None) -> RunResult:
    cfg = engines.require_built(spec.engine)
    native = engines._native()
    warnings = [f"{spec.engine} ignores {k} (it has no such setting)" for k in cfg.ignored(spec.engine_settings)]
    where = dbdir.prepare(spec.db, spec.engine, native.KEY_ENCODING, spec.use_existing_db)
    session = _Session(spec, cfg, native, where, warnings)
    try:
        for name in spec.workloads:
            wl = workloads.get(name)
            if wl.needs_data and not session.loaded and spec.auto_load:
                session.add(session.run_one(workloads.get("fillseq"), phase="load"), on_result)
            session.add(session.run_one(wl, phase="run"), on_result)
            if session.results[-1].partial:
                break
    finally:
        session.close()
        if not spec.keep_db:
            where.cleanup()
    return RunResult(session.results, spec)


class _Session:
    """One open engine across the workloads of a run."""

    def __init__(self, spec, cfg, native, where, warnings):
        self.spec, self.cfg, self.native, self.where, self.warnings = spec, cfg, native, where, warnings
        self.loaded = where.existed
        self.results = []
        self.engine = None
        self.engine_settings = None

    def open(self, settings: dict):
        if self.engine is not None and settings == self.engine_settings:
            return self.engine
        self.close()
        config = self.cfg.config(settings, max_threads=self.spec.threads + 2)
        self.engine = self.native.Engine(self.cfg.adapter, str(self.where.path), config)
        self.engine_settings = settings
        self.effective_config = {k: v for k, v in config.items() if v not in (None, "")}
        return self.engine

    def close(self):
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def add(self, result, on_result):
        self.results.append(result)
        if on_result:
            on_result(result)

    def run_one(self, wl: workloads.Workload, phase: str) -> BenchmarkResult:
        spec = self.spec
        implies = dict(wl.implies)
        settings = dict(spec.engine_settings)
        if "sync" in implies:
            settings["sync"] = implies.pop("sync")
        num = spec.num // implies.pop("num_divisor", 1) or 1
        params = {
            "num": spec.num if phase == "load" else num,
            "reads": spec.reads_per_thread, "threads": 1 if phase == "load" else spec.threads,
            "duration": 0.0 if phase == "load" else float(spec.duration),
            "key_size": spec.key_size, "value_size": spec.value_size,
            "batch": LOAD_BATCH if phase == "load" else implies.pop("batch", spec.batch),
            "seed": spec.seed, "compression_ratio": float(spec.compression_ratio),
            "seek_nexts": spec.seek_nexts, "writes_per_second": float(spec.writes_per_second),
        }
        engine = self.open(settings)
        run = self.native.Run(engine, wl.native, params)
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        threads, partial = _execute(run)
        params["latency_clock"], params["ns_per_tick"] = run.latency_clock
        ended = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if wl.writes or wl.native in ("fillseq", "fillrandom"):
            self.loaded = True
        return _build(self, wl, phase, params, threads, partial, started, ended)


def _execute(run):
    """Run on a helper thread; Ctrl-C here asks the native threads to stop and
    returns what they did (partial=True)."""
    box = {}

    def target():
        try:
            box["threads"] = run.execute()
        except BaseException as exc:  # re-raised on the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="kvlab-native-run", daemon=True)
    t.start()
    partial = False
    while t.is_alive():
        try:
            t.join(0.1)
        except KeyboardInterrupt:
            run.request_stop()
            partial = True
    if "error" in box:
        raise box["error"]
    return box["threads"], partial


def _build(session, wl, phase, params, threads, partial, started, ended) -> BenchmarkResult:
    spec = session.spec
    workers = [t for t in threads if t["role"] == "worker"]
    writer = next((t for t in threads if t["role"] == "writer"), None)
    if wl.native == "compact":
        workers = workers[:1]
    ops = sum(sum(t["ops"].values()) for t in workers)
    t0 = min(t["t_start_ns"] for t in workers)
    t1 = max(t["t_end_ns"] for t in workers)
    by_op = {}
    for t in workers:
        for op, h in t["hist"].items():
            by_op[op] = by_op.get(op, Histogram()).merge(Histogram.from_native(h))
    reads = not wl.writes or wl.native in ("readwhilewriting", "deleterandom")
    writer_record = None
    if writer is not None:
        w_ops = sum(writer["ops"].values())
        w_secs = (writer["t_end_ns"] - writer["t_start_ns"]) / 1e9
        w_hist = merge_all(Histogram.from_native(h) for h in writer["hist"].values())
        writer_record = {"ops": w_ops, "seconds": w_secs, "ops_per_sec": w_ops / w_secs if w_secs > 0 else 0.0,
                         "bytes": writer["bytes"], "latency_us": w_hist.summary_us()}
    adapter_version = session.native.adapters()[session.cfg.adapter]
    return BenchmarkResult(
        engine=spec.engine, workload=wl.name, phase=phase, threads=params["threads"], ops=ops,
        seconds=(t1 - t0) / 1e9, thread_seconds=sum(t["t_end_ns"] - t["t_start_ns"] for t in workers) / 1e9,
        found=sum(t["found"] for t in workers) if reads else None,
        not_found=sum(t["not_found"] for t in workers) if reads else None,
        bytes=sum(t["bytes"] for t in workers),
        latency_us=merge_all(by_op.values()).summary_us(),
        latency_by_op={op: h.summary_us() for op, h in by_op.items()},
        latency_unit="batch" if params["batch"] > 1 and wl.writes else "op",
        seed=spec.seed, params={**params, "workload": wl.name, "native_loop": wl.native,
                                "engine_config": session.effective_config},
        versions={"engine_library": adapter_version, "adapter": session.cfg.adapter, "kvlab": __version__},
        key_encoding=session.native.KEY_ENCODING, writer=writer_record, partial=partial,
        warnings=list(session.warnings), started_at=started, ended_at=ended,
        per_thread_ops=[sum(t["ops"].values()) for t in workers],
    )
