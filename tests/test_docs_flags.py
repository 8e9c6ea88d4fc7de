"""The docs name only flags their commands take, and the shared-options tables are the parsers' own.

**Generated blocks.** README.md and docs/running.md keep the table of which running command takes which shared
option between `<!-- generated: NAME ... -->` and `<!-- end generated: NAME -->`; it must be what
scripts/gen_docs.py makes from the parsers now (`.venv/bin/python scripts/gen_docs.py --update-blocks`
rewrites it; the site build fills it in anyway).

**Flags.** A flag written for a `kvlab` command in README.md or docs/*.md must be one that command's parser
takes. The rule says whose flag a flag is, and says it only where the text leaves no doubt:

1. A *command line* is one line of a fenced code block (of any language; continuation lines joined), cut at an
   unquoted `;`, `&&`, `||`, and `|` with a space beside it (`a|b` is a list of alternatives, as a usage line
   writes them), with a `#` comment its own command line; or one inline code span of prose
   (`` `kvlab run --num 5` ``; a span may cross a line break inside its paragraph).
2. It is a *kvlab command line* when one of its words is `kvlab` (or ends in `/kvlab`) and the words right after
   it name a command of `kvlab.cli.build_parser()` (`run`, `results list`, ...). Only the words after the command
   are read, so what comes before `kvlab` (`timeout -s TERM 5`, `KVLAB_RESULTS=x`, `python -m`) is another
   tool's; a line without `kvlab COMMAND` (make, pip, pytest, mkdocs, db_bench itself, `kvlab.run(...)` in
   Python) is not read at all. A code-block line that starts with `kvlab` and a word that is no command is a
   misspelt command, an error; elsewhere (`pip install kvlab`, `` `kvlab COMMAND --help` ``) it is not read.
3. Every word after the command that starts with `-` and a letter is a flag (`--num`, `--num=5`, `[--sync]`,
   `-P`); a quoted string is one word, so the `kvlab run` strings given to `--run` are values. It must be one of
   the command's option strings; under `kvlab dbbench`, the db_bench flags kvlab knows
   (`kvlab.model.dbbench_flags.FLAGS`) are taken too, as that command passes them on.
4. A value right after a flag that has choices must be one of them, and a list of alternatives
   (`--scale smoke|default|large|full`, argparse's `{a,b}`) must be all of them.
5. An *option table* (a Markdown table whose first header cell is `option` or `flag`) lists one command's
   options when that cell names the command (`` | `kvlab report` option | ``) or else the heading of its
   section does (`` ## `kvlab compare` ``); the flag a first cell starts with is checked as in 3.

A flag in prose outside these ("`kvlab run` has `--set`", "`kvlab compare` has no `--db`") is not attributed:
prose has no grammar that says whose flag it is, and a guess fails on true sentences like the second. Write
such a claim as a command line or an option table, or leave it to a generated table. A refused flag is shown
as what kvlab prints (`kvlab: error: ...` is not a command line).

The pages are README.md, ARCHITECTURE.md and docs/*.md, for every check here.

**Links.** Every relative link of a page goes to a file in git or a page scripts/gen_docs.py generates.

**Files, modules, names.** A repository path a page names in code exists (`named_paths` says which words are
the repository's paths: those under its top-level folders, and in ARCHITECTURE.md's manner those under kvlab's
subpackages; `./libmyengine.so` or `results/x.parquet` are the reader's); a `kvlab.dotted.name` in a code span is a
module of kvlab or a name one defines, found without importing what runs engines; a name a page places in a
source file ("`kv_loop_mix` in `cython_ext/src/loop_mix.c`", "`results/store.py`'s `TABLES`") is defined there.

**Figures.** What the pages count where the code can count it too: the layers above the base (README.md and
ARCHITECTURE.md against tests/test_architecture.py's LAYERS), the engines and configurations (the README against
the registry) and the Debian packages (the lists marked `<!-- debian-packages: ... -->` against what
scripts/setup.sh installs).
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]

sys.path.insert(0, str(ROOT / "scripts"))
try:
    import gen_docs
finally:
    sys.path.pop(0)

_FENCE = re.compile(r"^\s*```")
_FLAG = re.compile(r"^[\[(]*(-{1,2}[A-Za-z][A-Za-z0-9_-]*)(?:=.*|[\]),.;:]*)$")
_TABLE_HEAD = re.compile(r"^\|\s*(?:`(kvlab [^`]+)`\s+)?(?:option|flag)s?\s*\|")
_HEADING = re.compile(r"^#{1,6}\s")


# ------------------------------------------------------------------------------------------ the parsers

def _subcommands(parser) -> dict:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices
    return {}


class Commands:
    """kvlab's command tree, read from build_parser(), with what each command takes."""

    def __init__(self):
        from kvlab.cli import build_parser, dbbench
        from kvlab.model.dbbench_flags import FLAGS
        self.top = build_parser()
        self.passed_on = {dbbench.NAME: {f"--{name}" for name in FLAGS}}   # db_bench's flags, given on

    def resolve(self, words):
        """(command path, its parser, words used) for the longest command the words start with."""
        parser, path = self.top, []
        for word in words:
            sub = _subcommands(parser)
            if word not in sub:
                break
            parser, path = sub[word], path + [word]
        return path, parser, len(path)

    def check(self, path, parser, words) -> list:
        """What is wrong with the flags in words, the words after the command `kvlab <path>`."""
        command = " ".join(["kvlab", *path])
        takes = {s: a for a in parser._actions for s in a.option_strings}
        out = []
        for i, word in enumerate(words):
            m = _FLAG.match(word)
            if not m:
                continue
            flag = m.group(1)
            if flag in self.passed_on.get(" ".join(path), ()):
                continue
            if flag not in takes:
                out.append(f"{command} takes no {flag}")
                continue
            choices = takes[flag].choices
            if choices is None or "=" in word or i + 1 >= len(words):
                continue
            value = words[i + 1].strip("[]()")
            if value.startswith("{") and value.endswith("}"):
                given = value[1:-1].split(",")
            else:
                given = value.replace("\\|", "|").split("|")
            if len(given) == 1 and (given[0].startswith("-") or not given[0].islower()):
                continue   # the next flag, or a placeholder (MODE, <mode>)
            allowed = [str(c) for c in choices]
            if len(given) == 1 and given[0] not in allowed:
                out.append(f"{command} {flag} takes no {given[0]!r}; allowed: {', '.join(allowed)}")
            elif len(given) > 1 and sorted(given) != sorted(allowed):
                out.append(f"{command} {flag}: {'|'.join(given)} is not its choices, {'|'.join(allowed)}")
        return out


# ------------------------------------------------------------------------------- reading a page

def _words(text: str) -> list:
    try:
        return shlex.split(text)
    except ValueError:   # an unmatched quote: db_bench's, YCSB's
        return text.split()


def _segments(line: str) -> list:
    """A code line cut where the shell would start another command: unquoted ; && ||, | with a space beside it
    (`a|b` is a usage line's alternatives), and a # comment (the rest of the line, read on its own)."""
    out, current, quote, i = [], "", None, 0
    while i < len(line):
        c = line[i]
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"" and (not current or not current[-1].isalnum()):   # db_bench's: an apostrophe
            quote = c
        elif c == "#" and (not current or current[-1].isspace()):
            out += [current, line[i + 1:]]
            return out
        elif c in ";&|" and not (c == "|" and current[-1:].strip() and line[i + 1:i + 2].strip() not in ("", "|")):
            out.append(current)
            current = ""
            while i + 1 < len(line) and line[i + 1] in "&|":
                i += 1
            i += 1
            continue
        current += c
        i += 1
    return out + [current]


def command_lines(text: str) -> list:
    """(line number, 'block' or 'span', text) of each command line of a page."""
    out, lines, i, para = [], text.splitlines(), 0, []

    def spans():
        joined = " ".join(t for _, t in para)
        out.extend((para[0][0], "span", m.group(1)) for m in re.finditer(r"`([^`]+)`", joined))
        para.clear()

    while i < len(lines):
        if _FENCE.match(lines[i]):
            spans()
            i, current = i + 1, ""
            while i < len(lines) and not _FENCE.match(lines[i]):
                line = lines[i].rstrip()
                current += line[:-1] + " " if line.endswith("\\") else line
                if not line.endswith("\\"):
                    out += [(i + 1, "block", seg) for seg in _segments(current)]
                    current = ""
                i += 1
        elif lines[i].strip():
            para.append((i + 1, lines[i]))
        else:
            spans()
        i += 1
    spans()
    return out


def option_tables(text: str) -> list:
    """(line number, command words, first cells) of each option table that names its command."""
    out, heading, lines, i = [], None, text.splitlines(), 0
    in_block = False
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            in_block = not in_block
        elif not in_block and _HEADING.match(line):
            named = re.findall(r"`(kvlab [^`]+)`", line)
            heading = named[0] if len(named) == 1 else None
        elif not in_block and _TABLE_HEAD.match(line):
            command = _TABLE_HEAD.match(line).group(1) or heading
            start, cells = i + 1, []
            i += 2   # the header and its |---| row
            while i < len(lines) and lines[i].startswith("|"):
                cells.append(lines[i].split("|")[1])
                i += 1
            if command:
                out.append((start, command.split()[1:], cells))
            continue
        i += 1
    return out


def problems(text: str, where: str, commands: Commands) -> list:
    out = []
    for line, kind, cmdline in command_lines(text):
        words = _words(cmdline.replace("\\|", "|") if kind == "span" else cmdline)
        at = next((j for j, w in enumerate(words) if w == "kvlab" or w.endswith("/kvlab")), None)
        if at is None:
            continue
        after = words[at + 1:]
        path, parser, used = commands.resolve(after)
        if not path:   # kvlab's own flags (--version) where it starts the line; else a misspelt command
            if at != 0 or not after:
                continue
            if not after[0].startswith("-"):
                if kind == "block":
                    out.append(f"{where}:{line}: kvlab has no command {after[0]!r}: {cmdline.strip()}")
                continue
        out += [f"{where}:{line}: {p}: {cmdline.strip()}" for p in commands.check(path, parser, after[used:])]
    for line, words, cells in option_tables(text):
        path, parser, used = commands.resolve(words)
        if not path:
            out.append(f"{where}:{line}: the option table of `kvlab {' '.join(words)}`: no such command")
            continue
        for cell in cells:
            first = re.findall(r"`([^`]+)`", cell)
            flags = [_words(c.replace("\\|", "|")) for c in first]
            out += [f"{where}:{line}: option table: {p}" for f in flags
                    for p in commands.check(path, parser, f)]
    return out


# ------------------------------------------------------------------------------------------ the tests

@pytest.fixture(scope="module")
def commands():
    return Commands()


def test_generated_blocks_are_the_parsers_own():
    stale = [str(path.relative_to(ROOT)) for path, _ in gen_docs.stale_blocks(ROOT)]
    assert not stale, (f"generated blocks out of date in {stale}: run .venv/bin/python scripts/gen_docs.py "
                       "--update-blocks")
    holders = [p.name for p in PAGES if "<!-- generated: shared-options " in p.read_text()]
    assert holders == ["README.md", "running.md"], holders


def test_docs_name_only_flags_their_commands_take(commands):
    found = [p for page in PAGES for p in problems(page.read_text(), str(page.relative_to(ROOT)), commands)]
    assert not found, "flags the docs give a command that does not take them:\n" + "\n".join(found)


PLANTED = [
    # (Markdown, how many problems): the rule of the module's docstring, one case each
    ("```sh\nkvlab compare --db x --num 5\n```", 1),
    ("Crash tests: `kvlab crashtest --engine lmdb --progress on`.", 1),
    ("`kvlab notebooks run --scale smoke|default|full`", 1),
    ("`kvlab notebooks run --scale smoke|default|large|full` and `kvlab notebooks run --scale huge`", 1),
    ("```text\nusage: kvlab results export [--format {csv,parquet}] [--table {benchmarks,intervals}]\n```", 0),
    ("```sh\nkvlab run --engine lmdb --num 10   # then kvlab compare --db x\n```", 1),
    ("```sh\nkvlab compar --db x\n```", 1),
    ("```sh\nkvlab run --engine lmdb \\\n    --nope 3\n```", 1),
    ("```sh\ntimeout -s TERM 5 kvlab run --engine lmdb --num 10 --quiet\n```", 0),
    ("```sh\n.venv/bin/python -m pytest -q tests/test_x.py -k name --maxfail=1 -x\n```", 0),
    ("```sh\npip install kvlab --upgrade --no-build-isolation\n```", 0),
    ("```sh\nkvlab results list | head -3 --bytes=9; make docs --jobs 2 && kvlab engines || cat --nope\n```", 0),
    ("```sh\nkvlab notebooks run [--scale smoke|default|full] [--only quickstart]\n```", 1),
    ("```sh\nkvlab dbbench --engine rocksdb --benchmarks=fillseq --num=10 --db=x --seed=1 --json out.json\n```", 0),
    ("```sh\nkvlab dbbench --engine rocksdb --benchmarks=fillseq --no_such_flag=1\n```", 1),
    ("```sh\nkvlab results compare --run \"--engine lmdb --nope\" \"--engine lmdb\" --repeat 3\n```", 0),
    ("```python\nr = kvlab.run('lmdb', 'fillseq')   # the same as kvlab run --engine lmdb --workload fillseq\n```", 0),
    ("`kvlab run` has `--nope`; `kvlab compare` has no `--db`.", 0),
    ("kvlab: error: run: unknown option --thread (did you mean --threads?)", 0),
    ("`kvlab COMMAND --help` and `pip install kvlab`", 0),
    ("| `kvlab report` option | meaning |\n|---|---|\n| `--nope X` | no |\n| `--out FILE` | yes |", 1),
    ("## `kvlab compare`\n\n| option | meaning |\n|---|---|\n| `--db DIR` | no |\n| `--num N` | yes |", 1),
    ("## Shared\n\n| option | meaning |\n|---|---|\n| `--anything` | not attributed |", 0),
]


@pytest.mark.parametrize("text,expected", PLANTED, ids=[f"planted-{i}" for i in range(len(PLANTED))])
def test_the_rule_on_planted_lines(commands, text, expected):
    found = problems(text, "planted", commands)
    assert len(found) == expected, found


def _tracked() -> set | None:
    """The files in git, or None outside a git checkout."""
    try:
        return set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                                  check=True).stdout.split())
    except (OSError, subprocess.CalledProcessError):
        return None


def test_doc_links_go_to_pages_in_git_or_generated():
    tracked = _tracked()
    if tracked is None:
        pytest.skip("not a git checkout")
    generated = {f"docs/{p}" for p in gen_docs.PAGES}
    broken = []
    for page in PAGES:
        for n, line in enumerate(page.read_text().splitlines(), 1):
            for target in re.findall(r"\]\(([^)#\s:]+)(?:#[^)]*)?\)", line):
                path = (page.parent / target).resolve().relative_to(ROOT).as_posix()
                if path not in tracked and path not in generated:
                    broken.append(f"{page.relative_to(ROOT)}:{n}: {target}")
    assert not broken, "links to pages neither in git nor generated:\n" + "\n".join(broken)


# ------------------------------------------------------------------------- the files and modules the docs name

def _top_folders() -> frozenset:
    """The repository's top-level folders: those git holds a file in (a checkout), else the known ones."""
    tracked = _tracked()
    if tracked is None:
        return frozenset({"kvlab", "scripts", "cython_ext", "tests", "benchmarks", "docs", "notebooks", "sweeps",
                          "data", ".ci"})
    return frozenset(f.split("/", 1)[0] for f in tracked if "/" in f)


TOP_FOLDERS = _top_folders()
# kvlab's subpackages: ARCHITECTURE.md writes paths inside kvlab/ from there (`execution/run/mixplan.py`)
KVLAB_FOLDERS = frozenset(p.parent.name for p in (ROOT / "kvlab").glob("*/__init__.py"))
# source a kvlab-relative path must name to be read as one (`results/kvlab.duckdb` is the reader's file)
SOURCE_SUFFIXES = (".py", ".pyx", ".pxi", ".pxd", ".c", ".h", ".pyi")
# what ends a file's name, not a module's attribute (`kvlab.duckdb`, `results/x.parquet`)
FILE_SUFFIXES = frozenset({"duckdb", "json", "jsonl", "parquet", "csv", "toml", "txt", "log", "svg", "png", "pdf",
                           "html", "so", "ipynb", "md", "sh", "py", "c", "h", "properties", "sst", "trace", "gz"})
_PATH = re.compile(r"(?<![\w./~$-])((?:[\w.-]+/)+[\w.@<>*-]*)")
_MODULE = re.compile(r"(?<![\w./~$<'\"-])(kvlab(?:\.[A-Za-z_]\w*)+)(?![\w/-])")
_SPAN = re.compile(r"`([^`\n]+)`")


def code_texts(text: str) -> list:
    """(line number, 'span' or 'block', text) of each inline code span and each line of a fenced block."""
    out, in_block = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            in_block = not in_block
        elif in_block:
            out.append((n, "block", line))
        else:
            out += [(n, "span", m.group(1)) for m in _SPAN.finditer(line)]
    return out


def _module_attr(path: str) -> tuple | None:
    """(the module's file, the name) for `kvlab/model/dbformat.FORMATS`, a path under the checkout written as a
    module and one of its names; None for anything else."""
    head, _, last = path.rpartition("/")
    stem, dot, attr = last.partition(".")
    if not dot or not head or not attr.isidentifier() or attr in FILE_SUFFIXES or not stem.isidentifier():
        return None
    return f"{head}/{stem}.py", attr


def named_paths(text: str) -> list:
    """(line, where, path under the checkout, as written) of each repository path a page names in code.

    The rule: a path is the repository's when its first folder is one of the repository's top-level folders
    (`kvlab/`, `scripts/`, `tests/`, ... as git has them), in a code span or a fenced block; or, in a code span,
    when its first folder is a subpackage of kvlab (`execution/run/mixplan.py`, as ARCHITECTURE.md writes them)
    and it names source (.py, .c, ...), a folder (`lab/seeds/`) or a module's name (`model/dbformat.FORMATS`).
    Anything else is the reader's (`./libmyengine.so`, `results/x.parquet`, `~/.cache/kvlab/`) or a place on the
    system (`/proc/self/io`), never read."""
    return [(line, kind, path, m.group(1).rstrip(".")) for line, kind, code in code_texts(text)
            for m in _PATH.finditer(code) if (path := repo_path(m.group(1).rstrip("."), kind)) is not None]


def repo_path(token: str, kind: str = "span") -> str | None:
    """The path under the checkout that `token`, written in a code span or a fenced block, names (named_paths'
    rule), or None where it names none."""
    first = token.split("/", 1)[0]
    if first in TOP_FOLDERS:
        return token
    if kind == "span" and first in KVLAB_FOLDERS and (
            token.endswith("/") or token.endswith(SOURCE_SUFFIXES) or _module_attr(f"kvlab/{token}")):
        return f"kvlab/{token}"
    return None


def _ignored(paths) -> set:
    """Those of `paths` git ignores: what a build or set-up makes (`kvlab/engines/_built/`), not the repo's."""
    try:
        p = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(paths),
                           capture_output=True, text=True)
    except OSError:
        return set()
    return set(p.stdout.split())


def _path_is_there(path: str) -> bool:
    if path.rstrip("/") in {f"docs/{p}" for p in gen_docs.PAGES}:
        return True
    pattern = re.sub(r"<[^>]*>", "*", path).rstrip("/")
    found = list(ROOT.glob(pattern)) if any(c in pattern for c in "*?[") else [ROOT / pattern]
    found = [f for f in found if f.exists()]
    return any(f.is_dir() for f in found) if path.endswith("/") else bool(found)


def missing_paths(text: str) -> list:
    named = named_paths(text)
    ignored = _ignored(sorted({path for _, _, path, _ in named}))
    out = []
    for line, _, path, written in named:
        if path in ignored:
            continue
        module = _module_attr(path)
        if module is not None and (ROOT / module[0]).is_file():   # a module and one of its names
            file, name = module
            dotted = file.removesuffix(".py").replace("/", ".") + "." + name
            if not (resolves(dotted) if file.startswith("kvlab/") else name in _top_names(ast.parse(
                    (ROOT / file).read_text()))):
                out.append(f"{line}: {written} ({file} has no {name})")
        elif not _path_is_there(path):
            out.append(f"{line}: {written}")
    return out


def test_every_file_the_docs_name_is_there():
    """A file or folder of the project that README.md, ARCHITECTURE.md or a docs page names in code (the rule:
    named_paths) exists: a move or a rename that leaves a page behind fails here. `<name>` in a path is any name
    (`kvlab/engines/<name>/engine_<name>.c`: at least one engine has it), and what git ignores is made by a build."""
    missing = [f"{page.relative_to(ROOT)}:{m}" for page in PAGES for m in missing_paths(page.read_text())]
    assert not missing, "the docs name files that are not there:\n" + "\n".join(missing)


_PLACED = re.compile(r"`(?P<name>[A-Za-z_]\w*)` in `(?P<path>[\w./-]+)`|`(?P<path2>[\w./-]+)`'s `(?P<name2>[A-Za-z_]\w*)`")


def defines(path: Path, name: str) -> bool:
    """Whether source file `path` defines `name`, not only uses it. Python: a function, class, assignment or
    annotated field anywhere in the file. C: a function's definition or prototype, a variable or struct member
    (a function pointer's too), a macro, a struct, enum or typedef."""
    text = path.read_text()
    if path.suffix in (".py", ".pyi"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                return True
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            if any(isinstance(n, ast.Name) and n.id == name for target in targets for n in ast.walk(target)):
                return True
        return False
    n = re.escape(name)
    return any(re.search(p, text, re.M) for p in (
        rf"^\w[\w \t*]*\b{n}\s*\([^;{{]*\)\s*[{{;]",                  # a function, defined or declared
        rf"\b(?!return\b|case\b|else\b|goto\b)\w+[ \t*]+{n}\s*(\[[^]]*\])?\s*[;=,]",   # a variable or member
        rf"\(\s*\*\s*{n}\s*\)\s*\(",                                      # a function pointer
        rf"^#\s*define\s+{n}\b", rf"\b(struct|enum|union)\s+{n}\b", rf"}}\s*{n}\s*;"))


def misplaced_names(text: str) -> list:
    """`kv_loop_mix` in `cython_ext/src/loop_mix.c`, `results/store.py`'s `TABLES`: where a page places a name in a
    source file of the repository, the file defines it (defines())."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in _PLACED.finditer(line):
            name, token = m.group("name") or m.group("name2"), m.group("path") or m.group("path2")
            path = repo_path(token)
            if path is None or not path.endswith(SOURCE_SUFFIXES) or not (ROOT / path).is_file():
                continue   # not the repository's source (`row_srch.c` is WiredTiger's); a missing file fails above
            if not defines(ROOT / path, name):
                out.append(f"{n}: {token} does not define {name}")
    return out


def test_the_names_the_docs_place_in_a_file_are_in_it():
    """A function, table or field the docs say is in a file of the repository is there: a loop moved to a file
    of its own (`loop_mix` was said to be in driver.c) leaves the page behind."""
    wrong = [f"{page.relative_to(ROOT)}:{m}" for page in PAGES for m in misplaced_names(page.read_text())]
    assert not wrong, "the docs place names in files that lack them:\n" + "\n".join(wrong)


def _extension_modules() -> set:
    """The compiled modules setup.py declares (kvlab._native, and kvlab._native_ie where a release RocksDB is)."""
    return set(re.findall(r"Extension\(\s*[\"']([\w.]+)[\"']", (ROOT / "setup.py").read_text()))


def _top_names(tree) -> dict:
    """name -> its node, for what a module's top level defines (in `if` and `try` blocks too)."""
    out = {}

    def visit(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out[node.name] = node
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for n in ast.walk(target):
                        if isinstance(n, ast.Name):
                            out[n.id] = node
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    out[(a.asname or a.name).split(".")[0]] = node
            elif isinstance(node, (ast.If, ast.Try, ast.With)):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                for h in getattr(node, "handlers", []):
                    visit(h.body)
    visit(tree.body)
    return out


def _spec(module: str):
    """The module's spec, found without importing it (only the packages above it), or None."""
    spec, parts = None, module.split(".")
    for i in range(1, len(parts) + 1):
        if spec is not None and spec.submodule_search_locations is None:
            return None   # a module has no submodules
        try:
            spec = importlib.util.find_spec(".".join(parts[:i]))
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
    return spec


def _defines(module: str, tail: list, depth: int = 0) -> bool:
    """Whether module `module` has the names `tail` (its attribute, an attribute of that, ...), read from its
    source (or its .pyi stub) rather than by importing it; a name it imports is followed to where it comes from."""
    if not tail:
        return True
    spec = _spec(module)
    if spec is None or spec.origin is None or depth > 8:
        return False
    origin = Path(spec.origin)
    source = origin if origin.suffix == ".py" else next(iter(origin.parent.glob(f"{module.rpartition('.')[2]}.pyi")),
                                                         None)
    if source is None:
        return module in sys.modules and hasattr(sys.modules[module], tail[0])
    names = _top_names(ast.parse(source.read_text()))
    node = names.get(tail[0])
    if node is None:   # a submodule of a package, or a name made at run time by a module already imported
        if spec.submodule_search_locations is not None and _spec(f"{module}.{tail[0]}") is not None:
            return _defines(f"{module}.{tail[0]}", tail[1:], depth + 1)
        return module in sys.modules and hasattr(sys.modules[module], tail[0])
    if isinstance(node, ast.ImportFrom):
        package = module if spec.submodule_search_locations is not None else module.rpartition(".")[0]
        base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
        source_module = ".".join(base + ([node.module] if node.module else []))
        original = next(a.name for a in node.names if (a.asname or a.name) == tail[0])
        if _spec(f"{source_module}.{original}") is not None:   # `from . import store`: a submodule
            return _defines(f"{source_module}.{original}", tail[1:], depth + 1)
        return _defines(source_module, [original, *tail[1:]], depth + 1)
    if isinstance(node, ast.ClassDef) and len(tail) > 1:
        inside = _top_names(ast.Module(body=node.body, type_ignores=[]))
        if tail[1] in inside:   # a method, a property, a dataclass field
            return True
        cls = getattr(sys.modules.get(module), tail[0], None)   # inherited: asked of the class where it is loaded
        return cls is not None and hasattr(cls, tail[1])
    return True


def resolves(dotted: str) -> bool:
    """Whether a dotted name under kvlab is a module, or a module's name: find_spec for the longest module
    prefix, then the rest read from its source (_defines). A module setup.py compiles counts as there."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        module = ".".join(parts[:i])
        if _spec(module) is not None:
            return _defines(module, parts[i:])
        if module in _extension_modules():
            return True
    return False


def named_modules(text: str) -> list:
    """(line, dotted name) of each `kvlab.something` a page names in a code span; a name ending like a file's
    (`kvlab.duckdb`) is a file."""
    return [(line, m.group(1)) for line, kind, code in code_texts(text) if kind == "span"
            for m in _MODULE.finditer(code) if m.group(1).rsplit(".", 1)[1] not in FILE_SUFFIXES]


def test_every_module_the_docs_name_resolves():
    """`kvlab.lab.seeds.common.MEMORY`, `kvlab.execution.worker`, `kvlab.store.Store` in a page's code spans are
    a module of kvlab, or a name one defines, found without running anything (find_spec and the module's source)."""
    wrong = [f"{page.relative_to(ROOT)}:{line}: {name}" for page in PAGES
             for line, name in named_modules(page.read_text()) if not resolves(name)]
    assert not wrong, "the docs name modules or names kvlab does not have:\n" + "\n".join(wrong)


PLANTED_NAMES = [
    # (Markdown, how many paths or modules it names that are not there): the rules of named_paths and resolves
    ("the adapters, `cython_ext/src/engine_<name>.c`", 1),
    ("each engine's `kvlab/engines/<name>/engine_<name>.c`, beside `kvlab/engines/buildrows.py`", 0),
    ("`kvlab run --engine ./libmyeng.so --json results/x.parquet`, then `~/.cache/kvlab/` and `/proc/self/io`", 0),
    ("```sh\n.venv/bin/python scripts/no_such_script.py\n```", 1),
    ("`execution/run/mixplan.py` feeds it; `execution/run/nothing.py` does not", 1),
    ("`model/dbformat.FORMATS`, `results/events.NO_SUCH_TABLE`", 1),
    ("`scripts/gen_docs.PAGES`, `scripts/gen_docs.NO_SUCH_NAME`, `results/kvlab.duckdb`", 1),
    ("`kvlab.lab.seeds.common.MEMORY`, `kvlab.store.Store`, `kvlab.run`, `store=\"kvlab.duckdb\"`", 0),
    ("`kvlab.execution.no_such_module`, `kvlab.lab.seeds.common.NO_SUCH_NAME`", 2),
    ("`kvlab/engines/_built/<name>@<version>/` (made at set-up)", 0),
    ("`kv_loop_mix` in `cython_ext/src/driver.c`; `results/store.py`'s `TABLES`; `skiphigh` in `row_srch.c`", 1),
]


@pytest.mark.parametrize("text,expected", PLANTED_NAMES, ids=[f"planted-name-{i}" for i in range(len(PLANTED_NAMES))])
def test_the_path_and_module_rules_on_planted_lines(text, expected):
    found = missing_paths(text) + [name for _, name in named_modules(text) if not resolves(name)]
    found += misplaced_names(text)
    assert len(found) == expected, found


# ---------------------------------------------------------------------------- figures the docs quote

_NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                       "fourteen fifteen sixteen".split())}


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBERS[word.lower()]


def _flat(text: str) -> str:
    return " ".join(text.split())


def architecture_layers() -> list:
    """(name, module prefixes) bottom to top, as tests/test_architecture.py's LAYERS has them (read, not imported)."""
    tree = ast.parse((ROOT / "tests" / "test_architecture.py").read_text())
    return next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["LAYERS"])


def test_the_docs_count_the_layers_test_architecture_holds():
    """README.md's and ARCHITECTURE.md's "N layers above a base: model, ..." is LAYERS less the base and the
    public names, in order; ARCHITECTURE.md's table numbers the same layers; the README's layout names each
    layer's folder."""
    layers = architecture_layers()
    above = [name for name, _ in layers if name not in ("base", "api")]
    wrong = []
    for page in (ROOT / "README.md", ROOT / "ARCHITECTURE.md"):
        text = _flat(page.read_text())
        m = re.search(r"\b(\w+) layers above a base([^;]*)", text)
        if m is None:
            wrong.append(f"{page.name} says no longer how many layers there are above a base")
            continue
        named = [w for w in re.findall(r"\w+", m.group(2)) if w in above]
        if _number(m.group(1)) != len(above) or named != above:
            wrong.append(f"{page.name}: {m.group(0)!r}; tests/test_architecture.py: {len(above)}, {above}")
    rows = re.findall(r"^\| (\d+) (\w+) \|", (ROOT / "ARCHITECTURE.md").read_text(), re.M)
    if [(int(n), name) for n, name in rows] != list(enumerate(above, 1)):
        wrong.append(f"ARCHITECTURE.md's table: {rows}; tests/test_architecture.py: {above}")
    layout = (ROOT / "README.md").read_text().split("## Layout", 1)[1]
    kvlab_entry = re.search(r"^kvlab/ (.*?)^\S", layout, re.M | re.S).group(1)
    folders = {p.rpartition(".")[2] for _, prefixes in layers for p in prefixes
               if p.startswith("kvlab.") and (ROOT / p.replace(".", "/") / "__init__.py").exists()}
    wrong += [f"README.md's layout does not name kvlab/{f}/" for f in sorted(folders)
              if not re.search(rf"(?<![\w/]){f}/", kvlab_entry)]
    assert not wrong, "\n".join(wrong)


def test_the_readme_layout_names_what_is_there():
    """Each entry of the README's layout block (a top folder, then what it holds, relative to it) is there."""
    block = (ROOT / "README.md").read_text().split("## Layout", 1)[1].split("```", 2)[1]
    folder, missing = "", []
    for line in block.splitlines()[1:]:
        if line[:1].strip():   # a top folder, then what it holds
            folder, _, line = line.partition(" ")
            if not (ROOT / folder).is_dir():
                missing.append(folder)
        line = re.sub(r"\([^)]*\)", "", line)   # asides: (the layers), (make bench), (mkdocs.yml; ...)
        for name in re.findall(r"[\w<>.-]+(?:/[\w<>.-]*)+|[\w<>-]+\.(?:py|pyx|pxi|pxd|c|h|md|toml|yml|sh|ipynb)\b",
                               line):
            if not _path_is_there(f"{folder}{name}"):
                missing.append(f"{folder}{name}")
    assert not missing, f"README.md's layout names what is not there: {missing}"


def test_the_readme_counts_the_engines_the_registry_has():
    """The README's "Eight engines (LMDB, ...), in 11 configurations that store data, and a null engine" is the
    registry's: the engines whose configurations store data, by their titles in rank order, and their count."""
    from kvlab import engines
    text = _flat((ROOT / "README.md").read_text())
    m = re.search(r"\b(\w+) engines \(([^)]*)\), in (\w+) configurations that store data, and a null engine", text)
    assert m, "README.md no longer says how many engines and configurations there are: say it, or drop this test"
    live = [d for d in engines.DESCRIPTORS.values() if not d.planned and any(c.stores_data for c in d.configs)]
    titles = [d.title for d in live]
    said = [t for t in re.split(r",\s*|\s+and\s+", m.group(2)) if t]
    storing = [c.name for c in engines.REGISTRY.values() if c.stores_data]
    nothing = [c.name for c in engines.REGISTRY.values() if not c.stores_data]
    assert (_number(m.group(1)), said) == (len(titles), titles), (m.group(0), titles)
    assert _number(m.group(3)) == len(storing), (m.group(0), storing)
    assert nothing == ["null"], nothing


# -------------------------------------------------------------------------------- the Debian packages

_PACKAGE = re.compile(r"[a-z0-9][a-z0-9.+-]+")
_DEBIAN_MARK = re.compile(r"^<!--\s*debian-packages:.*-->\s*$")


def setup_packages() -> list:
    """The Debian packages scripts/setup.sh installs: the arrays given to `install_missing`, each a literal
    (`PKGS=(...)`) or what a script prints (`read -r -a X <<< "$(python3 kvlab/engines/buildrows.py --packages)"`)."""
    code = "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in (ROOT / "scripts" / "setup.sh").read_text()
                     .splitlines())
    arrays = {m.group(1): m.group(2).split() for m in re.finditer(r"^\s*(\w+)=\(([^)]*)\)", code, re.M)}
    for m in re.finditer(r'^\s*read -r -a (\w+) <<< "\$\(python3 ([\w/.-]+\.py)([^)]*)\)"', code, re.M):
        arrays[m.group(1)] = subprocess.run([sys.executable, str(ROOT / m.group(2)), *m.group(3).split()],
                                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    out = []
    for m in re.finditer(r"^\s*install_missing\s+(.+)$", code, re.M):
        for arg in shlex.split(m.group(1)):
            name = re.fullmatch(r"\$\{(\w+)\[@\]\}", arg)
            assert name is None or name.group(1) in arrays, f"scripts/setup.sh: cannot read {arg} here"
            out += arrays[name.group(1)] if name else [arg]
    assert out, "scripts/setup.sh calls install_missing no more: teach setup_packages how it installs now"
    return out


def marked_packages(text: str) -> list:
    """The packages in the paragraph (or list item) after each `<!-- debian-packages: ... -->`: every code span
    there made only of words of Debian's package-name grammar (`chromium fonts-dejavu-core`)."""
    out, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if not _DEBIAN_MARK.match(line):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        region = [lines[j]]
        for line2 in lines[j + 1:]:
            if not line2.strip() or re.match(r"^[-*] ", line2):
                break
            region.append(line2)
        found = []
        for span in re.findall(r"`([^`]+)`", " ".join(region)):
            words = span.split()
            if all(_PACKAGE.fullmatch(w) for w in words):
                found += words
        out.append(found)
    return out


def test_the_debian_packages_the_docs_list_are_what_setup_installs():
    """README.md's and docs/install.md's lists (marked `<!-- debian-packages: ... -->`) name exactly the packages
    scripts/setup.sh installs, each once."""
    installs = setup_packages()
    wrong = []
    for page in (ROOT / "README.md", ROOT / "docs" / "install.md"):
        lists = marked_packages(page.read_text())
        if not lists:
            wrong.append(f"{page.relative_to(ROOT)}: no list marked <!-- debian-packages: ... -->")
        for said in lists:
            if sorted(said) != sorted(installs):
                wrong.append(f"{page.relative_to(ROOT)}: it lists {sorted(set(said) - set(installs))} that "
                             f"scripts/setup.sh does not install, and misses {sorted(set(installs) - set(said))}"
                             + (f"; twice: {sorted({p for p in said if said.count(p) > 1})}"
                                if len(said) != len(set(said)) else ""))
    assert not wrong, "\n".join(wrong)
