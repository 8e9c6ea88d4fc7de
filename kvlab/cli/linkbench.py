"""`kvlab linkbench load|request|run`: LinkBench on a kvlab engine, with LinkBench's options.

LinkBench's own command line is `linkbench -c CONFIG -D name=value -l|-r`; here the phase is a word,
`-c FILE` reads a LinkBench .properties file, `-D name=value` sets any LinkBench property (repeatable),
and the common ones have flags under LinkBench's names (--maxid1, --requesters, --loaders, --requests,
--maxtime), plus kvlab's --intervals/--interval-seconds, --memory-limit and engine settings."""
from __future__ import annotations

import sys

from .. import engines, errors
from ..execution.orchestration.linkbench import as_loaded, run_linkbench
from ..model.workloads.linkbench import from_properties, read_properties
from . import common
from .parsing import add_running_options

FLAGS = ("maxid1", "startid1", "requesters", "loaders", "requests", "maxtime", "warmup_time", "intervals",
         "interval_seconds", "link_type_count", "seed")


NAME = "linkbench"
HELP = "LinkBench: load a social graph, then run its request mix"
# LinkBench's own property names; the value types are checked by the LinkBench model
_HELP = {"maxid1": "node ids run from startid1 to maxid1 (LinkBench's maxid1)", "startid1": "the first node id",
         "requesters": "request threads", "loaders": "load threads", "requests": "requests per requester "
         "(0: run by time)", "maxtime": "request phase length in s", "warmup_time": "seconds before measuring",
         "intervals": "the request phase as INTERVALS x interval_seconds (the seed: 12 x 1 hour)",
         "interval_seconds": "length of one interval in s", "link_type_count": "link types",
         "seed": "random seed (default: from the clock, printed and recorded)"}


def add_parser(sub, make):
    p = make(sub, NAME, help=HELP, description=__doc__)
    p.add_argument("phase", choices=("load", "request", "run"),
                   help="load: nodes, links, counts; request: the mix on a loaded --db; run: both")
    p.add_argument("--engine", default="lmdb", metavar="NAME",
                   help=f"engine configuration (default lmdb); one of: {', '.join(engines.REGISTRY)}")
    p.add_argument("-c", dest="config", default=None, metavar="FILE", help="a LinkBench .properties file")
    p.add_argument("-D", dest="props", action="append", default=[], metavar="NAME=VALUE",
                   help="a LinkBench property (addlink=10, read_shape=0.8, ...); repeatable")
    for name in FLAGS:
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, default=None, metavar="N", help=_HELP[name])
    p.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="run the phase in a memory cgroup of SIZE (512M, 2G): page cache and engine cache inside it")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help=f"any engine setting (repeatable): {', '.join(engines.ENGINE_SETTINGS)}")
    add_running_options(p, db_help="database directory, kept (request needs the one load made)", seed=False,
                        progress=False)
    return p


def handle(args) -> int:
    if args.phase == "request" and not args.db:
        raise errors.SpecError("kvlab linkbench request runs on a loaded graph: give --db DIR, the directory "
                               "`kvlab linkbench load --db DIR` loaded")
    common.preflight(args, args.db, args.phase == "request")
    return cmd_linkbench(args, lambda result, a: (common.output.warnings_once(result), common.finish(result, a))[1])


def cmd_linkbench(args, execute_result) -> int:
    props = read_properties(args.config) if args.config else {}
    for item in args.props:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise errors.SpecError(f"-D {item!r}: allowed: NAME=VALUE (a LinkBench property)")
        props[key.strip()] = value.strip()
    for name in FLAGS:
        if getattr(args, name) is not None:
            props[name] = getattr(args, name)
    config = from_properties(props)
    settings = dict(engines.parse_setting(s, "--set") for s in args.set)
    for note in config.notes:
        print(f"note: {note}", file=sys.stderr)
    bound = f"{config.requests:,} requests per requester" if config.requests else \
        f"{config.intervals} x {config.interval_seconds:g} s"
    shown = as_loaded(config, args.db)[0] if args.phase == "request" and args.db else config   # the graph it will use
    print(f"kvlab linkbench {args.phase}: {args.engine}, maxid1={shown.maxid1:,} ({shown.nodes:,} nodes), "
          f"loaders={config.loaders}, requesters={config.requesters}, {bound}"
          f"{f', memory_limit={args.memory_limit}' if args.memory_limit else ''}", flush=True)
    if args.overwrite:
        settings["overwrite"] = True
    result = run_linkbench(args.engine, config, args.phase, db=args.db, memory_limit=args.memory_limit, **settings)
    print_tables(result)
    return execute_result(result, args)


def print_tables(result):
    for b in result:
        a = b.accounting or {}
        if b.phase == "load" or b.workload == "linkbench-load":
            g = b.graph or {}
            print(f"load: {g.get('nodes_loaded', 0):,} nodes, {g.get('links_loaded', 0):,} links in {b.seconds:.1f} s "
                  f"({g.get('nodes_per_sec', 0):,.0f} nodes/s, {g.get('links_per_sec', 0):,.0f} links/s); "
                  f"DB {(a.get('db_size_bytes') or 0) / 1048576:.1f} MiB")
            continue
        m = b.mix or {}
        ivs = [iv for iv in b.intervals if "workers" in iv]
        nominal = max((iv["seconds"] for iv in ivs), default=0)
        full = [iv for iv in ivs if iv["seconds"] >= 0.5 * nominal]   # the sampler's last one may be a sliver
        rest = f" (and a last {ivs[-1]['seconds']:.2f} s remainder)" if len(full) < len(ivs) else ""
        print(f"request: {common.num(m.get('txn_per_sec', 0))} QPS over {b.seconds:.1f} s; per "
              f"{nominal:.3g} s interval: " + ", ".join(common.num(iv["workers"]["ops_per_sec"].get("txn", 0))
                                                     for iv in full) + rest)
        rows = [{"op": op, "count": t["count"], **{k: t["latency_us"].get(k) for k in
                                                     ("mean", "p50", "p95", "p99", "p999", "max")}}
                for op, t in m.get("templates", {}).items()]
        common.output.table(rows, [("op", "operation", "<"), ("count", "count", ">"), ("mean", "mean us", ">"),
                                   ("p50", "p50 us", ">"), ("p95", "p95 us", ">"), ("p99", "p99 us", ">"),
                                   ("p999", "p99.9 us", ">"), ("max", "max us", ">")])
        per = lambda k: a.get(k)  # noqa: E731
        fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        print(f"I/O per query: disk reads {fmt(per('disk_reads_per_op'))}, KB read {fmt(per('disk_kb_read_per_op'))}, "
              f"KB written {fmt(per('disk_kb_written_per_op'))}; DB {(a.get('db_size_bytes') or 0) / 1048576:.1f} MiB"
              + (f"; cgroup peak {a['cgroup_peak_bytes'] / 1048576:.0f} of {a['memory_limit_bytes'] / 1048576:.0f} MiB"
                 if a.get("cgroup_peak_bytes") else ""))
