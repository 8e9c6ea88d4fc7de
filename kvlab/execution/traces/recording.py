"""Recording a run's trace (RunSpec.record_trace): which native loops record their ops, the check that a spec's
phases all do (before anything runs), and the writer opened with the run's provenance."""
from __future__ import annotations

from ... import errors
from .fileformat import TraceWriter

# The native loops that record each op (the KV_TRACE hooks in cython_ext/src: loops_dbbench.c's write, read and
# delete loops, loop_mix.c's loops, loop_replay.c); the others (readseq, seekrandom, readwhilewriting's writer,
# bulk loads, LinkBench, ...) do not, and a run of them is refused rather than recorded in part.
RECORDED_LOOPS = ("fillseq", "fillrandom", "overwrite", "readrandom", "readmissing", "readhot", "deleterandom",
                  "mix", "replay")


def check(spec, planned) -> None:
    """A SpecError naming the phases of `planned` whose loops record nothing, or a LinkBench mix."""
    bad = [f"{p.name} ({p.loop})" for p in planned
           if p.loop not in RECORDED_LOOPS or p.graph is not None or p.has_writer]
    if bad:
        raise errors.SpecError(f"record_trace: {', '.join(bad)} cannot be recorded; the loops that record their "
                               f"ops: {', '.join(RECORDED_LOOPS)} (a batched load records each put; --load bulk "
                               "does not)")


def open_for(spec) -> TraceWriter | None:
    """The trace's writer for `spec`, its header written: kvlab's version, the engine, the workloads, the spec."""
    if spec.record_trace is None:
        return None
    header = {"engine": spec.engine, "workload": ",".join(spec.workloads), "spec": spec.to_dict(),
              "key_size": spec.key_size}
    if spec.replay is not None:
        header["replay_of"] = dict(spec.replay)
    return TraceWriter(spec.record_trace, header)
