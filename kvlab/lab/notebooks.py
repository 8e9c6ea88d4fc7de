"""`kvlab notebooks run`: execute every notebook with papermill into a dated folder
holding the executed notebooks, their figures and results."""
from __future__ import annotations

import time
from pathlib import Path

from .. import errors

ROOT = Path(__file__).resolve().parents[2]  # the checkout: kvlab/lab/<this file>
NOTEBOOKS = ROOT / "notebooks"
SCALES = ("smoke", "default", "full")


def available() -> list:
    return sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))


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
    try:
        import papermill
    except ImportError as exc:
        raise errors.KvlabError("running notebooks needs papermill (make setup installs it)") from exc
    folder = Path(out or ROOT / "results" / f"notebooks-{time.strftime('%Y%m%d-%H%M%S')}-{scale}")
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        target = folder / name
        target.mkdir(exist_ok=True)
        print(f"== {name} ({scale}) -> {target}", flush=True)
        papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(target / f"{name}.ipynb"),
                                   parameters={"scale": scale, "output_dir": str(target)}, kernel_name=kernel,
                                   cwd=str(ROOT), progress_bar=False)
    return folder
