"""`kvlab replay FILE --engine E`: a trace's operations run again on any engine (kvlab.execution.traces; the
format: docs/traces.md)."""
from __future__ import annotations

import argparse

from .. import engines, errors
from ..execution.traces import replay as traces
from . import common
from .parsing import add_running_options, count

NAME = "replay"
HELP = "replay a recorded trace (kvlab's, RocksDB's, a cache trace's CSV) on any engine"
DESCRIPTION = """Replay a trace on one engine: each recorded phase is one result, each recorded thread's
operations run in their order.  The trace is kvlab's (`kvlab run ... --record-trace FILE`), RocksDB's
(db_bench --trace_file) or a cache trace's CSV (cacheMon's: Twitter 2020, Meta KV 2022); --format says which,
else it is detected from the file's first bytes.  --speed recorded starts each operation at its recorded time
and measures its latency from that time (as the open loop does: a late start counts); max runs them back to
back; Nx at N times the recorded speed.  Keys are the recorded key indices (an imported trace's keys are
numbered in their byte order); values are generated, of the recorded sizes."""


def _speed(text):
    try:
        traces.parse_speed(text)
    except errors.SpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_parser(sub, make):
    r = make(sub, NAME, help=HELP, description=DESCRIPTION)
    r.add_argument("file", metavar="FILE", help="the trace")
    r.add_argument("--engine", default="lmdb", metavar="NAME",
                   help=f"engine configuration (default lmdb); one of: {', '.join(engines.REGISTRY)}")
    r.add_argument("--format", choices=traces.FORMATS, default=None,
                   help="the trace's format (default: detected: kvlab's magic, RocksDB's begin record, else CSV)")
    r.add_argument("--speed", type=_speed, default="recorded", metavar="recorded|max|Nx",
                   help="recorded (default): each op at its recorded time, latency from it; max: back to back; "
                        "Nx: N times the recorded speed (2x, 0.5x)")
    r.add_argument("--threads", type=count(1, 1024), default=None, metavar="N",
                   help="replay threads (default: as recorded); each recorded thread's ops keep their order")
    r.add_argument("--record-trace", default=None, metavar="FILE",
                   help="record the replay's own operations into FILE (kvlab's trace format)")
    r.add_argument("--interval", type=float, default=None, metavar="S",
                   help="time-series interval in s (default 1; 0: off)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help=f"any engine setting (repeatable): {', '.join(engines.ENGINE_SETTINGS)}")
    add_running_options(r, profile=True)
    return r


def spec_from_args(args):
    params = {}
    for key in ("seed", "record_trace", "interval", "db", "profile", "count"):
        if getattr(args, key, None) is not None:
            params[key] = getattr(args, key)
    if args.db is not None:
        params.update(keep_db=True, overwrite=args.overwrite)
    for item in args.set:
        key, value = engines.parse_setting(item, "--set")
        params[key] = value
    return traces.spec_for(args.file, args.engine, speed=args.speed, threads=args.threads, fmt=args.format,
                           **params)


def handle(args) -> int:
    spec = spec_from_args(args)
    r = spec.replay or {}
    common.say(args, f"kvlab replay: {r.get('path')} ({r.get('format')}) on {spec.engine}, speed {r.get('speed')}, "
                     f"threads={spec.threads}, seed={spec.seed}")
    return common.execute(spec, args)
