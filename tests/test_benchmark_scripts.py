"""The shipped benchmark scripts stay runnable: every name a script imports from benchmarks/_common.py is
defined there (a lint fix once removed two re-exports and broke every script that used them), and each
script answers --help."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))


def _defined(module: ast.Module) -> set:
    names = set()
    for node in module.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_names_imported_from_common_exist(script):
    common = _defined(ast.parse((BENCH / "_common.py").read_text()))
    for node in ast.walk(ast.parse(script.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "_common":
            missing = [a.name for a in node.names if a.name not in common]
            assert not missing, f"{script.name} imports {missing} from _common.py, which does not define them"


def test_every_script_answers_help():
    failed = []
    for script in SCRIPTS:
        out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60,
                             cwd=BENCH)
        if out.returncode != 0:
            failed.append(f"{script.name}: exit {out.returncode}\n{out.stderr[-800:]}")
    assert not failed, "\n".join(failed)
