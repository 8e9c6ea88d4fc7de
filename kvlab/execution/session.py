"""The session: one open engine across the workloads of a trial.  It opens (and reopens, when a workload's
settings differ) the engine in the prepared database directory, runs one phase at a time through the native
driver with the sampler watching, and has the record builder turn each into a BenchmarkResult."""
from __future__ import annotations

import math
import time

from .. import errors
from ..model import workloads
from ..results import amplification, sanity
from ..results.result import BenchmarkResult
from . import accounting, dbdir, loads, mixplan, mixrecord, record, system
from .events import reader_for
from .phaseamp import PhaseAmp
from .progress import ProgressTracker
from .sampler import Sampler, auto_warmup, steady_state


def _warn(b: BenchmarkResult, text: str):
    if text not in b.warnings:
        b.warnings.append(text)


class Session:
    """One open engine across the workloads of a trial."""

    def __init__(self, spec, cfg, native, where, warnings, trial, control=None):
        self.spec, self.cfg, self.native, self.where, self.warnings = spec, cfg, native, where, warnings
        self.trial, self.control = trial, control
        self.loaded = where.existed and not spec.resume   # a resumed load runs on the database it left
        self.resumed = False
        self.resume_note = None   # a resumed load found nothing left to do
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
        self.key_hash = loads.hashed_keys(spec)
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
        self.where.engine_opening()
        try:
            self.engine = self.native.Engine(self.cfg.adapter, str(self.where.path), config)
        except BaseException:
            if not self.where.unclean:
                self.where.engine_closed()   # it never opened: nothing left unclosed
            raise
        if self.where.unclean:
            note = (f"the database at {self.where.path} was left open by a process that ended without closing it "
                    f"(killed); {self.cfg.name} ran its recovery as it opened")
            if note not in self.warnings:
                self.warnings.append(note)
        self.engine_settings = asked
        self.given_config = dict(settings)
        self.effective_config = {k: v for k, v in config.items() if v not in (None, "")}
        return self.engine

    def close(self):
        if self.engine is not None:
            self.engine.close()
            self.engine = None
            self.where.engine_closed()   # closed cleanly: the next open need not wonder

    def add(self, result, on_result):
        sanity.annotate(result, earlier=self.results)
        self.results.append(result)
        if on_result:
            on_result(result)

    def run_one(self, wl: workloads.Workload, phase: str, value_size: int | None = None) -> BenchmarkResult | None:
        """One phase of `wl` ("load" or "run") on the open engine, measured and recorded; None where a resumed
        load finds every record already there."""
        load = phase == "load"
        settings, params, graph = self._phase_params(wl, load, value_size)
        engine = self.open(settings)
        if "load" in params and not self._resume(engine, params):
            return None
        plan = None
        if wl.mix is not None:
            plan = mixplan.compile_mix(mixrecord.mix_as_run(wl.mix, self.spec), self.spec.value_size,
                                       clients=self.spec.threads, target_rate=self.spec.target_rate)
            params["value_size"] = plan["value_max"]
            params["batch"] = 1
        run = self.native.Run(engine, params.get("native_loop", wl.native), params, mix=plan, graph=graph)
        amp = PhaseAmp(self, wl, params, plan, engine, graph is not None)
        native = params.get("native_loop", wl.native)
        if native in self._FILLS and self._fills_record():   # until it ends, the fill is cut (so after a SIGKILL)
            dbdir.update_marker(self.where.path, load={"complete": False, "by": wl.name, "unit": self._FILLS[native],
                                                       "written": None, "of": params["num"]})
        measured, cut = self._measure(run, wl, phase, params)
        measured.plan, measured.amp = plan, amp
        if wl.writes or wl.native in ("fillseq", "fillrandom"):
            self.loaded = True
        if self.spec.engine_stats:
            got = engine.stats()
            if got is not None:
                measured.engine_stats = {"numbers": got[0], "text": got[1]}
        result = record.build(self, measured)
        if not load:
            steady_state(result, measured.samples, cut)
        self._load_record(wl, native, params, result)
        return result

    # the native loops that fill the key space, and what the marker's load record counts for each
    _FILLS = {"fillseq": "records", "bulkload": "records", "fillrandom": "writes", "graphload": "nodes"}

    def _load_record(self, wl: workloads.Workload, native: str, params: dict, b: BenchmarkResult):
        """After a phase that fills the key space, the marker says how far it got; a phase that needs the data,
        on a database whose fill was cut, says so; a uniform read whose found share is below what the
        database's writes imply says both numbers."""
        if native in self._FILLS:
            if self._fills_record():
                dbdir.update_marker(self.where.path, load=self._fill_record(wl, native, params, b))
            return
        if not wl.needs_data:
            return
        cut = (dbdir.read_marker(self.where.path) or {}).get("load") or {}
        if cut and not cut.get("complete", True):
            if cut.get("by") is None:
                how = "nothing was loaded into it (a run made or cleared it and wrote no fill)"
            elif cut.get("written") is None:
                how = f"its {cut.get('by')} of {cut.get('of', 0):,} {cut.get('unit', 'records')} never finished " \
                      "(the process was killed; how far it got is not known)"
            else:
                share = cut["written"] / cut["of"] if cut.get("of") else 0.0
                how = f"its {cut.get('by')} wrote {cut['written']:,} of {cut['of']:,} {cut.get('unit', 'records')} " \
                      f"({share:.0%})"
            _warn(b, f"the database's load was cut: {how}, so {wl.name} ran on a partial database (keys past the "
                     "cut read as not found); load it again, or --resume a cut fillseq load")
        if wl.uniform_reads and b.found is not None and b.ops >= 1000:
            expected, how = self._expected_found(params["num"], cut)
            got = b.found / b.ops
            if expected is not None and got < 0.95 * expected - 0.01:
                space = f"; the database's key space is {cut['of']:,} keys, these reads range over " \
                    f"{params['num']:,}" if cut.get("of") not in (None, params["num"]) else ""
                _warn(b, f"{wl.name} found {got:.1%} of the keys it read ({b.found:,} of {b.ops:,}) where {how} "
                         f"imply {expected:.1%}{space}: the database holds fewer of these keys than its writes "
                         "should have left (a cut load, another key space or key size, deletes)")

    def _fills_record(self) -> bool:
        """Whether this run's fills say how far the database's fill got: on a database this run made or cleared,
        or a resumed load; a fill over a reused database (a timed fillrandom on it) leaves its record as it was."""
        return not self.where.existed or self.spec.resume

    def _fill_record(self, wl, native: str, params: dict, b: BenchmarkResult) -> dict:
        first = params.get("first_key") or 0
        of = params["num"] - (first if native != "fillrandom" else 0)
        if native == "graphload":
            done = (b.graph or {}).get("nodes_loaded", 0)
        else:   # a warm-up's ops were written all the same
            done = b.ops + int((b.warmup or {}).get("ops_excluded") or 0)
        out = {"complete": not b.partial and done >= of, "by": wl.name, "unit": self._FILLS[native],
               "written": min(first + done, params["num"]) if native != "fillrandom" else done, "of": params["num"]}
        if native in ("fillseq", "bulkload"):
            out["records"] = out["written"]
        return out

    def _expected_found(self, num: int, cut: dict) -> tuple:
        """(the share of uniform reads over `num` keys that should find a key, what says so) or (None, ''): from
        this run's writes, else (a reused database) from its completed fill, over the key space the reads use."""
        keys = self.live.get("keys")
        if keys is not None and num:
            return min(1.0, keys / num), "the writes of this run"
        if not cut.get("complete") or not cut.get("of"):
            return None, ""
        if cut.get("unit") == "writes":   # uniform draws with replacement: the share of keys drawn at least once
            share = 1.0 - math.exp(-cut["written"] / cut["of"])
            return share, f"the database's {cut['written']:,} random writes ({cut.get('by')})"
        # the reads' key space is the one the workload implies was loaded: a smaller database falls short of it
        return 1.0, f"the database's completed {cut.get('by')} of {cut['of']:,} records"

    def _resume(self, engine, params) -> bool:
        """A load of a resumed run starts after the records the database holds (params' first_key); False when
        it holds them all (a warning says so).  Only the run's first load resumes."""
        if not self.spec.resume or self.resumed:
            return True
        self.resumed = True
        first = loads.committed_prefix(engine, self.native, params["num"], params["key_size"], params["key_hash"],
                                       str(self.where.path))
        params["first_key"] = first
        if first < params["num"]:
            return True
        self.resume_note = (f"resume: the database in {self.where.path} holds all {params['num']:,} records of the "
                            "load already; the load did not run")
        self.warnings.append(self.resume_note)
        self.loaded = True
        return False

    def _phase_params(self, wl: workloads.Workload, load: bool, value_size: int | None) -> tuple:
        """(engine settings, the native Run's parameters, a LinkBench graph or None) of one phase: the spec's,
        with what the workload implies (sync, a smaller key space, a batch) and what a load or a graph needs."""
        spec = self.spec
        implies = dict(wl.implies)
        settings = dict(spec.engine_settings)
        if "sync" in implies:
            settings["sync"] = implies.pop("sync")
        num = spec.num // implies.pop("num_divisor", 1) or 1
        params = {
            "num": spec.num if load else num,
            "reads": spec.reads_per_thread, "threads": 1 if load else spec.threads,
            "duration": 0.0 if load else float(spec.duration),
            "key_size": spec.key_size, "value_size": value_size or mixrecord.value_size(wl, spec),
            "batch": loads.LOAD_BATCH if load else implies.pop("batch", spec.batch),
            "seed": spec.seed, "compression_ratio": float(spec.compression_ratio),
            "seek_nexts": spec.seek_nexts, "writes_per_second": float(spec.writes_per_second),
            "key_hash": self.key_hash and (load or wl.mix is not None),
        }
        if wl.native == "fillseq":   # the load phase or a fillseq workload: a load (RunSpec.load, resume)
            params.update(load=spec.load, load_method=loads.method(spec, self.native, self.cfg.adapter),
                          first_key=0)
            if spec.load == "bulk":
                # records a chunk: the batch the caller gave a fillseq workload, else about BULK_CHUNK_BYTES of them
                chunk = spec.batch if not load and spec.batch > 1 else loads.bulk_chunk(spec.key_size,
                                                                                       params["value_size"])
                params.update(native_loop="bulkload", batch=chunk, threads=1)
        graph = self.graph if (wl.native == "graphload" or (wl.mix is not None and wl.mix.graph)) else None
        if wl.native == "graphload" and graph is None:
            raise errors.SpecError("workload 'linkbench-load' loads a LinkBench graph: run it with a LinkBench "
                                   "workload (kvlab linkbench, kvlab.linkbench)")
        if graph is not None:
            params["num"] = graph["nodes"]
            if load:
                params["threads"] = graph["loaders"]
                params["batch"] = 1
        return settings, params, graph

    def _measure(self, run, wl: workloads.Workload, phase: str, params: dict) -> tuple:
        """Execute `run` with the sampler watching: (the Measurement, warmup="auto"'s cut or None)."""
        spec = self.spec
        load = phase == "load"
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        peak_scope = "phase" if accounting.reset_peak_rss() else "process"
        before = accounting.snapshot(self.device)
        tracker = None
        if self.control is not None:
            tracker = ProgressTracker(run, spec.engine, wl.name, phase, wl.native, params)
        auto = spec.warmup == "auto" and not load
        sampler = Sampler(run, spec.interval, 0.0 if load or auto else spec.warmup, self.device, self.control,
                          tracker, self.where.path,
                          events=reader_for(self.engine, self.cfg.adapter) if spec.engine_stats else None)
        threads, partial = sampler.execute()
        cut = auto_warmup(sampler) if auto else None
        after = accounting.snapshot(self.device)
        params["latency_clock"], params["ns_per_tick"] = run.latency_clock
        ended = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        return record.Measurement(workload=wl, phase=phase, params=params, threads=threads, partial=partial,
                                  started=started, ended=ended, before=before, after=after, peak_scope=peak_scope,
                                  samples=sampler.samples, warm=sampler.warm, stopped_by=sampler.stopped_by), cut
