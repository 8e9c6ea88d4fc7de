"""An engine is one checklist: what a row of the engine registry needs beyond itself, held by a test.

ARCHITECTURE.md ("A new engine") is the list in words; `missing()` is the same list in code.  Every
configuration in kvlab.model.engines.REGISTRY must have, through its adapter:

  build entry        a row in engines.ADAPTERS (setup.py builds the adapter from it)
  adapter source     cython_ext/src/engine_<adapter>.c defining kv_engine_<adapter>
  C registry         KV_ENGINE(<adapter>) under KV_HAVE_<ADAPTER> in cython_ext/include/kv_engine_list.h
  format rules       a row in kvlab.model.dbformat.FORMATS, for the configuration or its adapter
  Debian package     its library's package in scripts/setup.sh's PKGS, named where the docs list them
  conformance        a configuration of its adapter and variant in tests/conftest.py's CONFORMANCE (derived
                     from the registry, so a row registered before the tests start is covered; an engine
                     that stores nothing is exempt: the null engine has tests/test_null_engine.py)

A planned adapter (ADAPTERS' `planned`: why it cannot be had; its configurations are in engines.PLANNED, listed
by `kvlab engines` and offered nowhere) needs none of them, and must not have a source file yet: once it has
one, the rest applies.
"""
import ast
import re
from pathlib import Path

import pytest

from kvlab.model import dbformat, engines

from .conftest import CONFORMANCE

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "cython_ext/src"
ENGINE_LIST = ROOT / "cython_ext/include/kv_engine_list.h"
SETUP_SH = ROOT / "scripts/setup.sh"
PACKAGE_DOCS = ("README.md", "docs/install.md")     # where the Debian packages are listed for a reader


def setup_sh_packages() -> set:
    """The words of setup.sh's PKGS=( ... ) array, comments left out."""
    text = SETUP_SH.read_text()
    start = text.index("PKGS=(") + len("PKGS=(")
    words = []
    for line in text[start:].splitlines():
        code, closed = line.split("#", 1)[0], False
        if ")" in code:
            code, closed = code.split(")", 1)[0], True
        words += code.split()
        if closed:
            return set(words)
    raise AssertionError(f"{SETUP_SH}: PKGS=( is never closed")


def c_engine_list() -> list:
    """(guard, adapter) for each entry of kv_engine_list.h, in order."""
    text = ENGINE_LIST.read_text()
    entries = re.findall(r"^\s*KV_ENGINE\((\w+)\)", text, re.M)
    guarded = re.findall(r"^#ifdef KV_HAVE_(\w+)\s*\n\s*KV_ENGINE\((\w+)\)\s*\n#endif", text, re.M)
    assert len(guarded) == len(entries), f"{ENGINE_LIST}: each KV_ENGINE(name) stands alone under #ifdef KV_HAVE_NAME"
    return guarded


def missing(name: str) -> list:
    """What configuration `name` lacks, one line per missing part; [] when complete."""
    cfg = engines.listed()[name]
    adapter = cfg.adapter
    row = engines.ADAPTERS.get(adapter)
    source = SRC / f"engine_{adapter}.c"
    out = []
    if row is None:
        out.append(f"build entry: no ADAPTERS[{adapter!r}] row in kvlab/model/engines.py (header, library, "
                   "package: setup.py builds the adapter from it)")
        row = {}
    if row.get("planned"):
        if source.exists():
            out.append(f"planned: {source.relative_to(ROOT)} exists, so ADAPTERS[{adapter!r}] is no longer "
                       "planned: remove `planned` and give the rest of this checklist")
        return out
    if not source.exists():
        out.append(f"adapter source: no {source.relative_to(ROOT)} (filling kv_engine_ops, "
                   "cython_ext/include/kv_engine.h)")
    elif not re.search(rf"^const kv_engine_ops kv_engine_{adapter}\s*=", source.read_text(), re.M):
        out.append(f"adapter source: {source.relative_to(ROOT)} defines no `const kv_engine_ops kv_engine_{adapter}`")
    if (adapter.upper(), adapter) not in c_engine_list():
        out.append(f"C registry: no `KV_ENGINE({adapter})` under `#ifdef KV_HAVE_{adapter.upper()}` in "
                   f"{ENGINE_LIST.relative_to(ROOT)}")
    if name not in dbformat.FORMATS and adapter not in dbformat.FORMATS:
        out.append(f"format rules: no FORMATS[{name!r}] or FORMATS[{adapter!r}] in kvlab/model/dbformat.py "
                   "(AdapterFormat() if a reopen carries nothing over)")
    if row.get("library") or not row:   # a new adapter without a row is taken to need a library
        package = cfg.debian_package
        if not package:
            out.append(f"Debian package: none named (ADAPTERS[{adapter!r}]['package'])")
        else:
            if package not in setup_sh_packages():
                out.append(f"Debian package: {package!r} is not in scripts/setup.sh's PKGS")
            for doc in PACKAGE_DOCS:
                if package not in (ROOT / doc).read_text():
                    out.append(f"Debian package: {package!r} is not named in {doc}'s package list")
    if cfg.stores_data and not any((engines.REGISTRY[c].adapter, engines.REGISTRY[c].variant) == (adapter, cfg.variant)
                                   for c in CONFORMANCE if c in engines.REGISTRY):
        out.append(f"conformance coverage: no configuration of adapter {adapter!r}, variant {cfg.variant!r} in "
                   "tests/conftest.py's CONFORMANCE")
    return out


def check_every_engine():
    gaps = {name: missing(name) for name in engines.listed()}
    gaps = {name: parts for name, parts in gaps.items() if parts}
    assert not gaps, "engines lacking parts of their checklist (ARCHITECTURE.md, 'A new engine'):\n" + "\n".join(
        f"  {name}:\n" + "\n".join(f"    - {part}" for part in parts) for name, parts in gaps.items())


def test_every_engine_has_its_parts():
    check_every_engine()


def test_a_fake_engine_without_its_parts_fails_with_each_part_named(monkeypatch):
    monkeypatch.setitem(engines.REGISTRY, "fake", engines.EngineConfig("fake", "fakekv", "a test's fake engine",
                                                                       "libfakekv-dev"))
    with pytest.raises(AssertionError) as failed:
        check_every_engine()
    message = str(failed.value)
    for part in ("build entry: no ADAPTERS['fakekv']", "adapter source: no cython_ext/src/engine_fakekv.c",
                 "C registry: no `KV_ENGINE(fakekv)` under `#ifdef KV_HAVE_FAKEKV`",
                 "format rules: no FORMATS['fake'] or FORMATS['fakekv']",
                 "Debian package: 'libfakekv-dev' is not in scripts/setup.sh's PKGS",
                 "Debian package: 'libfakekv-dev' is not named in README.md",
                 "Debian package: 'libfakekv-dev' is not named in docs/install.md",
                 "conformance coverage: no configuration of adapter 'fakekv'"):
        assert part in message, (part, message)
    assert "  fake:\n" in message and "  lmdb:" not in message     # only the fake is named
    # given a build entry, its package comes from there, and that part is no longer named
    monkeypatch.setitem(engines.ADAPTERS, "fakekv", {"header": "fakekv.h", "library": "fakekv",
                                                     "package": "libfakekv2-dev"})
    monkeypatch.setitem(engines.REGISTRY, "fake", engines.EngineConfig("fake", "fakekv", "a test's fake engine"))
    parts = missing("fake")
    assert not any(p.startswith("build entry") for p in parts)
    assert "Debian package: 'libfakekv2-dev' is not in scripts/setup.sh's PKGS" in parts
    assert len(parts) == 7, parts


def test_an_engine_without_format_rules_is_refused_not_given_none(monkeypatch):
    monkeypatch.setitem(engines.REGISTRY, "fake", engines.EngineConfig("fake", "fakekv", "a test's fake engine"))
    with pytest.raises(LookupError, match=r"'fake' has no reopen rules.*FORMATS"):
        dbformat.rules(engines.get("fake"))
    # a configuration with its own row, or its adapter's, has rules
    assert dbformat.rules(engines.get("bdb-notxn")).recovers is False
    assert dbformat.rules(engines.get("wiredtiger-lsm")).log is not None


def test_a_planned_adapter_is_listed_and_never_built():
    planned = {a for a, row in engines.ADAPTERS.items() if row.get("planned")}
    assert planned == {"fdb"}, "a planned adapter is one kvlab engines lists without building it"
    assert not any(a in planned for _, a in c_engine_list())
    assert "fdb" in engines.PLANNED and engines.PLANNED["fdb"].debian_package.startswith("libfdb_c")
    # listed, never offered: a planned adapter's configurations are not in the registry the commands offer
    assert all(engines.ADAPTERS[c.adapter].get("planned") for c in engines.PLANNED.values())
    assert not any(engines.ADAPTERS.get(c.adapter, {}).get("planned") for c in engines.REGISTRY.values())
    # the check would name a planned adapter once its source exists
    assert missing("fdb") == []


def test_setup_py_reads_the_adapter_table_as_kvlab_has_it():
    """setup.py reads ADAPTERS with ast (it runs before kvlab imports): the assignment must be a literal
    equal to the module's table."""
    tree = ast.parse((ROOT / "kvlab/model/engines.py").read_text())
    nodes = [n for n in tree.body if isinstance(n, ast.Assign) and [getattr(t, "id", None) for t in n.targets]
             == ["ADAPTERS"]]
    assert len(nodes) == 1, "kvlab/model/engines.py assigns ADAPTERS once, at the top level"
    assert ast.literal_eval(nodes[0].value) == engines.ADAPTERS
    assert 'literal("kvlab/model/engines.py", "ADAPTERS")' in (ROOT / "setup.py").read_text()


def test_the_c_list_is_the_adapter_table_in_order():
    """kv_engine_list.h lists the written adapters in ADAPTERS' order (kv_engines[] and adapters() keep it),
    each under the macro setup.py defines for it, and nothing else."""
    listed = c_engine_list()
    assert all(guard == adapter.upper() for guard, adapter in listed), listed
    assert [a for _, a in listed] == [a for a, row in engines.ADAPTERS.items() if not row.get("planned")]


def test_conformance_runs_each_adapter_and_variant_once():
    keys = [(engines.get(n).adapter, engines.get(n).variant) for n in CONFORMANCE]
    assert len(keys) == len(set(keys)) and all(engines.get(n).stores_data for n in CONFORMANCE)
    assert "rocksdb" in CONFORMANCE and "rocksdb-tuned" not in CONFORMANCE   # one adapter, one variant: the first
