"""`kvlab dbbench`: db_bench's command line, db_bench's meanings, kvlab's engines.

A seed's db_bench line runs with only the binary replaced by
`kvlab dbbench --engine E`.  Every flag is in one table, with what kvlab does with it:
kvlab.model.dbbench_flags, shared with the engine registry (rocksdb-tuned).

A flag in no db_bench is an error.  Flags that cannot be honoured for the chosen
engine are named in one warning line, never dropped silently; one that would change what is
measured (--compaction_style, direct I/O) is refused with an error naming the engines that honour it.
"""
from __future__ import annotations

import dataclasses
import shlex
import sys
from dataclasses import dataclass

from .. import engines, errors
from ..model import workloads
from ..model.dbbench_flags import FLAGS, parse_argv, translate_rocksdb_flags  # noqa: F401
from ..model.spec import RunSpec
from ..model.workloads.mixgraph import from_dbbench
from . import common
from .output import format_histogram, format_line  # noqa: F401  (db_bench's lines)
from .parsing import add_running_options

NAME = "dbbench"
HELP = "run a db_bench command line (the binary replaced by kvlab)"
DESCRIPTION = """Run a db_bench command line with db_bench's flags and meanings, on any kvlab engine:
`kvlab dbbench --engine rocksdb --benchmarks=fillseq,readrandom --num=1000000 --db=DIR`.
Every flag after kvlab's own is db_bench's (--name=value); `kvlab dbbench --help-flags` lists the
ones kvlab knows and what it does with each."""
TAKES_EXTRA = True   # the db_bench flags after kvlab's own

KINDS = {
    "spec": "what to run (benchmarks, num, reads, threads, sizes, seed, ...): honoured on every engine",
    "setting": "an engine setting (cache, sync, compression, ...): honoured where the engine has it",
    "rocksdb-option": "a RocksDB option: honoured on RocksDB, named in a warning elsewhere (those that change what "
                      "is measured are refused where not honoured, or honoured in an engine's own options)",
    "special": "handled by its own rule (use_lsm picks WiredTiger's LSM or B-tree, ...)",
    "mixgraph": "a parameter of --benchmarks=mixgraph, Meta's model (named in a warning when no mixgraph runs; one "
                "kvlab cannot honour is refused)",
    "ignored": "accepted so a seed's line runs, but it changes nothing here (named in a warning)",
    "gone": "removed from RocksDB before 7.8: accepted, named in a warning",
}


def add_parser(sub, make):
    d = make(sub, NAME, help=HELP, description=DESCRIPTION)
    d.add_argument("--engine", default="lmdb", metavar="NAME",
                   help=f"engine configuration (default lmdb; db_bench_wiredtiger's --use_lsm picks the WiredTiger "
                        f"one); one of: {', '.join(engines.REGISTRY)}")
    d.add_argument("--help-flags", action="store_true",
                   help="list every db_bench flag kvlab accepts, by kind, and what it does with it")
    # --db and --seed are db_bench's own: --db=DIR, --seed=N
    add_running_options(d, db=False, seed=False, overwrite=True, trace=True, profile=True)
    d.epilog = "db_bench's flags follow kvlab's own, e.g. --benchmarks=fillseq --num=100000 --db=DIR"
    return d


def handle(args, rest) -> int:
    if args.help_flags:
        print(help_flags())
        return 0
    p = plan(args.engine, rest)
    if args.overwrite:
        p = dataclasses.replace(p, spec=p.spec.replace(overwrite=True))
    if args.record_trace is not None:
        p = dataclasses.replace(p, spec=p.spec.replace(record_trace=args.record_trace))
    if args.profile:
        p = dataclasses.replace(p, spec=p.spec.replace(profile=True))
    if args.count:
        p = dataclasses.replace(p, spec=p.spec.replace(count=args.count))
    if p.spec.use_existing_db and p.spec.db is None:
        raise errors.SpecError("--use_existing_db=1 needs --db=DIR, the database to reopen (without --db kvlab "
                               "makes a new temporary database)")
    for w in p.warnings:
        print(w, file=sys.stderr, flush=True)
    common.preflight(args, p.spec.db, p.spec.use_existing_db)
    from ..execution import native
    from ..execution.run.runner import run_spec
    cfg = native.require_built(p.spec.engine, load_now=False)   # its trials' workers load it
    lib = native.load()
    if not args.quiet:   # a built version (lmdb@0.9.70, plain redb): the version its build reported
        version = (native.loaded_facts(cfg.native_name).get("build", {}).get("reported_version") if cfg.build
                   else lib.adapters().get(cfg.adapter))
        print(header(p, version, lib.KEY_ENCODING), flush=True)

    def show(b):
        common.print_result(b, args)
        if p.histogram:
            print(format_histogram(b), flush=True)

    result = run_spec(p.spec, on_result=show, control=common.progress_control(args))
    for b in result:
        b.params["command_line"] = command_line(args.engine, rest)
    common.output.warnings_once(result)
    if not args.quiet:
        common.profiles(result)   # --profile: the CPU per op by component, the top functions, the flame graphs
        common.instructions(result)   # --count: instructions per op
    return common.finish(result, args)


# the special flags one adapter's rules honour (use_lsm), named in a warning on the others
_SPECIAL_FOR_SOME = frozenset(f for d in engines.DESCRIPTORS.values() for f in d.dbbench.special)


@dataclass
class DbBenchPlan:
    spec: RunSpec
    histogram: bool
    warnings: list
    seed_was_time: bool


def _who_honours(kind_or_flag: str, field: str) -> str:
    """The adapters whose db_bench rules honour a flag kind ("rocksdb-option") or special flag ("use_lsm")."""
    return ", ".join(d.title for d in engines.DESCRIPTORS.values() if kind_or_flag in getattr(d.dbbench, field))


def refusal(engine: str, name: str, value) -> str:
    """Why --name=value is refused on `engine`: it changes what is measured, and which engines honour it (and
    how), and why those that cannot, cannot (their descriptors' refusals)."""
    f = FLAGS[name]
    live = [d for d in engines.DESCRIPTORS.values() if not d.planned and any(c.stores_data for c in d.configs)]
    how = [f"{d.title} ({f.target})" for d in live if f.kind in d.dbbench.flag_kinds]
    how += [f"{d.title} (in its own options: {d.dbbench.own_flags[name]({name: value}) or 'off'})"
            for d in live if name in d.dbbench.own_flags]
    why = [f"{d.title}: {d.dbbench.refusals[name]}" for d in live if name in d.dbbench.refusals]
    shown = value if not isinstance(value, bool) else int(value)
    return (f"--{name}={shown} changes what is measured and {engine} cannot honour it, so kvlab refuses it rather "
            f"than run without it; honoured by {', '.join(how) or 'no engine'}" + (f"; {'; '.join(why)}" if why else ""))


def resolve(engine: str, flags: dict) -> str:
    """The configuration `--engine` names with these flags: an alias of db_bench's own build for an adapter
    ("wiredtiger": db_bench_wiredtiger, whose --use_lsm picks LSM or B-tree), or a configuration of such an
    adapter when one of its special flags is given."""
    for d in engines.DESCRIPTORS.values():
        rules = d.dbbench
        if rules.pick is None:
            continue
        mine = engine in engines.REGISTRY and engines.REGISTRY[engine].adapter == d.name
        if engine == rules.alias or (mine and any(f in flags for f in rules.special)):
            return rules.pick(flags)
    return engine


def plan(engine: str, argv) -> DbBenchPlan:
    flags = parse_argv(argv)
    engine = resolve(engine, flags)
    cfg = engines.get(engine)
    rules = engines.descriptor(cfg).dbbench
    run_args, settings, not_honoured, refused, own = {}, {}, [], [], []
    for name, value in flags.items():
        f = FLAGS[name]
        if f.kind == "spec":
            run_args[f.target] = value
        elif f.kind == "setting":
            if f.target in rules.in_options:
                continue  # in the engine's options string (RocksDB's table factory carries them)
            settings[f.target] = value
        elif f.kind == "gone":
            honours = f.kind in rules.flag_kinds
            not_honoured.append(f"--{name} ({f.note})" if honours
                                else f"--{name} ({_who_honours(f.kind, 'flag_kinds')} only; {f.note})")
        elif f.kind == "ignored":
            not_honoured.append(f"--{name}" + (f" ({f.note})" if f.note else ""))
        elif f.kind == "mixgraph":
            continue   # below, with the benchmarks
        elif f.kind != "special" and f.kind not in rules.flag_kinds:
            if name in rules.own_flags:
                own.append(rules.own_flags[name](flags))
            elif f.measured and value != f.default:
                refused.append(refusal(engine, name, value))
            else:
                not_honoured.append(f"--{name} ({_who_honours(f.kind, 'flag_kinds')} only)")
        elif f.kind == "special" and name in _SPECIAL_FOR_SOME and name not in rules.special:
            not_honoured.append(f"--{name} ({_who_honours(name, 'special')} only)")
        elif name == "verify_checksum" and not value:
            not_honoured.append("--verify_checksum=0 (kvlab always verifies)")
        elif name == "perf_level" and value > 1:
            not_honoured.append(f"--perf_level={value} (kvlab keeps RocksDB's perf counters off, level 1)")
    if refused:
        raise errors.SpecError("; ".join(refused))
    extra = [rules.options(flags)] if rules.options is not None else []
    extra = list(dict.fromkeys(o for o in extra + own if o))   # two flags may give one fragment (direct_io)
    if extra:
        settings["options"] = cfg.options_separator.join(extra)
    if "compression_type" not in flags:
        if rules.default_compression is not None:
            settings["compression"] = rules.default_compression
        elif "snappy" in cfg.compressions:
            settings["compression"] = "snappy"   # db_bench's default compression_type
    for k in cfg.ignored(settings):
        flag = next((n for n, f in FLAGS.items() if f.target == k and f.kind == "setting"), k)
        not_honoured.append(f"--{flag} (no such setting in {engine})")
    if "benchmark_write_rate_limit" in flags and flags["benchmark_write_rate_limit"] > 0:
        per_write = run_args.get("key_size", 16) + run_args.get("value_size", 100)
        run_args["writes_per_second"] = flags["benchmark_write_rate_limit"] / per_write
    benchmarks = flags.get("benchmarks", "fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readseq")
    names = [b.strip() for b in benchmarks.split(",") if b.strip()]
    mixes = {}
    if "mixgraph" in names:   # Meta's model from its flags (kvlab.model.workloads.mixgraph)
        mixes["mixgraph"] = from_dbbench(flags)
    else:
        not_honoured += [f"--{n} (mixgraph only)" for n in flags if FLAGS[n].kind == "mixgraph"]
    for b in names:
        workloads.get(b, mixes)
    seed = flags.get("seed", 0)
    spec = RunSpec(engine=engine, workloads=tuple(names), seed=seed or None, auto_load=False,
                   keep_db=bool(run_args.get("db")), engine_settings=settings, mixes=mixes, **run_args)
    warnings = []
    if not_honoured:
        warnings.append(f"warning: accepted but not honoured for {engine}: " + ", ".join(not_honoured))
    return DbBenchPlan(spec, flags.get("histogram", False), warnings, seed_was_time=not seed)


def header(p: DbBenchPlan, version: str, key_encoding: str) -> str:
    s = p.spec
    comp = s.engine_settings.get("compression", "none")
    after = int(s.value_size * s.compressed_fraction + 0.5)
    lines = [
        f"kvlab dbbench: {s.engine} (library {version}), key encoding {key_encoding}",
        f"Keys:       {s.key_size} bytes each",
        f"Values:     {s.value_size} bytes each ({after} bytes after compression)",
        f"Entries:    {s.num}",
        f"Compression: {comp}",
        f"Seed:       {s.seed}" + (" (from the clock; pass --seed to repeat)" if p.seed_was_time else ""),
        "------------------------------------------------",
    ]
    return "\n".join(lines)


def help_flags() -> str:
    """Every db_bench flag kvlab accepts, grouped by what kvlab does with it, each kind explained."""
    out = []
    for kind, meaning in KINDS.items():
        names = sorted(n for n, f in FLAGS.items() if f.kind == kind)
        if names:
            out += [f"{kind}: {meaning}"] + [f"  --{n:<40} {FLAGS[n].note}".rstrip() for n in names] + [""]
    other = sorted(n for n, f in FLAGS.items() if f.kind not in KINDS)
    if other:
        out += ["other:"] + [f"  --{n:<40} {FLAGS[n].kind}: {FLAGS[n].note}".rstrip() for n in other]
    return "\n".join(out).rstrip()


def command_line(engine: str, argv) -> str:
    return "kvlab dbbench --engine " + shlex.quote(engine) + " " + " ".join(shlex.quote(a) for a in argv)
