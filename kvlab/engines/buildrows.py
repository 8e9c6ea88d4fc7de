"""The engines' BUILD rows, read from their folders' source with `ast`, without importing kvlab: setup.py (which
runs before kvlab can be imported) and scripts/setup.sh (before the virtual environment exists) read them here.

    python3 kvlab/engines/buildrows.py --packages    # the Debian packages the written engines need
    python3 kvlab/engines/buildrows.py --loaded      # ADAPTER@VERSION of each engine never compiled in (set-up builds)

A row with `loaded` (a version) is an engine never compiled into kvlab: setup.py leaves it out, and its plain name
runs that version, built by its recipe (`kvlab engines build`) and loaded at run time.
"""
import ast
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def literal(path: Path, name: str):
    """A module-level literal assignment `name = ...` in file `path`."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    raise RuntimeError(f"{path} defines no {name}")


def rank(path: Path) -> int:
    """The rank its `DESCRIPTOR = Descriptor(..., rank=N, ...)` gives an engine folder's adapter."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Descriptor":
            for kw in node.keywords:
                if kw.arg == "rank":
                    return ast.literal_eval(kw.value)
    raise RuntimeError(f"{path} has no DESCRIPTOR = Descriptor(..., rank=N, ...)")


def build_rows(folder: Path = HERE) -> dict:
    """{adapter: BUILD} for each engine folder (folder/<adapter>/__init__.py), in rank order."""
    found = [(rank(init), init.parent.name, literal(init, "BUILD"))
             for init in folder.glob("*/__init__.py") if not init.parent.name.startswith("_")]
    return {name: row for _, name, row in sorted(found, key=lambda item: (item[0], item[1]))}


def compiled(rows: dict) -> dict:
    """The rows of the adapters setup.py compiles into kvlab: written (not planned) and not loaded at run time only."""
    return {name: row for name, row in rows.items() if not row.get("planned") and not row.get("loaded")}


def loaded(rows: dict) -> list:
    """ADAPTER@VERSION for each engine never compiled in: the version its plain name runs (scripts/setup.sh builds
    them)."""
    return [f"{name}@{row['loaded']}" for name, row in rows.items() if row.get("loaded") and not row.get("planned")]


def packages(rows: dict) -> list:
    """The Debian packages of the written adapters that need a library, the packages they also want, and what the
    recipes of the engines never compiled in need to build (`build_packages`)."""
    out = []
    for row in rows.values():
        if row.get("library") and not row.get("planned"):
            out += [row["package"], *row.get("also", [])]
        if row.get("loaded") and not row.get("planned"):
            out += row.get("build_packages", [])
    return list(dict.fromkeys(out))


if __name__ == "__main__":
    if sys.argv[1:] not in (["--packages"], ["--loaded"]):
        raise SystemExit("usage: python3 kvlab/engines/buildrows.py --packages | --loaded")
    print(" ".join((packages if sys.argv[1] == "--packages" else loaded)(build_rows())))
