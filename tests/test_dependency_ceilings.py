"""Every dependency says which major versions kvlab is tested with: a ceiling at the next major version above
the one the suite passes with (pyproject.toml's comment says how the next major is read), the same in
pyproject.toml, requirements-dev.txt and environment.yml, and the environment running this test inside it.

A new major is taken on purpose: scripts/try_newest.py installs the newest releases past the ceilings in a
throwaway venv and reports what breaks; raise a ceiling (in all three files) once it passes there.
"""
from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
NOT_PACKAGES = {"python", "pip"}   # environment.yml's interpreter and installer


def declared() -> list:
    """(file, name, specifier set) of every Python dependency the three files declare."""
    out = []
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = [*py["build-system"]["requires"], *py["project"]["dependencies"],
            *(r for extra in py["project"]["optional-dependencies"].values() for r in extra)]
    for text in reqs:
        r = Requirement(text)
        if canonicalize_name(r.name) != "kvlab":   # an extra naming others
            out.append(("pyproject.toml", canonicalize_name(r.name), r.specifier))
    for line in (ROOT / "requirements-dev.txt").read_text().splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            r = Requirement(line)
            out.append(("requirements-dev.txt", canonicalize_name(r.name), r.specifier))
    for name, spec in environment_yml()[0]:
        out.append(("environment.yml", name, spec))
    return out


def environment_yml():
    """(Python packages, C libraries) of environment.yml, each (name, specifier set): the conda and pip entries,
    then the engines' libraries listed after the pip block."""
    python, libraries, after_pip, in_pip = [], [], False, False
    text = (ROOT / "environment.yml").read_text()
    for line in text.split("\ndependencies:\n", 1)[1].splitlines():
        m = re.match(r"^(\s*)- ([A-Za-z0-9_.-]+)\s*([<>=!~][^#\s]*)?\s*(?:#.*)?$", line)
        if line.strip() == "- pip:":
            in_pip = True
            continue
        if not m:
            continue
        indent, name, spec = len(m.group(1)), m.group(2), m.group(3) or ""
        if in_pip and indent <= 2:
            in_pip, after_pip = False, True
        if canonicalize_name(name) in NOT_PACKAGES:
            continue
        (libraries if after_pip else python).append((canonicalize_name(name), SpecifierSet(spec)))
    return python, libraries


def _ceiling(spec: SpecifierSet) -> bool:
    return any(s.operator in ("<", "<=", "==", "~=") for s in spec)


def test_every_dependency_has_a_ceiling():
    missing = [f"{where}: {name}{spec}" for where, name, spec in declared() if not _ceiling(spec)]
    missing += [f"environment.yml (C library): {name}{spec}" for name, spec in environment_yml()[1]
                if not _ceiling(spec)]
    assert not missing, "dependencies without an upper bound:\n" + "\n".join(missing)


def test_the_three_files_agree():
    seen: dict = {}
    for where, name, spec in declared():
        seen.setdefault(name, {})[where] = str(spec)
    differ = {name: by_file for name, by_file in seen.items() if len(set(by_file.values())) > 1}
    assert not differ, f"one dependency, different bounds: {differ}"


def test_what_is_installed_is_inside_the_bounds():
    """The environment the suite runs in is one the bounds allow: a package upgraded past its ceiling by
    hand is named, so the ceiling moves only with scripts/try_newest.py's say-so."""
    outside = []
    for where, name, spec in declared():
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        if not spec.contains(version, prereleases=True):
            outside.append(f"{name} {version} (installed) is outside {where}'s {spec}")
    assert not outside, "\n".join(sorted(set(outside)))
