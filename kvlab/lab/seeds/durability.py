"""Durability: each engine's durability settings (their promises: DURABILITY) crashed by SIGKILL and, where FUSE
is here, by power cuts of a forgetfs mount (notebook 07_durability)."""
from __future__ import annotations

from dataclasses import dataclass

from ...execution.crash import forgetfs
from ...execution.crash.crashtest import DURABILITY, crashtest
from .plan import Step


@dataclass(frozen=True)
class Crashes:
    """`cuts` crash tests of one durability setting: SIGKILLs of its writer, or with `power_loss` power cuts of a
    forgetfs mount (`loss`: all, random or torn; `names`: posix or ext4)."""
    setting: str
    cuts: int
    num: int
    max_s: float
    seed: int
    power_loss: bool = False
    loss: str = "all"
    names: str = "posix"
    settings: tuple = ()    # engine settings on top of the setting's: a memory budget's split, (name, bytes) pairs


def durability_plan(engines, cuts, num, max_s, seed=1, loss="all", names="posix", memory=None) -> list:
    """Every durability setting of each engine crashed `cuts` times by SIGKILL; then, where forgetfs can mount
    here, as many power cuts of each.  `memory`: a budget whose split (the engine's cache settings) each crash
    test's writer opens with; None: the engines' defaults."""
    kinds = (False,) if forgetfs.unavailable_reason() else (False, True)
    return [Step(e, f"{d.name} {'power cuts' if power else 'SIGKILLs'}",
                 work=Crashes(d.name, cuts, num, max_s, seed, power, loss, names, _split(e, memory)))
            for power in kinds for e in engines for d in DURABILITY.get(e, ())]


def _split(engine, memory) -> tuple:
    from ... import engines as engine_registry
    from ...engines.descriptor import memory_split
    from ...model.spec import memory_bytes
    if memory is None:
        return ()
    cfg = engine_registry.get(engine)
    return tuple(memory_split(engine_registry.descriptor(cfg), cfg, memory_bytes(memory)).items())


def durability(engines, cuts, num, max_s, seed=1, loss="all", names="posix", memory=None) -> list:
    """The crash tests of durability_plan, in its order: their CrashReports."""
    reports = []
    for step in durability_plan(engines, cuts, num, max_s, seed, loss, names, memory):
        c = step.work
        power = dict(power_loss=True, loss=c.loss, names=c.names) if c.power_loss else {}
        reports.append(crashtest(step.engine, c.cuts, setting=c.setting, seed=c.seed, num=c.num, max_s=c.max_s,
                                 settings=dict(c.settings) or None, **power))
    return reports


def notebook_plan(p, engines) -> list:
    """Notebook 07_durability's runs."""
    return durability_plan(engines, p["cuts"], p["num"], p["max_s"], seed=p["seed"], loss=p["loss"],
                           names=p["names"], memory=p.get("memory"))
