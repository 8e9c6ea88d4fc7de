"""Trials that are fair to both sides: two specs run in turn, and the side that goes first alternates from round
to round (A B, B A, A B, ...: "ABBA" counterbalancing), so that whatever drifts on a shared machine (another job
starting, the page cache filling, the CPU warming) falls on both sides alike rather than on whichever ran
second.  A B A B ... would put B always second, after A had warmed the caches and the CPU: a steady drift
across the sequence would then fall on B every round.

    a, b = run_interleaved(spec_a, spec_b, repeat=5, on_result=lambda side, b: print(side, b.ops_per_sec))

Each trial is one run of its spec (spec.repeat is ignored: `repeat` counts the rounds), in its own fresh
temporary database unless the spec names one (--db DIR, --use-existing-db); trial i of both sides carries
`trial = i`, and its provenance says where it ran in the sequence (`provenance.interleaved`: its side, round,
position in the whole sequence, the side that started its round, and the whole sequence, e.g. "ABBAAB").
A side's last trial carries the statistics across its trials (`repetitions`), as `kvlab run --repeat` gives
them.  A trial stopped early (Ctrl-C, `control.stop()`) ends the sequence: what ran is returned.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ...model.spec import RunSpec
from ...results import stats
from ...results.result import BenchmarkResult, RunResult
from ..progress import RunControl
from ..run import runner

SIDES = ("A", "B")
ORDER_TEXT = "A B, B A, A B, ... (the side that starts alternates each round)"


def rounds(repeat: int) -> list:
    """The sides in the order they run, round by round: [("A", "B"), ("B", "A"), ("A", "B"), ...]."""
    return [SIDES if i % 2 == 0 else SIDES[::-1] for i in range(repeat)]


def run_interleaved(spec_a: RunSpec, spec_b: RunSpec, repeat: int,
                    on_result: Callable[[str, BenchmarkResult], None] | None = None,
                    on_trial: Callable[[str, int, RunResult], None] | None = None,
                    control: RunControl | None = None, label: str | None = None) -> tuple:
    """Run A and B `repeat` rounds each, the side that starts alternating (A B, B A, ...); returns (RunResult
    of A's trials, RunResult of B's).

    `on_result(side, benchmark)` is called as each phase ends, `on_trial(side, i, result)` as each trial ends
    (the place to store it: a comparison stopped part-way keeps the trials that ended).  `label` (a
    comparison's id) is recorded in each benchmark's provenance."""
    if repeat < 1:
        raise ValueError(f"repeat={repeat}: at least 1")
    trials = {side: [] for side in SIDES}
    specs = dict(zip(SIDES, (spec_a.replace(repeat=1), spec_b.replace(repeat=1))))
    plan = rounds(repeat)
    sequence = "".join(side for sides in plan for side in sides)
    order = 0
    for i, sides in enumerate(plan):
        for side in sides:
            where = {"side": side, "trial": i, "of": repeat, "order": order, "first": sides[0],
                     "sequence": sequence, "label": label}

            def mark(b, where=where, i=i):   # a new record: the worker's is never changed
                return dataclasses.replace(b, trial=i, provenance={**(b.provenance or {}), "trial": i,
                                                                   "interleaved": where})

            got = runner.run_spec(specs[side], control=control,
                                  on_result=lambda b, side=side, mark=mark: on_result and on_result(side, mark(b)))
            result = RunResult([mark(b) for b in got], got.spec)
            order += 1
            if on_trial is not None:   # it may label the trial's records (new records in `result`)
                on_trial(side, i, result)
            trials[side].append(list(result))
            if any(b.partial for b in result):
                return _results(trials, specs)
    return _results(trials, specs)


def _results(trials: dict, specs: dict) -> tuple:
    out = []
    for side in SIDES:
        kept = stats.with_repetitions(trials[side]) if len(trials[side]) > 1 else trials[side]
        out.append(RunResult([b for t in kept for b in t], specs[side]))
    return tuple(out)
