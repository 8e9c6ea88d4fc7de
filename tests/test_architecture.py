"""The package's shape, held by a test: layers that only import downward, and no import cycle.

LAYERS is the one place the order is written (ARCHITECTURE.md explains it).  Every module
under kvlab/ belongs to exactly one layer; a module may import from its own layer or any
layer listed before it.  Imports inside functions count as much as those at the top: a
lazy import is still a dependency, and hiding a cycle in a function is how cycles grow.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kvlab"

# bottom to top; a prefix names a module or everything below a subpackage
LAYERS = (
    # _optional: importing what only an extra brings; _resources: the files shipped as package data;
    # _files: writing a file whole or not at all, with the umask's mode; _signals: stop signals, handled alike
    # _scan: whether a large file holds some bytes, read in chunks
    ("base", ("kvlab.errors", "kvlab._version", "kvlab._optional", "kvlab._resources", "kvlab._files",
              "kvlab._signals", "kvlab._scan")),
    ("model", ("kvlab.model", "kvlab.engines")),
    ("results", ("kvlab.results",)),
    ("execution", ("kvlab.execution", "kvlab._native")),
    # services: what both faces use (progress renderers for a terminal or a log)
    ("services", ("kvlab.services",)),
    ("lab", ("kvlab.lab",)),
    ("cli", ("kvlab.cli",)),
    # the public names: kvlab.run, kvlab.store.Store, kvlab.widgets.RunBuilder, ...
    ("api", ("kvlab", "kvlab.store", "kvlab.widgets")),
)


def layer_of(module: str) -> int:
    best, best_len = None, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = rank, len(p)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")
    return best


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict:
    mods = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    for so in PACKAGE.glob("_native*.so"):
        mods["kvlab._native"] = so
    return mods


def kvlab_imports(text: str, name: str, is_package: bool, known) -> set:
    """The kvlab modules that module `name` (source `text`) imports, at the top and in functions."""
    package = name if is_package else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(text, name)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "kvlab")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "kvlab":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in known else target)
    return out - {name}


def graph() -> dict:
    known = all_modules()
    return {m: kvlab_imports(p.read_text(), m, p.name == "__init__.py", known)
            for m, p in known.items() if p.suffix == ".py"}


def test_every_module_has_a_layer():
    for m in all_modules():
        layer_of(m)


def test_imports_only_point_down():
    wrong = []
    for mod, deps in graph().items():
        for dep in deps:
            if layer_of(dep) > layer_of(mod):
                wrong.append(f"{mod} ({LAYERS[layer_of(mod)][0]}) imports {dep} ({LAYERS[layer_of(dep)][0]})")
    assert not wrong, "imports from a higher layer:\n" + "\n".join(sorted(wrong))


def cycles_in(g: dict) -> list:
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(g.get(m, ())):
            if state.get(d) == "open":
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"

    for m in sorted(g):
        if m not in state:
            visit(m)
    return cycles


def test_no_import_cycle():
    cycles = cycles_in(graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_check_sees_cycles():
    # the two this layout removed: runner -> widgets -> background -> runner, engines <-> buildfacts
    g = {"runner": {"widgets"}, "widgets": {"background"}, "background": {"runner"},
         "engines": {"buildfacts"}, "buildfacts": {"engines"}, "spec": {"engines"}}
    assert sorted(c[0] for c in cycles_in(g)) == ["background", "buildfacts"]


@pytest.mark.parametrize("text, upward", [
    ("from ..lab import widgets\n", {"kvlab.lab.widgets"}),
    ("def f():\n    from ..cli.main import main\n", {"kvlab.cli.main"}),
    ("import kvlab.lab.plots\n", {"kvlab.lab.plots"}),
    ("from . import dbdir\nfrom ..model import spec\nfrom .. import errors\n", set()),
])
def test_the_check_sees_upward_imports(text, upward):
    """The checker itself, on text placed as kvlab/execution/runner.py."""
    deps = kvlab_imports(text, "kvlab.execution.runner", False, all_modules())
    assert {d for d in deps if layer_of(d) > layer_of("kvlab.execution.runner")} == upward
