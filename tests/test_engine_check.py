"""`kvlab engines check` (issue "Several versions of one engine side by side", item 4): the conformance checks on
every built-in engine, and on an engine of your own built from the template (kvlab/engines/_template) with the
build line docs/own-engine.md gives, then run by its path without rebuilding kvlab; a broken one fails, named."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kvlab

from .conftest import CONFORMANCE, require

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "kvlab" / "engines" / "_template" / "engine_template.c"


def _check(*args):
    return subprocess.run([sys.executable, "-m", "kvlab.cli", "engines", "check", *args], capture_output=True,
                          text=True)


def _build(source: Path, out: Path) -> Path:
    # the build line docs/own-engine.md gives
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-I", str(ROOT / "cython_ext" / "include"), str(source), "-o",
                    str(out), "-lpthread"], check=True)
    return out


@pytest.mark.parametrize("name", CONFORMANCE)
def test_every_built_in_engine_passes(name):
    require(name)
    got = _check(name)
    assert got.returncode == 0, got.stdout + got.stderr
    assert f"{name}: 10 of 10 checks passed or do not apply" in got.stdout


def test_the_template_passes_and_runs_by_its_path(tmp_path):
    lib = _build(TEMPLATE, tmp_path / "libtemplate.so")
    got = _check(str(lib))
    assert got.returncode == 0, got.stdout + got.stderr
    assert re.search(r"^crash +pass ", got.stdout, re.M) and "10 of 10" in got.stdout
    r = kvlab.run(str(lib), "fillseq,readrandom", num=2000, threads=2, db=str(tmp_path / "db"), seed=1, interval=0)
    # named by its file (libtemplate.so: "template"), its whole path in the spec, so a stored run reruns from it
    assert r[1].engine == "template" and r[1].found == r[1].ops == 4000
    assert r[1].provenance["spec"]["engine"] == str(lib.resolve())
    assert r[1].versions["engine_library"] == "1.0"
    assert r[1].versions["engine_build"]["origin"] == f"your own engine, loaded from {lib}"


def test_a_broken_engine_fails_the_check_that_catches_it(tmp_path):
    text = TEMPLATE.read_text()
    broken = text.replace("static int tpl_batch_abort(kv_thread *t) {\n    t->in_batch = 0;",
                          "static int tpl_batch_abort(kv_thread *t) {\n    return tpl_batch_commit(t);\n    t->in_batch = 0;")
    assert broken != text
    (tmp_path / "engine_broken.c").write_text(broken)
    lib = _build(tmp_path / "engine_broken.c", tmp_path / "libbroken.so")
    got = _check(str(lib), "--only", "put-get,batch")
    assert got.returncode == 1
    assert re.search(r"^batch +FAIL ", got.stdout, re.M) and "an aborted batch left writes behind" in got.stdout
    assert "failed: batch" in got.stdout and re.search(r"^put-get +pass ", got.stdout, re.M)


def test_a_path_that_is_no_engine_is_refused(tmp_path):
    got = _check(str(tmp_path / "libnothing.so"))
    assert got.returncode != 0 and "libnothing.so does not exist" in got.stderr
    clash = _build(TEMPLATE, tmp_path / "liblmdb.so")
    got = _check(str(clash))
    assert got.returncode != 0 and "its name 'lmdb' is a built-in engine's" in got.stderr



def test_your_own_engine_is_listed_by_its_name_and_reruns_from_anywhere(tmp_path):
    """Issue 46: `kvlab run --engine ./libmyeng.so` stored the engine as './libmyeng.so' (so `results list --engine
    myeng` found nothing) and a rerun from another folder looked for <folder>/libmyeng.so."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    _build(TEMPLATE, here / "libmyeng.so")
    store = tmp_path / "s.duckdb"

    def kv(*args, cwd):
        return subprocess.run([sys.executable, "-m", "kvlab.cli", *map(str, args)], capture_output=True, text=True,
                              cwd=cwd, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    got = kv("run", "--engine", "./libmyeng.so", "--workload", "fillseq", "--num", 1000, "--store", store,
             "--interval", 0, cwd=here)
    assert got.returncode == 0, got.stderr
    run_id = re.search(r"stored as run (\w+)", got.stdout).group(1)
    listed = kv("results", "list", "--engine", "myeng", "--store", store, cwd=elsewhere)
    assert listed.returncode == 0 and run_id[:8] in listed.stdout, listed.stdout + listed.stderr
    again = kv("rerun", run_id, "--store", store, cwd=elsewhere)
    assert again.returncode == 0, again.stderr
