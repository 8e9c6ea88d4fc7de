"""The grammar every `kvlab` subcommand shares: a parser that reports errors as kvlab errors (with a
did-you-mean), options given twice refused, typed values checked at parse time, and the parent
parsers for what every running command has in common (--db, --json, --store, --tag, ...).

Nothing here runs anything: a command line is checked whole before any database is touched."""
from __future__ import annotations

import argparse
import ast
import difflib
import re

from .. import errors
from ..model.spec import RANGES


class UsageError(errors.SpecError):
    """The command line is wrong: names the argument, what was wrong and what is allowed."""


# options that were renamed: a user typing the old spelling is told the new one
RENAMED = {
    ("compare", "--out"): "--json FILE (kvlab compare writes its records to one JSON file)",
    ("run", "--value_size"): "--value-size (kvlab run spells flags with '-'; db_bench's spellings are "
                             "for kvlab dbbench)",
    ("run", "--key_size"): "--key-size",
    ("run", "--benchmarks"): "--workload NAME[,NAME...] (or run the whole db_bench line with kvlab dbbench)",
    ("run", "--use_existing_db"): "--use-existing-db",
}


class Parser(argparse.ArgumentParser):
    """argparse with kvlab's errors: a mistake raises UsageError (exit 2, one line, no usage dump);
    an unknown flag or subcommand gets the nearest real ones; a single-valued option given twice is
    refused instead of the last one silently winning."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)   # --thread must not quietly mean --threads
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        self.register("action", "store_true", _StoreTrueOnce)

    def error(self, message):
        raise UsageError(_where(self.prog) + _explain(self, message))

    def parse_args(self, args=None, namespace=None):
        ns, extra = self.parse_known_args(args, namespace)
        if extra:
            raise UsageError(_where(_command_of(ns, self)) + _unknown(self, ns, extra))
        return ns


def _where(prog: str) -> str:
    """'run: ' for `kvlab run`, '' for kvlab itself (the error line already starts with 'kvlab:')."""
    words = prog.split()[1:]
    return f"{' '.join(words)}: " if words else ""


def _command_of(ns, parser) -> str:
    parts = [parser.prog] + [getattr(ns, k) for k in ("command", "action") if getattr(ns, k, None)]
    return " ".join(parts)


def _leaf(parser, ns):
    """The (sub)parser that parsed ns: kvlab, kvlab results, kvlab results list, ..."""
    for key in ("command", "action"):
        name = getattr(ns, key, None)
        sub = _subparsers(parser)
        if name and sub and name in sub.choices:
            parser = sub.choices[name]
    return parser


def _subparsers(parser):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a
    return None


def _unknown(parser, ns, extra) -> str:
    leaf = _leaf(parser, ns)
    cmd = getattr(ns, "command", "")
    first = extra[0]
    flag = first.split("=", 1)[0]
    if flag.startswith("-"):
        renamed = RENAMED.get((cmd, flag))
        if renamed:
            return f"{flag} is not an option here; use {renamed}"
        return f"unknown option {flag}{_did_you_mean(flag, _option_strings(leaf))}; `{leaf.prog} --help` lists them"
    return f"unexpected argument {first!r}; `{leaf.prog} --help` shows what this command takes"


def _option_strings(parser) -> list:
    return [s for a in parser._actions for s in a.option_strings]


def _did_you_mean(word, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    if not close:
        stem = word.lstrip("-").replace("_", "-")
        close = [c for c in choices if c.lstrip("-").replace("_", "-") == stem]
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def _explain(parser, message: str) -> str:
    """argparse's message, with a did-you-mean for a bad choice of subcommand."""
    m = re.fullmatch(r"argument (\S+): invalid choice: (.*) \(choose from (.*)\)", message, re.S)
    if m:
        where, got, allowed = m.groups()
        try:   # argparse writes both with repr(): a value holding a quote is in double quotes
            got, choices = ast.literal_eval(got), [str(c) for c in ast.literal_eval(f"[{allowed}]")]
        except (ValueError, SyntaxError):
            choices = [c.strip(" '") for c in allowed.split(",")]
        what = where.lower() if where.isupper() or where.startswith("{") else where
        return f"{what} {got!r} is unknown{_did_you_mean(got, choices)}; allowed: {', '.join(choices)}"
    m = re.match(r"the following arguments are required: (.*)", message)
    if m:
        missing = m.group(1)
        sub = _subparsers(parser)
        if sub is not None and sub.metavar in missing.split(", "):
            return f"{sub.metavar.lower()} missing; allowed: {', '.join(sub.choices)} (`{parser.prog} --help` " \
                   "says what each does)"
        return f"{missing} missing: required here (`{parser.prog} --help` says what it takes)"
    return message


class _StoreOnce(argparse._StoreAction):
    def __call__(self, parser, namespace, values, option_string=None):
        _once(self, namespace, option_string)
        super().__call__(parser, namespace, values, option_string)


class _StoreTrueOnce(argparse._StoreTrueAction):
    def __call__(self, parser, namespace, values, option_string=None):
        _once(self, namespace, option_string)
        super().__call__(parser, namespace, values, option_string)


def _once(action, namespace, option_string):
    seen = namespace.__dict__.setdefault("_given", set())
    if option_string and action.dest in seen:
        raise UsageError(f"{option_string} was given twice; give it once (only --set, --tag, -p, -P and -D "
                         "repeat)")
    if option_string:
        seen.add(action.dest)


def given(args, dest: str) -> bool:
    """Whether the user typed the option (not just its default)."""
    return dest in getattr(args, "_given", ())


# typed values, checked while parsing: the message says what is allowed
def _number(kind, lo=None, hi=None, what=""):
    def parse(text):
        try:
            value = kind(text)
        except (TypeError, ValueError):
            name = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{text!r} is not {name}{what}") from None
        if kind is float and value != value:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bound = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
            raise argparse.ArgumentTypeError(f"{text} is out of range: allowed {bound}{what}")
        return value
    parse.__name__ = "number"
    return parse


def count(lo=1, hi=10**15):
    """A whole number in [lo, hi]."""
    return _number(int, lo, hi)


def amount(lo=0.0, hi=1e15):
    """A number in [lo, hi]."""
    return _number(float, lo, hi)


SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def byte_size(text):
    """Bytes: 1048576, 64M, 1G."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgGtT]?)i?[bB]?\s*", str(text))
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size; allowed: bytes, or a number with K, M, G, T")
    return int(m.group(1)) * SIZE_UNITS[m.group(2).lower()]


def add_format_option(parser) -> None:
    """--format: the command's tables as text, markdown, LaTeX or csv (kvlab.cli.output.tables_as)."""
    from .output import FORMAT_HELP, FORMATS
    parser.add_argument("--format", dest="table_format", default="text", choices=FORMATS, help=FORMAT_HELP)


PROFILE_HELP = ("sample each measured phase's threads with perf (cpu-clock at 99 Hz a thread, DWARF stacks): the "
                "records keep the folded stacks, the CPU per op by component is printed and a flame graph written; "
                "`kvlab results why A B` explains a gap from them (docs/profile.md)")


COUNT_HELP = ("count each phase's instructions per op under callgrind (user space; kvlab's loop threads and, apart, "
              "the engine's own, each by component): deterministic where wall-clock time is not; cache adds "
              "simulated cache misses.  The trial runs 30-100x slower, its ops/s valgrind's (docs/profile.md)")


def add_profile_option(parser, count=True) -> None:
    """--profile (and --count) for a command whose RunSpecs do not come from RUN_FLAGS (ycsb, dbbench, replay)."""
    parser.add_argument("--profile", action="store_true", help=PROFILE_HELP)
    if count:
        from ..model.spec import COUNTS
        parser.add_argument("--count", choices=COUNTS, default=None, help=COUNT_HELP)


METRICS = ("ops", "instructions")


def add_metric_option(parser) -> None:
    """--metric and --count-reads for compare and versions."""
    parser.add_argument("--metric", choices=METRICS, default="ops",
                        help="what to rank on: ops (default), the timed runs' ops/s; instructions: after the timed "
                             "rounds, one run of each engine at each point under callgrind, ranked by instructions "
                             "per op (deterministic; blind to memory stalls, contention and I/O waits), the timed "
                             "figures beside (docs/profile.md)")
    parser.add_argument("--count-reads", type=count(100, 10**9), default=20_000, metavar="N",
                        help="--metric instructions: the gets a thread of each counted run does (default 20,000)")


def add_running_options(parser, db_help="database directory, kept after the run (default: a temporary one, "
                                        "removed)", seed=True, progress=True, db=True, overwrite=None,
                        trace=False, profile=False):
    """What every command that runs a benchmark shares (`trace`: --record-trace too, for a command whose RunSpec
    does not come from RUN_FLAGS, which has it)."""
    g = parser.add_argument_group("common to every running command")
    if db:
        g.add_argument("--db", default=None, metavar="DIR", help=db_help)
    if db if overwrite is None else overwrite:
        g.add_argument("--overwrite", action="store_true",
                       help="a fresh run may replace the database another engine configuration left in --db "
                            "(without it that is refused, and nothing is touched)")
    g.add_argument("--json", default=None, metavar="FILE", help="also write the result records to FILE (JSON, "
                   "schema kvlab.result/N)")
    add_store_option(g)
    g.add_argument("--no-store", action="store_true", help="do not append the result to the results store")
    if trace:
        g.add_argument("--record-trace", default=None, metavar="FILE",
                       help="record every operation of every phase into FILE, kvlab's trace format; `kvlab replay "
                            "FILE` replays it on any engine (docs/traces.md)")
    if profile:
        add_profile_option(g)
    g.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="label the stored result (repeatable): `kvlab results list --tag TAG` finds it")
    if seed:
        g.add_argument("--seed", type=count(*RANGES["seed"]), default=None, metavar="N",
                       help="random seed (keys, values, arrivals; default: from the clock, printed and recorded)")
    if progress:
        g.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                       help="live progress bar on stderr (auto: when stderr is a terminal)")
    g.add_argument("--quiet", "-q", action="store_true",
                   help="print only the result lines and warnings: no header, no table, no store line")
    return g


def add_store_option(parser):
    parser.add_argument("--store", default=None, metavar="PATH",
                        help="the results store (DuckDB; default $KVLAB_RESULTS, else the per-user "
                             "$XDG_DATA_HOME/kvlab/kvlab.duckdb, ~/.local/share/kvlab/kvlab.duckdb without it)")


def tag_value(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.:/+-]{1,64}", text or ""):
        raise UsageError(f"--tag {text!r}: allowed: 1-64 letters, digits and _ . : / + -")
    return text
