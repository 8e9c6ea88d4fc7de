"""RunSpec: a frozen, validated description of one benchmark run.

Defaults follow db_bench (num 1,000,000; reads = num; 16-byte keys; 100-byte
values; compression_ratio 0.5).  seed=None draws a seed from the clock; the seed
used is recorded in every result, so any run can be repeated exactly.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Mapping

from .. import errors
from . import engines, workloads
from .workloads.distributions import distribution as make_distribution
from .workloads.mix import Mix

MAX_KEY_SIZE = 1024
MAX_VALUE_SIZE = 64 << 20
MAX_THREADS = 1024
# engine settings with a flag of their own on `kvlab run` (the rest go through --set KEY=VALUE)
CLI_SETTING_FLAGS = ("cache_size", "sync", "compression", "map_size", "options", "table_options")
# run fields `kvlab run` does not take (the CLI decides them itself)
CLI_FLAGLESS = ("keep_db", "auto_load", "engine_stats", "compression_ratio", "mixes")


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
    db: str | None = None             # None: a temporary directory kvlab creates and removes
    use_existing_db: bool = False
    keep_db: bool = False
    auto_load: bool = True            # a read workload on a fresh db gets a fillseq load phase first
    interval: float = 1.0             # seconds between time-series samples; 0 = no time series
    warmup: float = 0.0               # seconds at the start of each run phase left out of its summary
    repeat: int = 1                   # trials; > 1 adds median and 95% CI across trials
    engine_stats: bool = True         # attach the engine's internal statistics after each phase
    distribution: str | None = None   # mixes: the key distribution instead of each mix's own
    target_rate: float = 0.0          # mixes: transactions/s in total, open loop; 0 = closed loop
    cpus: str | None = None           # pin the run, engine threads included, to these CPUs: "0", "0-1", "0,2"
    mixes: Mapping[str, object] = field(default_factory=dict)   # mixes named in `workloads` (TOML, YCSB, Python)
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
        self.validate()

    @property
    def reads_per_thread(self) -> int:
        return self.num if self.reads is None or self.reads < 0 else self.reads

    def validate(self):
        cfg = engines.get(self.engine)
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
                if not cfg.ordered_scan and any(op.info.ranged for t in wl.mix.templates for op in t.ops):
                    raise errors.SpecError(f"workload {w!r} reads ranges, which {self.engine} cannot do in key "
                                           f"order ({cfg.notes})")
        if self.distribution is not None:
            if not mix_names:
                raise errors.SpecError(f"distribution={self.distribution!r} applies to mixes only (ycsb-a, "
                                       "txn:..., ...); db_bench's workloads draw their own keys")
            make_distribution(self.distribution)
        if self.cpus is not None:
            cpu_set(self.cpus)
        _number_range("target_rate", self.target_rate, 0, 1e9)
        if self.target_rate and not mix_names:
            raise errors.SpecError(f"target_rate={self.target_rate} applies to mixes only (ycsb-a, txn:..., ...); "
                                   "db_bench's readwhilewriting takes writes_per_second")
        _int_range("num", self.num, 1, 10**15)
        if self.reads is not None:
            _int_range("reads", self.reads, -1, 10**15)
        _int_range("threads", self.threads, 1, MAX_THREADS)
        _int_range("key_size", self.key_size, 8, MAX_KEY_SIZE)
        _int_range("value_size", self.value_size, 1, MAX_VALUE_SIZE)
        _int_range("batch", self.batch, 1, 1_000_000)
        _int_range("seek_nexts", self.seek_nexts, 0, 1_000_000)
        _int_range("seed", self.seed, 0, 2**64 - 1)
        _number_range("duration", self.duration, 0, 7 * 24 * 3600)
        # db_bench accepts ratios above 1 (seed 002 passes 50): they mean incompressible, as 1 does
        _number_range("compression_ratio", self.compression_ratio, 0.01, 1000.0)
        _number_range("writes_per_second", self.writes_per_second, 0, 1e12)
        _number_range("interval", self.interval, 0, 3600)
        if 0 < self.interval < 0.05:
            raise errors.SpecError(f"interval={self.interval} is too short; allowed: 0 (off) or 0.05 to 3600 s")
        _number_range("warmup", self.warmup, 0, 7 * 24 * 3600)
        if self.warmup and self.duration and self.warmup >= self.duration:
            raise errors.SpecError(f"warmup={self.warmup} must be shorter than duration={self.duration}")
        _int_range("repeat", self.repeat, 1, 1000)
        # readmissing draws keys from [num, 2 num); every index must fit the key's digits
        if 2 * self.num > 10 ** self.key_size:
            raise errors.SpecError(f"num={self.num} does not fit {self.key_size}-byte decimal keys; "
                                   f"use key_size >= {len(str(2 * self.num))}")
        unknown = set(self.engine_settings) - set(engines.ENGINE_SETTINGS)
        if unknown:
            raise errors.SpecError(f"engine setting(s) {', '.join(sorted(unknown))} unknown; "
                                   f"allowed: {', '.join(engines.ENGINE_SETTINGS)}")
        comp = self.engine_settings.get("compression")
        if comp is not None and comp not in cfg.compressions:
            raise errors.SpecError(f"compression {comp!r} is not available for {self.engine}; "
                                   f"allowed: {', '.join(cfg.compressions)}")
        # the ranges the adapters' kv_config fields hold (uint64 sizes, int for the rest); bloom filters
        # beyond 100 bits a key are none of LevelDB's or RocksDB's (LevelDB's overflowed and aborted)
        for key, lo, hi in (("cache_size", 0, 2**62), ("map_size", 0, 2**62), ("write_buffer_size", 0, 2**62),
                            ("block_size", 0, 2**31 - 1), ("bloom_bits", 0, 100), ("max_open_files", -1, 2**31 - 1)):
            v = self.engine_settings.get(key)
            if v is not None:
                _int_range(key, v, lo, hi)
        for key in ("sync", "disable_wal"):
            v = self.engine_settings.get(key)
            if v is not None and not isinstance(v, bool) and v not in (0, 1):
                raise errors.SpecError(f"{key}={v!r}: allowed: true or false")
        for key in ("options", "table_options", "compression"):
            v = self.engine_settings.get(key)
            if v is None:
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
        """The `kvlab run ...` command line that runs this spec."""
        import shlex
        parts = ["kvlab", "run", "--engine", self.engine, "--workload", ",".join(self.workloads)]
        for k, v in self.changed_fields().items():
            if k in CLI_FLAGLESS:
                continue
            flag = "--" + k.replace("_", "-")
            if isinstance(v, bool):
                parts += [flag] if v else []
            else:
                parts += [flag, str(v)]
        for k, v in self.engine_settings.items():
            if k in CLI_SETTING_FLAGS and not (isinstance(v, bool) and not v):
                parts += ["--" + k.replace("_", "-")] + ([] if isinstance(v, bool) else [str(v)])
            else:
                parts += ["--set", f"{k}={v}"]
        return " ".join(shlex.quote(p) for p in parts)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["workloads"] = list(self.workloads)
        d["engine_settings"] = dict(self.engine_settings)
        d["mixes"] = {name: mix.to_dict() for name, mix in self.mixes.items()}
        return d


def cpu_set(text) -> frozenset:
    """CPU numbers from "0", "0-3", "0,2,4-5"; a SpecError says what is wrong."""
    out = set()
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


def make_spec(engine: str = "lmdb", workload="fillseq,readrandom", **params) -> RunSpec:
    """Build a RunSpec from keyword arguments: run fields plus engine settings
    (cache_size, sync, compression, options, ...)."""
    fields = {f.name for f in dataclasses.fields(RunSpec)}
    params = dict(params)
    if "clients" in params:   # a mix's clients are threads on an embedded engine
        if "threads" in params:
            raise errors.SpecError("give clients or threads, not both (a client is a thread here)")
        params["threads"] = params.pop("clients")
    if "txn" in params:       # a mako transaction spec, run as a one-template mix
        workload = f"txn:{params.pop('txn')}"
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
    return RunSpec(engine=engine, workloads=workload, engine_settings=settings, **run_args)
