"""The thin layer over the compiled core (kvlab._native): loading it, which adapters this
build compiled in, where their libraries came from, and the engine list with build facts.

Only the execution layer and the faces above it touch the extension; the model's
registries import without it.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
from functools import lru_cache
from pathlib import Path

from .. import engines, errors
from ..results import store
from .host import buildfacts
from .plugins import where as plugin_where

_BUILD_CONFIG = Path(__file__).resolve().parent.parent / "_build_config.json"   # written by setup.py


# The same module linked against a RocksDB built with the initial-exec TLS model (setup.py, `make engines`):
# its thread-locals are a load from the GOT and an %fs access, as an executable's (db_bench's), instead of a
# descriptor call.  glibc maps it only where its static TLS has ~1.2 KB left, so it is loaded as
# kvlab._native only in a process that started with the room (the `kvlab` command, kvlab's kernel), and
# never where the module is already loaded.
_IE_MODULE = Path(__file__).resolve().parent.parent / ("_native_ie" + importlib.machinery.EXTENSION_SUFFIXES[0])


def load_initial_exec() -> None:
    """Map kvlab/_native_ie as kvlab._native where it applies (see above), or do nothing.  Call it before
    anything else can take glibc's static TLS room: a DuckDB connection does, so the results store calls it
    before it connects (BEFORE_CONNECT, below); load() calls it too."""
    if ("kvlab._native" in sys.modules or not _IE_MODULE.exists() or not started_with_static_tls_room()
            or os.environ.get("KVLAB_NO_INITIAL_EXEC")):   # KVLAB_NO_INITIAL_EXEC=1: the descriptor module (A/B)
        return
    spec = importlib.util.spec_from_file_location("kvlab._native", _IE_MODULE)   # its init is PyInit__native
    try:   # an extension module is mapped (dlopen) in module_from_spec
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError:   # "cannot allocate memory in static TLS block": something loaded earlier took the
        return            # room (a DuckDB connection does); the descriptor module, kvlab/_native, serves
    sys.modules["kvlab._native"] = module
    sys.modules["kvlab"]._native = module


store.BEFORE_CONNECT.append(load_initial_exec)   # a notebook may read its results before its first run


def load():
    """The compiled extension, or a KvlabError saying how to build it."""
    load_initial_exec()
    try:
        from .. import _native
    except ImportError as exc:  # pure-Python use (plots, results) works without the build
        raise errors.KvlabError(
            f"kvlab's native extension is not built ({exc}); run `make setup` or "
            "`pip install --no-build-isolation -e .` in the project root") from exc
    return _native


def native_loop(name: str):
    """What the C core says of native loop `name` (KV_WORKLOADS in cython_ext/include/kv_driver.h), a
    NativeLoop: `optype` (the op type its progress counts), `writes` (its threads write),
    `ops_are_num` (a count-bounded run does `num` ops, its threads splitting the keys; else `reads`
    per thread, or one call).  A name the driver has no loop for is a SpecError."""
    loops = load().WORKLOADS
    if name not in loops:
        raise errors.SpecError(f"no native loop {name!r}; the driver's loops: {', '.join(loops)}")
    return loops[name]


def writing_loops() -> frozenset[str]:
    """The native loops whose threads write (the C core's table)."""
    return frozenset(name for name, loop in load().WORKLOADS.items() if loop.writes)


def tls_model(adapter: str) -> str | None:
    """How the loaded module reaches a statically linked library's thread-locals, for an adapter whose build may
    have an initial-exec twin (its BUILD's `initial_exec`: RocksDB): "initial-exec" (kvlab/_native_ie),
    "descriptors" (kvlab/_native), None where the library is shared, not built, or has no twin."""
    where = build_config().get("engines", {}).get(adapter)
    if not engines.ADAPTERS.get(adapter, {}).get("initial_exec") or not where or where.get("linkage") != "static":
        return None
    return "initial-exec" if Path(load().__file__).resolve() == _IE_MODULE else "descriptors"


def built_adapters() -> dict[str, str]:
    """{adapter: library version} compiled into this build; {} without the extension."""
    try:
        return load().adapters()
    except errors.KvlabError:
        return {}


def build_config() -> dict:
    """What setup.py recorded: per adapter, the prefix, libraries, linkage and libdir."""
    return json.loads(_BUILD_CONFIG.read_text()) if _BUILD_CONFIG.exists() else {"engines": {}}


def require_built(name: str, load_now: bool = True) -> engines.EngineConfig:
    """The configuration `name`, or EngineNotBuilt naming the package to install (for CONFIG@VERSION, the build
    command); a version built at run time is loaded here (in a trial's worker), or, with load_now=False (the
    caller, which loads no engine), only found."""
    cfg = engines.get(name)
    if cfg.build:
        if load_now:
            adapter_name(cfg)
        else:
            _loadable(cfg)
        return cfg
    if cfg.adapter not in built_adapters():
        raise errors.EngineNotBuilt(
            name, f"install {cfg.debian_package} (scripts/setup.sh does) and rebuild kvlab "
                  f"(`pip install --no-build-isolation -e .`); {cfg.notes}".rstrip("; "))
    return cfg


def _loadable(cfg: engines.EngineConfig) -> str:
    """The library file configuration `cfg`'s built version loads from, or EngineNotBuilt (nothing is loaded)."""
    name = cfg.native_name
    if engines.descriptor(cfg).own:   # an engine of your own: its path
        if not Path(name).is_file():
            raise errors.EngineNotBuilt(cfg.name, f"{name} does not exist (docs/own-engine.md: its build line)")
        return name
    library = plugin_where.library(name)
    if library is None:
        minutes = engines.descriptor(cfg).versions[cfg.build].minutes
        raise errors.EngineNotBuilt(cfg.name, f"{name} is not built: `kvlab engines build {name}` builds it "
                                              f"(about {minutes:g} min here)")
    return str(library)


def adapter_name(cfg: engines.EngineConfig) -> str:
    """The name kvlab._native opens configuration `cfg`'s adapter by, its built version loaded first where it is one
    (kvlab.execution.plugins; EngineNotBuilt naming `kvlab engines build` where that version is not built)."""
    if not cfg.build:
        return cfg.adapter
    name = cfg.native_name
    load().load_adapter(name, _loadable(cfg))
    return name


def available(cfg: engines.EngineConfig) -> bool:
    """Whether configuration `cfg` can run here without a build: its adapter compiled into kvlab, or the version it
    names built (`kvlab engines build`), or its own engine's file there."""
    if not cfg.build:
        return cfg.adapter in built_adapters()
    if engines.descriptor(cfg).own:
        return Path(cfg.build).is_file()
    return plugin_where.built(cfg.native_name) is not None


def _loaded_row(name: str, cfg: engines.EngineConfig, d) -> dict:
    """`kvlab engines`' row of an engine never compiled in, whose plain name runs its default built version."""
    native_name = cfg.native_name
    built = plugin_where.built(native_name) is not None
    facts = loaded_facts(native_name) if built else {}
    return {"engine": name, "adapter": cfg.adapter, "variant": cfg.variant, "built": built,
            "origin": facts.get("origin"), "assertions": facts.get("assertions"),
            "version": facts.get("build", {}).get("reported_version"), "library_prefix": None,
            "package": d.versions[cfg.build].package, "description": cfg.description, "stores_data": cfg.stores_data,
            "unobtainable": engines.unobtainable(cfg), "build_command": f"kvlab engines build {native_name}",
            "build_minutes": d.versions[cfg.build].minutes}


# a built version's source (build.json's "source", by its kind) in a line, and what compiled its engine
_ORIGINS = {
    "debian": lambda s: f"Debian {s.get('package')} {s.get('package_version')}",
    "crate": lambda s: f"{s.get('crate')} {s.get('crate_version')} (crates.io, sha256 {s.get('sha256', '')[:12]})",
    "pypi": lambda s: f"{s.get('project')} {s.get('version')} sdist (PyPI, sha256 {s.get('sha256', '')[:12]}), "
                      f"{s.get('build_system', 'CMake Release')}",
    "shim": lambda s: f"kvlab's shim crate {s.get('shim')} over {_ORIGINS['crate'](s)}",
    "go": lambda s: f"kvlab's Go shim {s.get('shim')} over {s.get('module')} {s.get('module_version')} (Go module "
                    f"proxy, go.sum), Go {s.get('go')}",
    "debian-source": lambda s: f"Debian source package {s.get('source_package')} {s.get('debian_version')} "
                               f"({s.get('upstream')}, sha256 {s.get('sha256', '')[:12]}), "
                               f"{s.get('build_system', 'CMake Release')}",
}
# What each kind of build compiles the engine with, its -O level, NDEBUG and target first (what `kvlab versions`
# compares: kvlab.services.versions), then how.  The cc crate compiles at cargo's opt-level, 3 in a release build;
# the RocksDB -sys crates' build scripts define NDEBUG and pass no -march=native; a shim's Cargo.toml sets opt-level 3.
_BUILT_BY = {"crate": "-O3, NDEBUG, x86-64 baseline (the crate's build: -O3: cc at cargo's release opt-level)",
             "pypi": "the sdist's CMake Release build", "shim": "the shim crate's build (cargo's release opt-level 3)",
             "go": "the Go toolchain (gc; no -O levels, no assertions), the adapter by gcc"}


def _release_built_by(source: dict) -> str:
    """A CMake (or autotools) build's flags, as the compiler saw them (build.py's compile_flags), summed up as
    _BUILT_BY's are."""
    flags = source.get("compile_flags") or ""
    words = flags.split()
    level = next((w for w in reversed(words) if w.startswith("-O")), "-O?")
    march = next((w for w in reversed(words) if w.startswith("-march=")), None)
    target = "x86-64 baseline" if march in (None, "-march=x86-64") else march.removeprefix("-march=")
    ndebug = "NDEBUG" if "-DNDEBUG" in words else "assertions on"
    shown = " ".join(w for w in words if not w.startswith("-D") or w == "-DNDEBUG")   # the engine's own -D: noise
    return f"{level}, {ndebug}, {target} ({source.get('build_system', 'CMake Release')}: {shown or 'flags not recorded'})"


def _built_by(source: dict) -> str:
    kind = source.get("kind")
    if kind == "debian-source" or (kind == "pypi" and source.get("compile_flags")):
        return _release_built_by(source)
    return _BUILT_BY.get(kind, _BUILT_BY["crate"])


def loaded_facts(name: str) -> dict:
    """A version built at run time, for `kvlab engines` and every result: what its build recorded, as build
    facts (kvlab.execution.host.buildfacts' keys where they apply); read once per build (dpkg is slow)."""
    folder = plugin_where.built(name)
    stamp = (folder / plugin_where.FACTS).stat().st_mtime_ns if folder else None
    return dict(_loaded_facts(name, stamp))


@lru_cache(maxsize=None)
def _loaded_facts(name: str, stamp) -> dict:
    built = plugin_where.facts(name)
    source = built.get("source", {})
    origin = _ORIGINS.get(source.get("kind"), _ORIGINS["debian"])(source)
    library = str(plugin_where.library(name))
    # the engine's code: Debian's shared library, or the object itself where the engine is linked in
    known = built.get("assertions") if source.get("kind") != "debian" else None   # found when it was built
    facts = buildfacts.library_facts(source.get("engine_library") or library, built.get("linkage", "static"),
                                     packaged=source.get("kind") == "debian", assertions=known)
    probe = engines.DESCRIPTORS[built["adapter"]].facts.assertions_of_library if built.get("adapter") else None
    if probe is not None and source.get("kind") != "debian" and known is None:
        facts["assertions"] = probe(library)
    return {**facts, "library": library, "origin": f"kvlab engines build: {origin}",
            "compiler_flags": (facts["compiler_flags"] if source.get("kind") == "debian"
                               else f"{_built_by(source)}; the adapter: {' '.join(built.get('cflags', []))}"),
            "loaded": True, "build": built}


def library_path(adapter: str) -> tuple[str | None, str]:
    """(the library file this process uses for `adapter`, its linkage): the mapped shared
    library, or the static archive a local release build linked in."""
    load()  # make sure the libraries are mapped
    where = build_config().get("engines", {}).get(adapter, {})
    lib = (where.get("libraries") or [None])[0]
    path = buildfacts.mapped_library(lib) if lib else None
    if path is None and where.get("linkage") == "static":
        path = str(Path(where["libdir"]) / f"lib{lib}.a")
    return path, where.get("linkage", "shared")


@lru_cache(maxsize=None)
def library_facts(adapter: str) -> dict:
    if adapter in built_adapters() and adapter not in build_config().get("engines", {}):
        # an adapter with no library (the null engine)
        return {"library": None, "origin": "compiled into kvlab (no library)", "assertions": False, "crc32": None,
                "compiler_flags": None, "linkage": None}
    return buildfacts.library_facts(*library_path(adapter))


def facts_for_result(adapter: str, db_path) -> dict:
    """The library's facts plus what the database says about the build (RocksDB's CRC32) and, for a library
    linked into the module, whether its thread-locals are on glibc's static path in this process.  `adapter` may
    be a version loaded at run time (ADAPTER@VERSION): its build's facts."""
    if adapter.startswith("/"):   # an engine of your own
        facts = buildfacts.library_facts(adapter, "shared")
        return buildfacts.with_db_facts({**facts, "origin": f"your own engine, loaded from {adapter}",
                                         "loaded": True}, db_path)
    if engines.VERSION_MARK in adapter:
        return buildfacts.with_db_facts(loaded_facts(adapter), db_path)
    facts = buildfacts.with_db_facts(library_facts(adapter), db_path)
    if facts.get("linkage") == "static":
        facts["static_tls_room"] = started_with_static_tls_room()
        model = tls_model(adapter)
        if model is not None:
            facts["tls_model"] = model
    return facts


# A library linked statically into kvlab._native (the release RocksDB of `make engines`) reaches its
# thread-locals through TLS descriptors.  In a module loaded by dlopen they take glibc's dynamic path
# (_dl_tlsdesc_dynamic: 7.7% more instructions per RocksDB get, benchmarks/harness_instructions.py) unless
# glibc has room left in its optional static TLS, 512 bytes by default against RocksDB's ~1.2 KB.  The
# room is a tunable read once, at process start: the fork server that starts every trial's worker
# (execution.worker) starts with it, and a run records whether its process had it.  With the
# room, where the build has it, the module linked against the initial-exec RocksDB is loaded instead
# (load_initial_exec above), and a run records which (tls_model).
STATIC_TLS_TUNABLE, STATIC_TLS_BYTES = buildfacts.STATIC_TLS_TUNABLE, buildfacts.STATIC_TLS_BYTES


# the tunables this process started with, as Python copied them at start (glibc 2.36 ends its own copy of
# the string at the first value as it parses it, so /proc/self/environ shows only the first tunable)
_STARTED_TUNABLES = os.environ.get("GLIBC_TUNABLES", "")


def _has_room(tunables: str) -> bool:
    for tunable in tunables.split(":"):
        name, _, value = tunable.partition("=")
        if name == STATIC_TLS_TUNABLE:
            return value.isdigit() and int(value) >= STATIC_TLS_BYTES // 4   # RocksDB's ~1.2 KB and more
    return False


@lru_cache(maxsize=None)   # a fact of the process's start: read once
def started_with_static_tls_room() -> bool:
    """Whether this process started with the room raised: the tunables in the environment it started with
    (kvlab's first import), else /proc/self/environ."""
    if _has_room(_STARTED_TUNABLES):
        return True
    try:
        initial = Path("/proc/self/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(_has_room(item[len(b"GLIBC_TUNABLES="):].decode(errors="replace"))
               for item in initial if item.startswith(b"GLIBC_TUNABLES="))


def needs_static_tls_room() -> bool:
    """A library is linked into this build and this process started without the room (nor was it asked for)."""
    static = any(w.get("linkage") == "static" for w in build_config().get("engines", {}).values())
    tuned = STATIC_TLS_TUNABLE in os.environ.get("GLIBC_TUNABLES", "")
    return static and not started_with_static_tls_room() and not tuned


def with_static_tls_room(environ) -> dict:
    """A copy of `environ` whose GLIBC_TUNABLES raises the room, first in the list (other tunables kept after
    it): glibc 2.36 ends the string at the first value as it parses, so only the first stays visible in the
    process's environment, where started_with_static_tls_room looks."""
    env = dict(environ)
    tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t and not t.startswith(STATIC_TLS_TUNABLE + "=")]
    env["GLIBC_TUNABLES"] = ":".join([f"{STATIC_TLS_TUNABLE}={STATIC_TLS_BYTES}"] + tunables)
    return env


def describe() -> list[dict]:
    """Every configuration kvlab knows of: built or not, library version, where the library came from; a planned
    one (engines.PLANNED) is never built, and `unobtainable` says why it cannot be had (None for the others)."""
    adapters = built_adapters()
    where = build_config().get("engines", {})
    rows = []
    for name, cfg in engines.listed().items():
        d = engines.descriptor(cfg)
        if cfg.build:   # an engine never compiled in: its plain name is its default version, built and loaded
            rows.append(_loaded_row(name, cfg, d))
        else:
            facts = library_facts(cfg.adapter) if cfg.adapter in adapters else {}
            rows.append({
                "engine": name, "adapter": cfg.adapter, "variant": cfg.variant, "built": cfg.adapter in adapters,
                "origin": facts.get("origin"), "assertions": facts.get("assertions"),
                "version": adapters.get(cfg.adapter), "library_prefix": where.get(cfg.adapter, {}).get("prefix"),
                "package": cfg.debian_package, "description": cfg.description, "stores_data": cfg.stores_data,
                "unobtainable": engines.unobtainable(cfg),
            })
        if cfg is not d.configs[-1] or engines.unobtainable(cfg):
            continue   # an adapter's versions are listed once, after its last configuration
        for version, recipe in d.versions.items():
            if version == d.loaded:
                continue   # the plain name's row above
            vname = f"{cfg.adapter}{engines.VERSION_MARK}{version}"
            built = plugin_where.built(vname) is not None
            facts = loaded_facts(vname) if built else {}
            runs = ", ".join(f"{c.name}{engines.VERSION_MARK}{version}" for c in d.configs)
            rows.append({
                "engine": vname, "adapter": cfg.adapter, "variant": None, "built": built,
                "origin": facts.get("origin"), "assertions": facts.get("assertions"),
                "version": facts.get("build", {}).get("reported_version"), "library_prefix": None,
                "package": recipe.package, "description": f"{d.title} {version}, loaded at run time: --engine {runs}",
                "stores_data": cfg.stores_data, "unobtainable": None,
                "build_command": f"kvlab engines build {vname}", "build_minutes": recipe.minutes,
            })
    return rows
