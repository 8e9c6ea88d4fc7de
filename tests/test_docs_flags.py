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

**Links.** Every relative link of docs/*.md goes to a file in git or a page scripts/gen_docs.py generates.
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

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


def test_doc_links_go_to_pages_in_git_or_generated():
    try:
        tracked = set(subprocess.run(["git", "ls-files", "docs"], cwd=ROOT, capture_output=True, text=True,
                                     check=True).stdout.split())
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    generated = {f"docs/{p}" for p in gen_docs.PAGES}
    broken = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for n, line in enumerate(page.read_text().splitlines(), 1):
            for target in re.findall(r"\]\(([^)#\s:]+)(?:#[^)]*)?\)", line):
                path = (page.parent / target).resolve().relative_to(ROOT).as_posix()
                if path not in tracked and path not in generated:
                    broken.append(f"{page.relative_to(ROOT)}:{n}: {target}")
    assert not broken, "links to pages neither in git nor generated:\n" + "\n".join(broken)


REPO_PATH = re.compile(r"`((?:kvlab|benchmarks|tests|scripts|cython_ext|notebooks|docs)/[\w./@-]+"
                       r"\.(?:py|pyx|pxi|c|h|md|sh|ipynb|toml|json))`")


def test_every_file_the_docs_name_is_there():
    """A file of the project that README.md, ARCHITECTURE.md or a docs page names in code (`kvlab/...py`,
    `benchmarks/...py`, `tests/...py`, ...) exists: a move or a rename that leaves a page behind fails here."""
    pages = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
    missing = [(page.name, m.group(1)) for page in pages for m in REPO_PATH.finditer(page.read_text())
               if not (ROOT / m.group(1)).exists()]
    assert not missing, f"the docs name files that are not there: {missing}"
