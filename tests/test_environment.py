"""environment.yml (conda) names the same Python dependencies as the package."""
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parent.parent


def names(reqs):
    return {re.split(r"[<>=!~ \[]", r.strip())[0].lower() for r in reqs if r.strip() and not r.startswith("#")}


def test_environment_yml_matches_package():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = names(py["project"]["dependencies"]) | names(py["build-system"]["requires"])
    wanted |= names((ROOT / "requirements-dev.txt").read_text().splitlines())
    env = (ROOT / "environment.yml").read_text()
    listed = {m.group(1).lower() for m in re.finditer(r"^\s+- ([A-Za-z0-9_.-]+)", env, re.M)}
    missing = {n for n in wanted if n not in listed}
    assert not missing, f"environment.yml lacks {sorted(missing)}"
