"""A sweep bound to a results store, for both faces: its points, what is stored already, the estimate, and
running it here or on Dask (`kvlab sweep`; the notebook face's `kvlab.sweep` adds a widget and plots)."""
from __future__ import annotations

from ..execution.orchestration import sweep as execution
from ..model.sweep import SweepSpec
from ..results import sweeps as stored
from ..results.store import Store
from .progress import SweepTextBar


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

    def show_progress(self, control, background: bool):
        """Progress on a terminal or in a log (the notebook face's Sweep shows a widget in Jupyter)."""
        control.observers.append(SweepTextBar())

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
            self.show_progress(control, background=False)
        return execution.run_sweep(self.spec, self.store, control, self._executor(client, scheduler))

    def start(self, *, client=None, scheduler=None, progress=False,
              control: execution.SweepControl | None = None) -> execution.SweepHandle:
        """As run(), in the background: returns a handle at once (progress, stop(), await)."""
        control = control or execution.SweepControl()
        if progress:
            self.show_progress(control, background=True)
        return execution.start_sweep(self.spec, self.store, control, self._executor(client, scheduler))

    def frame(self, phases=("run",), metrics=stored.METRICS):
        """The tidy frame of the stored points (see kvlab.results.sweeps.tidy)."""
        return stored.tidy(self.store, self.id, phases=phases, metrics=metrics,
                           point_ids=[p.id for p in self.spec.points()])

    def results(self, phases=None):
        """The stored results of the finished points, full records (machine facts of each host)."""
        return stored.results(self.store, self.id, phases=phases, point_ids=[p.id for p in self.spec.points()])
