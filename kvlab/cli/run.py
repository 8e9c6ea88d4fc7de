"""`kvlab run`: workloads on one engine, with kvlab's own flags (one spelling each, '-' between words)."""
from __future__ import annotations

import argparse

from .. import engines, errors
from ..model.spec import RUN_FLAGS, RunFlag, RunSpec, make_spec
from . import common, output
from .parsing import add_running_options, amount, byte_size, count

NAME = "run"
HELP = "run workloads on one engine"
DESCRIPTION = """Run workloads on one engine: a db_bench loop, a YCSB/mako/TOML mix, in order.

A read workload on a fresh database first gets a load phase (fillseq in batches of 1000, or with
--load bulk through the engine's bulk path; --resume continues one that was killed).
A db_bench command line runs as it is with `kvlab dbbench`; a YCSB workload file with `kvlab ycsb`."""


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=DESCRIPTION)
    groups = {None: r}
    for f in RUN_FLAGS:   # each flag from its one row (kvlab.model.spec), in the table's order
        if f.shared:
            continue
        if f.group not in groups:
            groups[f.group] = r.add_argument_group(f.group)
        _add(groups[f.group], f)
    settings = groups[next(f.group for f in RUN_FLAGS if f.setting)]
    settings.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                          help=f"any engine setting (repeatable): {', '.join(engines.ENGINE_SETTINGS)}")
    add_running_options(r)
    return r


def _add(group, f: RunFlag) -> None:
    """The parser's option for one flag: typed by its kind, within its bounds."""
    text = f.help.format(engines=", ".join(engines.REGISTRY)) if "{engines}" in f.help else f.help
    if f.kind == "switch":
        group.add_argument(f.flag, action="store_true", help=text)
        return
    kw: dict = {}
    if f.kind == "choice":
        kw["choices"] = f.choices
    elif f.kind in _TYPES:
        kw["type"] = _TYPES[f.kind](f)
    group.add_argument(f.flag, default=None, metavar=f.metavar, help=text, **kw)


def _warmup(f: RunFlag):
    """--warmup: seconds, or auto."""
    seconds = amount(*f.bounds)

    def parse(text):
        if str(text).strip().lower() == "auto":
            return "auto"
        try:
            return seconds(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a warm-up; allowed: seconds from {f.bounds[0]:g} to "
                                             f"{f.bounds[1]:g}, or auto") from None
    return parse


_TYPES = {"int": lambda f: count(*f.bounds), "number": lambda f: amount(*f.bounds), "bytes": lambda f: byte_size,
          "warmup": _warmup}


def _typed(args, f: RunFlag) -> bool:
    """Whether the flag was given: a value (0 is one), or a switch that is on."""
    value = getattr(args, f.name, None)
    return value is not None and value is not False


def _engine_settings(args) -> dict:
    settings = {f.target: getattr(args, f.name) for f in RUN_FLAGS if f.setting and _typed(args, f)}
    for item in args.set:
        key, value = engines.parse_setting(item, "--set")
        if key in settings:
            raise errors.SpecError(f"--set {item}: {key} was given twice (also as --{key.replace('_', '-')}); "
                                   "give it once")
        settings[key] = value
    return settings


def spec_from_args(args) -> RunSpec:
    """The RunSpec a `kvlab run` command line describes: each flag that was typed (RUN_FLAGS), so that a mix's
    own counts apply to what was not."""
    if args.txn is not None and args.workload is not None:
        raise errors.SpecError("give --workload or --txn, not both (--txn SPEC is the workload txn:SPEC)")
    if args.clients is not None and args.threads is not None:
        raise errors.SpecError("give --clients or --threads, not both (a client is a thread on an embedded engine)")
    if args.use_existing_db and args.db is None:
        raise errors.SpecError("--use-existing-db needs --db DIR, the database to reopen")
    if args.resume and args.db is None:
        raise errors.SpecError("--resume needs --db DIR, the database the interrupted load was writing")
    # make_spec takes each flag's dest: the fields, and engine, workload, txn, clients as kvlab.run does
    params = {f.name: getattr(args, f.name) for f in RUN_FLAGS if not f.setting and _typed(args, f)}
    if args.db is not None:
        params["keep_db"] = True
    else:
        params.pop("overwrite", None)   # it says what may happen to --db
    return make_spec(**params, **_engine_settings(args))


def handle(args) -> int:
    spec = spec_from_args(args)
    common.say(args, f"kvlab run: {spec.engine}, {','.join(spec.workloads)}, num={spec.num:,}, "
                     f"threads={spec.threads}, seed={spec.seed}",
               output.memory_line(spec.memory, [spec.engine], spec.engine_settings))
    return common.execute(spec, args)
