"""`kvlab run`: workloads on one engine, with kvlab's own flags (one spelling each, '-' between words)."""
from __future__ import annotations

import argparse

from .. import errors
from ..model import engines
from ..model.spec import LOADS, RunSpec, make_spec
from . import common
from .parsing import add_running_options, amount, byte_size, count

NAME = "run"
HELP = "run workloads on one engine"
DESCRIPTION = """Run workloads on one engine: a db_bench loop, a YCSB/mako/TOML mix, in order.

A read workload on a fresh database first gets a load phase (fillseq in batches of 1000, or with
--load bulk through the engine's bulk path; --resume continues one that was killed).
A db_bench command line runs as it is with `kvlab dbbench`; a YCSB workload file with `kvlab ycsb`."""

# flags that are engine settings (the rest go through --set)
SETTING_FLAGS = ("cache_size", "sync", "compression", "map_size", "options", "table_options")


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=DESCRIPTION)
    r.add_argument("--engine", default="lmdb", metavar="NAME",
                   help=f"engine configuration (default lmdb); one of: {', '.join(engines.REGISTRY)}")
    r.add_argument("--workload", default=None, metavar="WORKLOAD",
                   help="a name or comma list, run in order (default fillseq,readrandom): db_bench's loops, "
                        "ycsb-a..f, seed 003's fdb-*, `kvlab workloads` lists them; or txn:SPEC / mako:SPEC; or a "
                        "TOML mix file; or a YCSB properties file")
    r.add_argument("--txn", default=None, metavar="SPEC",
                   help="a mako transaction spec as the workload, e.g. g9u1 (the same as --workload txn:SPEC)")
    g = r.add_argument_group("size and shape")
    g.add_argument("--num", type=count(1), default=None, metavar="N",
                   help="keys in the key space; write workloads write N keys in total (default 1,000,000, or a "
                        "mix's own record count)")
    g.add_argument("--reads", type=count(1), default=None, metavar="N",
                   help="reads per thread (default: num); for a mix, transactions per client")
    g.add_argument("--threads", type=count(1, 1024), default=None, metavar="N", help="worker threads (default 1)")
    g.add_argument("--clients", type=count(1, 1024), default=None, metavar="N",
                   help="a mix's clients, one thread each on an embedded engine (same as --threads)")
    g.add_argument("--duration", type=amount(0, 1e7), default=None, metavar="S",
                   help="seconds; > 0 runs each phase by time instead of by count")
    g.add_argument("--value-size", type=count(0, 1 << 26), default=None, metavar="BYTES",
                   help="value size (default 100)")
    g.add_argument("--key-size", type=count(1, 64), default=None, metavar="BYTES",
                   help="key size (default 16: the key index, zero-padded decimal)")
    g.add_argument("--batch", type=count(1, 1_000_000), default=None, metavar="K",
                   help="writes per batch/transaction (default 1); latency is then per batch; with --load bulk, "
                        "a fillseq's records per bulk chunk (default: about 256 MiB of them)")
    g.add_argument("--seek-nexts", type=count(0), default=None, metavar="N",
                   help="seekrandom: entries read after each seek (default 0)")
    g.add_argument("--writes-per-second", type=amount(0), default=None, metavar="RATE",
                   help="readwhilewriting: the writer's rate (0: unlimited)")
    g = r.add_argument_group("loads")
    g.add_argument("--load", choices=LOADS, default=None,
                   help="how a load (the load phase, a fillseq workload) writes: batched (puts in batches of 1000; "
                        "the default, as the seeds loaded) or bulk (the engine's bulk path: LMDB MDB_APPEND, "
                        "RocksDB SST ingestion, WiredTiger's bulk cursor, BerkeleyDB bulk puts; keys in order, "
                        "one thread)")
    g.add_argument("--resume", action="store_true",
                   help="continue an interrupted load in --db from the last record it committed, instead of "
                        "starting over; needs --db")
    g = r.add_argument_group("mixes")
    g.add_argument("--distribution", default=None, metavar="NAME",
                   help="a mix's key distribution instead of its own: uniform, zipfian, zipfian-plain, latest, "
                        "hotspot, sequential, exponential")
    g.add_argument("--target-rate", type=amount(0), default=None, metavar="OPS_PER_SEC",
                   help="run the mix in open loop at this many transactions/s in total (0: closed loop)")
    g = r.add_argument_group("measurement")
    g.add_argument("--cpus", default=None, metavar="LIST", help="pin the run, engine threads included: 0, 0-1, 0,2")
    g.add_argument("--interval", type=amount(0, 3600), default=None, metavar="S",
                   help="time-series interval in s (default 1; 0: off)")
    g.add_argument("--warmup", type=_warmup, default=None, metavar="S|auto",
                   help="seconds left out of each run phase's summary (default 0), or auto: the start-up transient "
                        "MSER-5 finds in the time series")
    g.add_argument("--repeat", type=count(1, 1000), default=None, metavar="N",
                   help="trials (default 1); more add the median and a 95%% interval")
    g.add_argument("--use-existing-db", action="store_true",
                   help="reopen the database in --db as it is (no load, no clearing); needs --db")
    g = r.add_argument_group("engine settings")
    g.add_argument("--cache-size", type=byte_size, default=None, metavar="BYTES", help="block/page cache size")
    g.add_argument("--sync", action="store_true", help="sync every write (or commit) to storage")
    g.add_argument("--compression", default=None, metavar="NAME", help="none, snappy, lz4, zstd (where the engine "
                   "has it)")
    g.add_argument("--map-size", type=byte_size, default=None, metavar="BYTES", help="LMDB map size (default 64G, "
                   "sparse)")
    g.add_argument("--options", default=None, metavar="STRING", help="the engine's own option string")
    g.add_argument("--table-options", default=None, metavar="STRING", help="WiredTiger's table configuration")
    g.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help=f"any engine setting (repeatable): {', '.join(engines.ENGINE_SETTINGS)}")
    add_running_options(r)
    return r


def _warmup(text):
    """--warmup: seconds, or auto."""
    if str(text).strip().lower() == "auto":
        return "auto"
    try:
        return amount(0, 1e6)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a warm-up; allowed: seconds from 0 to 1000000, or "
                                         "auto") from None


def _engine_settings(args) -> dict:
    settings = {k: getattr(args, k) for k in SETTING_FLAGS if getattr(args, k) not in (None, False)}
    for item in args.set:
        key, value = engines.parse_setting(item, "--set")
        if key in settings:
            raise errors.SpecError(f"--set {item}: {key} was given twice (also as --{key.replace('_', '-')}); "
                                   "give it once")
        settings[key] = value
    return settings


# RunSpec fields taken from flags of the same name, passed only when typed (so a mix's own counts apply)
_FIELDS = ("num", "reads", "duration", "value_size", "key_size", "batch", "seed", "seek_nexts", "writes_per_second",
           "distribution", "target_rate", "cpus", "interval", "warmup", "repeat", "load")


def spec_from_args(args) -> RunSpec:
    """The RunSpec a `kvlab run` command line describes."""
    if args.txn is not None and args.workload is not None:
        raise errors.SpecError("give --workload or --txn, not both (--txn SPEC is the workload txn:SPEC)")
    if args.clients is not None and args.threads is not None:
        raise errors.SpecError("give --clients or --threads, not both (a client is a thread on an embedded engine)")
    if args.use_existing_db and args.db is None:
        raise errors.SpecError("--use-existing-db needs --db DIR, the database to reopen")
    workload = f"txn:{args.txn}" if args.txn is not None else (args.workload or "fillseq,readrandom")
    params = {k: getattr(args, k) for k in _FIELDS if getattr(args, k) is not None}
    threads = args.clients if args.clients is not None else args.threads
    if threads is not None:
        params["threads"] = threads
    if args.db is not None:
        params.update(db=args.db, keep_db=True, overwrite=args.overwrite)
    if args.use_existing_db:
        params["use_existing_db"] = True
    if args.resume:
        if args.db is None:
            raise errors.SpecError("--resume needs --db DIR, the database the interrupted load was writing")
        params["resume"] = True
    return make_spec(args.engine, workload, **params, **_engine_settings(args))


def handle(args) -> int:
    spec = spec_from_args(args)
    common.say(args, f"kvlab run: {spec.engine}, {','.join(spec.workloads)}, num={spec.num:,}, "
                     f"threads={spec.threads}, seed={spec.seed}")
    return common.execute(spec, args)
