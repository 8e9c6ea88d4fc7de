"""The thin layer over the compiled core (kvlab._native): loading it, which adapters this
build compiled in, where their libraries came from, and the engine list with build facts.

Only the execution layer and the faces above it touch the extension; the model's
registries import without it.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from .. import errors
from ..model import engines
from . import buildfacts

_BUILD_CONFIG = Path(__file__).resolve().parent.parent / "_build_config.json"   # written by setup.py


def load():
    """The compiled extension, or a KvlabError saying how to build it."""
    try:
        from .. import _native
    except ImportError as exc:  # pure-Python use (plots, results) works without the build
        raise errors.KvlabError(
            f"kvlab's native extension is not built ({exc}); run `make setup` or "
            "`pip install --no-build-isolation -e .` in the project root") from exc
    return _native


def built_adapters() -> dict[str, str]:
    """{adapter: library version} compiled into this build; {} without the extension."""
    try:
        return load().adapters()
    except errors.KvlabError:
        return {}


def build_config() -> dict:
    """What setup.py recorded: per adapter, the prefix, libraries, linkage and libdir."""
    return json.loads(_BUILD_CONFIG.read_text()) if _BUILD_CONFIG.exists() else {"engines": {}}


def require_built(name: str) -> engines.EngineConfig:
    """The configuration `name`, or EngineNotBuilt naming the package to install."""
    cfg = engines.get(name)
    if cfg.adapter not in built_adapters():
        raise errors.EngineNotBuilt(
            name, f"install {cfg.debian_package} (scripts/setup.sh does) and rebuild kvlab "
                  f"(`pip install --no-build-isolation -e .`); {cfg.notes}".rstrip("; "))
    return cfg


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
    """The library's facts plus what the database says about the build (RocksDB's CRC32)."""
    return buildfacts.with_db_facts(library_facts(adapter), db_path)


def describe() -> list[dict]:
    """Every configuration: built or not, library version, where the library came from."""
    adapters = built_adapters()
    where = build_config().get("engines", {})
    rows = []
    for name, cfg in engines.REGISTRY.items():
        facts = library_facts(cfg.adapter) if cfg.adapter in adapters else {}
        rows.append({
            "engine": name, "adapter": cfg.adapter, "variant": cfg.variant, "built": cfg.adapter in adapters,
            "origin": facts.get("origin"), "assertions": facts.get("assertions"),
            "version": adapters.get(cfg.adapter), "library_prefix": where.get(cfg.adapter, {}).get("prefix"),
            "package": cfg.debian_package, "description": cfg.description, "stores_data": cfg.stores_data,
        })
    return rows
