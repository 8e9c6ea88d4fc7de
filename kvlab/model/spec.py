"""RunSpec: a frozen, validated description of one benchmark run.

Defaults follow db_bench (num 1,000,000; reads = num; 16-byte keys; 100-byte
values; compression_ratio 0.5).  seed=None draws a seed from the clock; the seed
used is recorded in every result, so any run can be repeated exactly.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from typing import Mapping

from .. import engines, errors
from ..engines.settings import size_in_bytes
from . import workloads
from .workloads.distributions import distribution as make_distribution
from .workloads.mix import Mix, Op, Pacing, Template
from .workloads.rate import parse as parse_schedule
from .workloads.resolve import resolve

# Key sizes: a key is its index's last key_size decimal digits (kv_gen.h's kv_make_key), one byte at least, and
# the native loops keep each in a buffer of KV_KEY_MAX bytes (cython_ext/include/kv_gen.h).  The C header is
# where the limit is; the model keeps this copy because it must check a spec without a build, and
# tests/test_run_flags.py fails when it differs from the extension's (kvlab._native.KEY_MAX).
MIN_KEY_SIZE = 1
MAX_KEY_SIZE = 1024
MAX_VALUE_SIZE = 64 << 20
MAX_THREADS = 1024
WEEK_S = 7 * 24 * 3600
# the run fields' ranges: RunSpec refuses a value outside them, and `kvlab run` as it parses its flags (RUN_FLAGS)
RANGES = {
    "num": (1, 10**15), "reads": (-1, 10**15), "threads": (1, MAX_THREADS), "key_size": (MIN_KEY_SIZE, MAX_KEY_SIZE),
    "value_size": (1, MAX_VALUE_SIZE), "batch": (1, 1_000_000), "seek_nexts": (0, 1_000_000),
    "seed": (0, 2**64 - 1), "repeat": (1, 1000), "duration": (0, WEEK_S), "warmup": (0, WEEK_S),
    # db_bench accepts ratios above 1 (seed 002 passes 50): they mean incompressible, as 1 does
    "compression_ratio": (0.01, 1000.0), "writes_per_second": (0, 1e12), "target_rate": (0, 1e9),
    "interval": (0, 3600), "memory": (128 << 20, 1 << 50), "readwritepercent": (0, 100),
}
LOADS = ("batched", "bulk")   # RunSpec.load: how a load writes
COUNTS = ("instructions", "cache")   # RunSpec.count: what callgrind counts (cache: with simulated cache misses)
ADVICE = ("auto", "off")      # RunSpec.advice: an engine's own advice for data larger than the memory budget
# run fields `kvlab run` has no flag for (the CLI decides them itself: --db keeps the database)
CLI_FLAGLESS = ("keep_db", "auto_load", "engine_stats", "compression_ratio", "mixes", "replay")
# RunSpec.replay's keys: the trace, its format, the speed and the replay's threads (kvlab replay; docs/traces.md)
REPLAY_KEYS = ("path", "format", "speed", "threads")


@dataclass(frozen=True)
class RunSpec:
    engine: str = "lmdb"
    workloads: tuple = ("fillseq", "readrandom")
    num: int = 1_000_000
    reads: int | None = None          # per thread; None = num
    threads: int = 1
    duration: float = 0.0             # seconds; > 0 runs by time, not count
    value_size: int = 100
    key_size: int = 16
    batch: int = 1
    seed: int | None = None
    compression_ratio: float = 0.5
    seek_nexts: int = 0
    writes_per_second: float = 0.0
    readwritepercent: int = 90        # readrandomwriterandom: of each 100 ops, the reads (db_bench's default 90)
    db: str | None = None             # None: a temporary directory kvlab creates and removes
    use_existing_db: bool = False
    keep_db: bool = False
    overwrite: bool = False           # a fresh run may replace another engine configuration's database at `db`
    auto_load: bool = True            # a read workload on a fresh db gets a fillseq load phase first
    load: str = "batched"             # how a load (the load phase, a fillseq workload) writes: "batched" (puts in
                                      # batches of 1000) or "bulk" (the engine's bulk path, kv_engine.h)
    resume: bool = False              # the load continues from the last key committed in the database at `db`
    interval: float = 1.0             # seconds between time-series samples; 0 = no time series
    warmup: float | str = 0.0         # seconds at the start of each run phase left out of its summary, or
                                      # "auto": the transient MSER-5 finds in the time series (results/steady.py)
    repeat: int = 1                   # trials; > 1 adds median and 95% CI across trials
    engine_stats: bool = True         # attach the engine's internal statistics after each phase
    engine_counters: bool = False     # turn on statistics an engine keeps at a cost on every op (WiredTiger's
                                      # statistics=(fast): the descriptor's counter_cost); off, such an engine's
                                      # events and own write counters are not read
    distribution: str | None = None   # mixes: the key distribution instead of each mix's own
    target_rate: float = 0.0          # mixes: transactions/s in total, open loop; 0 = closed loop
    rate_schedule: str | None = None  # mixes: the open loop's target over time, in total (workloads/rate.py's text;
                                      # a file is read in when the spec is made)
    cpus: str | None = None           # pin the run, engine threads included, to these CPUs: "0", "0-1", "0,2"
    cold: bool = False                # drop the database's pages from the page cache before each trial
    profile: bool = False             # sample the worker's stacks with perf over each measured phase (the record's
                                      # params["profile"]: folded stacks; docs/profile.md)
    count: str | None = None          # "instructions" ("cache": and simulated cache misses): the trial runs under
                                      # callgrind, each measured phase's instructions per op in params["instructions"]
    advice: str = "auto"              # "auto": where the data exceeds the memory budget, the engine's own advice for
                                      # that regime (its descriptor's larger_than_ram: LMDB's nordahead) is applied,
                                      # settings given winning; "off": never
    memory: int | None = None         # one memory budget, bytes (or a size: "1GiB", "512M"): split across the
                                      # engine's caches as its descriptor says, the run held to it in a memory
                                      # cgroup where one can be made; None: each engine's own defaults
    record_trace: str | None = None   # record every op of every phase into this file (docs/traces.md)
    replay: Mapping | None = None     # workload "replay": {"path", "format", "speed", "threads"} (kvlab replay)
    mixes: Mapping[str, Mix] = field(default_factory=dict)      # mixes named in `workloads` (TOML, YCSB, Python)
    engine_settings: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self):
        wl = self.workloads
        if isinstance(wl, str):
            wl = tuple(w.strip() for w in wl.split(",") if w.strip())
        object.__setattr__(self, "workloads", tuple(wl))
        if self.seed is None:
            object.__setattr__(self, "seed", time.time_ns() & 0xFFFFFFFF)
        for name in ("engine_settings", "mixes"):
            if not isinstance(getattr(self, name), Mapping):
                raise errors.SpecError(f"{name} must be a mapping (a dict of name: value), got "
                                       f"{getattr(self, name)!r}")
        object.__setattr__(self, "engine_settings", dict(self.engine_settings))
        object.__setattr__(self, "mixes", dict(self.mixes))
        if engines.is_path(self.engine):   # an engine of your own: its whole path, so a rerun finds it from anywhere
            object.__setattr__(self, "engine", os.path.abspath(os.path.expanduser(self.engine)))
        if self.memory is not None:
            object.__setattr__(self, "memory", memory_bytes(self.memory))
        if self.replay is not None:
            if not isinstance(self.replay, Mapping):
                raise errors.SpecError(f"replay={self.replay!r}: allowed: a mapping of {', '.join(REPLAY_KEYS)} "
                                       "(kvlab.replay makes it)")
            replay = dict(self.replay)
            if isinstance(replay.get("path"), str):   # its whole path, so a rerun finds the trace from anywhere
                replay["path"] = os.path.abspath(os.path.expanduser(replay["path"]))
            object.__setattr__(self, "replay", replay)
        self.validate()

    @property
    def compressed_fraction(self) -> float:
        """What a value shrinks to under compression, as a fraction: compression_ratio, at most 1.  The generator
        (kv_gen.h, as db_bench's CompressibleString) writes at most all-random bytes, so a ratio above 1 (seed 002's
        RocksDB scripts gave 50) means values that do not shrink, never values that grow."""
        return min(float(self.compression_ratio), 1.0)

    @property
    def reads_per_thread(self) -> int:
        return self.num if self.reads is None or self.reads < 0 else self.reads

    def validate(self):
        if self.db is not None and (not isinstance(self.db, (str, os.PathLike)) or not str(self.db)):
            raise errors.SpecError(f"db={self.db!r}: allowed: a folder's path (argparse reads --db=-- as none)")
        cfg = engines.get(self.engine)
        mix_names = self._validate_workloads(cfg)
        self._validate_mix_settings(mix_names)
        self._validate_counts()
        self._validate_warmup()
        _int_range("repeat", self.repeat, *RANGES["repeat"])
        # readmissing draws keys from [num, 2 num); every index must fit the key's digits
        if 2 * self.num > 10 ** self.key_size:
            raise errors.SpecError(f"num={self.num} does not fit {self.key_size}-byte decimal keys; "
                                   f"use key_size >= {len(str(2 * self.num))}")
        if cfg.max_key_size is not None and self.key_size > cfg.max_key_size:
            raise errors.SpecError(f"key_size={self.key_size} is longer than {self.engine} takes; allowed: "
                                   f"{MIN_KEY_SIZE} to {cfg.max_key_size} on {self.engine}")
        self._validate_engine_settings(cfg)
        self._validate_load()
        self._validate_trace()

    def _validate_trace(self):
        """record_trace: a file's path, one trial; replay: the workload "replay" with its trace, and only then."""
        if self.record_trace is not None:
            if not isinstance(self.record_trace, (str, os.PathLike)) or not str(self.record_trace):
                raise errors.SpecError(f"record_trace={self.record_trace!r}: allowed: a file's path")
            if self.repeat != 1:
                raise errors.SpecError(f"record_trace records one trial; repeat={self.repeat} would record "
                                       f"{self.repeat}: record with repeat=1")
        replays = "replay" in self.workloads
        if replays and (self.replay is None or len(self.workloads) != 1):
            raise errors.SpecError("workload 'replay' replays a trace, alone: `kvlab replay FILE --engine E` or "
                                   "kvlab.replay(FILE, engine=E)")
        if self.replay is not None:
            if not replays:
                raise errors.SpecError("replay= is the trace the workload 'replay' replays; give workload='replay'")
            r = self.replay
            extra = sorted(map(str, set(r) - set(REPLAY_KEYS)))
            threads = r.get("threads")
            if (extra or not isinstance(r.get("path"), (str, os.PathLike)) or not str(r["path"])
                    or not isinstance(r.get("format"), (str, type(None)))
                    or not isinstance(r.get("speed", "recorded"), str)
                    or not (threads is None or (type(threads) is int and 1 <= threads <= MAX_THREADS))):
                raise errors.SpecError(f"replay={r!r}: allowed keys {', '.join(REPLAY_KEYS)}: path (the trace "
                                       f"file's), format and speed (text), threads (1 to {MAX_THREADS}, or None)")

    def _validate_workloads(self, cfg):
        """Checks the workloads and mixes against the engine; returns the names of those that are mixes."""
        if not self.workloads:
            raise errors.SpecError(f"no workload given; allowed: {', '.join(workloads.REGISTRY)}")
        for name, mix in self.mixes.items():
            if not isinstance(mix, Mix):
                raise errors.SpecError(f"mixes[{name!r}] must be a kvlab Mix, got {type(mix).__name__}")
        mix_names = []
        for w in self.workloads:
            wl = workloads.get(w, self.mixes)
            if wl.mix is not None:
                mix_names.append(w)
                wl.mix.check_runnable()
                if not cfg.ordered_scan and any(op.info.ranged for t in wl.mix.templates for op in t.ops):
                    raise errors.SpecError(f"workload {w!r} reads ranges, which {self.engine} cannot do in key "
                                           f"order ({cfg.notes})")
        return mix_names

    def _validate_mix_settings(self, mix_names):
        """distribution, cpus and target_rate (distribution and target_rate need a mix among the workloads)."""
        if self.distribution is not None:
            if not mix_names:
                raise errors.SpecError(f"distribution={self.distribution!r} applies to mixes only; allowed with a "
                                       "mix (ycsb-a, txn:..., a TOML or YCSB file); db_bench's workloads draw their "
                                       "own keys")
            make_distribution(self.distribution)
        if self.cpus is not None:
            cpu_set(self.cpus)
        _number_range("target_rate", self.target_rate, *RANGES["target_rate"])
        if self.target_rate and not mix_names:
            raise errors.SpecError(f"target_rate={self.target_rate} applies to mixes only; allowed with a mix "
                                   "(ycsb-a, txn:..., a TOML or YCSB file); db_bench's readwhilewriting takes "
                                   "writes_per_second")
        if self.rate_schedule is not None:
            if not mix_names:
                raise errors.SpecError(f"rate_schedule={self.rate_schedule!r} applies to mixes only; allowed with a "
                                       "mix (ycsb-a, txn:..., mixgraph, a TOML or YCSB file)")
            if self.target_rate:
                raise errors.SpecError(f"give target_rate ({self.target_rate:g}) or rate_schedule "
                                       f"({self.rate_schedule!r}), not both")
            object.__setattr__(self, "rate_schedule", parse_schedule(self.rate_schedule).to_text())

    def _validate_counts(self):
        """The numeric run fields' ranges (RANGES), from num to interval."""
        for name in ("num", "reads", "threads", "key_size", "value_size", "batch", "seek_nexts", "seed",
                     "readwritepercent"):
            if name != "reads" or self.reads is not None:
                _int_range(name, getattr(self, name), *RANGES[name])
        for name in ("duration", "compression_ratio", "writes_per_second", "interval"):
            _number_range(name, getattr(self, name), *RANGES[name])
        if 0 < self.interval < 0.05:
            raise errors.SpecError(f"interval={self.interval} is too short; allowed: 0 (off) or 0.05 to 3600 s")

    def _validate_load(self):
        """load and resume: a known load; bulk and resume write keys in order on one thread, resume into `db`."""
        if self.load not in LOADS:
            raise errors.SpecError(f"load={self.load!r} is unknown; allowed: {', '.join(LOADS)}")
        if self.count is not None and self.count not in COUNTS:
            raise errors.SpecError(f"count={self.count!r} is unknown; allowed: {', '.join(COUNTS)}")
        if self.count is not None and self.profile:
            raise errors.SpecError("count and profile cannot go together: perf would sample valgrind's translation of "
                                   "the engine, not the engine; profile one run and count another")
        if self.advice not in ADVICE:
            raise errors.SpecError(f"advice={self.advice!r} is unknown; allowed: {', '.join(ADVICE)}")
        if not isinstance(self.resume, bool):
            raise errors.SpecError(f"resume={self.resume!r}: allowed: true or false")
        ordered = [why for on, why in ((self.load == "bulk", "load='bulk' writes its keys in order"),
                                       (self.resume, "resume continues a load written in key order")) if on]
        loads = [w for w in self.workloads if workloads.get(w, self.mixes).fills == "records"]   # fillseq, fillbatch
        if ordered and loads and self.threads > 1:
            raise errors.SpecError(f"{ordered[0]}, on one thread: {loads[0]} with threads={self.threads} cannot; "
                                   "allowed: threads=1, or load='batched' without resume")
        if self.resume and self.db is None:
            raise errors.SpecError("resume continues the load in an existing database: give db (--db DIR), the "
                                   "folder the interrupted load was writing")

    def _validate_warmup(self):
        """warmup: seconds, or "auto" (normalised here); either way shorter than a timed run."""
        if isinstance(self.warmup, str):
            if self.warmup.strip().lower() != "auto":
                raise errors.SpecError(f"warmup={self.warmup!r}: allowed: seconds, or 'auto' (MSER-5 on the time "
                                       "series)")
            object.__setattr__(self, "warmup", "auto")
            if not self.interval:
                raise errors.SpecError("warmup='auto' finds the warm-up in the time series: it needs interval > 0")
        else:
            _number_range("warmup", self.warmup, *RANGES["warmup"])
        if self.warmup != "auto" and self.warmup and self.duration and self.warmup >= self.duration:
            raise errors.SpecError(f"warmup={self.warmup} must be shorter than duration={self.duration}")

    def _validate_engine_settings(self, cfg):
        """engine_settings: known names, a compression the engine has, and each value's type and range."""
        unknown = set(self.engine_settings) - set(engines.ENGINE_SETTINGS)
        if unknown:
            raise errors.SpecError(f"engine setting(s) {', '.join(sorted(unknown))} unknown; "
                                   f"allowed: {', '.join(engines.ENGINE_SETTINGS)}")
        comp = self.engine_settings.get("compression")
        if comp is not None and comp not in cfg.compressions:
            raise errors.SpecError(f"compression {comp!r} is not available for {self.engine}; "
                                   f"allowed: {', '.join(cfg.compressions)}")
        # each setting's kind and range: the values its kv_config field holds (kvlab/engines/settings.py)
        for key, v in self.engine_settings.items():
            s = engines.SETTINGS[key]
            if v is None:
                continue
            if s.kind == "int":
                _int_range(key, v, s.lo, s.hi)
                continue
            if s.kind == "bool":
                if not isinstance(v, bool) and v not in (0, 1):
                    raise errors.SpecError(f"{key}={v!r}: allowed: true or false")
                continue
            if not isinstance(v, str):
                raise errors.SpecError(f"{key} must be a string, got {v!r}")
            if any(not c.isprintable() and c not in "\t\n" for c in v):
                raise errors.SpecError(f"{key}={v!r} holds control characters; allowed: printable text")
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise errors.SpecError(f"{key}={v!r} is not valid text (undecodable bytes); allowed: UTF-8 "
                                       "text") from None

    def replace(self, **changes) -> "RunSpec":
        return dataclasses.replace(self, **changes)

    def changed_fields(self) -> dict:
        """The run fields that differ from RunSpec's defaults (engine settings apart)."""
        out = {}
        for f in dataclasses.fields(self):
            if f.name in ("engine", "workloads", "engine_settings", "mixes"):
                continue
            default = f.default if f.default is not dataclasses.MISSING else None
            if getattr(self, f.name) != default:
                out[f.name] = getattr(self, f.name)
        return out

    def python_call(self) -> str:
        """The `kvlab.run(...)` call that runs this spec."""
        args = [f"engine={self.engine!r}", f"workload={','.join(self.workloads)!r}"]
        args += [f"{k}={v!r}" for k, v in {**self.changed_fields(), **self.engine_settings}.items()]
        return f"kvlab.run({', '.join(args)})"

    def cli_command(self) -> str:
        """The `kvlab run ...` command line that runs this spec: each field and engine setting by its flag
        (RUN_FLAGS; a setting without one as --set KEY=VALUE), the fields at their default left out.  The
        fields `kvlab run` has no flag for (CLI_FLAGLESS) are not written."""
        import shlex
        parts, changed = ["kvlab", "run"], self.changed_fields()
        for f in RUN_FLAGS:
            if f.alias or f.setting:
                continue
            if f.always or f.target in changed:
                parts += f.words(getattr(self, f.target))
        settings = {f.target: f for f in RUN_FLAGS if f.setting}
        for k, v in self.engine_settings.items():
            words = settings[k].words(v) if k in settings else []
            parts += words or ["--set", f"{k}={v}"]   # a switch that is off has no flag of its own
        return " ".join(shlex.quote(p) for p in parts)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["workloads"] = list(self.workloads)
        d["engine_settings"] = dict(self.engine_settings)
        d["mixes"] = {name: mix.to_dict() for name, mix in self.mixes.items()}
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "RunSpec":
        """The RunSpec `to_dict` wrote (a result's provenance["spec"]), exactly: every field as recorded, the
        mixes rebuilt from their dicts; validated as any spec.  A key that is no field is refused."""
        if not isinstance(d, Mapping):
            raise errors.SpecError(f"a stored spec is a mapping of RunSpec fields, got {type(d).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(d) - set(names))
        if unknown:
            raise errors.SpecError(f"spec field(s) {', '.join(map(str, unknown))} unknown; allowed: {', '.join(names)}")
        args = dict(d)
        if "workloads" in args and isinstance(args["workloads"], list):
            args["workloads"] = tuple(args["workloads"])
        if "mixes" in args:
            args["mixes"] = mixes_from_dicts(args["mixes"])
        return cls(**args)


@dataclass(frozen=True)
class RunFlag:
    """One `kvlab run` flag, the one place it is written: kvlab.cli.run makes the parser's option from it and
    RunSpec.cli_command writes the flag for a spec, so that a command line `cli_command` writes parses back to
    the same spec (tests/test_run_flags.py).

    `name` is the flag's dest (`--value-size` is "value_size"); `field` the RunSpec field it gives (default the
    name; with `setting`, an engine setting); `kind` how its value is typed: int or number (within RANGES of the
    field, from `lo` where the flag takes less), bytes (1048576, 64M), text, names (a comma list), choice
    (`choices`), warmup (seconds or auto), switch (on when given).  `alias`: another spelling of a field
    (--clients, --txn), parsed, never written; `always`: written at the field's default too (--engine,
    --workload); `shared`: every running command has it, and kvlab.cli.parsing.add_running_options makes it
    (--db, --overwrite, --seed); `group`: its section of the help (None: above them)."""
    name: str
    kind: str
    help: str = ""
    metavar: str | None = None
    group: str | None = None
    field: str | None = None
    setting: bool = False
    alias: bool = False
    always: bool = False
    shared: bool = False
    lo: float | None = None
    choices: tuple = ()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def target(self) -> str:
        """The RunSpec field (or engine setting) the flag gives."""
        return self.field or self.name

    @property
    def bounds(self) -> tuple:
        """(least, most) the flag takes: the field's RANGES, from `lo` where it is given."""
        lo, hi = RANGES.get(self.target, (None, None))
        return (lo if self.lo is None else self.lo), hi

    def words(self, value) -> list:
        """The words that give `value`: the flag alone for a switch that is on, none for one that is off, else
        the flag and the value as text (a comma list for names), which the flag's kind parses back to it."""
        if self.kind == "switch":
            return [self.flag] if value else []
        return [self.flag, ",".join(value) if self.kind == "names" else str(value)]


_SHAPE, _LOADS, _MIXES, _MEASURE, _SETTINGS = ("size and shape", "loads", "mixes", "measurement", "engine settings")

# `kvlab run`'s flags, in the order its help lists them
RUN_FLAGS = (
    RunFlag("engine", "text", "engine configuration (default lmdb); one of: {engines}", "NAME", always=True),
    RunFlag("workload", "names", "a name or comma list, run in order (default fillseq,readrandom): db_bench's loops, "
            "ycsb-a..f, seed 003's fdb-*, `kvlab workloads` lists them; or txn:SPEC / mako:SPEC; or a TOML mix "
            "file; or a YCSB properties file", "WORKLOAD", field="workloads", always=True),
    RunFlag("txn", "text", "a mako transaction spec as the workload, e.g. g9u1 (the same as --workload txn:SPEC)",
            "SPEC", field="workloads", alias=True),
    RunFlag("num", "int", "keys in the key space; write workloads write N keys in total (default 1,000,000, or a "
            "mix's own record count)", "N", _SHAPE),
    RunFlag("reads", "int", "reads per thread (default: num); for a mix, transactions per client", "N", _SHAPE, lo=1),
    RunFlag("threads", "int", "worker threads (default 1)", "N", _SHAPE),
    RunFlag("clients", "int", "a mix's clients, one thread each on an embedded engine (same as --threads)", "N",
            _SHAPE, field="threads", alias=True),
    RunFlag("duration", "number", "seconds; > 0 runs each phase by time instead of by count", "S", _SHAPE),
    RunFlag("value_size", "int", "value size (default 100)", "BYTES", _SHAPE),
    RunFlag("key_size", "int", f"key size, {MIN_KEY_SIZE} to {MAX_KEY_SIZE} (default 16: the key index, "
            "zero-padded decimal)", "BYTES", _SHAPE),
    RunFlag("batch", "int", "writes per batch/transaction (default 1); latency is then per batch; with --load bulk, "
            "a fillseq's records per bulk chunk (default: about 256 MiB of them)", "K", _SHAPE),
    RunFlag("seek_nexts", "int", "seekrandom: entries read after each seek (default 0)", "N", _SHAPE),
    RunFlag("writes_per_second", "number", "readwhilewriting: the writer's rate (0: unlimited)", "RATE", _SHAPE),
    RunFlag("readwritepercent", "int", "readrandomwriterandom: of each 100 ops, the reads, the rest writes "
            "(default 90, as db_bench)", "PCT", _SHAPE),
    RunFlag("load", "choice", "how a load (the load phase, a fillseq workload) writes: batched (puts in batches of "
            "1000; the default, as the seeds loaded) or bulk (the engine's bulk path: LMDB MDB_APPEND, RocksDB SST "
            "ingestion, WiredTiger's bulk cursor, BerkeleyDB bulk puts; keys in order, one thread)", group=_LOADS,
            choices=LOADS),
    RunFlag("resume", "switch", "continue an interrupted load in --db from the last record it committed, instead "
            "of starting over; needs --db", group=_LOADS),
    RunFlag("distribution", "text", "a mix's key distribution instead of its own: uniform, zipfian, zipfian-plain, "
            "latest, hotspot, sequential, exponential, two-term-exp (mixgraph's key ranges)", "NAME", _MIXES),
    RunFlag("target_rate", "number", "run the mix in open loop at this many transactions/s in total (0: closed "
            "loop)", "OPS_PER_SEC", _MIXES),
    RunFlag("rate_schedule", "text", "run the mix in open loop at a target that varies in time, transactions/s in "
            "total: constant:5000, sine:a=1000,b=0.5,c=0,d=5000 (a*sin(b*t + c) + d, t in s), "
            "steps:0=1000,10=8000,11=1000[,repeat=S] (a spike; the last rate holds unless repeat), or file:PATH "
            "(lines time,rate); each interval of the time series records its target beside what was achieved",
            "SCHEDULE", _MIXES),
    RunFlag("cpus", "text", "pin the run, engine threads included: 0, 0-1, 0,2", "LIST", _MEASURE),
    RunFlag("memory", "text", "one memory budget for every engine, e.g. 1GiB or 512MiB: split across the "
            "engine's own cache and write buffers as its documentation advises (settings given win), the run held to "
            "it in a memory cgroup, page cache included, where one can be made (root, cgroup v1); default: each "
            "engine's own defaults", "SIZE", _MEASURE),
    RunFlag("cold", "switch", "a cold start: each trial's worker drops the database's pages from the page cache "
            "before it opens the engine (a database kvlab loaded in the same trial is as the load left it)",
            group=_MEASURE),
    RunFlag("profile", "switch", "sample the trial's threads with perf (cpu-clock at 99 Hz a thread, DWARF stacks) while "
            "each measured phase runs: the record keeps the folded stacks; the CPU per op by component and the top "
            "functions are printed, a flame graph written (docs/profile.md)", group=_MEASURE),
    RunFlag("count", "choice", "count each measured phase's instructions per op under callgrind (user space; the "
            "loop's threads and, apart, the engine's own, each by component), deterministic where wall-clock time is "
            "not; cache adds simulated L1 and last-level misses.  The run is 30-100x slower, its ops/s valgrind's: "
            "give it a count of ops (--reads, --num) rather than a duration (docs/profile.md)", group=_MEASURE,
            choices=COUNTS),
    RunFlag("advice", "choice", "auto (default): where the run's data (the disk check's estimate) exceeds --memory, "
            "apply the engine's own documented advice for a database larger than memory (LMDB's and libmdbx's "
            "nordahead), appended to its options, settings given winning, said in the budget line and the record; "
            "off: never", group=_MEASURE, choices=ADVICE),
    RunFlag("interval", "number", "time-series interval in s (default 1; 0: off)", "S", _MEASURE),
    RunFlag("warmup", "warmup", "seconds left out of each run phase's summary (default 0), or auto: the start-up "
            "transient MSER-5 finds in the time series", "S|auto", _MEASURE),
    RunFlag("repeat", "int", "trials (default 1); more add the median and a 95%% interval", "N", _MEASURE),
    RunFlag("engine_counters", "switch", "turn on statistics an engine keeps at a cost on every op (WiredTiger's "
            "statistics=(fast): 17%% of a 2-thread readrandom), for its events and its own write counters; off "
            "by default, so a throughput run measures the engine's fastest path", group=_MEASURE),
    RunFlag("record_trace", "text", "record every operation of every phase (type, key, value size, thread, "
            "intended and actual start) into FILE, kvlab's trace format; `kvlab replay FILE` replays it "
            "(docs/traces.md)", "FILE", _MEASURE),
    RunFlag("use_existing_db", "switch", "reopen the database in --db as it is (no load, no clearing); needs --db",
            group=_MEASURE),
    RunFlag("cache_size", "bytes", "block/page cache size", "BYTES", _SETTINGS, setting=True),
    RunFlag("sync", "switch", "sync every write (or commit) to storage", group=_SETTINGS, setting=True),
    RunFlag("compression", "text", "none, snappy, lz4, zstd (where the engine has it)", "NAME", _SETTINGS,
            setting=True),
    RunFlag("map_size", "bytes", "LMDB map size (default 64G, sparse)", "BYTES", _SETTINGS, setting=True),
    RunFlag("options", "text", "the engine's own option string", "STRING", _SETTINGS, setting=True),
    RunFlag("table_options", "text", "WiredTiger's table configuration", "STRING", _SETTINGS, setting=True),
    RunFlag("db", "text", shared=True),
    RunFlag("overwrite", "switch", shared=True),
    RunFlag("seed", "int", shared=True),
)


def mixes_from_dicts(mixes) -> dict:
    """{name: Mix} from a stored spec's mixes, each a Mix already or the dict Mix.to_dict wrote."""
    if mixes is None:
        return {}
    if not isinstance(mixes, Mapping):
        raise errors.SpecError(f"mixes must be a mapping (a dict of name: Mix), got {mixes!r}")
    return {name: m if isinstance(m, Mix) else mix_from_dict(m, name) for name, m in mixes.items()}


_MIX_KEYS = ("name", "source", "templates", "distribution", "pacing", "record_count", "operation_count", "threads",
             "duration", "value_size", "value_pareto", "insert_order", "commit_reads", "max_retries", "run_defaults",
             "notes", "graph")
_OP_KEYS = ("kind", "count", "length", "min_length", "length_distribution", "distribution", "snapshot",
            "length_pareto")


def mix_from_dict(d, name: str = "mix") -> Mix:
    """The Mix whose `Mix.to_dict()` is `d` (a stored spec's or result's mix definition), checked as any Mix."""
    where = f"mixes[{name!r}]"
    if not isinstance(d, Mapping):
        raise errors.SpecError(f"{where} must be a kvlab Mix or its dict (Mix.to_dict), got {type(d).__name__}")
    _known(d, _MIX_KEYS, where)
    try:
        templates = []
        for t in d["templates"]:
            _known(t, ("name", "weight", "ops"), f"{where} template")
            ops = []
            for o in t["ops"]:
                _known(o, _OP_KEYS, f"{where} template {t.get('name')!r} op")
                o = dict(o)
                if o.get("distribution") is not None:
                    o["distribution"] = _distribution_from_dict(o["distribution"])
                ops.append(Op(**o))
            templates.append(Template(t["name"], tuple(ops), t.get("weight", 1.0)))
        args = {k: v for k, v in d.items() if k not in ("templates", "distribution", "pacing")}
        if d.get("distribution") is not None:
            args["distribution"] = _distribution_from_dict(d["distribution"])
        if d.get("pacing") is not None:
            _known(d["pacing"], ("target_rate", "per_client", "arrivals", "schedule"), f"{where} pacing")
            args["pacing"] = Pacing(**d["pacing"])
        args["notes"] = tuple(d.get("notes") or ())
        args["run_defaults"] = dict(d.get("run_defaults") or {})
        return Mix(templates=tuple(templates), **args)
    except (KeyError, TypeError) as exc:
        raise errors.SpecError(f"{where} is not a mix's dict (Mix.to_dict): {exc}") from None


def _distribution_from_dict(d):
    if isinstance(d, str):
        return make_distribution(d)
    if not isinstance(d, Mapping) or "name" not in d:
        raise errors.SpecError(f"a distribution's dict is {{'name': ..., parameter: value}}, got {d!r}")
    return make_distribution(d["name"], **{k: v for k, v in d.items() if k != "name"})


def _known(d, keys, where):
    if not isinstance(d, Mapping):
        raise errors.SpecError(f"{where} must be a dict, got {d!r}")
    unknown = sorted(set(d) - set(keys))
    if unknown:
        raise errors.SpecError(f"{where}: key(s) {', '.join(map(str, unknown))} unknown; allowed: {', '.join(keys)}")


def memory_bytes(value) -> int:
    """A memory budget in bytes, from 1073741824, '1GiB', '512M', '1.5G' (binary units); a SpecError says what is
    allowed."""
    lo, hi = (int(b) for b in RANGES["memory"])
    allowed = f"allowed: bytes, or a size such as 512MiB or 2GiB, from {lo >> 20} MiB to {hi >> 40} TiB"
    n = size_in_bytes(value)
    if n is None:
        raise errors.SpecError(f"memory={value!r}: {allowed}" if isinstance(value, bool)
                               else f"memory={value!r} is not a size; {allowed}")
    if not lo <= n <= hi:
        raise errors.SpecError(f"memory={value!r} is out of range ({lo >> 20} MiB is the least: the benchmark "
                               f"process alone needs about 64 MiB); {allowed}")
    return n


def cpu_set(text) -> frozenset:
    """CPU numbers from "0", "0-3", "0,2,4-5"; a SpecError says what is wrong."""
    out: set[int] = set()
    for part in str(text).split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            a, b = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise errors.SpecError(f"cpus={text!r}: {part.strip()!r} is not a CPU number or range; "
                                   "allowed: e.g. 0, 0-1, 0,2-3") from None
        if a < 0 or b < a or b > 4095:
            raise errors.SpecError(f"cpus={text!r}: {part.strip()!r} is out of range; allowed: 0 <= first <= last")
        out.update(range(a, b + 1))
    return frozenset(out)


def _int_range(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int):
        raise errors.SpecError(f"{name} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise errors.SpecError(f"{name}={value} is out of range; allowed: {lo} to {hi}")


def _number_range(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise errors.SpecError(f"{name} must be a number, got {value!r}")
    if not lo <= value <= hi:
        raise errors.SpecError(f"{name}={value} is out of range; allowed: {lo} to {hi}")


# run fields a mix may say for itself, (field, the mix's field), in the order they are decided (reads per
# thread needs threads); target_rate is the mix's pacing, which the runner uses unless the run gives one.
# None or absent in make_spec means not given.
MIX_RUN_FIELDS = (("num", "record_count"), ("threads", "threads"), ("duration", "duration"),
                  ("reads", "operation_count"))
FROM_THE_WORKLOAD = ("num", "reads", "threads", "duration", "target_rate")


def make_spec(engine: str = "lmdb", workload=None, **params) -> RunSpec:
    """Build a RunSpec from keyword arguments: run fields plus engine settings
    (cache_size, sync, compression, options, ...).  `workload` None is fillseq,readrandom.

    A stored spec's dict (RunSpec.to_dict, a result's provenance["spec"]) is taken as it is:
    `make_spec(**d)` (and `kvlab.run(**d)`) gives the spec back, with `workloads` (its list of names) in place
    of `workload`, `engine_settings` as a dict and its `mixes` as dicts.  With `workloads`, target_rate=0 means
    what it means in a RunSpec, each mix's own pacing.

    `workload` is resolved by `workloads.resolve.resolve`: a name or comma list, txn:/mako:<spec>, a TOML
    mix file, a YCSB properties file (or YCSB's core workloada..f), or a Mix; `mixes` names more mixes.
    Each is parsed and checked here, before anything runs.  num, reads, threads, duration and target_rate
    left out (or None) are the workload's own where its mixes say them (`mix_run_values`), else RunSpec's
    defaults; given ones always win."""
    fields = {f.name for f in dataclasses.fields(RunSpec)}
    params = dict(params)
    if "workloads" in params:   # a stored spec's spelling: the names it ran, its mixes beside them
        if workload is not None:
            raise errors.SpecError("give workload or workloads (a stored spec's list of names), not both")
        workload = list(params.pop("workloads"))
        if params.get("target_rate") == 0:   # in a stored spec: not given, the mixes' own pacing
            del params["target_rate"]
    if workload is None:
        workload = "fillseq,readrandom"
    if params.get("clients") is not None:   # a mix's clients are threads on an embedded engine
        if params.get("threads") is not None:
            raise errors.SpecError("give clients or threads, not both (a client is a thread here)")
        params["threads"] = params.pop("clients")
    params.pop("clients", None)
    if "txn" in params:       # a mako transaction spec, run as a one-template mix
        txn = params.pop("txn")
        if txn is not None:
            workload = f"txn:{txn}"
    mixes = mixes_from_dicts(params.pop("mixes", None))
    names, mixes = resolve(workload, mixes)
    for key in FROM_THE_WORKLOAD:
        if key in params and params[key] is None:
            del params[key]
    run_args = {k: v for k, v in params.items() if k in fields}
    settings = run_args.pop("engine_settings", {}) or {}
    if not isinstance(settings, Mapping):
        raise errors.SpecError(f"engine_settings must be a mapping (a dict of name: value), got {settings!r}")
    settings = dict(settings)
    for k, v in params.items():
        if k in fields:
            continue
        if k in engines.ENGINE_SETTINGS:
            settings[k] = v
        else:
            allowed = sorted((fields - {"engine", "workloads", "engine_settings"}) | set(engines.ENGINE_SETTINGS))
            raise errors.SpecError(f"parameter {k!r} is unknown; allowed: {', '.join(allowed)}")
    taken, mixes = mix_run_values(names, mixes, run_args)
    try:
        return RunSpec(engine=engine, workloads=names, mixes=mixes, engine_settings=settings, **run_args, **taken)
    except errors.SpecError as exc:
        if not taken:
            raise
        said = ", ".join(f"{k}={v!r}" for k, v in taken.items())
        raise errors.SpecError(f"{exc} ({said} from the workload's own settings; give them to the run to "
                               "override)") from None


def mix_run_values(names, mixes: dict, given: Mapping) -> tuple[dict, dict]:
    """(run fields, mixes): what the run's mixes say of num (record_count), threads, duration and reads
    (operation_count in total -> per thread, ceil(ops / threads)) where `given` lacks them, and the mixes
    with a note of each value taken.  A target rate stays in the mix's pacing, which the runner uses unless
    the run gives target_rate (target_rate=0 given: closed loop).  Mixes that say different values for one
    field are refused."""
    own = {}
    for n in dict.fromkeys(names):
        mix = workloads.get(n, mixes).mix
        if mix is not None:
            own[n] = mix
    taken: dict[str, object] = {}
    notes: dict[str, list[str]] = {n: [] for n in own}
    for key, attr in MIX_RUN_FIELDS:
        # a run bounded by the caller (reads or duration) is not re-bounded by the mix, nor by count when timed
        if key in given or (key == "duration" and "reads" in given) or \
                (key == "reads" and (given.get("duration") or "duration" in taken)):
            continue
        said = {n: getattr(m, attr) for n, m in own.items() if getattr(m, attr) is not None}
        if not said:
            continue
        if len(set(said.values())) > 1:
            each = ", ".join(f"{n}: {v}" for n, v in said.items())
            raise errors.SpecError(f"the workloads say different {attr} ({each}); give {key}= to the run")
        value = next(iter(said.values()))
        if key == "reads":
            threads = given.get("threads", taken.get("threads", RunSpec.threads))
            per_thread = -(-value // threads) if isinstance(threads, int) and threads > 0 else value
            taken[key] = per_thread
            text = f"reads={per_thread} per thread from the mix's operation_count={value} over {threads} thread(s)"
        else:
            taken[key] = value
            text = f"{key}={value} from the mix's {attr}"
        for n in said:
            notes[n].append(text + " (a run's own value wins)")
    out = dict(mixes)
    for n, added in notes.items():
        mix = own[n]
        if given.get("target_rate", None) == 0 and mix.pacing.open_loop:   # the runner takes only a rate > 0
            added.append(f"target_rate=0 given: closed loop, not the mix's {mix.pacing.describe()}")
            mix = dataclasses.replace(mix, pacing=dataclasses.replace(mix.pacing, target_rate=0.0, schedule=None))
        if added:
            out[n] = dataclasses.replace(mix, notes=mix.notes + tuple(added))
    return taken, out
