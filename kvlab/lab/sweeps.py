"""The Python face of sweeps: `kvlab.sweep(...)` describes a grid, shows its size and time estimate,
and runs it here (in the foreground or the background) or on Dask workers.

    s = kvlab.sweep("engines-threads", axes={"engine": ["lmdb", "leveldb"], "threads": [1, 2]},
                    repeats=2, workload="readrandom", num=100_000)
    s                                   # 8 points, the estimate, how many are stored already
    s.run(progress=True)                # or s.run(client=dask_client) / s.run(scheduler="tcp://...:8786")
    handle = s.start(progress=True)     # in the background, like kvlab.start
    s.frame()                           # the tidy frame: axes as columns, medians and CI95 across repeats
    s.plot("ops_per_sec", x="threads")  # the metric against one axis, the others as hue and facets
"""
from __future__ import annotations

from ..execution.orchestration import sweep as execution
from ..model.sweep import SweepSpec, _digest, load_toml
from ..results import sweeps as stored
from ..results.store import Store
from . import plots
from .display import attach_sweep_progress


class Sweep:
    """A sweep bound to a results store: what `kvlab.sweep(...)` returns."""

    def __init__(self, spec: SweepSpec, store=None):
        self.spec = spec
        self.store = store if isinstance(store, Store) else Store(store)

    @property
    def id(self) -> str:
        return self.spec.id

    def points(self) -> list:
        return self.spec.points()

    def pending(self) -> list:
        """The points not yet in the store."""
        done = stored.finished_points(self.store, self.id)
        return [p for p in self.spec.points() if p.id not in done]

    def estimate(self, pending_only: bool = True) -> execution.Estimate:
        return execution.estimate(self.pending() if pending_only else self.points(), self.store)

    def describe(self) -> str:
        pending = self.pending()
        total = len(self.spec.points())
        est = execution.estimate(pending, self.store)
        stored_note = f"; {total - len(pending)} already in {self.store.path}, {len(pending)} to run" \
            if len(pending) < total else ""
        return f"{self.spec.describe()}{stored_note}; estimate {est.describe()}"

    def __repr__(self):
        return f"<kvlab Sweep {self.describe()}>"

    def _executor(self, client, scheduler):
        if client is not None and scheduler is not None:
            from .. import errors
            raise errors.SpecError("give client or scheduler, not both")
        target = client if client is not None else scheduler
        if target is None:
            return None
        from ..execution.orchestration.dask_sweep import DaskExecutor
        return DaskExecutor(target)

    def run(self, *, client=None, scheduler=None, progress=False,
            control: execution.SweepControl | None = None) -> execution.SweepOutcome:
        """Run the points not yet stored, here one after another, or on Dask (`client` or `scheduler`
        address).  The kernel's interrupt stops the point in flight (not stored) and the sweep."""
        control = control or execution.SweepControl()
        if progress:
            attach_sweep_progress(control, background=False)
        return execution.run_sweep(self.spec, self.store, control, self._executor(client, scheduler))

    def start(self, *, client=None, scheduler=None, progress=False,
              control: execution.SweepControl | None = None) -> execution.SweepHandle:
        """As run(), in the background: returns a handle at once (progress, stop(), await)."""
        control = control or execution.SweepControl()
        if progress:
            attach_sweep_progress(control, background=True)
        return execution.start_sweep(self.spec, self.store, control, self._executor(client, scheduler))

    def frame(self, phases=("run",), metrics=stored.METRICS):
        """The tidy frame of the stored points (see kvlab.results.sweeps.tidy)."""
        return stored.tidy(self.store, self.id, phases=phases, metrics=metrics,
                           point_ids=[p.id for p in self.spec.points()])

    def results(self, phases=None):
        """The stored results of the finished points, full records (machine facts of each host)."""
        return stored.results(self.store, self.id, phases=phases, point_ids=[p.id for p in self.spec.points()])

    def plot(self, metric: str = "ops_per_sec", x: str | None = None, **kw):
        return plots.sweep(self.frame(), metric, x=x or _first_numeric_axis(self.spec), axes=list(self.spec.axes),
                           **kw)


def _first_numeric_axis(spec: SweepSpec) -> str:
    for name, values in spec.axes.items():
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return name
    return next(iter(spec.axes), "engine")


def sweep(name: str | None = None, axes=None, repeats: int = 1, *, base=None, file=None, store=None, mixes=None,
          **params) -> Sweep:
    """A sweep: `axes` (name -> values) over a base run (`base`, or keyword arguments as kvlab.run takes
    them), each point run `repeats` times; or `file=` a sweep TOML file.  Nothing runs until .run() or
    .start().  `name` is the sweep's id in the store (default: one made from its definition)."""
    if file is not None:
        spec = load_toml(file)
    else:
        base = {**(base or {}), **params}
        name = name or f"sweep-{_digest({'base': base, 'axes': axes or {}, 'repeats': repeats})}"
        spec = SweepSpec(name, base, axes or {}, repeats, mixes or {})
    return Sweep(spec, store)


def sweep_results(name: str, store=None):
    """The tidy frame of a stored sweep by name."""
    return stored.tidy(store if isinstance(store, Store) else Store(store), name)
