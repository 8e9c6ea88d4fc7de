"""What a trial's worker process costs: the fork server's start (once per session), a worker's round trip, and a
whole trial on the null engine (which measures the harness, never an engine), against the same trial's own
measured phase, which the worker's start is outside of.

    python benchmarks/worker_cost.py [--rounds 30]

Prints medians and ranges (ms): the server's first start; a worker asked to do nothing (fork from the server,
the job's hand-over, the answer, the exit); a null-engine trial whole (kvlab.run, one phase of 1,000 ops) and its
measured phase's own seconds; and what the per-trial cost comes to for `make compare`'s plan (its trials counted
from the plan itself).
"""
import argparse
import time

from _common import kvlab, median

from kvlab.execution.worker import spawn


def _ms(xs):
    return f"{median(xs) * 1e3:8.1f} ms  [{min(xs) * 1e3:.1f}, {max(xs) * 1e3:.1f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    t0 = time.perf_counter()
    spawn.call("kvlab.execution.worker.inside:echo")   # the server's start and its imports, once a session
    first = time.perf_counter() - t0
    noop, trial, phase = [], [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        got = spawn.call("kvlab.execution.worker.inside:echo")
        noop.append(time.perf_counter() - t0)
        assert got.returned and got.error is None, got
        t0 = time.perf_counter()
        r = kvlab.run("null", "fillseq", num=1000, interval=0, engine_stats=False)
        trial.append(time.perf_counter() - t0)
        phase.append(r[-1].seconds)
    per_trial = median(trial) - median(phase)
    print(f"fork server's first start (once a session): {first * 1e3:.0f} ms")
    print(f"a worker that does nothing:                 {_ms(noop)}")
    print(f"a null-engine trial, whole (kvlab.run):     {_ms(trial)}")
    print(f"  its measured phase:                       {_ms(phase)}")
    print(f"per trial, outside every measured phase:    {per_trial * 1e3:8.1f} ms (the whole trial less its phase)")
    from kvlab.services import maincompare
    names = tuple(f"engine{i}" for i in range(13))   # make compare's 13 configurations: a load each, then its points
    trials = len(names) + len(maincompare.schedule(maincompare.Plan(engines=names)))
    print(f"make compare's plan (13 configurations): {trials} trials -> {trials * per_trial:.1f} s outside the "
          "measured phases")


if __name__ == "__main__":
    main()
