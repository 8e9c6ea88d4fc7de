"""Trials that are fair to both sides: two specs run in turn, A B A B ..., so that whatever drifts on a shared
machine (another job starting, the page cache filling, the CPU warming) falls on both sides alike rather than
on whichever ran second.

    a, b = run_interleaved(spec_a, spec_b, repeat=5, on_result=lambda side, b: print(side, b.ops_per_sec))

Each trial is one run of its spec (spec.repeat is ignored: `repeat` counts the pairs), in its own fresh
temporary database unless the spec names one (--db DIR, --use-existing-db); trial i of both sides carries
`trial = i`, and its provenance says where it ran in the sequence (`provenance.interleaved`).  A side's last
trial carries the statistics across its trials (`repetitions`), as `kvlab run --repeat` gives them.  A
trial stopped early (Ctrl-C, `control.stop()`) ends the sequence: what ran is returned.
"""
from __future__ import annotations

from collections.abc import Callable

from ..model.spec import RunSpec
from ..results import stats
from ..results.result import BenchmarkResult, RunResult
from . import runner
from .progress import RunControl

SIDES = ("A", "B")


def run_interleaved(spec_a: RunSpec, spec_b: RunSpec, repeat: int,
                    on_result: Callable[[str, BenchmarkResult], None] | None = None,
                    on_trial: Callable[[str, int, RunResult], None] | None = None,
                    control: RunControl | None = None, label: str | None = None) -> tuple:
    """Run A then B, `repeat` times (A B A B ...); returns (RunResult of A's trials, RunResult of B's).

    `on_result(side, benchmark)` is called as each phase ends, `on_trial(side, i, result)` as each trial ends
    (the place to store it: a comparison stopped part-way keeps the trials that ended).  `label` (a
    comparison's id) is recorded in each benchmark's provenance."""
    if repeat < 1:
        raise ValueError(f"repeat={repeat}: at least 1")
    trials = {side: [] for side in SIDES}
    specs = dict(zip(SIDES, (spec_a.replace(repeat=1), spec_b.replace(repeat=1))))
    order = 0
    for i in range(repeat):
        for side in SIDES:
            where = {"side": side, "trial": i, "of": repeat, "order": order, "sequence": "ABAB", "label": label}

            def mark(b, side=side, where=where, i=i):
                b.trial = i
                b.provenance = {**(b.provenance or {}), "trial": i, "interleaved": where}
                if on_result is not None:
                    on_result(side, b)

            result = runner.run_spec(specs[side], on_result=mark, control=control)
            trials[side].append(list(result))
            order += 1
            if on_trial is not None:
                on_trial(side, i, result)
            if any(b.partial for b in result):
                return _results(trials, specs)
    return _results(trials, specs)


def _results(trials: dict, specs: dict) -> tuple:
    out = []
    for side in SIDES:
        if len(trials[side]) > 1:
            stats.attach_repetitions(trials[side])
        out.append(RunResult([b for t in trials[side] for b in t], specs[side]))
    return tuple(out)
