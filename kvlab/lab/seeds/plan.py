"""A notebook's runs as data, made before any of them runs: each seed's experiment walks its plan (a list of
Steps, from its `<experiment>_plan` function), and the estimate of a notebook (kvlab.lab.estimate) costs the same
plan, so what a notebook runs and what its estimate counts are one list.  Each seed module's `notebook_plan(p,
engines)` is its notebook's plan: the experiments its cells call, with the notebook's parameters `p`."""
from __future__ import annotations

import contextlib
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import groupby
from typing import Mapping

from ...model.spec import RunSpec, make_spec
from ...results.result import RunResult
from ..api import run


@dataclass(frozen=True)
class Step:
    """One run of a plan: a kvlab run (`run`: kvlab.run's arguments after the engine, workload first), or other
    work (`work`: a LinkBench load and its requests, a setting's crash tests, a binding's Python loop).
    `seed_db`: it runs, in plan order with the engine's other such steps, in one fresh folder of the seed's own
    (common.tmpdb, removed after the engine's last step), not in the runner's ($KVLAB_TMPDIR).  `in_memory`:
    the seed ran it from memory (its database should stay in the page cache)."""
    engine: str
    name: str                         # what the seed calls it: "fillseq", "2 readers", "ycsb-c at 1,000/s"
    run: Mapping | None = None
    work: object = None
    seed_db: bool = False
    in_memory: bool = True

    @property
    def label(self) -> str:
        return f"{self.engine} {self.name}"

    def spec(self, db: str | None = None) -> RunSpec:
        """The RunSpec of a kvlab run step, in `db` where given (as execute runs it)."""
        return make_spec(self.engine, **self._args(db))

    def _args(self, db):
        if self.run is None:
            raise TypeError(f"{self.label} is not a kvlab run ({type(self.work).__name__})")
        return {**self.run, **({"db": db} if db is not None else {})}


# Within over_budget_recorded(): {engine: why its steps stopped} (a step the OOM killer ended)
_OVER_BUDGET: ContextVar[dict | None] = ContextVar("kvlab_over_budget", default=None)


@contextlib.contextmanager
def over_budget_recorded():
    """Within it, a step whose trial's worker died (the OOM killer over its memory budget, a signal, an engine's
    abort: a record with params["ended"]) does not end the experiment: `attempt` returns None for it and for the
    engine's later steps in its database (`seed_db`: they would run on what the dead step left), and the dict this
    yields says, per engine, which step ended so and why (`kvlab reproduce`: its claims are "cannot test here").
    Outside it, the step's result comes back with that record."""
    token = _OVER_BUDGET.set({})
    try:
        yield _OVER_BUDGET.get()
    finally:
        _OVER_BUDGET.reset(token)


def execute(step: Step, db: str | None = None) -> RunResult:
    """Run a kvlab run step (kvlab.run, as a notebook would call it), in `db` where given."""
    return run(step.engine, **step._args(db))


def attempt(step: Step, db: str | None = None) -> RunResult | None:
    """execute(step, db), for the experiments `kvlab reproduce` runs: None within over_budget_recorded() where the
    step went over its memory budget, or follows a step of its engine's that did in the same database."""
    over = _OVER_BUDGET.get()
    if over is None:
        return execute(step, db)
    if step.seed_db and step.engine in over:
        return None
    got = execute(step, db)
    ended = next((b.params["ended"] for b in got if (b.params or {}).get("ended")), None)
    if ended is not None:
        over.setdefault(step.engine, f"{step.label}: the trial's worker died: {ended['how']}")
        return None
    return got


def by_engine(steps) -> list:
    """[(engine, [its steps])], in plan order: an engine's steps that share its folder stay together."""
    return [(engine, list(group)) for engine, group in groupby(steps, key=lambda s: s.engine)]
