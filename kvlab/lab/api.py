"""The Python face: `kvlab.run` and `kvlab.start` with the choice of progress display.

The execution layer runs a spec and reports progress to a RunControl's observers; here the
face decides what observes it (a widget in Jupyter, a bar on a terminal, nothing)."""
from __future__ import annotations

import signal

from .. import _signals as signals
from ..execution.orchestration import background
from ..execution.orchestration.background import RunHandle
from ..execution.progress import RunControl
from ..execution.run import runner
from ..model.spec import RunSpec, make_spec
from ..results.result import RunResult
from .display import attach_progress


def run(engine: str = "lmdb", workload=None, *, progress=False,
        control: RunControl | None = None, **params) -> RunResult:
    """Run `workload` on `engine`: a name or comma list (in order), txn:/mako:<mako spec>, a TOML
    mix file (*.toml), a YCSB properties file (or YCSB's core workloada ... workloadf), or a Mix; by default
    fillseq,readrandom.  A stored run's spec runs again as it is: `kvlab.run(**r[0].provenance["spec"])`.

    Parameters are RunSpec fields (num, reads, threads, duration, value_size,
    key_size, batch, seed, db, interval, warmup, repeat, ...) and engine settings
    (cache_size, sync, compression, options, ...).  A mix's own record_count,
    operation_count, threads, duration and target rate are used for what is not
    given (YCSB's ycsb-a loads its 1,000 records).  Unknown names raise SpecError
    listing the allowed ones; every workload is checked before anything runs.
    `progress=True` shows live progress (a widget in Jupyter, a bar on a
    terminal); Ctrl-C or the kernel's interrupt stops the run within a second
    and returns what was measured, marked partial.  For a run in the
    background use `kvlab.start`.
    """
    spec = make_spec(engine, workload, **params)
    if progress:
        control = attach_progress(control or RunControl(), spec, background=False)
    try:
        result = runner.run_spec(spec, control=control)
    except signals.Stop as exc:
        _pass_on(exc.name)
        raise
    for b in result:
        _pass_on((b.params or {}).get("stopped_by"))
    return result


def replay(path, engine: str = "lmdb", *, speed="recorded", threads: int | None = None, format: str | None = None,
           progress=False, control: RunControl | None = None, **params) -> RunResult:
    """Replay the trace in `path` on `engine`, one result per recorded phase (docs/traces.md).

    `path`: a kvlab trace (`kvlab.run(..., record_trace=FILE)`), a RocksDB trace (db_bench --trace_file) or a
    cache trace's CSV; `format` "kvlab", "rocksdb" or "csv" (None: detected from its first bytes).  `speed`:
    "recorded" (each op starts at its recorded time, its latency measured from that time, as the open loop
    does), "max" (back to back) or "Nx" (N times the recorded speed).  `threads`: the replay's threads (None: as
    recorded); each recorded thread's ops keep their order.  `params`: RunSpec fields and engine settings (db,
    seed, interval, record_trace, cache_size, ...)."""
    from ..execution.traces.replay import spec_for
    spec = spec_for(path, engine, speed=speed, threads=threads, fmt=format, **params)
    if progress:
        control = attach_progress(control or RunControl(), spec, background=False)
    return runner.run_spec(spec, control=control)


def _pass_on(name: str | None):
    """A kernel (or script) told to end (SIGTERM, SIGHUP) ends once the run has stopped cleanly and removed its
    temporary database: the signal goes on to the handler that was there before the run.  An interrupt (SIGINT)
    only stops the run, as it always has."""
    if name in ("SIGTERM", "SIGHUP"):
        signal.raise_signal(getattr(signal, name))


def start(engine: str = "lmdb", workload=None, *, progress=False,
          control: RunControl | None = None, **params) -> RunHandle:
    """Start a run in the background and return its RunHandle at once.

    Takes the same arguments as `kvlab.run`; `progress=True` shows a live widget with a Stop
    button in Jupyter (a bar on a terminal)."""
    return start_spec(make_spec(engine, workload, **params), progress=progress, control=control)


def start_spec(spec: RunSpec, *, progress=False, control: RunControl | None = None) -> RunHandle:
    control = control or RunControl()
    if progress:
        attach_progress(control, spec, background=True)
    _kernel_interrupt_stops_background()
    return background.start_spec(spec, control)


def _kernel_interrupt_stops_background() -> None:
    """In a Jupyter kernel, its interrupt (SIGINT, which ipykernel ignores between cells) stops the runs started
    with kvlab.start as well: the handler ipykernel puts back after each cell becomes one that stops them first."""
    import sys
    if "IPython" not in sys.modules:
        return
    shell = sys.modules["IPython"].get_ipython()
    kernel = getattr(shell, "kernel", None)
    previous = getattr(kernel, "saved_sigint_handler", None)
    if kernel is None or previous is None or getattr(previous, "stops_kvlab_runs", False):
        return

    def handler(signum, frame):
        background.stop_all()
        if callable(previous):
            previous(signum, frame)
    handler.stops_kvlab_runs = True
    kernel.saved_sigint_handler = handler


def linkbench(engine: str = "lmdb", phase: str = "run", *, config=None, db=None, memory_limit=None,
              progress=False, control: RunControl | None = None, **params) -> RunResult:
    """LinkBench on `engine`: phase "load", "request" (on `db`, loaded before) or "run" (both).

    `params` are LinkBench's settings under LinkBench's names (maxid1, requesters, loaders, requests,
    maxtime, intervals, interval_seconds, link_type_count, addlink ... getlinklist as percentages, ...;
    kvlab.model.workloads.linkbench.LinkBench) and engine settings (cache_size, sync, ...).
    `memory_limit` ("512M") runs the phase in a memory cgroup of that size, page cache included."""
    from dataclasses import fields, replace

    from ..execution.orchestration.linkbench import run_linkbench, spec_for
    from ..model.workloads.linkbench import MIX_PROPERTIES, LinkBench
    names = {f.name for f in fields(LinkBench)} - {"mix", "notes"}
    mix = {k: params.pop(k) for k in list(params) if k in MIX_PROPERTIES}
    lb_args = {k: params.pop(k) for k in list(params) if k in names}
    base = config or LinkBench()
    config = replace(base, **lb_args, mix={**base.mix, **mix})
    if progress and memory_limit is None:
        control = attach_progress(control or RunControl(), spec_for(engine, config, phase, db, **params),
                                  background=False)
    return run_linkbench(engine, config, phase, db=db, memory_limit=memory_limit, control=control, **params)
