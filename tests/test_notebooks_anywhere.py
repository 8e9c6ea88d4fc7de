"""`kvlab notebooks run` from any working directory (issue 33, item 6), run as a user runs it: the `kvlab` command
in its own process, whose working directory holds a folder named kvlab (the checkout, as ~ holds ~/kvlab), with
the smallest selection there is (--scale smoke --only quickstart); and a failing cell, which gives one error line
and keeps the executed notebook.  About 13 s and 7 s on 2 cores."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kvlab.lab import notebooks

CHECKOUT = Path(__file__).resolve().parent.parent
KVLAB = Path(sys.executable).with_name("kvlab")   # the console script a user types, beside this Python


def _beside_a_checkout(tmp_path: Path) -> Path:
    """A working directory holding `kvlab`, a symlink to the checkout: the kernel once imported it as a namespace
    package in place of the real kvlab."""
    pytest.importorskip("papermill")
    if not KVLAB.exists():
        pytest.skip(f"no kvlab command beside {sys.executable}")
    home = tmp_path / "home"
    home.mkdir()
    (home / "kvlab").symlink_to(CHECKOUT, target_is_directory=True)
    return home


def _notebooks_run(cwd: Path, ipython_dir: Path):
    # IPYTHONDIR: the kernel reads IPython's start-up files from the test's folder, never the user's ~/.ipython
    env = {**os.environ, "IPYTHONDIR": str(ipython_dir), "XDG_DATA_HOME": str(ipython_dir.parent / "data")}
    return subprocess.run([str(KVLAB), "notebooks", "run", "--scale", "smoke", "--only", "quickstart"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


def _errors(path: Path) -> list:
    cells = json.loads(path.read_text())["cells"]
    return [(i, o) for i, c in enumerate(cells) for o in c.get("outputs", []) if o["output_type"] == "error"]


def test_runs_from_a_folder_holding_a_kvlab_checkout(tmp_path):
    home = _beside_a_checkout(tmp_path)
    proc = _notebooks_run(home, tmp_path / "ipython")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", "nothing on stderr: no traceback, and the kernel's own warnings go to kernel.log"
    # the default output folder is in kvlab's per-user folder, never under the working directory
    [executed] = (tmp_path / "data" / "kvlab").glob("notebooks-*-smoke/00_quickstart/00_quickstart.ipynb")
    assert not (home / "results").exists()
    assert str(executed.parent.parent) in proc.stdout
    assert not _errors(executed)
    assert list(executed.parent.glob("*.svg")), "the notebook saved its figures in its output folder"
    assert (executed.parent / notebooks.KERNEL_LOG).exists()


def test_a_failing_cell_is_one_line_and_the_executed_notebook_is_kept(tmp_path):
    home = _beside_a_checkout(tmp_path)
    # the kernel runs this start-up file before the first cell: the notebook's first call into kvlab raises
    startup = tmp_path / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-refuse.py").write_text(
        "from kvlab.lab import reproduce\n\n\n"
        "def refuse(*args, **kwargs):\n"
        "    raise ValueError('refused by the test:\\nno scale today')\n\n\n"
        "reproduce.resolve = refuse\n")
    proc = _notebooks_run(home, tmp_path / "ipython")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    line = lines[0]
    m = re.fullmatch(r"kvlab: error: notebook 00_quickstart failed at cell (\d+) \(In \[(\d+)\], '(.+)'\): "
                     r"ValueError: refused by the test: no scale today; "
                     r"the executed notebook, with the error, is kept at (\S+)", line)
    assert m, line
    # the cell named is the one in kvlab's own notebook that calls reproduce.resolve, by its index and first line
    source = json.loads((notebooks.folder() / "00_quickstart.ipynb").read_text())["cells"]
    index = next(i for i, c in enumerate(source) if "reproduce.resolve(" in "".join(c["source"]))
    assert int(m[1]) == index
    assert m[3] == next(ln.strip() for ln in "".join(source[index]["source"]).splitlines() if ln.strip())
    # kept where the line says, under the default output folder, with the error in the cell the line names
    executed = Path(m[4])
    assert executed.is_relative_to(tmp_path / "data" / "kvlab") and executed.name == "00_quickstart.ipynb"
    [(i, error)] = _errors(executed)
    assert error["ename"] == "ValueError" and "no scale today" in error["evalue"]
    assert json.loads(executed.read_text())["cells"][i]["execution_count"] == int(m[2])


def test_python_beside_a_checkout_imports_the_real_kvlab(tmp_path):
    """Issue 46: from a folder holding a checkout named kvlab, `python -c "import kvlab; kvlab.run(...)"` imported
    the checkout as a namespace package.  Set-up installs kvlab as a path entry (setuptools' compat editable mode),
    and a regular package on the path outranks a namespace folder in the working directory."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "kvlab").symlink_to(CHECKOUT, target_is_directory=True)
    code = "import kvlab; r = kvlab.run('lmdb', 'fillseq', num=1000, interval=0); print(kvlab.__file__, r[-1].ops)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=home, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "1000" and proc.stdout.split()[0].endswith("kvlab/__init__.py"), proc.stdout
