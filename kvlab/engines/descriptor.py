"""What an engine is to kvlab, as data: the types an engine's descriptor (kvlab/engines/<adapter>/__init__.py)
fills in.  Every registry and table kvlab keeps about engines is derived from the descriptors
(kvlab.engines.REGISTRY, the reopen rules, the crash tests' durability settings, the engine events and counters,
the build rows setup.py reads, the plots' colours, db_bench's flag rules, the estimator's cache defaults).

A part an engine does not have is an `Absent(reason)`, never a silent gap: tests/test_engine_checklist.py
fails on a descriptor with a part missing and no reason given.
"""
from __future__ import annotations

import fnmatch
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Mapping


@dataclass(frozen=True)
class Absent:
    """A part of a descriptor this engine does not have, and why (shown by `kvlab engines --parts`)."""
    reason: str

    def __bool__(self) -> bool:
        return False


# --- reopen rules (kvlab.model.dbformat reads them) -----------------------------------------------------------

@dataclass(frozen=True)
class RecoveryLog:
    """An engine whose recovery log is switched by settings (kvlab.model.dbformat's `log` rule)."""
    files: str                 # glob of the log's files in the database directory
    on_option: str             # appended to `options` to force the log on
    on_pattern: str            # regex: options that switch the log on
    off_pattern: str           # regex: options that switch it off
    on_for: Callable[[Mapping], bool]   # whether the adapter opens with the log on for these settings

    def has_files(self, path: Path) -> bool:
        try:
            return any(fnmatch.fnmatch(p.name, self.files) for p in Path(path).iterdir())
        except OSError:
            return False


@dataclass(frozen=True)
class AdapterFormat:
    """Which settings a reopen must respect (kvlab.model.dbformat's docstring: fixed, remembered, log)."""
    fixed: tuple = ()
    remembered: tuple = ()
    log: RecoveryLog | None = None
    recovers: bool = True      # False: no log, a database left open by a killed process cannot be reopened


# --- crash tests (kvlab.execution.crash.settings reads them) ---------------------------------------------------

@dataclass(frozen=True)
class Durability:
    """A durability setting of one engine, and what its documentation promises for a crash."""
    name: str
    settings: dict                 # engine settings (sync, disable_wal, options)
    claim: str                     # durable | prefix | none (kvlab.execution.crash.settings.CLAIMS)
    promise: str                   # the documentation's promise, in a sentence
    files: tuple = ()              # (name, text) written into the database directory before it is made


# --- engine events and counters (kvlab.results.events and kvlab.results.amplification read them) ---------------

@dataclass(frozen=True)
class Field:
    unit: str         # bytes, bytes/s, s, ms, us, count, pages, rows
    kind: str         # "gauge": its value at the interval's end; "counter": its increase over the interval
    what: str


@dataclass(frozen=True)
class EngineEvents:
    """How one adapter reports its background work."""
    parse: Callable[[dict, str], dict]          # (stats numbers, stats text) -> {field: number}
    fields: dict[str, Field]
    # period kind -> the fields that mark it: a gauge above 0 at either end of the interval, or a counter that grew
    periods: dict[str, tuple] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineCounters:
    """How an engine accounts for what it wrote: `log_file` is its info log in the database directory (read
    between the phase's ends for its exact table-file sizes), `read(before, after, log_text, state)` turns the
    engine statistics before and after the phase ({numbers, text}, or None) and the log's new lines (None: no
    log where it should be) into
    {"bytes_written", its parts, "blocks_read", "source", "note"}; `state` is kept across a session's phases."""
    read: Callable
    log_file: str | None = None


def pick(numbers: dict, names: dict) -> dict:
    """{field: numbers[key]} for the keys present and numeric."""
    out = {}
    for name, key in names.items():
        v = numbers.get(key)
        if isinstance(v, (int, float)):
            out[name] = v
    return out


def stat(stats, key):
    """One number of a stats reading ({numbers, text}, or None)."""
    return ((stats or {}).get("numbers") or {}).get(key)


def stat_delta(before, after, key):
    """A number's increase between two stats readings (None where the later one lacks it)."""
    a = stat(after, key)
    if a is None:
        return None
    return a - (stat(before, key) or 0)


def config_pairs(text: str) -> dict:
    """An engine's config string ("a=1,b=(c=2,d=3),e=[x,y]", WiredTiger's form) as {key: value}, split at the
    top level only (a nested value stays one string)."""
    out, depth, start, quoted = {}, 0, 0, False
    for i, ch in enumerate(text + ","):
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            item = text[start:i].strip()
            if item:
                key, _, value = item.partition("=")
                out[key.strip()] = value.strip()
            start = i + 1
    return out


def no_log(engine: str) -> dict:
    """The counters of an engine whose info LOG is not in the database directory."""
    return {"bytes_written": None, "blocks_read": None, "source": f"{engine}'s LOG in the database directory",
            "note": f"no {engine} LOG in the database directory (kept elsewhere?): no engine figure"}


# --- memory ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cache:
    """The engine's own cache: the setting that sizes it, its size when not given, and where that default is
    documented."""
    setting: str
    default_bytes: int
    source: str


# the benchmark process before any engine (Python, numpy, kvlab): a budget's split leaves it out, as the memory
# cgroup of a bounded run counts it (kvlab.execution.host.cgroup.BASELINE is the same figure)
PROCESS_BYTES = 64 << 20
MiB = 1 << 20


def engine_share(budget: int) -> int:
    """What a memory budget leaves for the engine and the page cache once the process itself is counted."""
    return max(budget - PROCESS_BYTES, 16 * MiB)


def shim_assertions(shim: Path) -> Callable[[str], bool | None]:
    """BuildFacts.assertions_of_library for an engine behind a shim crate (redb, fjall): whether the shim is built
    with Rust's debug assertions, which cargo's release profile has off unless the shim's Cargo.toml turns them on
    (the build is `cargo build --release`)."""
    def assertions(path: str) -> bool | None:
        try:
            profile = tomllib.loads((shim / "Cargo.toml").read_text()).get("profile", {}).get("release", {})
        except OSError:
            return None
        return bool(profile.get("debug-assertions", False))
    return assertions


NO_DIRECT_IO_SHIM = "it reads and writes its files through the OS page cache (pread, pwrite); {engine} has no direct I/O"


def memory_split(d: "Descriptor", cfg: EngineConfig, budget: int) -> dict:
    """{setting: bytes}: `d`'s split of `budget` bytes, only the settings configuration `cfg` honours."""
    if d.memory is None or isinstance(d.memory, Absent):
        return {}
    return {k: int(v) for k, v in d.memory(budget).items() if k in cfg.honours}


def defaults_line(descriptors) -> str:
    """'engine defaults: WiredTiger cache 100 MiB, ..., LMDB unbounded': each storing engine's own cache when no
    memory budget is given (its descriptor's `cache`), in rank order."""
    parts = []
    for d in sorted(descriptors, key=lambda d: d.rank):
        if d.planned or not any(c.stores_data for c in d.configs):
            continue
        if d.cache:
            parts.append(f"{d.title} cache {d.cache.default_bytes / MiB:g} MiB")
        else:
            parts.append(f"{d.title} unbounded (the OS page cache)")
    return "engine defaults: " + ", ".join(parts)


# --- build facts (kvlab.execution.host.buildfacts and native read them) ---------------------------------------------

@dataclass(frozen=True)
class BuildFacts:
    """Where the engine's CRC32 implementation shows (a probe of its library file, or of what it writes into the
    database directory at open), and whether a static build reaches its thread-locals through glibc's static TLS
    (a second module linked against an initial-exec build: BUILD's `initial_exec`)."""
    crc32_of_library: Callable[[str], str] | None = None
    crc32_in_db: Callable[[object], str | None] | None = None
    thread_locals: bool = False     # a static build's speed depends on room in glibc's static TLS
    # whether a built version's object (the engine linked in) has assertions compiled in, where the engine's own
    # build tells it (None: kvlab's probe, an import of glibc's __assert_fail, which libmdbx always has)
    assertions_of_library: Callable[[str], bool | None] | None = None


# --- db_bench's flags (kvlab.cli.dbbench reads them) -------------------------------------------------------------

@dataclass(frozen=True)
class DbBench:
    """How `kvlab dbbench`'s flags reach this adapter.  `flag_kinds`: the kinds of kvlab.model.dbbench_flags.FLAGS
    it honours besides "spec" and "setting" (RocksDB's own options); `special`: the "special" flags it honours;
    `in_options`: settings that go into its options string instead (built by `options(flags)`); `alias`: the name
    db_bench's build for it used (db_bench_wiredtiger), resolved with `pick(flags)` to a configuration, which
    also applies to a configuration of this adapter when a special flag is given; `default_compression`:
    db_bench's own default compression, where it differs from the engine's; `own_flags`: db_bench flags of a
    kind it does not honour (RocksDB's direct I/O) that it honours in its own options string, {flag: fn(flags) ->
    an options fragment, "" for none}; `refusals`: {flag: why} for a flag that changes what is measured
    (FLAGS' `measured`) which this engine cannot honour, said in the error that refuses it."""
    flag_kinds: frozenset = frozenset()
    special: frozenset = frozenset()
    in_options: frozenset = frozenset()
    options: Callable[[dict], str] | None = None
    alias: str | None = None
    pick: Callable[[dict], str] | None = None
    default_compression: str | None = None
    own_flags: Mapping[str, Callable[[dict], str]] = field(default_factory=dict)
    refusals: Mapping[str, str] = field(default_factory=dict)


# --- a configuration, and the descriptor ----------------------------------------------------------------------

@dataclass(frozen=True)
class EngineConfig:
    """One engine configuration kvlab offers: an adapter plus a fixed variant and default settings."""
    name: str
    adapter: str
    description: str
    debian_package: str = ""                  # "": its adapter's package (the descriptor's BUILD row)
    variant: str | None = None
    defaults: Mapping[str, object] = field(default_factory=dict)
    honours: frozenset = frozenset()          # which ENGINE_SETTINGS mean something here
    compressions: tuple = ("none",)
    ordered_scan: bool = True                 # full-range iteration in key order works
    notes: str = ""
    options_separator: str = ","              # joins default and given option strings
    stores_data: bool = True                  # False: the null engine (measures the harness, stores nothing)
    larger_than_ram: Mapping[str, object] = field(default_factory=dict)   # the engine's own advice for a
    #                                           database larger than memory (memory-bounded runs use it)
    capacity: str | None = None               # the setting that bounds the database's size (LMDB's map_size),
    #                                           its value in `defaults`: a run that cannot fit is refused first
    colour: str = ""                          # its colour in every figure (hex); "": one no engine has
    aliases: tuple = ()                       # names published figures give it ("berkeleydb")
    durability: tuple = ()                    # Durability settings a crash test knows (empty: sync on or off)
    format: AdapterFormat | None = None       # reopen rules where they differ from its adapter's
    max_key_size: int | None = None           # the engine's own key limit, below kvlab's (None: kvlab's applies)
    least: Mapping[str, int] = field(default_factory=dict)   # {setting: bytes}: the least it opens with (a run
    #                                           whose budget or settings give less is refused before it starts)
    build: str = ""                           # "": compiled into kvlab; a version: the adapter built by `kvlab engines
    #                                           build` with that version linked in, loaded at run time ("lmdb@0.9.70";
    #                                           plain "mdbx", an engine never compiled in: its BUILD's `loaded`)

    @property
    def native_name(self) -> str:
        """The name kvlab._native knows its adapter by: the adapter compiled in, ADAPTER@VERSION loaded, or the
        path of an engine of your own."""
        if self.build.startswith("/"):
            return self.build
        return f"{self.adapter}@{self.build}" if self.build else self.adapter

    def config(self, settings: Mapping[str, object], max_threads: int) -> dict:
        """The adapter config: defaults, then the caller's settings on top."""
        cfg = dict(self.defaults)
        for key, value in settings.items():
            if value is None:
                continue
            if key in ("options", "table_options") and cfg.get(key) and value:
                cfg[key] = f"{cfg[key]}{self.options_separator}{value}"
            else:
                cfg[key] = value
        cfg["variant"] = self.variant
        cfg["max_threads"] = max_threads
        return cfg

    def ignored(self, settings: Mapping[str, object]) -> list[str]:
        """Settings the caller gave that this engine cannot honour."""
        return [k for k, v in settings.items() if v not in (None, "", 0, False) and k not in self.honours]


@dataclass(frozen=True)
class Recipe:
    """How `kvlab engines build ADAPTER@VERSION` gets one version of an engine, pinned: where its source comes from
    and the checksum it must have.  The adapter is the engine folder's own C file, compiled into a shared object
    with the engine linked in (kvlab.execution.plugins.build)."""
    source: str                  # "debian": the system's -dev package, the adapter linked to its shared library;
    #                              "crate": a crates.io -sys crate whose build compiles the engine into a static library;
    #                              "shim": a crate in the engine's folder (an engine in Rust behind `extern "C"` calls),
    #                              its Cargo.lock pinning the engine's crate, built by cargo into a static library;
    #                              "pypi": a PyPI sdist of the engine's source, built with CMake into a static library;
    #                              "debian-source": a Debian source package's upstream tarball (package: the source
    #                              package, pin: its Debian version), built with CMake as an sdist is (either of
    #                              them with autotools instead where the recipe gives `configure`);
    #                              "go": a Go module (the engine's), in the go.sum of kvlab's Go shim (engines/_goshim),
    #                              built by `go build -buildmode=c-shared` into the one object both Go engines share
    package: str                 # the Debian package, the crate (for "shim": the engine's crate, in its Cargo.lock) or
    #                              the PyPI project
    pin: str = ""                # the crate's or the sdist's exact version
    sha256: str = ""             # the crate's checksum as the crates.io index has it, or the sdist's as PyPI has it:
    #                              checked before anything builds
    include: str = ""            # the engine's headers, within the crate's source or the CMake build folder ("shim":
    #                              the shim's folder in the engine's folder: its Cargo.toml, Cargo.lock and C header)
    library: str = ""            # the static library the build makes: lib<library>.a
    features: tuple = ()         # the crate's features to build with
    link: tuple = ()             # libraries the engine needs beside it (stdc++)
    minutes: float = 1.0         # about how long the build takes on a 2-core machine
    cmake: tuple = ()            # "pypi": the CMake options (-DNAME=VALUE) of the Release build
    targets: tuple = ()          # "pypi": the CMake targets to build: the static library, any modules it loads (with
    #                              `configure`: make's targets, libtool's .la files, "dir/name" made in dir)
    configure: tuple = ()        # "pypi"/"debian-source": an autotools source (WiredTiger 3.x): ./configure's options
    #                              (--NAME or --NAME=VALUE), after the source's own autogen.sh (else autoreconf)
    rust: str = ""               # "crate"/"shim": the oldest rustc that builds it (the crate's or a build
    #                              dependency's rust-version), checked before cargo runs; "": any cargo
    go: str = ""                 # "go": the oldest Go that builds the shim (its go.mod's `go` line, the modules'
    #                              own minimum), checked before `go build` runs

    def __post_init__(self):
        if self.source not in RECIPE_SOURCES:
            raise ValueError(f"recipe source {self.source!r} is unknown; allowed: {', '.join(RECIPE_SOURCES)}")
        missing = [f for f in RECIPE_SOURCES[self.source] if not getattr(self, f)]
        if missing:
            raise ValueError(f"{self.source} recipe {self.package!r} needs its {', '.join(missing)}")
        if self.sha256 and not re.fullmatch(r"[0-9a-f]{64}", self.sha256):
            raise ValueError(f"{self.source} recipe {self.package!r}: sha256 {self.sha256!r} is not 64 lower-case "
                             "hex digits")
        bad = [o for o in self.cmake if not re.fullmatch(r"-D\w+=\S*", o)]
        if bad:
            raise ValueError(f"{self.source} recipe {self.package!r}: CMake options are -DNAME=VALUE, not {bad}")
        if self.go and (self.source != "go" or not re.fullmatch(r"\d+\.\d+", self.go)):
            raise ValueError(f"{self.source} recipe {self.package!r}: go is MAJOR.MINOR, for a go recipe")
        if self.rust and (self.source not in ("crate", "shim") or not re.fullmatch(r"\d+\.\d+", self.rust)):
            raise ValueError(f"{self.source} recipe {self.package!r}: rust is MAJOR.MINOR, for a crate or shim recipe")
        if (self.cmake or self.targets or self.configure) and self.source not in ("pypi", "debian-source"):
            raise ValueError(f"{self.source} recipe {self.package!r}: cmake, configure and targets are for a pypi or "
                             "debian-source recipe")
        if self.cmake and self.configure:
            raise ValueError(f"{self.source} recipe {self.package!r}: one build system: cmake or configure, not both")
        bad = [o for o in self.configure if not re.fullmatch(r"--[\w-]+(=\S*)?", o)]
        if bad:
            raise ValueError(f"{self.source} recipe {self.package!r}: configure options are --NAME[=VALUE], not {bad}")


# each source, and the fields a recipe from it must give
RECIPE_SOURCES = {"debian": (), "crate": ("pin", "sha256", "library"), "shim": ("pin", "sha256", "library", "include"),
                  "go": ("pin", "sha256", "library", "include", "go"),
                  "debian-source": ("pin", "sha256", "library", "include", "targets"),
                  "pypi": ("pin", "sha256", "library", "include", "targets")}


@dataclass(frozen=True)
class Descriptor:
    """One adapter and everything kvlab knows about it.  `build` is the module's BUILD literal (setup.py reads
    it with `ast`, before kvlab can be imported); `rank` orders every listing; `planned` (a reason) marks an
    adapter that is not written: its configurations are listed with the reason, never offered or built."""
    name: str
    rank: int
    build: Mapping
    configs: tuple
    format: AdapterFormat | Absent
    events: EngineEvents | Absent
    counters: EngineCounters | Absent
    cache: Cache | Absent
    facts: BuildFacts = BuildFacts()
    dbbench: DbBench = DbBench()
    # the configuration the engine reports about itself once open: (the database directory, a stats reading
    # {numbers, text} or None) -> {setting: value as the engine writes it}; what kvlab passed is kept apart.
    # Absent(reason) where it reports none; None is a missing part (the checklist names it)
    own_config: Callable[[Path, dict | None], dict] | Absent | None = None
    planned: str | None = None
    title: str = ""           # its name in prose ("RocksDB"); "": the adapter's name
    # a memory budget in bytes (the process included) -> the engine settings that spend it, as the engine's own
    # documentation advises (the runner applies those the user did not set; `memory_split` keeps the ones a
    # configuration honours); Absent: the engine has no cache of its own to size.  None is a missing part.
    memory: Callable[[int], dict] | Absent | None = None
    # statistics the engine keeps at a cost on every operation, which kvlab turns on only when a run asks for
    # the engine's counters (RunSpec.engine_counters, --engine-counters): what they are and what they cost.
    # Without them the engine's events and its own write counters are not read (its settings still are).
    counter_cost: str | Absent = Absent("the statistics kvlab reads cost nothing per operation here")
    # the engine's own per-operation counters a run with --engine-counters records per op (kvlab.results.
    # engine_counters): where they come from and what they cost; "": none.  `op_counter_names`: which of its
    # statistics are per-operation counters (beside the adapter's "op." lines), {its name: kvlab's short name}
    op_counters: str = ""
    op_counter_names: Mapping[str, str] = field(default_factory=dict)
    # version -> Recipe: the versions `kvlab engines build ADAPTER@VERSION` can build (an engine run as
    # "lmdb@0.9.70"), beside the one compiled into kvlab (plain "lmdb")
    versions: Mapping[str, Recipe] = field(default_factory=dict)
    own: bool = False         # an engine of your own, loaded by its path (kvlab.engines.own)
    # settings every crash test opens the engine with, under its durability setting's and the caller's (Badger's:
    # its directory lock off, since the test holds the directory's flock)
    crash_settings: Mapping[str, object] = field(default_factory=dict)

    @property
    def loaded(self) -> str:
        """The version an engine that is never compiled into kvlab runs under its plain name (BUILD's `loaded`: its
        adapter only ever built by `kvlab engines build ADAPTER@VERSION` and loaded at run time); "" for the others."""
        return str(self.build.get("loaded", ""))

    @property
    def costly_counters(self) -> bool:
        return not isinstance(self.counter_cost, Absent)

    @property
    def asks_for_counters(self) -> bool:
        """--engine-counters changes what this engine keeps (a cost per op) or what kvlab records of it."""
        return self.costly_counters or bool(self.op_counters)

    def __post_init__(self):
        fixed = []
        loaded = self.loaded
        if loaded and loaded not in self.versions:
            raise ValueError(f"{self.name}'s BUILD loads version {loaded!r}, which has no recipe in its versions "
                             f"({', '.join(self.versions) or 'none'})")
        for c in self.configs:
            if c.adapter != self.name:
                raise ValueError(f"configuration {c.name!r} names adapter {c.adapter!r} in {self.name}'s descriptor")
            if not c.debian_package:
                c = _replace(c, debian_package=self.build.get("package", ""))
            if loaded:   # never compiled in: its plain name runs its default built version
                c = _replace(c, build=loaded)
            fixed.append(c)
        object.__setattr__(self, "configs", tuple(fixed))
        if not self.title:
            object.__setattr__(self, "title", self.name)

    def missing(self) -> list[str]:
        """The parts left None: each part is a value, or Absent(reason)."""
        return [f.name for f in fields(self) if getattr(self, f.name) is None and f.name not in ("planned",)]

    def format_of(self, cfg: EngineConfig) -> AdapterFormat | Absent:
        return cfg.format if cfg.format is not None else self.format


def _replace(cfg, **changes):
    from dataclasses import replace
    return replace(cfg, **changes)


__all__ = ["Absent", "AdapterFormat", "BuildFacts", "Cache", "Descriptor", "DbBench", "Durability", "EngineConfig",
           "EngineCounters", "EngineEvents", "Field", "Recipe", "RecoveryLog", "no_log", "pick", "stat",
           "stat_delta"]
