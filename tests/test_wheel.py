"""kvlab as a user installs it: the wheel and the sdist, each built from a copy of this working tree,
installed into a fresh venv outside the checkout, then driven by the `kvlab` command from another
folder with PYTHONPATH unset.  Also what ships beside the code (notebooks, reference tables), the
extras and their errors, and Parquet written and read by DuckDB alone (no pyarrow).

The runtime dependencies come from a wheel cache ($XDG_CACHE_HOME or ~/.cache, kvlab-wheel-test/),
filled once from PyPI with the versions this environment runs; later runs install offline from it.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from kvlab import _optional, _resources, errors
from kvlab.results import store as results_store

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
REFERENCE = sorted(p.name for p in (ROOT / "data/reference").iterdir()
                   if p.is_file() and not p.name.startswith("."))   # setup.py leaves dot files out


def _run(cmd, timeout=600, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
    return out


def _requirement_name(req: str) -> str:
    return re.split(r"[<>=!~ ;\[]", req.strip())[0].lower().replace("_", "-")


# ---- what the package declares (fast: no build) ----

def _extra_closure(extra: str) -> set:
    """The distributions an extra brings, following its kvlab[...] references."""
    names = set()
    for req in PYPROJECT["project"]["optional-dependencies"][extra]:
        m = re.fullmatch(r"kvlab\[([^\]]+)\]", req.strip())
        if m:
            for sub in m.group(1).split(","):
                names |= _extra_closure(sub.strip())
        else:
            names.add(_requirement_name(req))
    return names


def test_every_optional_import_names_an_extra_that_brings_it():
    extras = PYPROJECT["project"]["optional-dependencies"]
    for module, (distribution, extra) in _optional.EXTRA_OF.items():
        assert extra in extras, f"{module}: kvlab[{extra}] is not an extra of pyproject.toml"
        assert distribution.lower().replace("_", "-") in _extra_closure(extra), \
            f"kvlab[{extra}] does not bring {distribution}, which {module} needs"
    faces = set(extras) - {"all", "test", "browser-test"}
    assert set().union(*map(_extra_closure, faces)) <= _extra_closure("all"), "kvlab[all] misses an extra"


def test_a_missing_optional_module_is_a_kvlab_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "papermill", None)   # what an install without the extra sees
    with pytest.raises(_optional.MissingDependency, match=r"pip install 'kvlab\[notebooks\]'") as info:
        _optional.require("papermill", "running the notebooks")
    assert isinstance(info.value, errors.KvlabError)
    for cached in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, cached, None)
    with pytest.raises(errors.KvlabError, match=r"kvlab.lab.plots needs matplotlib.*kvlab\[plots\]"):
        _optional.require("matplotlib.pyplot", "kvlab.lab.plots")


def test_resources_resolve_to_the_checkout_in_the_editable_install():
    assert _resources.origin("notebooks") == "checkout"
    assert _resources.folder("notebooks") == ROOT / "notebooks"
    assert _resources.folder("reference") == ROOT / "data/reference"
    with pytest.raises(KeyError):
        _resources.folder("nosuch")


# ---- Parquet and CSV through DuckDB ----

def test_frames_round_trip_through_duckdb_without_pyarrow(tmp_path, monkeypatch):
    import pandas as pd
    for blocked in ("pyarrow", "fastparquet"):
        monkeypatch.setitem(sys.modules, blocked, None)
    df = pd.DataFrame({"engine": ["lmdb", "rocksdb", None], "ops_per_sec": [1.5e6, 2.5e5, float("nan")],
                       "threads": [1, 2, 4], "partial": [False, True, False]})
    for name in ("t.parquet", "t.csv", "sub/dir/t.pq"):
        written = results_store.write_frame(df, tmp_path / name)
        back = results_store.read_frame(written)
        assert list(back.columns) == list(df.columns)
        assert back.threads.tolist() == [1, 2, 4] and back.partial.tolist() == [False, True, False]
        assert back.engine.tolist()[:2] == ["lmdb", "rocksdb"] and pd.isna(back.engine[2])
    results_store.write_frame(df, tmp_path / "noext", "parquet")
    assert len(results_store.read_frame(tmp_path / "noext", "parquet")) == 3
    assert not list(tmp_path.rglob("*.tmp"))


def test_a_format_the_file_name_contradicts_is_refused(tmp_path):
    import pandas as pd
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(errors.SpecError, match=r"named as parquet but the format asked is csv"):
        results_store.write_frame(df, tmp_path / "x.parquet", "csv")
    with pytest.raises(errors.SpecError, match=r"the name says no format"):
        results_store.write_frame(df, tmp_path / "x.txt")
    with pytest.raises(errors.SpecError, match=r"format 'json' is unknown"):
        results_store.write_frame(df, tmp_path / "x.json", "json")
    results_store.write_frame(df, tmp_path / "x.csv")
    (tmp_path / "x.csv").rename(tmp_path / "x.dat")
    with pytest.raises(errors.ResultsError, match=r"cannot be read as parquet"):
        results_store.read_frame(tmp_path / "x.dat", "parquet")
    with pytest.raises(errors.ResultsError, match=r"no such file"):
        results_store.read_frame(tmp_path / "missing.csv")


def test_store_export_refuses_csv_into_a_parquet_name(tmp_path):
    store = results_store.Store(tmp_path / "s.duckdb")
    store.check()
    with pytest.raises(errors.SpecError, match=r"named as parquet but the format asked is csv"):
        store.export(tmp_path / "y.parquet", "csv")
    with pytest.raises(errors.SpecError, match=r"named as csv but the format asked is parquet"):
        store.export(tmp_path / "y.csv", "parquet")
    assert not (tmp_path / "y.parquet").exists() and not (tmp_path / "y.csv").exists()
    assert results_store.read_frame(store.export(tmp_path / "y.parquet", "parquet")).empty


# ---- the wheel and the sdist, built and installed ----

def _dependency_cache() -> Path:
    """A folder of wheels of the runtime dependencies, at the versions this environment runs (their own
    dependencies at whatever PyPI resolves), downloaded once."""
    pins = sorted(f"{name}=={metadata.version(name)}"
                  for name in map(_requirement_name, PYPROJECT["project"]["dependencies"]))
    key = hashlib.sha256(f"{sys.version_info[:2]} {pins}".encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kvlab-wheel-test"
    cache = base / f"deps-{key}"
    if not (cache / "complete").exists():
        base.mkdir(parents=True, exist_ok=True)
        part = base / f"deps-{key}.part-{os.getpid()}"
        shutil.rmtree(part, ignore_errors=True)
        _run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", part, *pins])
        (part / "complete").write_text("\n".join(pins) + "\n")
        try:
            part.rename(cache)
        except OSError:   # another run filled it meanwhile
            shutil.rmtree(part, ignore_errors=True)
    return cache


def _working_tree_copy(dest: Path) -> Path:
    """The files of this working tree that git would see (tracked or new, not ignored), so no build
    artefact of the checkout leaks in and no build writes into the checkout."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-co", "--exclude-standard"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():   # a tracked file deleted in the working tree is left out, as a commit would
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{"wheel": the wheel `pip wheel .` makes, "sdist": the sdist, "sdist-wheel": the wheel built from
    the sdist alone}."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the working tree to package is unknown")
    base = tmp_path_factory.mktemp("kvlab-packaging")
    src = _working_tree_copy(base / "src")
    # the sdist first, from the clean copy, through the build backend (what `python -m build --sdist
    # --no-isolation` calls)
    _run([sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(base / 'sdist')!r})"],
         cwd=src)
    sdist, = (base / "sdist").glob("kvlab-*.tar.gz")
    _run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "-q", "-w", base / "wheel"],
         cwd=src)
    wheel, = (base / "wheel").glob("kvlab-*.whl")
    _run([sys.executable, "-m", "pip", "wheel", sdist, "--no-deps", "--no-build-isolation", "-q",
          "-w", base / "sdist-wheel"], cwd=base)
    sdist_wheel, = (base / "sdist-wheel").glob("kvlab-*.whl")
    return {"wheel": wheel, "sdist": sdist, "sdist-wheel": sdist_wheel}


def test_the_wheel_holds_every_package_and_the_shipped_files(built):
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    packages = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "kvlab").rglob("__init__.py")}
    assert "kvlab/model/workloads" in packages
    for package in packages:
        assert f"{package}/__init__.py" in names, f"the wheel lacks the package {package}"
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("kvlab/_data/notebooks/")} == \
        {f"{n}.ipynb" for n in NOTEBOOKS}
    assert {n.rsplit("/", 1)[1] for n in names if n.startswith("kvlab/_data/reference/")} == set(REFERENCE)
    assert "kvlab/_build_config.json" in names
    assert any(re.fullmatch(r"kvlab/_native\..*\.so", n) for n in names)
    assert not [n for n in names if n.startswith(("tests/", "notebooks/", "data/", "cython_ext/"))]


def test_the_sdist_holds_what_a_build_needs_and_no_build_output(built):
    with tarfile.open(built["sdist"]) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md", "cython_ext/_native.pyx",
                   "cython_ext/include/kv_engine.h", "cython_ext/src/driver.c", "kvlab/model/workloads/__init__.py",
                   *(f"notebooks/{n}.ipynb" for n in NOTEBOOKS), *(f"data/reference/{n}" for n in REFERENCE)):
        assert needed in names, f"the sdist lacks {needed}"
    leaked = [n for n in names if n.endswith((".so", ".pyc")) or n in ("kvlab/_build_config.json",
                                                                          "cython_ext/_native.c")]
    assert not leaked, f"build output in the sdist: {leaked}"


@pytest.fixture(scope="module", params=["wheel", "sdist"])
def installed(request, built, tmp_path_factory):
    """A fresh venv (no pip of its own, nothing of the checkout's) holding kvlab from the wheel or from
    the sdist, its dependencies from the wheel cache; returns (venv, a working folder, the environment)."""
    cache = _dependency_cache()
    base = tmp_path_factory.mktemp(f"venv-{request.param}")
    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin/python"
    wheel = built["wheel" if request.param == "wheel" else "sdist-wheel"]
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-index", "--find-links", cache,
          wheel])
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "KVLAB_RESULTS")}
    work = base / "work"
    work.mkdir()
    return venv, work, env


def _kvlab(installed, *args, expect=0):
    venv, work, env = installed
    out = subprocess.run([str(venv / "bin/kvlab"), *map(str, args)], cwd=work, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == expect, f"kvlab {' '.join(map(str, args))} exited {out.returncode}:\n" \
                                     f"{out.stdout}\n{out.stderr}"
    assert "Traceback" not in out.stderr, out.stderr
    return out


def _python(installed, code: str):
    venv, work, env = installed
    out = _run([venv / "bin/python", "-c", code], cwd=work, env=env, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_installed_package_and_its_files_are_in_site_packages(installed):
    venv, work, env = installed
    facts = _python(installed, """if True:
        import json, sys
        import kvlab, kvlab.model.workloads, kvlab.cli
        from kvlab import _resources
        print(json.dumps({"kvlab": kvlab.__file__, "workloads": kvlab.model.workloads.__file__,
                          "path": sys.path, "origin": [_resources.origin(n) for n in _resources.SHIPPED],
                          "folders": [str(_resources.folder(n)) for n in _resources.SHIPPED]}))""")
    site = (venv / "lib").resolve()
    for f in [facts["kvlab"], facts["workloads"], *facts["folders"]]:
        assert Path(f).resolve().is_relative_to(site), f"{f} is not in the venv"
        assert not Path(f).resolve().is_relative_to(ROOT), f"{f} is in the checkout"
    assert facts["origin"] == ["package", "package"]
    assert not [p for p in facts["path"] if p and Path(p).resolve().is_relative_to(ROOT)]


def test_installed_kvlab_engines(installed):
    assert "lmdb" in _kvlab(installed, "engines").stdout


def test_installed_kvlab_run_writes_its_json(installed):
    work = installed[1]
    _kvlab(installed, "run", "--engine", "lmdb", "--workload", "fillseq,readrandom", "--num", "2000",
           "--no-store", "--json", "out.json")
    records = json.loads((work / "out.json").read_text())
    run = [r for r in records if r["phase"] == "run"]
    assert [r["workload"] for r in run] == ["fillseq", "readrandom"]
    assert all(r["engine"] == "lmdb" and r["ops"] == 2000 and r["ops_per_sec"] > 0 for r in run)
    assert run[1]["found"] == 2000


def test_installed_kvlab_ycsb_core_workload(installed):
    out = _kvlab(installed, "ycsb", "-P", "workloada", "-p", "recordcount=1000", "-p", "operationcount=1000",
                 "--no-store")
    assert "workloada" in out.stdout


def test_installed_kvlab_notebooks(installed):
    assert _kvlab(installed, "notebooks", "list").stdout.split() == NOTEBOOKS
    # the core install has no papermill: the error names the extra, before anything runs
    out = _kvlab(installed, "notebooks", "run", "--scale", "smoke", expect=2)
    assert "pip install 'kvlab[notebooks]'" in out.stderr


def test_installed_kvlab_exports_parquet_and_csv_that_read_back(installed):
    work = installed[1]
    _kvlab(installed, "run", "--engine", "lmdb", "--workload", "fillseq", "--num", "1000", "--store", "s.duckdb")
    _kvlab(installed, "results", "export", "--store", "s.duckdb", "--out", "x.parquet", "--format", "parquet")
    _kvlab(installed, "results", "export", "--store", "s.duckdb", "--out", "x.csv", "--format", "csv")
    back = _python(installed, """if True:
        import json, duckdb, pandas as pd
        from kvlab.results.store import read_frame
        try:
            import pyarrow
            arrow = True
        except ImportError:
            arrow = False
        parquet = read_frame("x.parquet")
        csv = pd.read_csv("x.csv")
        raw = duckdb.sql("SELECT engine, ops FROM 'x.parquet'").fetchall()
        rows = lambda df: [[r.engine, int(r.ops)] for r in df.itertuples()]
        print(json.dumps({"pyarrow": arrow, "parquet": rows(parquet), "csv": rows(csv),
                          "duckdb": [[e, int(n)] for e, n in raw]}))""")
    assert back["pyarrow"] is False   # the point: Parquet needs nothing beyond the core dependencies
    assert back["parquet"] == back["csv"] == back["duckdb"] == [["lmdb", 1000]]
    assert (work / "x.parquet").read_bytes()[:4] == b"PAR1"
