"""The engines kvlab knows: one folder per C adapter, and the registries derived from them.

An engine is one folder, kvlab/engines/<adapter>/ (ARCHITECTURE.md, "A new engine"):

    engine_<adapter>.c   the adapter: kv_engine_ops (cython_ext/include/kv_engine.h) as kv_engine_<adapter>
    __init__.py          BUILD (the literal setup.py reads with `ast`: header, library, Debian package, static
                         dependencies, macros) and DESCRIPTOR (kvlab.engines.descriptor.Descriptor: its
                         configurations, reopen rules, durability settings, events, counters, cache, colours, ...)
    events.py, ...       the parts too long for the descriptor itself

No module outside kvlab/engines/ branches on an engine's name (where one appears elsewhere it is data: a seed's
engines, a test's): every table below, setup.py's build and its C list of adapters
(kv_engine_list.h, generated), the crash tests' settings, the engine events and counters, the plots' colours and
db_bench's flag rules are read from the descriptors.  An adapter with a `planned` reason is not written: its
configurations are listed (PLANNED: `kvlab engines`, the engine reference) with the reason, never offered
(REGISTRY: --engine, help, choices); nothing builds or tests it.

This package is data: it imports without the extension (which adapters a build compiled in is
kvlab.execution.native's business).
"""
from __future__ import annotations

import importlib
from dataclasses import replace
from pathlib import Path

from .. import errors
from .descriptor import Absent, AdapterFormat, Descriptor, EngineConfig, Recipe
from .settings import ENGINE_SETTINGS, SETTINGS, parse_setting

HERE = Path(__file__).resolve().parent


def _discover() -> dict[str, Descriptor]:
    found = []
    for folder in sorted(HERE.iterdir()):
        if (folder / "__init__.py").is_file() and not folder.name.startswith("_"):
            d = importlib.import_module(f"{__name__}.{folder.name}").DESCRIPTOR
            if d.name != folder.name:
                raise ImportError(f"kvlab/engines/{folder.name}/ describes adapter {d.name!r}: the folder is its name")
            found.append(d)
    return {d.name: d for d in sorted(found, key=lambda d: (d.rank, d.name))}


# adapter -> its descriptor, in rank order
DESCRIPTORS: dict[str, Descriptor] = _discover()

# adapter -> its build row (BUILD), as setup.py reads it
ADAPTERS: dict[str, dict] = {name: dict(d.build) for name, d in DESCRIPTORS.items()}

# The configurations kvlab offers (--engine, every command's help, kvlab.run, the run builder): those whose
# adapter is written.  A configuration of a planned adapter goes to PLANNED instead: listed with the reason it
# cannot be had, never offered, and an --engine naming it is an unknown engine.
REGISTRY: dict[str, EngineConfig] = {c.name: c for d in DESCRIPTORS.values() if not d.planned for c in d.configs}
PLANNED: dict[str, EngineConfig] = {c.name: c for d in DESCRIPTORS.values() if d.planned for c in d.configs}


# engines of your own loaded in this process (kvlab.engines.own), apart from the registries the folders make:
# adapter -> its descriptor, and its configuration by name
OWN: dict[str, Descriptor] = {}


def descriptor(cfg_or_adapter) -> Descriptor:
    """The descriptor of an adapter (by name) or of a configuration's adapter (an engine of your own included)."""
    name = cfg_or_adapter if isinstance(cfg_or_adapter, str) else cfg_or_adapter.adapter
    return DESCRIPTORS[name] if name in DESCRIPTORS else OWN[name]


def unobtainable(cfg: EngineConfig) -> str | None:
    """Why configuration `cfg` cannot be had in any build here (its adapter's `planned` reason), or None."""
    d = DESCRIPTORS.get(cfg.adapter)
    return d.planned if d is not None else None


def listed() -> dict[str, EngineConfig]:
    """Every configuration kvlab knows of, in registry order: the offered ones (REGISTRY), then the planned."""
    return {**REGISTRY, **PLANNED}


def known_as(name: str) -> str | None:
    """The configuration a name stands for: its own name, or an alias a published figure gives it
    ("berkeleydb" -> "bdb"); None for a name that is no engine."""
    key = str(name).lower()
    for cfg in listed().values():
        if key == cfg.name or key in cfg.aliases:
            return cfg.name
    return None


VERSION_MARK = "@"


def unversioned(name: str) -> str:
    """A configuration's name without its version ("wiredtiger-lsm@11.3.1": "wiredtiger-lsm"): what a version runs as
    where a setting is its configuration's (a seed's scripts gave the configuration, not the version)."""
    return str(name).partition(VERSION_MARK)[0]


def versioned(cfg: EngineConfig, version: str) -> EngineConfig:
    """Configuration `cfg` on another version of its engine (its descriptor's `versions`): "lmdb@0.9.70", the same
    settings and rules, its own name in every result, and no colour or alias of the compiled-in one's."""
    return replace(cfg, name=f"{cfg.name}{VERSION_MARK}{version}", build=version, colour="", aliases=())


def versions_of(name: str) -> list[str]:
    """Every CONFIG@VERSION name the recipes give configuration `name` (an offered one)."""
    cfg = REGISTRY[name]
    return [f"{name}{VERSION_MARK}{v}" for v in descriptor(cfg).versions]


def runs_as(name: str) -> list[str]:
    """The configuration names a built row of `kvlab engines` runs as: itself where it is one (lmdb, rocksdb@8.10.0),
    else, for an adapter's version whose configurations have other names (wiredtiger@11.3.1), each of them
    (wiredtiger-btree@11.3.1, wiredtiger-lsm@11.3.1)."""
    base, mark, version = str(name).partition(VERSION_MARK)
    if not mark or base in REGISTRY or name in REGISTRY:
        return [name]
    return [f"{c}{VERSION_MARK}{version}" for c, cfg in REGISTRY.items()
            if cfg.adapter == base and f"{c}{VERSION_MARK}{version}" in versions_of(c)]


# What kvlab passes to an engine of your own (docs/own-engine.md): the settings every adapter reads from kv_config.
OWN_SETTINGS = frozenset({"sync", "cache_size", "options", "create"})


def is_path(name: str) -> bool:
    """An engine named by its shared object's path (`--engine ./libmyengine.so`), not by a registry name."""
    return str(name).endswith(".so") or "/" in str(name)


def result_name(name: str) -> str:
    """The engine's name in a result: its own for a registry name, the file's for an engine of your own
    (libmyengine.so: "myengine"; its path stays in the result's spec)."""
    return own(name).name if is_path(name) else name


def own(path: str) -> EngineConfig:
    """A researcher's own engine, a shared object implementing kv_engine.h (kv_plugin.h's one exported entry), named
    by its path: a configuration named after the file (libmyengine.so: "myengine") with a descriptor of its own,
    added to DESCRIPTORS, whose parts kvlab cannot know are Absent, saying so."""
    where = Path(path).expanduser().resolve()
    stem = where.name.removesuffix(".so")
    stem = stem[3:] if stem.startswith("lib") and len(stem) > 3 else stem
    known = OWN.get(stem)
    if stem in PLANNED or stem in DESCRIPTORS or stem in REGISTRY:
        raise errors.SpecError(f"engine {path!r}: its name {stem!r} is a built-in engine's; rename the file "
                               f"(lib<name>.so names the engine <name>)")
    if known is not None:
        if known.configs[0].build != str(where):
            raise errors.SpecError(f"engine {path!r}: another engine named {stem!r} is loaded from "
                                   f"{known.configs[0].build}; rename one of the files")
        return known.configs[0]
    unknown = "an engine of your own: kvlab cannot know it"
    cfg = EngineConfig(stem, stem, f"your own engine, loaded from {where}", honours=OWN_SETTINGS, build=str(where),
                       notes="kv_config's sync, cache_size and options are passed; the rest are defaults")
    OWN[stem] = Descriptor(
        stem, rank=1000, build={}, configs=(cfg,), format=AdapterFormat(), events=Absent(unknown),
        counters=Absent(unknown), cache=Absent(unknown), own_config=Absent(unknown), memory=Absent(unknown),
        title=stem, own=True)
    return cfg


def get(name: str) -> EngineConfig:
    """The configuration called `name` (CONFIG@VERSION for a version its descriptor has a recipe for, or the path of
    a shared object for an engine of your own), or a SpecError listing the known ones."""
    cfg = REGISTRY.get(name)
    if cfg is not None:
        return cfg
    if is_path(name):
        return own(name)
    if name in OWN:   # an engine of your own this process loaded, by the name its file gives it
        return OWN[name].configs[0]
    base, mark, version = str(name).partition(VERSION_MARK)
    if mark and base in REGISTRY:
        known = descriptor(REGISTRY[base]).versions
        if version not in known:
            raise errors.SpecError(
                f"engine {name!r}: kvlab has no recipe for {base} version {version!r}; allowed: "
                + (", ".join(versions_of(base)) or f"none (only the {base} compiled into kvlab)")
                + " (`kvlab engines` lists what is built and what can be built)")
        return versioned(REGISTRY[base], version)
    planned = PLANNED.get(name)
    note = f"; {name} is not obtainable here: {unobtainable(planned)}" if planned is not None else ""
    raise errors.SpecError(f"engine {name!r} is unknown; allowed: {', '.join(REGISTRY)}, CONFIG@VERSION for a "
                           f"version `kvlab engines` lists, or the path of your own engine's .so{note}")


__all__ = ["ADAPTERS", "DESCRIPTORS", "ENGINE_SETTINGS", "PLANNED", "REGISTRY", "SETTINGS", "Absent", "Descriptor",
           "EngineConfig", "Recipe", "VERSION_MARK", "descriptor", "get", "known_as", "listed", "parse_setting",
           "unobtainable", "versioned", "versions_of", "runs_as", "OWN_SETTINGS", "is_path", "own"]
