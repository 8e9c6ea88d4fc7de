"""The session: one open engine across the phases of a trial (execution.run.phases.plan).  It opens (and reopens,
when a phase's settings differ) the engine in the prepared database directory, runs one phase at a time through
the native driver with the sampler watching, takes what the phase counted after its warm-up (phases.count) and
its accounting and amplification, and hands them with the trial's facts to the record builder, which turns them
into a BenchmarkResult without reading the session."""
from __future__ import annotations

import math
import time

from ... import engines
from ...engines.descriptor import Absent
from ...model import workloads
from ...results import amplification, engine_counters, sanity
from ...results.result import BenchmarkResult
from ..dbfiles import dbdir
from ..host import accounting, buildfacts, system
from ..native import adapter_name, build_config, facts_for_result, started_with_static_tls_room
from ..progress import ProgressTracker
from . import loads, mixplan, phases, record, workingset
from .events import reader_for
from .phaseamp import Carried, PhaseAmp
from .phases import Phase
from .sampler import Sampler, auto_warmup, steady_state


def _warn(b: BenchmarkResult, text: str):
    if text not in b.warnings:
        b.warnings.append(text)


def instruments(spec, desc) -> tuple[dict, str | None]:
    """What measured the run besides its clock of the whole (the result's params["instruments"]), and why the
    engine's own counters are not read where they are not (None: they are, or the run did not ask): the per-op
    latency clock, the time series' sampler, the engine's statistics read after each phase and its events at each
    sample, and the statistics an engine keeps at a cost on every op (the descriptor's counter_cost), on only when
    asked for.  benchmarks/instrument_cost.py measures what each costs."""
    costly = desc.costly_counters
    off = None
    if spec.engine_stats and costly and not spec.engine_counters:
        off = (f"{desc.title}'s own counters were not kept: {desc.counter_cost}; --engine-counters "
               "(engine_counters=True) turns them on")
    reads = spec.engine_stats and off is None
    return {
        "latency_clock": "one clock read per op (each op's latency into its histogram)",
        "time_series_s": spec.interval or None,
        "engine_stats": "read after each phase" if reads else "not read",
        "engine_events": (f"read at each {spec.interval:g} s sample" if reads and spec.interval and desc.events
                          else "not read"),
        "engine_counters": (("on: " + desc.counter_cost) if spec.engine_counters else "off: " + desc.counter_cost)
        if costly else "kept by the engine at no per-op cost kvlab can turn off",
        **({"engine_op_counters": ("recorded per op: " if spec.engine_counters else "not recorded (--engine-counters "
                                   "records them): ") + desc.op_counters} if desc.op_counters else {}),
    }, off


def _warmup_longer_than_phase(phase: Phase, b: BenchmarkResult) -> None:
    """A fixed warm-up the phase ended before (a count-bounded phase shorter than it): nothing was cut, and the
    record says so rather than pass the whole phase off as the steady part (issue 46)."""
    if phase.warmup == "auto" or not float(phase.warmup or 0) or b.warmup is not None or b.partial:
        return
    _warn(b, f"the warm-up of {float(phase.warmup):g} s is longer than {b.workload}, which ran {b.seconds:.3g} s: "
             "nothing was cut, so its figures include the start-up transient; give a shorter warm-up, more work "
             "(more reads or keys), or a duration")


class Trial:
    """One trial: the engine opened once, its phases run one at a time (a _native.Session is something else: one
    client context of an open engine)."""

    def __init__(self, spec, cfg, native, where, warnings, trial, control=None, budget=None, tracer=None):
        self.spec, self.cfg, self.native, self.where, self.warnings = spec, cfg, native, where, warnings
        self.tracer = tracer   # recording: the trace file's writer (traces.fileformat.TraceWriter)
        self.trial, self.control = trial, control
        # the spec's memory budget (runner.memory_budget): the settings its split gives where the spec gives none
        self.budget = budget
        self.profiler = None   # --profile: execution.run.profiler.Profiler, set by the worker
        self.counter = None    # --count: execution.run.counter.Counter, set by the worker
        self.counted: dict = {}   # --count: each record's index -> (callgrind's dumps, the ops they count)
        self.op_before: dict = {}   # --engine-counters: the engine's per-op counters after the last phase
        self.loaded = where.existed and not spec.resume   # a resumed load runs on the database it left
        self.resumed = False
        self.resume_note = None   # a resumed load found nothing left to do
        self.results = []
        self.engine = None
        self.engine_settings = None
        self.reported_config = None   # (what the engine reports about itself, or None, and why not): per open
        self._working_set_said = False   # the working-set warning: once a trial
        self.device, self.device_note = accounting.block_device(where.path)
        self.storage = accounting.storage(where.path)
        # what the workload believes the database holds (space amplification), where the engine's own account
        # ended: handed from phase to phase; and why a figure cannot be had here
        self.carried = Carried(live=amplification.live_start(known=not where.existed))
        self.storage_why = amplification.storage_notes(self.storage, self.device, self.device_note)
        # the machine as this trial starts (load, other busy processes, governor, clocksource, memory)
        self.system = system.snapshot()
        self.warnings.extend(w for w in system.warnings(self.system) if w not in self.warnings)
        self.machine = {**accounting.machine(), "system": self.system}
        self.kvlab_build = accounting.kvlab_build()
        # a mix with write transactions opens the engine in its transactional mode from the start
        mixes = [wl.mix for wl in (workloads.get(name, spec.mixes) for name in spec.workloads) if wl.mix is not None]
        self.transactions = any(mixplan.needs_transactions(m) for m in mixes)
        # LinkBench: the graph its load writes and its operations query (kv_graph.h)
        self.graph = phases.graph_of(spec)
        self.desc = engines.descriptor(cfg)
        self.instruments, self.counters_off = instruments(spec, self.desc)

    def open(self, settings: dict):
        if self.engine is not None and settings == self.engine_settings:
            return self.engine
        self.close()
        asked = settings
        if self.budget and self.budget.get("split"):
            settings = {**self.budget["split"], **settings}   # a budget's split, where the spec set none
        for key, value in ((self.budget or {}).get("advice") or {}).items():   # data larger than the budget
            if key == "options":   # appended: the options given stay, the advice joins them
                have = str(settings.get("options") or "")
                if str(value) not in have.split(self.cfg.options_separator):
                    settings = {**settings, "options": f"{have}{self.cfg.options_separator}{value}" if have else value}
            elif settings.get(key) is None:
                settings = {**settings, key: value}
        # the database's own record decides what a reopen keeps (format, a recovery log that stays on)
        settings, notes = dbdir.reconcile(self.where, self.cfg, settings)
        self.warnings.extend(n for n in notes if n not in self.warnings)
        threads = max(self.spec.threads, self.graph["loaders"] if self.graph else 0)
        config = self.cfg.config(settings, max_threads=threads + 2)
        if self.transactions:
            config["transactions"] = True
        if self.spec.engine_counters:
            config["engine_counters"] = True
        self.where.engine_opening()
        try:
            self.engine = self.native.Engine(adapter_name(self.cfg), str(self.where.path), config)
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
        self.reported_config = None
        self.given_config = dict(settings)
        self.effective_config = {k: v for k, v in config.items() if v not in (None, "")}
        return self.engine

    def close(self):
        if self.engine is not None:
            self.engine.close()
            self.engine = None
            self.op_before = {}   # a reopened engine counts from zero
            self.where.engine_closed()   # closed cleanly: the next open need not wonder

    def add(self, result, on_result):
        if self.budget is not None:
            result.params["memory_budget"] = {k: (dict(v) if isinstance(v, dict) else v)
                                              for k, v in self.budget.items()}
        sanity.annotate(result, earlier=self.results)
        self.results.append(result)
        if on_result:
            on_result(result)

    def plan(self, load_only: bool = False) -> tuple[Phase, ...]:
        """The phases this trial runs (phases.plan), on the database as this session found it."""
        return phases.plan(self.spec, loaded=self.loaded, load_only=load_only)

    def facts(self) -> record.TrialFacts:
        """What a record needs of this trial, the engine as now opened included."""
        adapter = self.cfg.adapter
        build_facts = facts_for_result(self.cfg.native_name, self.where.path)
        library = (self.native.loaded_adapters()[self.cfg.native_name][1] if self.cfg.build
                   else self.native.adapters()[adapter])
        return record.TrialFacts(
            spec=self.spec, trial=self.trial, adapter=adapter, engine_library=library,
            key_encoding=self.native.KEY_ENCODING, given_config=dict(self.given_config),
            effective_config=dict(self.effective_config),
            isolation=self.engine.isolation if self.engine is not None else None, warnings=tuple(self.warnings),
            build_facts=build_facts, build_warning=buildfacts.warning_for(self.spec.engine, build_facts),
            machine=self.machine, storage=self.storage, kvlab_build=self.kvlab_build,
            reported_config=self._reported_config(),
            library_prefix=build_config().get("engines", {}).get(adapter, {}).get("prefix"),
            static_tls_room=started_with_static_tls_room(), instruments=dict(self.instruments))

    def _reported_config(self) -> tuple:
        """The configuration the engine reports about itself (its descriptor's `own_config`), read once per open,
        after the first phase (an LSM's table files, which name some settings, exist only once it wrote):
        ({setting: value} or None, why there is none)."""
        if self.reported_config is None and self.engine is not None:
            read = engines.descriptor(self.cfg).own_config
            if isinstance(read, Absent):
                self.reported_config = (None, read.reason)
            else:
                got = self.engine.stats()
                stats = {"numbers": got[0], "text": got[1]} if got is not None else None
                try:
                    self.reported_config = (read(self.where.path, stats), None)
                except (OSError, ValueError, UnicodeError) as e:
                    self.reported_config = (None, f"{self.cfg.name}'s own configuration could not be read: {e}")
        return self.reported_config or (None, "the engine is not open")

    def run_one(self, phase: Phase) -> BenchmarkResult | None:
        """One phase on the open engine, measured and recorded; None where a resumed load finds every record
        already there."""
        params = phase.params()
        if phase.workload.batches and not phase.writes:   # reads in batches (multireadrandom): a batched read or gets
            batched = self.native.batched_reads()   # a version loaded at run time by its own name (its own table)
            params["batched_read"] = batched.get(self.cfg.native_name) or batched.get(self.cfg.adapter) or (
                f"none: {self.cfg.adapter} has no batched read, so each batch is {params['batch']} get calls")
        engine = self.open(dict(phase.settings))
        if phase.load is not None:
            params["load_method"] = loads.method(self.spec, self.native, self.cfg.native_name)
            if not self._resume(engine, params):
                return None
        plan = None
        if phase.mix is not None:
            plan = mixplan.compile_mix(phase.mix, phase.value_size, clients=phase.threads)
        extra = {}
        if phase.replay is not None:
            extra["replay"] = phase.replay.native()
            params["replay"] = {**dict(self.spec.replay or {}), **phase.replay.describe}
        if self.tracer is not None:
            extra["trace"] = self.tracer.phase({
                "name": phase.name, "kind": phase.kind, "loop": phase.loop, "threads": phase.threads,
                "key_size": phase.key_size, "value_size": phase.value_size, "num": phase.num})
            params["record_trace"] = self.tracer.path
        run = self.native.Run(engine, phase.loop, params, mix=plan,
                              graph=dict(phase.graph) if phase.graph is not None else None, **extra)
        amp = PhaseAmp(phase, plan, engine, self.carried, amplification.ENGINE_COUNTERS.get(self.cfg.adapter),
                       self.spec.engine_stats and not self.counters_off, self.where.path, self.storage_why,
                       **({"off_note": self.counters_off} if self.counters_off else {}))
        if phase.fills and self._fills_record():   # until it ends, the fill is cut (so after a SIGKILL)
            dbdir.update_marker(self.where.path, load={"complete": False, "by": phase.name, "unit": phase.fills,
                                                       "written": None, "of": params["num"]})
        measured, cut, self.carried = self._measure(run, phase, params, plan, amp)
        if phase.writes:
            self.loaded = True
        if any(t.get("own_loop") for t in measured.threads):   # the engine ran the measured loop (kv_engine.h)
            own = self.native.own_loops()
            measured.params["engine_loop"] = own.get(self.cfg.native_name) or own.get(self.cfg.adapter, "")
        result = record.build(phase, measured, self.facts())
        if phase.replay is not None and phase.replay.warning:
            _warn(result, phase.replay.warning)
        if phase.kind == phases.RUN:
            steady_state(result, measured.samples, cut)
            _warmup_longer_than_phase(phase, result)
        self._load_record(phase, params, result)
        self._working_set(phase, result)
        return result

    def _working_set(self, phase: Phase, b: BenchmarkResult):
        """The data a reading phase reads larger than the engine's cache: one warning a trial, with both sizes."""
        if not phase.counts_found or self._working_set_said:
            return
        # the settings the engine opened with (a memory budget's split included), and the budget where one holds
        opened = getattr(self, "given_config", None) or self.engine_settings or {}
        text = workingset.warning(self.cfg.name, dict(opened), (b.accounting or {}).get("db_size_bytes"),
                                  self.spec.memory or accounting.machine().get("memory_bytes"))
        if text:
            _warn(b, text)
            self._working_set_said = True

    def _load_record(self, phase: Phase, params: dict, b: BenchmarkResult):
        """After a phase that fills the key space, the marker says how far it got; a phase that needs the data,
        on a database whose fill was cut, says so; a uniform read whose found share is below what the
        database's writes imply says both numbers."""
        wl = phase.workload
        if phase.fills:
            if self._fills_record():
                dbdir.update_marker(self.where.path, load=self._fill_record(phase, params, b))
            return
        if not phase.needs_data:
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
        if phase.uniform_reads and b.found is not None and b.ops >= 1000:
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

    def _fill_record(self, phase: Phase, params: dict, b: BenchmarkResult) -> dict:
        """The marker's record of a fill: records in key order from the first key (a prefix: resume continues
        it), random writes (a count), or a LinkBench graph's nodes."""
        first = params.get("first_key") or 0
        in_order = phase.fills != "writes"
        of = params["num"] - (first if in_order else 0)
        if phase.fills == "nodes":
            done = (b.graph or {}).get("nodes_loaded", 0)
        else:   # a warm-up's ops were written all the same
            done = b.ops + int((b.warmup or {}).get("ops_excluded") or 0)
        out = {"complete": not b.partial and done >= of, "by": phase.name, "unit": phase.fills,
               "written": min(first + done, params["num"]) if in_order else done, "of": params["num"]}
        if phase.fills == "records":
            out["records"] = out["written"]
        return out

    def _expected_found(self, num: int, cut: dict) -> tuple:
        """(the share of uniform reads over `num` keys that should find a key, what says so) or (None, ''): from
        this run's writes, else (a reused database) from its completed fill, over the key space the reads use."""
        keys = self.carried.live.get("keys")
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

    def _measure(self, run, phase: Phase, params: dict, plan, amp: PhaseAmp) -> tuple:
        """Execute `run` with the sampler watching, then take what it counted after its warm-up, the accounting
        over the same span and the phase's amplification: (the Measurement, warmup="auto"'s cut or None, what the
        phase hands the next one)."""
        spec = self.spec
        started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        peak_scope = "phase" if accounting.reset_peak_rss() else "process"
        before = accounting.snapshot(self.device)
        tracker = None
        if self.control is not None:
            tracker = ProgressTracker(run, spec.engine, phase.name, phase.kind, phase.workload.native, params)
        auto = phase.warmup == "auto"
        profiler = self.profiler if phase.kind == phases.RUN else None   # --profile: the measured phases
        reads_stats = spec.engine_stats and not self.counters_off
        sampler = Sampler(run, spec.interval, 0.0 if auto else float(phase.warmup), self.device, self.control,
                          tracker, self.where.path,
                          events=reader_for(self.engine, self.cfg.adapter) if reads_stats else None)
        if profiler is not None:
            profiler.enable()
        if self.counter is not None:
            self.counter.start()
        try:
            threads, partial = sampler.execute()
        finally:
            if profiler is not None:
                profiler.disable()
            dumps = self.counter.end() if self.counter is not None else None
        cut = auto_warmup(sampler) if auto else None
        after = accounting.snapshot(self.device)
        if profiler is not None:   # the samples from the warm-up's end on, as the figures count
            start = (sampler.warm[2] if sampler.warm is not None else before).wall_ns
            profiler.keep(str(len(self.results)), start, after.wall_ns)
        params["latency_clock"], params["ns_per_tick"] = run.latency_clock
        ended = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        engine_stats = None
        if reads_stats:
            got = self.engine.stats()
            if got is not None:
                engine_stats = {"numbers": got[0], "text": got[1]}
        counted = phases.count(phase, threads, sampler.warm, plan)
        # every op the phase ran, its warm-up's too: what the engine's counters and the instructions count
        every_op = counted.ops if sampler.warm is None else phases.count(phase, threads, None, plan).ops
        if spec.engine_counters and self.desc.op_counters and engine_stats is not None:
            now = engine_counters.select(engine_stats["numbers"], self.desc.op_counter_names)
            params["engine_op_counters"] = engine_counters.phase_record(self.op_before, now, every_op,
                                                                        self.desc.op_counters)
            self.op_before = now
        if dumps is not None:
            self.counted[len(self.results)] = (dumps, every_op)
        # the process's counters over what was counted: from the warm-up's cut, where there is one
        acct = accounting.phase_record(sampler.warm[2] if sampler.warm is not None else before, after,
                                       counted.ops, self.where.path, self.device or self.device_note, peak_scope)
        amplification_record, carried = amp.phase(threads, before, after, acct.get("db_size_bytes"), engine_stats)
        return record.Measurement(params=params, threads=threads, counted=counted, partial=partial,
                                  started=started, ended=ended, accounting=acct, samples=sampler.samples,
                                  engine_stats=engine_stats, plan=plan, amp=amp,
                                  amplification=amplification_record, stopped_by=sampler.stopped_by), cut, carried
