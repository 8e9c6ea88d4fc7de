"""Budgets that cannot hold, refused before a worker starts: above this machine's memory or the limit of the
cgroup kvlab runs in, or giving an engine less than the least it opens with (its configuration's `least`)."""
from __future__ import annotations

from ... import engines, errors
from ...engines.descriptor import MiB, memory_split
from ..host import accounting, cgroup


def _mib(n: int) -> str:
    return f"{n / MiB:,.0f} MiB"


def check(spec, budget: dict) -> None:
    """A SpecError naming both sizes where the spec's memory budget cannot hold (see the module's text)."""
    cfg = engines.get(spec.engine)
    given = {k: v for k, v in spec.engine_settings.items() if k in cfg.least and v is not None}
    for setting, least in cfg.least.items():
        if setting in given and int(given[setting]) < least:
            raise errors.SpecError(f"{setting}={_mib(int(given[setting]))} is below the least {cfg.name} opens "
                                   f"with, {_mib(least)}; allowed: {setting} of at least {_mib(least)}")
    n = budget["bytes"]
    if n is None:
        return
    total, enclosing = accounting.machine().get("memory_bytes"), cgroup.enclosing_limit()
    for ceiling, what in ((total, "this machine's memory"),
                          (enclosing, "the limit of the memory cgroup kvlab runs in")):
        if ceiling is not None and n > ceiling:
            raise errors.SpecError(f"memory={_mib(n)} is above {what}, {_mib(ceiling)}: the budget could never "
                                   f"bind; allowed: at most {_mib(ceiling)}")
    d = engines.descriptor(cfg)
    split = memory_split(d, cfg, n)
    for setting, least in cfg.least.items():
        if setting in split and setting not in given and split[setting] < least:
            need = next((b for b in range(n, 1 << 44, MiB) if memory_split(d, cfg, b)[setting] >= least), None)
            raise errors.SpecError(f"memory={_mib(n)} gives {cfg.name} {setting}={_mib(split[setting])}, below the "
                                   f"least it opens with, {_mib(least)}; allowed: a budget of at least "
                                   f"{_mib(need or least)}, or {setting} given")
