"""The one door a run's workload goes through (make_spec, so kvlab.run and the CLI): a registered name or a
comma list of them, `txn:<mako spec>` or `mako:<mako spec>`, a TOML mix file (`*.toml`), a YCSB properties
file (any other existing file, or YCSB's core names workloada ... workloadf), or a Mix.  Each is parsed and
checked here, before anything runs; a file becomes a Mix carried by the spec under the mix's name."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from ... import errors
from . import MAKO_PREFIXES, REGISTRY, unknown
from .mako import from_mako
from .mix import Mix
from .presets import PRESETS
from .toml_file import from_toml
from .ycsb import CORE_FILES, from_ycsb


def resolve(workload, mixes: Mapping[str, Mix] | None = None) -> tuple[tuple, dict]:
    """(names, mixes): the workload names a RunSpec runs, in order, and the mixes it carries (`mixes` plus
    one per file or Mix given).  A mako spec is named txn:<spec> whichever prefix it came with."""
    mixes = dict(mixes or {})
    names = []
    for item in _items(workload):
        if isinstance(item, Mix):
            names.append(_carry(mixes, item, f"the Mix {item.name!r}"))
            continue
        part = item.strip()
        if part in REGISTRY or part in mixes or part in PRESETS:
            names.append(part)
        elif part.startswith(MAKO_PREFIXES):
            spec = part.partition(":")[2].strip()
            from_mako(spec)   # parsed now: a bad spec is refused before anything runs
            names.append(f"txn:{spec}")
        elif part.lower().endswith(".toml"):
            names.append(_carry(mixes, from_toml(part), f"the TOML file {part!r}"))
        elif part in CORE_FILES or _is_file(part):
            names.append(_carry(mixes, from_ycsb([part]), f"the YCSB file {part!r}"))
        else:
            raise unknown(part, mixes)
    return tuple(names), mixes


def _items(workload) -> list:
    """The parts of a workload argument: a comma list, a path, a Mix, or a list of those."""
    if isinstance(workload, (str, os.PathLike, Mix)):
        workload = [workload]
    if not isinstance(workload, (list, tuple)):
        raise errors.SpecError(f"workload must be a name, a comma list of names, a file path or a Mix, got "
                               f"{workload!r}")
    out: list[Mix | str] = []
    for w in workload:
        if isinstance(w, Mix):
            out.append(w)
        elif isinstance(w, os.PathLike):
            out.append(os.fspath(w))
        elif isinstance(w, str):
            out += [p for p in w.split(",") if p.strip()]
        else:
            raise errors.SpecError(f"workload {w!r} must be a name, a file path or a Mix, got {type(w).__name__}")
    return out


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):   # a name no file system takes (NUL, too long)
        return False


def _carry(mixes: dict, mix: Mix, where: str) -> str:
    """Put `mix` into `mixes` under its name, refusing a name that means something else already."""
    name = mix.name
    if not isinstance(name, str) or not name.strip() or name != name.strip() or "," in name:
        raise errors.SpecError(f"{where}: the mix's name {name!r} cannot name a workload; allowed: a non-empty "
                               "name without commas or surrounding spaces")
    if name in REGISTRY or name.startswith(MAKO_PREFIXES):
        raise errors.SpecError(f"{where}: the mix's name {name!r} is taken by a built-in workload; give the mix "
                               "another name")
    taken = mixes.get(name) or PRESETS.get(name)
    if taken is not None and taken != mix:
        raise errors.SpecError(f"{where}: the mix's name {name!r} is taken by "
                               f"{'another mix of this run' if name in mixes else 'a preset'}; give it another name")
    mixes[name] = mix
    return name
