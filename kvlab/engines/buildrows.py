"""The engines' BUILD rows, read from their folders' source with `ast`, without importing kvlab: setup.py (which
runs before kvlab can be imported) and scripts/setup.sh (before the virtual environment exists) read them here.

    python3 kvlab/engines/buildrows.py --packages    # the Debian packages the written engines need
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


def packages(rows: dict) -> list:
    """The Debian packages of the written adapters that need a library, and the packages they also want."""
    out = []
    for row in rows.values():
        if row.get("library") and not row.get("planned"):
            out += [row["package"], *row.get("also", [])]
    return list(dict.fromkeys(out))


if __name__ == "__main__":
    if sys.argv[1:] != ["--packages"]:
        raise SystemExit("usage: python3 kvlab/engines/buildrows.py --packages")
    print(" ".join(packages(build_rows())))
