"""The record of a trial whose worker died (a signal, the OOM killer, an engine's abort, a timeout): how it ended,
what the engine last wrote, the memory cgroup's peak, and the figures its progress had streamed so far, marked
partial.  The caller builds it from what it was sent; the worker could not."""
from __future__ import annotations

import time

from ... import engines
from ...engines.descriptor import MiB
from ...results.result import BenchmarkResult


def how(outcome, oom: bool, budget: dict) -> str:
    if oom and outcome.signal_name == "SIGKILL":
        return ("the kernel's OOM killer (SIGKILL): the engine and its page cache needed more than the memory budget "
                f"of {_mib(budget.get('bytes'))}; " + _likely_cause(budget))
    return f"{outcome.how()}" + (" (the engine aborted)" if outcome.signal_name == "SIGABRT" else "")


def record(spec, trial: int, latest, outcome, budget: dict, peak, oom: bool, key_encoding: str,
           warnings: list) -> BenchmarkResult:
    """The partial record of the phase that was running when the worker died (the workload of its last progress,
    or the spec's first when none came)."""
    ended = {"how": how(outcome, oom, budget), "signal": outcome.signal_name, "exit_status": outcome.exit_status,
             "oom_kill": oom, "killed_after_grace": outcome.killed_after_grace, "cgroup_peak_bytes": peak,
             "engine_log": list(outcome.log), "worker_pid": outcome.pid}
    ops = latest.done_ops if latest is not None else 0
    seconds = latest.elapsed_s if latest is not None else 0.0
    line = (f"the trial's worker died: {ended['how']}"
            + (f"; memory cgroup peak {peak / MiB:,.0f} MiB of {budget['bytes'] / MiB:,.0f} MiB" if peak and budget.get("bytes") else "")
            + (f"; the engine's last line: {outcome.log[-1]!r}" if outcome.log else "")
            + f"; the figures are those its progress streamed until then ({ops:,} ops in {seconds:.1f} s)")
    now = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return BenchmarkResult(
        engine=engines.result_name(spec.engine), workload=latest.workload if latest is not None else spec.workloads[0],
        phase=latest.phase if latest is not None else "run", threads=spec.threads, ops=ops, seconds=seconds,
        thread_seconds=seconds * spec.threads, found=None, not_found=None, bytes=0, latency_us={},
        latency_by_op={}, latency_unit="op", seed=spec.seed if spec.seed is not None else 0,
        params={"num": spec.num, "threads": spec.threads, "value_size": spec.value_size, "ended": ended,
                "memory_budget": {**budget, "cgroup_peak_bytes": peak}, "cold": spec.cold},
        versions={}, key_encoding=key_encoding, partial=True, warnings=[*warnings, line], started_at=now,
        ended_at=now, trial=trial, provenance={"spec": spec.to_dict()})


def _likely_cause(budget: dict) -> str:
    given = budget.get("given_wins") or {}
    if given:
        over = ", ".join(f"{k} {v['given']} (the budget gave {_mib(v['budget'])})" for k, v in given.items())
        return (f"settings given win over the budget's split: {over}; leave them to the budget, or give a larger "
                "--memory")
    split = ", ".join(f"{k} {_mib(v)}" for k, v in (budget.get("split") or {}).items())
    return (f"the engine needed more than the budget beside {'its split (' + split + ')' if split else 'its data'}; "
            "give a larger --memory")


def _mib(n) -> str:
    return "?" if n is None else f"{n / MiB:,.0f} MiB"
