"""The `kvlab` command: one parser per subcommand (a module each in kvlab/cli/), one grammar, one
place where errors become exit codes."""
from __future__ import annotations

import os
import sys

from .. import _signals as signals
from .. import errors
from .._version import __version__
from ..execution import native
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
# behind before it starts, and, started without room in glibc's static TLS for a library linked into kvlab
# (kvlab.execution.native), re-executes itself once with it, since glibc reads it only at start.
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


def main(argv=None, reexec: bool = False) -> int:
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
        if reexec and engine_runs:
            _reexec_with_static_tls_room()
        if engine_runs:   # what killed runs left behind, named once before the next one starts
            note = leftovers.notice()
            if note:
                print(note, file=sys.stderr, flush=True)
        with signals.stopping():
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
    """The `kvlab` command (main() is also called in-process, by tests, where it must not re-execute)."""
    sys.exit(main(reexec=True))


_REEXECUTED = "KVLAB_REEXECUTED"   # set in the re-executed process: never twice, whatever its environment


def _reexec_with_static_tls_room() -> None:
    """A command that runs an engine, started without the static TLS room a linked-in library needs, starts
    again with it (the command line was parsed first: a mistake in it is told once, by this process)."""
    if os.environ.get(_REEXECUTED) or not native.needs_static_tls_room():
        return
    try:   # the interpreter started again exactly as it was (its flags, the script or -m, the arguments)
        os.execve(sys.executable, sys.orig_argv, {**native.with_static_tls_room(os.environ), _REEXECUTED: "1"})
    except OSError:
        pass   # carry on as started: a run's build facts and warnings say so


if __name__ == "__main__":
    entry()
