"""`kvlab notebooks run`: execute every notebook with papermill into a dated folder
holding the executed notebooks, their figures and results.  The notebooks are the package's
own copy (kvlab._resources), so an installed kvlab runs them as a checkout does.  `dry_run` says what a run
will cost (estimate.py); `run` refuses one that does not fit on the disk before the first notebook starts.

Each notebook's kernel runs in that notebook's output folder, with PYTHONSAFEPATH=1, and never sees the
caller's working directory: the kernel puts its working directory on sys.path (IPython adds '' ahead of
site-packages), so a folder there named kvlab (a checkout: ~ holding ~/kvlab) was imported as a namespace
package in place of kvlab, whose editable install is found only after sys.path.
The notebooks read nothing relative to it: their inputs are the package's data and their outputs go to the
output_dir parameter (absolute).  A failing cell becomes one NotebookFailed naming the notebook, the cell and
the exception; the executed notebook, error included, stays where it was written."""
from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from pathlib import Path

from .. import _optional, _resources, errors
from ..results.store import kvlab_home
from . import estimate

SCALES = ("smoke", "default", "large", "full")   # seeds.common.SCALES: large fits an evening here
KERNEL_LOG = "kernel.log"   # the kernel process's own stderr, in each notebook's output folder
# papermill's logger (nbclient logs through it) gets a handler, so that its records no longer fall through to
# logging's last resort, which printed them on stderr beside the one line a failure gives; they still reach
# whatever handlers the caller configures
logging.getLogger("papermill").addHandler(logging.NullHandler())
# and asyncio's: a run stopped by a signal leaves nbclient's cell task behind ("Task exception was never
# retrieved", a traceback), where the command's one line ("stopped by SIGTERM") says all there is
logging.getLogger("asyncio").addHandler(logging.NullHandler())
KERNEL_SETTLE_S = 0.3   # after the interrupt a shutdown sends first: a run in the cell stops within about 0.1 s


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
    """--out, else a folder of its own in kvlab's per-user folder, where the results store lives (never a folder
    the working directory happens to be)."""
    return Path(out or kvlab_home() / f"notebooks-{time.strftime('%Y%m%d-%H%M%S')}-{scale}").resolve()


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
    manager = _optional.require("jupyter_client.manager", "running the notebooks", extra="notebooks")
    kernelspec = _optional.require("jupyter_client.kernelspec", "running the notebooks", extra="notebooks")
    dest.mkdir(parents=True, exist_ok=True)
    source = folder()
    for name in names:
        target = dest / name
        target.mkdir(exist_ok=True)
        executed = target / f"{name}.ipynb"
        print(f"== {name} ({scale}) -> {target}", flush=True)
        with open(target / KERNEL_LOG, "w") as log:
            try:
                papermill.execute_notebook(str(source / f"{name}.ipynb"), str(executed),
                                           parameters={"scale": scale, "output_dir": str(target)},
                                           kernel_name=kernel, progress_bar=False,
                                           # nbclient starts the kernel in resources' metadata.path
                                           resources={"metadata": {"path": str(target)}},
                                           kernel_manager_class=_kernel_manager(manager, log))
            except papermill.exceptions.PapermillExecutionError as exc:
                raise errors.NotebookFailed(
                    f"notebook {name} failed at {_cell(executed, exc)}: {_one_line(exc.ename, exc.evalue)}; "
                    f"the executed notebook, with the error, is kept at {executed}", name, executed) from None
            except (papermill.exceptions.PapermillException, kernelspec.NoSuchKernel, RuntimeError,
                    TimeoutError) as exc:
                # the kernel did not start, died (DeadKernelError) or stopped answering: papermill has saved
                # the notebook as far as it ran
                raise errors.NotebookFailed(
                    f"notebook {name} did not finish: {_one_line(type(exc).__name__, str(exc))}; the executed "
                    f"notebook, as far as it ran, is kept at {executed}, the kernel's own messages in "
                    f"{target / KERNEL_LOG}", name, executed) from None
    return dest


def _kernel_manager(manager, log):
    """The kernel manager class nbclient starts the notebook's kernel with: jupyter_client's own, launching the
    kernel process with PYTHONSAFEPATH=1 (Python, and IPython from 9.7, then leave its working directory off
    sys.path; before 9.7 IPython puts it there, and the working directory, the notebook's output folder, is what
    keeps a kvlab folder out) and its stderr (ipykernel's start-up warnings) in `log`, so that the terminal shows
    only kvlab's lines."""

    class KvlabKernelManager(manager.AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):   # jupyter_client's place to launch otherwise
            env = {**kw.get("env", os.environ), "PYTHONSAFEPATH": "1"}
            await super()._async_launch_kernel(kernel_cmd, **{**kw, "env": env, "stderr": log})

        async def shutdown_kernel(self, now: bool = False, restart: bool = False):
            """Before the kernel goes (its notebook ended, or `kvlab notebooks run` was told to stop, which is
            when nbclient shuts it down mid-cell): an interrupt, which stops a kvlab.run in the cell as Ctrl-C does
            (partial result, temporary database removed); an idle kernel ignores it.  Then the graceful shutdown,
            whose interpreter exit stops kvlab.start's runs the same way."""
            if not now and await self.is_alive():
                try:
                    await self.interrupt_kernel()
                    await asyncio.sleep(KERNEL_SETTLE_S)
                except Exception:   # a kernel on its way out: the shutdown below still runs
                    pass
            await super().shutdown_kernel(now=now, restart=restart)

    return KvlabKernelManager


def _one_line(kind: str, message: str, limit: int = 300) -> str:
    text = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", message or "").split())
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return f"{kind}: {text}" if text else kind


def _cell(executed: Path, exc) -> str:
    """The failed cell as the user finds it: its index in kvlab's notebook (as JupyterLab numbers the cells
    from 0; papermill's injected-parameters cell and error banners not counted), In [n] as the executed
    notebook shows it, and its tags or else its first line."""
    nbformat = _optional.require("nbformat", "running the notebooks", extra="notebooks")
    try:
        cells = nbformat.read(str(executed), as_version=4).cells
    except (OSError, ValueError):   # unreadable: the line still names the cell by In [n] and its source
        cells = []
    index, tags, skipped = None, [], 0
    for i, cell in enumerate(cells):
        marks = list(cell.get("metadata", {}).get("tags", []))
        failed = any(o.get("output_type") == "error" for o in cell.get("outputs", []))
        if "papermill-error-cell-tag" in marks or "injected-parameters" in marks:
            if failed:
                return "the cell papermill injected with the parameters"
            skipped += 1
        elif failed:
            index, tags = i - skipped, marks
            break
    label = f"tagged {', '.join(tags)}" if tags else _first_line(exc.source)
    about = ([f"In [{exc.exec_count}]"] if exc.exec_count is not None else []) + ([label] if label else [])
    return (f"cell {index}" if index is not None else "a cell") + (f" ({', '.join(about)})" if about else "")


def _first_line(source: str, limit: int = 60) -> str:
    line = next((ln.strip() for ln in (source or "").splitlines() if ln.strip()), "")
    return repr(line if len(line) <= limit else line[:limit - 3] + "...") if line else ""
