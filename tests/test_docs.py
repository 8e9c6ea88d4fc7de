"""The docs stay true: every example in README.md and docs/ runs, the site builds with warnings as errors, and
the hand-written tables that name fields of the code name exactly the fields the code has.

Examples are the fenced ```sh and ```python blocks. In a shell block every command line starts with `kvlab `
and runs as written, with the checkout's .venv/bin first on PATH; a Python block runs in a fresh interpreter.
A page's examples run in order in one temporary directory, with the per-user data directory (where the default
results store lives) inside it (so `--db`, `--json` and the results store carry from one example to the next, as
they would for a reader), after the page's data blocks marked
`<!-- file: NAME -->` are written there. A block that must not run here (it installs packages, builds engines,
takes minutes or needs other hosts) is marked `<!-- no-run: why -->` on the line before its fence; those are
counted, and each needs its reason.
"""
from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
EXAMPLE_LANGS = ("sh", "python")
MAX_NO_RUN = 12          # a ceiling, so "no-run" cannot quietly become the way to pass
README_MAX_LINES = 160   # two screens
EXAMPLE_TIMEOUT = 120

_FENCE = re.compile(r"^```(\S*)\s*$")
_MARK = re.compile(r"^<!--\s*(no-run|file)\s*:\s*(.*?)\s*-->\s*$")


@dataclasses.dataclass
class Block:
    page: Path
    line: int
    lang: str
    text: str
    mark: str | None = None      # "no-run" or "file"
    arg: str = ""                # the reason, or the file name

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list:
    out, lines, i = [], page.read_text().splitlines(), 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        mark = _MARK.match(prev.strip())
        out.append(Block(page, start + 1, m.group(1), "\n".join(body) + "\n",
                         mark.group(1) if mark else None, mark.group(2) if mark else ""))
        i += 1
    return out


def commands(block: Block) -> list:
    """The command lines of a shell block, continuation lines joined, comment lines left out."""
    out, current = [], ""
    for raw in block.text.splitlines():
        line = raw.rstrip()
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            out.append(current.strip())
            current = ""
    if current:
        out.append(current.strip())
    return out


ALL = [b for page in PAGES for b in blocks(page)]
EXAMPLES = [b for b in ALL if b.lang in EXAMPLE_LANGS]
RUNNABLE_PAGES = sorted({b.page for b in EXAMPLES if b.mark != "no-run"}, key=str)


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("KVLAB_RESULTS", "PYTHONPATH")}
    path = [str(Path(sys.executable).parent), str(ROOT / ".venv" / "bin"), env.get("PATH", "")]
    # the default results store is the reader's per-user one: here, one per page, in the page's folder
    env.update(PATH=os.pathsep.join(path), KVLAB_TMPDIR=str(tmp / "tmp"), MPLBACKEND="Agg", COLUMNS="120",
               XDG_DATA_HOME=str(tmp / "data"))
    (tmp / "tmp").mkdir(exist_ok=True)
    return env


def test_examples_are_runnable_or_marked_with_a_reason():
    no_run = [b for b in EXAMPLES if b.mark == "no-run"]
    print(f"\n{len(EXAMPLES)} examples in {len(PAGES)} pages; {len(no_run)} marked no-run:")
    for b in no_run:
        print(f"  {b.where()}: {b.arg}")
    assert all(b.arg for b in no_run), "a no-run mark needs its reason: <!-- no-run: why -->"
    assert len(no_run) <= MAX_NO_RUN, f"{len(no_run)} no-run examples; at most {MAX_NO_RUN}"
    not_kvlab = [f"{b.where()}: {c}" for b in EXAMPLES if b.lang == "sh" and b.mark != "no-run"
                 for c in commands(b) if not c.startswith("kvlab ")]
    assert not not_kvlab, ("shell examples run only `kvlab ...` lines; mark the block no-run or drop the line:\n"
                           + "\n".join(not_kvlab))
    unknown = [f"{b.where()}: {b.mark}" for b in ALL if b.mark == "file" and not b.arg]
    assert not unknown, f"a file mark needs its name: {unknown}"


@pytest.mark.parametrize("page", RUNNABLE_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page, tmp_path):
    env = _env(tmp_path)
    page_blocks = blocks(page)
    for b in page_blocks:
        if b.mark == "file":
            (tmp_path / b.arg).write_text(b.text)
    failures, started = [], time.monotonic()
    for b in page_blocks:
        if b.lang not in EXAMPLE_LANGS or b.mark == "no-run":
            continue
        runs = [(c, ["bash", "-c", c]) for c in commands(b)] if b.lang == "sh" else \
            [("python block", [sys.executable, "-c", b.text])]
        for what, argv in runs:
            try:
                p = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                                   timeout=EXAMPLE_TIMEOUT, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                failures.append(f"{b.where()}: {what}: no end in {EXAMPLE_TIMEOUT} s")
                continue
            if p.returncode != 0:
                tail = "\n      ".join((p.stderr or p.stdout).strip().splitlines()[-6:])
                failures.append(f"{b.where()}: {what}\n    exit {p.returncode}:\n      {tail}")
    print(f"\n{page.relative_to(ROOT)}: examples ran in {time.monotonic() - started:.1f} s")
    assert not failures, "examples that failed:\n" + "\n".join(failures)


def test_site_builds_strict(tmp_path):
    """`make docs`'s build, into a temporary folder: a broken link, a missing page or a generator that fails
    is an error."""
    started = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env=_env(tmp_path))
    print(f"\nmkdocs build --strict: {time.monotonic() - started:.1f} s")
    assert p.returncode == 0, p.stderr[-3000:]
    for generated in ("reference/cli.html", "reference/results-schema.html", "reference/store.html"):
        assert (tmp_path / "site" / generated).is_file(), generated


def test_cli_reference_names_every_option():
    """The generated CLI page holds every subcommand and every option string of the parser."""
    import argparse
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_docs
    finally:
        sys.path.pop(0)
    from kvlab.cli import build_parser
    text = gen_docs.cli_page()

    def walk(parser, path):
        yield path, parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, path + [name])

    missing = []
    for path, parser in walk(build_parser(), ["kvlab"]):
        if f"`{' '.join(path)}`" not in text:
            missing.append(" ".join(path))
        missing += [f"{' '.join(path)} {s}" for a in parser._actions for s in a.option_strings
                    if s not in ("-h", "--help") and f"`{s}" not in text]
    assert not missing, missing


def _table_keys(page: Path, heading: str, column: int = 0) -> set:
    """The code-spanned names in one column of the first table under `heading`."""
    keys, rows = set(), False
    for line in page.read_text().split(heading, 1)[1].splitlines()[1:]:
        if line.startswith("|---"):
            rows = True
        elif rows and line.startswith("|"):
            keys |= {k.strip("[]") for k in re.findall(r"`([^`]+)`", line.split("|")[column + 1])}
        elif rows:
            break
    return keys


def test_accounting_table_names_exactly_a_real_records_keys(tmp_path):
    import kvlab
    r = kvlab.run("lmdb", "fillseq,readrandom", num=2000, db=str(tmp_path / "db"))
    real = set().union(*(b.accounting.keys() for b in r))
    only_when_bounded = {"cgroup_peak_bytes", "memory_limit_bytes"}    # a memory-bounded LinkBench phase
    documented = _table_keys(ROOT / "docs" / "results.md", "### Accounting")
    assert real - documented == set(), f"accounting keys the docs do not describe: {sorted(real - documented)}"
    assert documented - real - only_when_bounded == set(), \
        f"accounting keys the docs describe and a run lacks: {sorted(documented - real - only_when_bounded)}"


def test_toml_page_documents_every_key_the_parser_accepts():
    from kvlab.model.workloads import toml_file
    from kvlab.model.workloads.mix import Pacing
    documented = _table_keys(ROOT / "docs" / "mixes.md", "The keys:", column=1)
    accepted = set(toml_file.TOP) - {"pacing", "run", "template"} | set(toml_file.RUN_KEYS) | set(toml_file.OP_KEYS)
    accepted |= {f.name for f in dataclasses.fields(Pacing)} | {"weight", "txn", "ops"}   # [[template]]'s
    assert accepted - documented == set(), f"TOML keys the docs do not describe: {sorted(accepted - documented)}"
    assert documented - accepted == set(), f"TOML keys the docs describe and the parser refuses: " \
                                           f"{sorted(documented - accepted)}"


def test_readme_is_the_door():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme)
    broken = [link for link in links if not (ROOT / link).exists()]
    assert not broken, f"README links to files that do not exist: {broken}"
    assert any(link.startswith("docs/") for link in links)
