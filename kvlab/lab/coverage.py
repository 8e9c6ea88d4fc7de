"""Which engines a notebook runs and which it leaves out, and why; which engines a figure has no bar for, and why.

`every_built()` is "every built engine" as the quickstart says it: each configuration kvlab offers (the registry)
that stores data and runs here.  `chosen(engines)` splits a notebook's `engines` parameter (None: every built
engine) into those it runs and those it leaves out with the reason, and `engines_text` says both, for the notebook
to print.  `python_loop_gaps(frame)` names the engines the quickstart's Python-loop baseline has no
row for, each with why (no binding in the baseline, or its binding's module not installed), and
`python_loop_note(frame)` says it in a line for the figure.  A binding is one class and a row in BINDINGS, in
kvlab/lab/seeds/bindings.py.  Every reason is read from the registry, the build and
the bindings' registry (kvlab/lab/seeds/bindings.py): nothing here knows an engine by name.
"""
from __future__ import annotations

import importlib.util

from .. import engines as engine_registry
from .. import errors
from ..execution import native
from .seeds.bindings import BINDINGS

VERSIONS_NOTEBOOK = "08_versions"


def every_built() -> list:
    """Every configuration kvlab offers that stores data and can run here, in the registry's order (`kvlab
    engines`' order): the engines compiled in and those loaded at run time (mdbx, redb) that are built."""
    return [name for name, cfg in engine_registry.REGISTRY.items() if cfg.stores_data and native.available(cfg)]


def not_built_reason(name: str) -> str:
    """Why configuration `name` cannot run here: what `kvlab engines` says to do."""
    cfg = engine_registry.listed().get(name)
    if cfg is not None and engine_registry.unobtainable(cfg):
        return f"cannot be had here: {engine_registry.unobtainable(cfg)}"
    try:
        native.require_built(name, load_now=False)
    except errors.EngineNotBuilt as exc:
        return f"not built: {str(exc).split(': ', 1)[-1]}"
    except errors.KvlabError as exc:   # a name kvlab does not know
        return str(exc)
    return "not built"


def chosen(engines=None) -> tuple:
    """(the engines to run, {engine left out: why}).  `engines` None: every built engine (`every_built`), the others
    left out (one that stores no data, one not built, a planned one, a built version of an engine: notebook
    08_versions runs versions); a list: those of it that can run here, in its order, the rest of it and every
    other built engine left out."""
    run = every_built()
    left = {}
    if engines is not None:
        asked = list(dict.fromkeys(engines))
        left.update({n: not_built_reason(n) for n in asked if n not in run and not _runs(n)})
        run_asked = [n for n in asked if n not in left]
        left.update({n: "not in the notebook's `engines`" for n in run if n not in run_asked})
        return run_asked, left
    for name, cfg in engine_registry.listed().items():
        if name in run:
            continue
        if not cfg.stores_data:
            left[name] = "stores no data: it measures kvlab's own cost"
        else:
            left[name] = not_built_reason(name)
    for row in native.describe():
        name = row["engine"]
        if row["built"] and engine_registry.VERSION_MARK in name and name not in left:
            left[name] = (f"versions of an engine this runs by its plain name; notebook {VERSIONS_NOTEBOOK} "
                          f"compares versions")
    return run, left


def _runs(name: str) -> bool:
    try:
        return native.available(engine_registry.get(name))
    except errors.KvlabError:
        return False


def grouped(left: dict) -> str:
    """{name: why} as 'a, b (why); c (other why)': the names that share a reason together, in order."""
    return "; ".join(f"{', '.join(names)} ({why})" for why, names in _by_reason(left).items())


def _by_reason(left: dict) -> dict:
    by = {}
    for name, why in left.items():
        by.setdefault(why, []).append(name)
    return by


def engines_text(run, left: dict) -> str:
    """'engines run (3): a, b, c' and, where some are left out, a line per reason: '  d, e: why'."""
    lines = [f"engines run ({len(run)}): {', '.join(run) or 'none'}"]
    if left:
        lines.append("left out:")
        lines += [f"  {', '.join(names)}: {why}" for why, names in _by_reason(left).items()]
    return "\n".join(lines)


# --- the quickstart's Python-loop baseline --------------------------------------------------------------------

def _in_requirements(module: str, extra: str = "notebooks") -> bool:
    """Whether kvlab's `extra` lists a distribution named as `module` is (the bindings' distributions are)."""
    try:
        from importlib.metadata import PackageNotFoundError, requires
        reqs = requires("kvlab") or []
    except (ImportError, PackageNotFoundError):
        return False
    import re
    for req in reqs:
        name = re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].strip().lower()
        if name == module.lower() and f'extra == "{extra}"' in req:
            return True
    return False


def binding_gap(engine: str) -> str:
    """Why the Python-loop baseline has no row for `engine`: it has no binding there (naming the binding that
    runs another configuration of its engine, where one does), or its binding's module is not installed (and
    whether kvlab's notebooks extra brings it)."""
    mine = [b for b in BINDINGS if b.engine == engine]
    if mine:
        module = mine[0].module
        if importlib.util.find_spec(module) is None:
            how = "pip install 'kvlab[notebooks]'" if _in_requirements(module) else "not in kvlab[notebooks]"
            return f"Python module {module} not installed, {how}"
        return f"its binding, the {module} module, returned no rows"
    try:
        adapter = engine_registry.get(engine).adapter
    except errors.KvlabError:
        adapter = None
    kin = [b for b in BINDINGS if adapter is not None and _adapter(b.engine) == adapter]
    if kin:
        return f"the {kin[0].module} binding runs {kin[0].engine} only"
    return "no Python binding in the baseline"


def _adapter(name: str):
    try:
        return engine_registry.get(name).adapter
    except errors.KvlabError:
        return None


def python_loop_gaps(frame, loop: str = "python") -> dict:
    """{engine: why} for each engine of `frame` (the quickstart's native rows and Python-loop rows together) that
    has no row of loop `loop`, in the frame's order."""
    engines = list(dict.fromkeys(frame["engine"]))
    have = set(frame.loc[frame["loop"] == loop, "engine"])
    return {e: binding_gap(e) for e in engines if e not in have}


def python_loop_note(frame, loop: str = "python") -> str | None:
    """The figure's note on the engines without a Python-loop bar, with why; None where every engine has one."""
    gaps = python_loop_gaps(frame, loop)
    return f"no Python-loop bar: {grouped(gaps)}" if gaps else None
