"""`kvlab ycsb`: a YCSB workload file run as YCSB runs it, with YCSB's own flags (-P, -p, -threads,
-target, -load, -t, -s), on a kvlab engine.

YCSB's workflow is two commands on one database: `-load` inserts the records, `-t` runs the
transactions on what was loaded.  Here `-load --db DIR` keeps the loaded database in DIR and
`-t --db DIR` runs on it; without either, one command loads a temporary database and runs on it."""
from __future__ import annotations

import sys

from .. import engines, errors
from ..model.spec import make_spec
from ..model.workloads.ycsb import from_ycsb
from . import common
from .parsing import add_running_options, amount, count

NAME = "ycsb"
HELP = "run a YCSB workload file as is: kvlab ycsb -P workloada -p recordcount=100000"


def add_parser(sub, make):
    y = make(sub, NAME, help=HELP, description=__doc__)
    y.add_argument("-P", action="append", default=[], metavar="FILE",
                   help="a YCSB workload (properties) file; repeatable. workloada ... workloadf with no such file "
                        "here: YCSB 0.17.0's own")
    y.add_argument("-p", action="append", default=[], metavar="NAME=VALUE",
                   help="a property, over the files' (repeatable): recordcount, operationcount, threadcount, "
                        "target, maxexecutiontime, readproportion, requestdistribution, ...")
    phase = y.add_mutually_exclusive_group()
    phase.add_argument("-load", dest="load", action="store_true",
                       help="load phase only: insert recordcount records into --db DIR (kept)")
    phase.add_argument("-t", dest="transactions", action="store_true",
                       help="transaction phase: with --db DIR holding a loaded database, run on it as it is; "
                            "without --db, load a temporary database first")
    y.add_argument("-threads", "--threads", dest="threads", type=count(1, 1024), default=None, metavar="N",
                   help="client threads (YCSB's -threads; default: the file's threadcount, else 1)")
    y.add_argument("-target", "--target", dest="target", type=amount(0), default=None, metavar="OPS_PER_SEC",
                   help="transactions/s in total, open loop (YCSB's -target; default: the file's target, else "
                        "closed loop)")
    y.add_argument("-s", dest="status", action="store_true",
                   help="show progress on stderr while it runs (YCSB's status; same as --progress on)")
    y.add_argument("--engine", default="lmdb", metavar="NAME",
                   help=f"engine configuration (default lmdb); one of: {', '.join(engines.REGISTRY)}")
    y.add_argument("--duration", type=amount(0, 1e7), default=None, metavar="S",
                   help="seconds; > 0 runs by time, not operationcount (default: the file's maxexecutiontime)")
    add_running_options(y, trace=True, profile=True)
    return y


def handle(args) -> int:
    if args.load and args.db is None:
        raise errors.SpecError("kvlab ycsb -load needs --db DIR: the database it loads is kept there for "
                               "`kvlab ycsb -t --db DIR`")
    mix = from_ycsb(args.P, args.p)
    for note in mix.notes:
        print(f"note: {note}", file=sys.stderr)
    existing = bool(args.transactions and args.db is not None)
    params = {k: v for k, v in (("threads", args.threads), ("target_rate", args.target),
                                ("duration", args.duration), ("seed", args.seed),
                                ("record_trace", args.record_trace)) if v is not None}
    if args.profile:
        params["profile"] = True
    if args.count:
        params["count"] = args.count
    if args.db is not None:
        params.update(db=args.db, keep_db=True, use_existing_db=existing, overwrite=args.overwrite)
    spec = make_spec(args.engine, mix.name, mixes={mix.name: mix}, **params)
    if args.status:
        args.progress = "on"
    what = "load" if args.load else "transactions on the existing database" if existing else "load, then run"
    common.say(args, f"kvlab ycsb ({what}): {spec.engine}, {mix.describe()}; recordcount={spec.num}, "
                     f"operationcount={spec.reads_per_thread * spec.threads}, clients={spec.threads}, "
                     f"seed={spec.seed}")
    return common.execute(spec, args, load_only=args.load)
