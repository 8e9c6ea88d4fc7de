"""Optional dependencies: the one way kvlab imports a module that only an extra brings.

`require("matplotlib.pyplot", "kvlab.lab.plots")` returns the module, or raises MissingDependency,
whose message names the extra to install (`pip install 'kvlab[plots]'`), never a bare ImportError.
The extras themselves are pyproject.toml's [project.optional-dependencies]; tests/test_wheel.py
holds EXTRA_OF in step with them.
"""
from __future__ import annotations

import importlib

from . import errors

# top-level import name -> (the distribution that provides it, the smallest extra that brings it)
EXTRA_OF = {
    "matplotlib": ("matplotlib", "plots"),
    "seaborn": ("seaborn", "plots"),
    "papermill": ("papermill", "notebooks"),
    "nbformat": ("nbformat", "notebooks"),
    "ipykernel": ("ipykernel", "notebooks"),
    "lmdb": ("lmdb", "notebooks"),
    "plyvel": ("plyvel", "notebooks"),
    "rocksdict": ("rocksdict", "notebooks"),
    "ipywidgets": ("ipywidgets", "jupyterlab"),
    "jupyterlab": ("jupyterlab", "jupyterlab"),
    "jupyter_client": ("jupyter_client", "jupyterlab"),
    "playwright": ("playwright", "browser-test"),
}


class MissingDependency(errors.KvlabError, ImportError):
    """An optional dependency is not installed (or cannot be imported); the message says which extra
    brings it."""

    def __init__(self, module: str, needed_for: str, extra: str, distribution: str, cause: str | None = None):
        self.module, self.extra, self.distribution = module, extra, distribution
        state = f"which cannot be imported ({cause})" if cause else "which is not installed"
        super().__init__(f"{needed_for} needs {distribution}, {state}: pip install 'kvlab[{extra}]'",
                         name=module)


def require(module: str, needed_for: str, extra: str | None = None):
    """Import `module` (a dotted name allowed) for `needed_for` (what the user asked for, e.g.
    "running the notebooks"), or raise MissingDependency naming the extra to install: `extra`,
    else the smallest one that brings the module."""
    top = module.split(".")[0]
    distribution, smallest = EXTRA_OF[top]
    extra = extra or smallest
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        # the package itself absent, or present but broken (one of its own dependencies missing)
        cause = None if missing in (None, top, module) else str(exc)
        raise MissingDependency(module, needed_for, extra, distribution, cause) from exc
