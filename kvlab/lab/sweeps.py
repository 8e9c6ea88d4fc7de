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

from ..model.sweep import SweepSpec, _digest, load_toml
from ..results import sweeps as stored
from ..results.store import Store
from ..services import sweeps
from . import plots
from .display import attach_sweep_progress


class Sweep(sweeps.Sweep):
    """A sweep bound to a results store: what `kvlab.sweep(...)` returns (kvlab.services.sweeps.Sweep, with a
    widget for its progress in Jupyter and its figure)."""

    def show_progress(self, control, background: bool):
        attach_sweep_progress(control, background=background)

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
