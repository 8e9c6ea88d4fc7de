"""Try kvlab with the newest release of every dependency, past the ceilings, in a throwaway venv.

    .venv/bin/python scripts/try_newest.py [--dir DIR] [--remove] [--tests NODEID ...] [--no-lint] [--no-baseline]

1. Reads every Python dependency and its bounds: pyproject.toml (build-system, dependencies, every extra) and
   requirements-dev.txt (environment.yml holds the same; tests/test_dependency_ceilings.py checks).
2. Makes a venv in DIR (default: a new folder under /tmp) with this interpreter, and installs every dependency
   by name alone, without its bounds (`pip install --upgrade NAME ...`): pip takes the newest release of each
   that goes with the others. PyPI's JSON API says each one's newest release, so one the resolver held back
   (by this Python, or by another package's pin) is named.
3. Copies the working tree (git's tracked and untracked-not-ignored files, edits included) to DIR/src and builds
   kvlab there (`pip install --no-build-isolation --no-deps -e`): no build output lands in the checkout, and the
   checkout's .venv is only read (which versions the suite passes with now).
4. Imports every dependency, runs a short chosen part of the suite (TESTS: the tests that go through the
   dependencies' APIs and do not judge this machine's speed) and make lint's linters.
5. The baseline: the same in a second venv with the tested versions (`NAME==VERSION` as .venv has them) on a
   second copy of the same tree, so what fails with both is the tree's (work in progress), not a dependency's.
6. Reports per dependency: its bounds, the version tested, the version got, PyPI's newest, whether that is past
   the ceiling, and what broke with the newest only: the failing tests whose error line names the package, or
   whose traceback ends in its files, and the new linter findings. Failures that name no dependency are listed
   apart.

About 10 minutes on 2 cores with pip's cache warm (two installs, two builds, the tests twice). It needs PyPI.
Exit status: 0 nothing broke, 1 something broke with the newest, 2 a venv or a build could not be made.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (node ids, what they go through): each passes with the tested versions and measures no speed
TESTS = [
    ("tests/test_store_safety.py", "duckdb: the store's writes, locks, failures"),
    ("tests/test_histograms_stored.py", "duckdb, numpy, pandas, matplotlib"),
    ("tests/test_compare.py", "scipy (Mann-Whitney), pandas, duckdb, matplotlib"),
    ("tests/test_distributions.py", "numpy, scipy"),
    ("tests/test_report.py", "duckdb, matplotlib, seaborn"),
    ("tests/test_sweep.py", "tomllib, duckdb, pandas, plots"),
    ("tests/test_sweep_dask.py::test_points_run_on_workers_one_per_host_and_merge_into_one_store",
     "dask, distributed"),
    ("tests/test_fuzz.py", "hypothesis (KVLAB_FUZZ_EXAMPLES cases)"),
    ("tests/test_notebooks.py", "nbformat"),
    ("tests/test_progress.py::test_run_builder_builds_specs_runs_and_stops", "ipywidgets"),
    ("tests/test_docs.py::test_site_builds_strict", "mkdocs"),
    ("tests/test_docs.py::test_cli_reference_names_every_option", "mkdocs' hook's generator"),
    ("tests/test_docs_flags.py", "the parsers, packaging"),
    ("tests/test_environment.py", ""),
]
# by name: a test that judges the machine's speed, or kills processes on a timer
DESELECT = "not sigkill and not a_a_is_not_significant and not a_real_difference_is_significant " \
           "and not smoke_scale and not chromium"
FUZZ_EXAMPLES = "200"
LINTERS = [["ruff", "check"], ["codespell"], ["mypy"], ["cython-lint", "cython_ext"]]
# import name where it is not the distribution's
IMPORTS = {"pytest-xdist": "xdist", "cython-lint": "cython_lint", "codespell": "codespell_lib",
           "jupyter-client": "jupyter_client", "cython": "Cython", "ruff": None}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dependencies() -> dict:
    """canonical name -> (name as written, its bounds) of every Python dependency."""
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())
    texts = [*py["build-system"]["requires"], *py["project"]["dependencies"],
             *(r for extra in py["project"]["optional-dependencies"].values() for r in extra)]
    for line in (ROOT / "requirements-dev.txt").read_text().splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            texts.append(line)
    out = {}
    for text in texts:
        m = re.match(r"\s*([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)", text)
        name, bounds = m.group(1), m.group(3).strip()
        if canonical(name) != "kvlab":
            out.setdefault(canonical(name), (name, bounds))
    return out


def ceiling(bounds: str):
    m = re.search(r"<=?\s*([0-9][0-9.]*)", bounds)
    return m.group(1) if m else None


def past(version: str, bound: str | None) -> bool:
    if not bound or not version or version == "?":
        return False

    def key(v):
        return [int(x) for x in re.findall(r"\d+", v)[:4]] + [0] * 4
    return key(version)[:4] >= key(bound)[:4]


def newest_on_pypi(name: str) -> tuple:
    """(newest release, the Python it requires) from PyPI's JSON API."""
    try:
        with urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=30) as r:
            info = json.load(r)["info"]
            return info["version"], info.get("requires_python") or ""
    except (OSError, ValueError, KeyError):
        return "?", ""


def python_excluded(requires: str) -> bool:
    """Whether this interpreter is outside a requires_python."""
    try:
        from packaging.specifiers import SpecifierSet
        return bool(requires) and not SpecifierSet(requires).contains(".".join(map(str, sys.version_info[:3])))
    except Exception:
        return False


def tested(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "-"


def step(title: str, argv, log: Path, cwd=None, env=None, timeout=900) -> subprocess.CompletedProcess:
    print(f"== {title}", flush=True)
    started = time.monotonic()
    try:
        p = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        p = subprocess.CompletedProcess(argv, 124, exc.stdout or "", (exc.stderr or "") + f"\nno end in {timeout} s")
    with log.open("a") as f:
        f.write(f"\n$ {' '.join(map(str, argv))}\n{p.stdout}\n{p.stderr}\n(exit {p.returncode})\n")
    print(f"   exit {p.returncode} in {time.monotonic() - started:.0f} s", flush=True)
    return p


def copy_tree(dest: Path) -> None:
    """The working tree as it is (edits included), without ignored files (.venv, build/, the .so)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def failures(junit: Path) -> list:
    """(test id, first line of the error, the whole text) of each failed test."""
    if not junit.exists():
        return []
    out = []
    for case in ET.parse(junit).iter("testcase"):
        for bad in list(case.findall("failure")) + list(case.findall("error")):
            nodeid = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
            text = (bad.get("message") or "") + "\n" + (bad.text or "")
            out.append((nodeid, (bad.get("message") or text.strip()).splitlines()[0][:200], text))
    return out


def blame(text: str, modules: dict) -> list:
    """The dependencies a failure points at: those its error line names, else the deepest one whose files its
    traceback runs through."""
    lines = [ln for ln in text.splitlines() if ln.strip()] or [""]
    error = next((ln for ln in reversed(lines) if re.match(r"^E\s+\w+(Error|Exception|Warning)", ln)), lines[0])
    named = [dist for mod, dist in modules.items() if re.search(rf"\b{re.escape(mod)}\b", error)]
    if named:
        return sorted(set(named))
    frames = re.findall(r"site-packages/([A-Za-z0-9_]+)", text)
    deepest = [modules[m] for m in reversed(frames) if m in modules]
    return deepest[:1]


class Trial:
    """One venv, one copy of the tree: what it installed, and what failed there."""

    def __init__(self, label: str, folder: Path, src: Path, log: Path):
        self.label, self.folder, self.src, self.log = label, folder, src, log
        self.venv = folder / f"venv-{label}"
        self.py = self.venv / "bin" / "python"
        self.got: dict = {}
        self.failed: dict = {}      # node id -> (first line of the error, whole text)
        self.lint: dict = {}        # command -> (exit status, output lines)
        self.imports: dict = {}     # dependency -> error
        self.summary = ""

    def install(self, requirements: list) -> bool:
        if step(f"{self.label}: venv", [sys.executable, "-m", "venv", self.venv], self.log).returncode:
            return False
        step(f"{self.label}: pip itself", [self.py, "-m", "pip", "install", "-q", "--upgrade", "pip"], self.log)
        p = step(f"{self.label}: pip install {len(requirements)} packages",
                 [self.py, "-m", "pip", "install", "-q", "--upgrade", *requirements], self.log)
        if p.returncode:
            print(p.stderr[-3000:])
            return False
        listed = subprocess.run([self.py, "-m", "pip", "list", "--format=json"], capture_output=True, text=True)
        self.got = {canonical(r["name"]): r["version"] for r in json.loads(listed.stdout or "[]")}
        return True

    def build(self) -> bool:
        p = step(f"{self.label}: build kvlab in {self.src.name}",
                 [self.py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "-e", self.src], self.log,
                 timeout=1200)
        if p.returncode:
            print("the build failed:\n" + "\n".join((p.stdout + p.stderr).splitlines()[-25:]))
        return p.returncode == 0

    def exercise(self, deps: dict, tests: list, lint: bool) -> None:
        imports = {name: IMPORTS.get(name, name.replace("-", "_")) for name in deps}
        script = ("import importlib, json, sys\nout = {}\nfor dist, mod in json.loads(sys.argv[1]).items():\n"
                  "    try:\n        importlib.import_module(mod)\n    except Exception as exc:\n"
                  "        out[dist] = f'{type(exc).__name__}: {exc}'[:200]\nprint(json.dumps(out))\n")
        p = step(f"{self.label}: import every dependency",
                 [self.py, "-c", script, json.dumps({k: v for k, v in imports.items() if v})], self.log,
                 cwd=self.folder)
        self.imports = json.loads(p.stdout or "{}")
        env = {**os.environ, "KVLAB_FUZZ_EXAMPLES": FUZZ_EXAMPLES,
               "PATH": f"{self.venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        env.pop("PYTHONPATH", None)
        env.pop("VIRTUAL_ENV", None)
        junit = self.folder / f"junit-{self.label}.xml"
        p = step(f"{self.label}: pytest, {len(tests)} files or tests",
                 [self.py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not browser and not timing",
                  "-k", DESELECT, f"--junitxml={junit}", *tests], self.log, cwd=self.src, env=env, timeout=1200)
        self.summary = next((ln for ln in reversed(p.stdout.splitlines()) if re.search(r"\d+ (passed|failed)", ln)),
                            f"pytest exit {p.returncode}")
        self.failed = {nodeid: (first, text) for nodeid, first, text in failures(junit)}
        if p.returncode and not self.failed:
            self.failed["(pytest itself)"] = (f"exit {p.returncode}", (p.stdout + p.stderr)[-2000:])
        for cmd in LINTERS if lint else []:
            r = step(f"{self.label}: {' '.join(cmd)}", [self.venv / "bin" / cmd[0], *cmd[1:]], self.log,
                     cwd=self.src, env=env, timeout=600)
            self.lint[" ".join(cmd)] = (r.returncode, [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", default=None, help="where the venvs and the copies go (default: a new folder in /tmp)")
    p.add_argument("--remove", action="store_true", help="remove the folder at the end")
    p.add_argument("--tests", nargs="+", default=None, help="these node ids instead of the chosen part")
    p.add_argument("--no-lint", action="store_true", help="skip the linters")
    p.add_argument("--no-baseline", action="store_true",
                   help="skip the run with the tested versions (then every failure is reported as broken)")
    args = p.parse_args(argv)

    folder = Path(args.dir).resolve() if args.dir else Path(tempfile.mkdtemp(prefix="kvlab-newest-"))
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.iterdir()):
        p.error(f"{folder} is not empty: give a fresh --dir")
    log = folder / "log.txt"
    print(f"kvlab's dependencies at their newest, in {folder} (every command's output: {log})", flush=True)
    deps = dependencies()
    tests = args.tests or [t for t, _ in TESTS]

    copy_tree(folder / "src")
    newest = Trial("newest", folder, folder / "src", log)
    if not newest.install([name for name, _ in deps.values()]) or not newest.build():
        return 2
    newest.exercise(deps, tests, not args.no_lint)

    baseline = None
    if not args.no_baseline:
        shutil.copytree(folder / "src", folder / "src-tested",
                        ignore=shutil.ignore_patterns("build", "*.so", "*.egg-info", "_build_config.json"))
        baseline = Trial("tested", folder, folder / "src-tested", log)
        pins = [f"{name}=={tested(name)}" if tested(name) != "-" else f"{name}{bounds}" for name, bounds in deps.values()]
        if not baseline.install(pins) or not baseline.build():
            print("the baseline could not be made: every failure below is reported as broken")
            baseline = None
        else:
            baseline.exercise(deps, tests, not args.no_lint)

    modules = json.loads(subprocess.run(
        [newest.py, "-c", "import json, importlib.metadata as m; print(json.dumps(m.packages_distributions()))"],
        capture_output=True, text=True).stdout or "{}")
    modules = {mod: canonical(dists[0]) for mod, dists in modules.items()   # py, _pytest: too short or private
               if canonical(dists[0]) in deps and len(mod) >= 4 and not mod.startswith("_")}
    broke: dict = {name: [] for name in deps}
    unattributed, anyway = [], []
    for dist, error in newest.imports.items():
        if not baseline or dist not in baseline.imports:
            broke[dist].append(f"import: {error}")
    for nodeid, (first, text) in newest.failed.items():
        if baseline and nodeid in baseline.failed:
            anyway.append(f"{nodeid}: {first}")
            continue
        who = blame(text, modules)
        for name in who:
            broke[name].append(f"{nodeid}: {first}")
        if not who:
            unattributed.append(f"{nodeid}: {first}")
    for cmd, (rc, lines) in newest.lint.items():
        before = set(baseline.lint.get(cmd, (0, []))[1]) if baseline else set()
        new = [ln for ln in lines if ln not in before]
        if rc and new:
            broke.setdefault(canonical(cmd.split()[0]), []).append(
                f"`{cmd}` exit {rc}: {len(new)} new lines of output, first: {new[0][:150]}")
        elif rc:
            anyway.append(f"`{cmd}` exit {rc}: the same {len(lines)} lines with the tested version")

    print("\n" + "=" * 110)
    print(f"{'dependency':<16} {'bounds':<20} {'tested':<12} {'got':<12} {'newest on PyPI':<34} past ceiling")
    for name in sorted(deps):
        written, bounds = deps[name]
        version, requires = newest_on_pypi(written)
        got = newest.got.get(name, "-")
        held = ""
        if version not in ("?", got):
            held = f" (needs Python {requires})" if python_excluded(requires) else " (held back by a pin)"
        print(f"{written:<16} {bounds or '(none)':<20} {tested(written):<12} {got:<12} {version + held:<34} "
              f"{'YES' if past(got, ceiling(bounds)) else 'no'}")
    print(f"\ntests, newest: {newest.summary}" + (f"; tested versions: {baseline.summary}" if baseline else ""))
    broken = {n: what for n, what in broke.items() if what}
    if broken:
        print("what broke with the newest, by dependency:")
        for name, what in sorted(broken.items()):
            print(f"  {deps.get(name, (name,))[0]} {newest.got.get(name, '')}:")
            for w in what:
                print(f"    {w}")
    if unattributed:
        print("broke with the newest, naming no dependency:")
        for w in unattributed:
            print(f"    {w}")
    if not broken and not unattributed:
        print("nothing broke with the newest" + ("" if baseline else " (no baseline run)"))
    if anyway:
        print(f"failing with the tested versions too (the tree's, not the dependencies'): {len(anyway)}")
        for w in anyway[:12]:
            print(f"    {w}")
        if len(anyway) > 12:
            print(f"    ... {len(anyway) - 12} more in {log}")
    print(f"\nfolder: {folder}" + (" (removed)" if args.remove else ""))
    if args.remove:
        shutil.rmtree(folder, ignore_errors=True)
    return 1 if broken or unattributed else 0


if __name__ == "__main__":
    sys.exit(main())
