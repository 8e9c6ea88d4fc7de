"""The `kvlab` command: one parser per subcommand (a module each in kvlab/cli/), one grammar, one
place where errors become exit codes."""
from __future__ import annotations

import sys

from .. import _signals as signals
from .. import errors
from .._version import __version__
from ..execution.dbfiles import leftovers
from . import (
    clean,
    compare,
    crashtest,
    dbbench,
    engines,
    linkbench,
    noise,
    notebooks,
    output,
    replay,
    report,
    reproduce,
    rerun,
    results,
    run,
    sla,
    sweep,
    versions,
    workloads,
    ycsb,
)
from .parsing import Parser
from .run import spec_from_args  # noqa: F401  (kvlab.cli.spec_from_args)


def _compares_runs(args) -> bool:
    """`kvlab results compare --run A B` runs both sides; every other `results` action only reads the store."""
    return getattr(args, "run", None) is not None


# The commands in the order `kvlab --help` lists them, each with whether it runs an engine (or, for a command
# that does for some actions only, a test of its parsed arguments).  One that does names what killed runs left
# behind before it starts.  (Its trials run in worker processes that the fork server starts with room in glibc's
# static TLS: execution.worker; the command itself opens no engine.)
TABLE = ((run, True), (ycsb, True), (dbbench, True), (compare, True), (versions, True), (noise, True), (sla, True),
         (rerun, True), (replay, True), (results, _compares_runs), (report, False), (reproduce, True), (engines, False),
         (workloads, False),
         (sweep, True), (crashtest, True), (linkbench, True), (notebooks, True), (clean, False))
COMMANDS = tuple(command for command, _ in TABLE)
BY_NAME = {c.NAME: c for c in COMMANDS}
RUNS_ENGINES = {command.NAME: runs for command, runs in TABLE}


def runs_engines(args) -> bool:
    """Whether the parsed command line runs an engine (TABLE)."""
    runs = RUNS_ENGINES[args.command]
    return runs(args) if callable(runs) else runs


def _make(sub, name, **kwargs):
    return sub.add_parser(name, **kwargs)


def build_parser() -> Parser:
    p = Parser(prog="kvlab", description="Key-value engine benchmarks at native speed: db_bench's loops, YCSB, mako "
                                         "and TOML mixes, LinkBench, crash tests, sweeps; results in one store.",
               epilog="`kvlab COMMAND --help` shows a command's options.")
    p.add_argument("--version", action="version", version=f"kvlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub, _make)
    return p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    signals.forget()
    for stream in (sys.stdout, sys.stderr):   # a path typed with bytes that are not UTF-8 prints as those bytes
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="surrogateescape")
    try:
        parser = build_parser()
        if argv[:1] == [dbbench.NAME]:   # kvlab's own options, then db_bench's flags, as db_bench takes them
            args, rest = parser.parse_known_args(argv)
            command = lambda: dbbench.handle(args, rest)   # noqa: E731
        else:
            args = parser.parse_args(argv)
            command = lambda: BY_NAME[args.command].handle(args)   # noqa: E731
        engine_runs = runs_engines(args)
        if engine_runs:   # what killed runs left behind, named once before the next one starts
            note = leftovers.notice()
            if note:
                print(note, file=sys.stderr, flush=True)
        with signals.stopping(), output.tables_as(getattr(args, "table_format", None)):
            return command()
    except errors.KvlabError as exc:
        print(f"kvlab: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:   # a stop signal outside a run's measured phase (kvlab._signals)
        name = signals.name_of(exc)
        print(f"kvlab: stopped by {name}", file=sys.stderr)
        return signals.exit_code(name)
    except BrokenPipeError:  # output piped into head and the like
        sys.stderr.close()
        return 0
    except Exception:
        # what a library made of a stop signal that reached it (DuckDB: "Query interrupted"; an import cut short)
        name = signals.received()
        if name is None:
            raise
        print(f"kvlab: stopped by {name}", file=sys.stderr)
        return signals.exit_code(name)


def entry():
    """The `kvlab` command (main() is also called in-process, by tests)."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
