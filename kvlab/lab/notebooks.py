"""`kvlab notebooks run`: execute every notebook with papermill into a dated folder
holding the executed notebooks, their figures and results.  The notebooks are the package's
own copy (kvlab._resources), so an installed kvlab runs them as a checkout does.  `dry_run` says what a run
will cost (estimate.py); `run` refuses one that does not fit on the disk before the first notebook starts."""
from __future__ import annotations

import time
from pathlib import Path

from .. import _optional, _resources, errors
from . import estimate

SCALES = ("smoke", "default", "large", "full")   # seeds.common.SCALES: large fits an evening here


def folder() -> Path:
    return _resources.folder("notebooks")


def available() -> list:
    return sorted(p.stem for p in folder().glob("*.ipynb"))


def select(only=None) -> list:
    """The notebooks `only` names (a comma list or a list; a name with or without its number), else all."""
    names = available()
    if not only:
        return names
    wanted = [o for o in (only.split(",") if isinstance(only, str) else only)]
    unknown = [w for w in wanted if not any(n == w or n.split("_", 1)[-1] == w for n in names)]
    if unknown:
        raise errors.SpecError(f"notebook(s) {', '.join(unknown)} unknown; allowed: {', '.join(names)}")
    return [n for n in names if n in wanted or n.split("_", 1)[-1] in wanted]


def destination(scale: str, out=None) -> Path:
    # the same place the results store defaults to: ./results, under the working directory
    return Path(out or Path("results") / f"notebooks-{time.strftime('%Y%m%d-%H%M%S')}-{scale}").resolve()


def _check_scale(scale: str) -> None:
    if scale not in SCALES:
        raise errors.SpecError(f"scale {scale!r} is unknown; allowed: {', '.join(SCALES)}")


def dry_run(scale: str = "default", only=None, out=None, store=None) -> list:
    """What `run` would cost, as lines to print; nothing runs and nothing is written."""
    _check_scale(scale)
    names = select(only)
    dest = destination(scale, out)
    costs = estimate.notebooks_cost(names, scale, store)
    lines = [f"kvlab notebooks run --scale {scale} --dry-run: {len(names)} notebook(s) into {dest}; nothing runs",
             *estimate.describe_basis(store)]
    for c in costs:
        lines += [f"== {c.title}", *estimate.describe(c)]
    return lines + estimate.describe_total(costs, dest)


def run(scale: str = "default", only=None, out=None, kernel: str = "python3", store=None) -> Path:
    _check_scale(scale)
    names = select(only)
    dest = destination(scale, out)
    # refused before anything starts when the estimate does not fit where the databases and output go
    estimate.check_disk(estimate.notebooks_cost(names, scale, store), dest)
    # what every notebook needs, checked before the first one starts
    for module in ("papermill", "ipykernel", "nbformat", "matplotlib", "seaborn", "ipywidgets"):
        _optional.require(module, "running the notebooks", extra="notebooks")
    papermill = _optional.require("papermill", "running the notebooks", extra="notebooks")
    dest.mkdir(parents=True, exist_ok=True)
    source = folder()
    for name in names:
        target = dest / name
        target.mkdir(exist_ok=True)
        print(f"== {name} ({scale}) -> {target}", flush=True)
        papermill.execute_notebook(str(source / f"{name}.ipynb"), str(target / f"{name}.ipynb"),
                                   parameters={"scale": scale, "output_dir": str(target)}, kernel_name=kernel,
                                   progress_bar=False)
    return dest
