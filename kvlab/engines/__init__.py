"""The engines kvlab knows: one folder per C adapter, and the registries derived from them.

An engine is one folder, kvlab/engines/<adapter>/ (ARCHITECTURE.md, "A new engine"):

    engine_<adapter>.c   the adapter: kv_engine_ops (cython_ext/include/kv_engine.h) as kv_engine_<adapter>
    __init__.py          BUILD (the literal setup.py reads with `ast`: header, library, Debian package, static
                         dependencies, macros) and DESCRIPTOR (kvlab.engines.descriptor.Descriptor: its
                         configurations, reopen rules, durability settings, events, counters, cache, colours, ...)
    events.py, ...       the parts too long for the descriptor itself

Nothing else in kvlab names an engine: every table below, setup.py's build and its C list of adapters
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
from .descriptor import Absent, Descriptor, EngineConfig, Recipe
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


def descriptor(cfg_or_adapter) -> Descriptor:
    """The descriptor of an adapter (by name) or of a configuration's adapter."""
    return DESCRIPTORS[cfg_or_adapter if isinstance(cfg_or_adapter, str) else cfg_or_adapter.adapter]


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


def versioned(cfg: EngineConfig, version: str) -> EngineConfig:
    """Configuration `cfg` on another version of its engine (its descriptor's `versions`): "lmdb@0.9.70", the same
    settings and rules, its own name in every result, and no colour or alias of the compiled-in one's."""
    return replace(cfg, name=f"{cfg.name}{VERSION_MARK}{version}", build=version, colour="", aliases=())


def versions_of(name: str) -> list[str]:
    """Every CONFIG@VERSION name the recipes give configuration `name` (an offered one)."""
    cfg = REGISTRY[name]
    return [f"{name}{VERSION_MARK}{v}" for v in descriptor(cfg).versions]


def get(name: str) -> EngineConfig:
    """The configuration called `name` (CONFIG@VERSION for a version its descriptor has a recipe for), or a
    SpecError listing the known ones."""
    cfg = REGISTRY.get(name)
    if cfg is not None:
        return cfg
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
    raise errors.SpecError(f"engine {name!r} is unknown; allowed: {', '.join(REGISTRY)}, or CONFIG@VERSION for a "
                           f"version `kvlab engines` lists{note}")


__all__ = ["ADAPTERS", "DESCRIPTORS", "ENGINE_SETTINGS", "PLANNED", "REGISTRY", "SETTINGS", "Absent", "Descriptor",
           "EngineConfig", "Recipe", "VERSION_MARK", "descriptor", "get", "known_as", "listed", "parse_setting",
           "unobtainable", "versioned", "versions_of"]
