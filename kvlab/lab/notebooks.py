"""`kvlab notebooks run`: execute every notebook with papermill into a dated folder
holding the executed notebooks, their figures and results.  The notebooks are the package's
own copy (kvlab._resources), so an installed kvlab runs them as a checkout does."""
from __future__ import annotations

import time
from pathlib import Path

from .. import _optional, _resources, errors

SCALES = ("smoke", "default", "full")


def folder() -> Path:
    return _resources.folder("notebooks")


def available() -> list:
    return sorted(p.stem for p in folder().glob("*.ipynb"))


def run(scale: str = "default", only=None, out=None, kernel: str = "python3") -> Path:
    if scale not in SCALES:
        raise errors.SpecError(f"scale {scale!r} is unknown; allowed: {', '.join(SCALES)}")
    names = available()
    if only:
        wanted = [o for o in (only.split(",") if isinstance(only, str) else only)]
        unknown = [w for w in wanted if not any(n == w or n.split("_", 1)[-1] == w for n in names)]
        if unknown:
            raise errors.SpecError(f"notebook(s) {', '.join(unknown)} unknown; allowed: {', '.join(names)}")
        names = [n for n in names if n in wanted or n.split("_", 1)[-1] in wanted]
    # what every notebook needs, checked before the first one starts
    for module in ("papermill", "ipykernel", "nbformat", "matplotlib", "seaborn", "ipywidgets"):
        _optional.require(module, "running the notebooks", extra="notebooks")
    papermill = _optional.require("papermill", "running the notebooks", extra="notebooks")
    # the same place the results store defaults to: ./results, under the working directory
    dest = Path(out or Path("results") / f"notebooks-{time.strftime('%Y%m%d-%H%M%S')}-{scale}").resolve()
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
