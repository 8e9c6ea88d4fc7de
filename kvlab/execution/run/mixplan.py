"""A Mix (kvlab.model.workloads.mix) compiled into the flat tables the native generic loop runs
(kv_mix in cython_ext/include/kv_driver.h): templates with cumulative weights, their ops in
order, the distinct key distributions.  Each row is a named record (MixTxn, MixOp, MixDist: the
fields of kv_mix_txn, kv_mix_op, kv_mix_dist); the codes in them come from the C core's tables
(kvlab._native: OP_TYPES, GRAPH_OPS, DISTRIBUTION_CODES, LENGTH_CODES, TEMPLATE_TXN_KINDS)."""
from __future__ import annotations

from dataclasses import astuple
from typing import NamedTuple

from ... import errors
from ...model.workloads.mix import GRAPH_OPS, OP_KINDS, Mix
from .. import native

# the model's op kinds -> the driver's op types (their histograms are named by these)
OPTYPE_OF_KIND = {"get": "read", "put": "write", "delete": "delete", "insert": "insert", "rmw": "rmw",
                  "range": "range", "scan": "scan", "clear_range": "clear_range",
                  **{k: "graph" for k in GRAPH_OPS}}

BLIND_WRITES = {"put", "insert", "delete"}


class MixTxn(NamedTuple):
    """A template (kv_mix_txn): its ops are ops[first:first + nops]."""
    first: int
    nops: int
    txn: int            # enum kv_txn_kind: none, read or write (txn_kind)
    simple: int         # one op, once, whose op type no other template has (compile_mix)
    cum: float          # cumulative weight: the template is picked when a uniform draw is below it


class MixOp(NamedTuple):
    """One op of a template (kv_mix_op)."""
    optype: int         # enum kv_optype
    count: int          # times in a row
    dist: int           # index into the plan's dists
    length: int         # range, scan, clear_range: keys (the most, when drawn)
    min_length: int
    length_dist: int    # enum kv_length_dist
    graph_op: int       # enum kv_graph_op, for optype graph; else 0
    len_k: float = 0.0      # length_dist pareto: the generalized Pareto's k, sigma, theta
    len_sigma: float = 0.0
    len_theta: float = 0.0


class MixDist(NamedTuple):
    """A key distribution (kv_mix_dist), as kv_dist_init takes it."""
    kind: int           # enum kv_dist_kind
    theta: float
    hot_fraction: float
    hot_ops: float
    percentile: float
    frac: float
    expected_inserts: int
    range_cum: tuple | None = None   # two-term-exp: the key ranges' cumulative shares (distributions.range_shares)
    key_a: float = 0.0               # two-term-exp: the power law within a range
    key_b: float = 0.0


def txn_kind(template) -> int:
    """How the native loop runs a template (enum kv_txn_kind): a single get or a single blind write needs
    no transaction (one op is atomic by itself), reads of more than one key or a range read run in a
    read transaction (one snapshot), anything else that writes in a write transaction."""
    return native.load().TEMPLATE_TXN_KINDS[txn_kind_name(template)]


def txn_kind_name(template) -> str:
    """txn_kind's answer by name: "none", "read" or "write"."""
    single = len(template.ops) == 1 and template.ops[0].count == 1
    kind = template.ops[0].kind
    if single and OP_KINDS[kind].alone is not None:   # an op that says what it needs (LinkBench's)
        return OP_KINDS[kind].alone
    if template.writes:
        return "none" if single and kind in BLIND_WRITES else "write"
    return "none" if single and kind == "get" else "read"


def needs_transactions(mix: Mix) -> bool:
    """Whether a run of `mix` opens write transactions (RocksDB then opens an OptimisticTransactionDB)."""
    return any(txn_kind_name(t) == "write" for t in mix.templates)


def compile_mix(mix: Mix, value_size: int, clients: int = 1, target_rate: float = 0.0) -> dict:
    """The plan `_native.Run(engine, "mix", params, mix=plan)` takes; `value_size` is used when
    the mix gives none.  `target_rate` (transactions/s in total, split evenly over `clients`)
    replaces the mix's own pacing; 0 keeps it."""
    lib = native.load()
    optypes = {name: i for i, name in enumerate(lib.OP_TYPES)}
    graph_ops = {name: i for i, name in enumerate(lib.GRAPH_OPS)}
    dists, dist_index = [], {}

    def dist_id(d) -> int:
        key = (d.name, tuple(sorted(d.params.items())))
        if key not in dist_index:
            a = d.native_args()
            dist_index[key] = len(dists)
            dists.append(MixDist(lib.DISTRIBUTION_CODES[d.name], a["theta"], a["hot_fraction"], a["hot_ops"],
                                 a["exp_percentile"], a["exp_frac"], a["expected_inserts"], a["range_cum"],
                                 a["key_a"], a["key_b"]))
        return dist_index[key]

    default = dist_id(mix.distribution)
    txns, ops, cum = [], [], 0.0
    for weight, t in zip(mix.weights, mix.templates):
        first = len(ops)
        for op in t.ops:
            if op.length is not None and op.length < 0:
                raise errors.SpecError(f"template {t.name!r}: a backwards range ({op.describe()}) is not supported by "
                                       "the native loop yet; use a positive length")
            ops.append(MixOp(optypes[OPTYPE_OF_KIND[op.kind]], op.count,
                             default if op.distribution is None else dist_id(op.distribution),
                             op.length or 0, op.min_length if op.length else 0,
                             lib.LENGTH_CODES[op.length_distribution],
                             graph_ops[op.kind] if op.info.graph else 0,
                             *(astuple(op.length_pareto) if op.length_pareto is not None else (0.0, 0.0, 0.0))))
        cum += weight
        txns.append(MixTxn(first, len(t.ops), lib.TEMPLATE_TXN_KINDS[txn_kind_name(t)], 0, cum))
    txns[-1] = txns[-1]._replace(cum=1.0)   # the last template takes whatever rounding left
    # simple: a template of one op, once, whose op type no other template has; it runs in the transaction
    # that op needs alone (a scan's snapshot, a read-modify-write's write), and the op's latency includes
    # its begin and commit, as a YCSB binding's call does; the loop records only that op's histogram and
    # the template's is the same one
    kinds_used = [{ops[i].optype for i in range(t.first, t.first + t.nops)} for t in txns]
    for ti, t in enumerate(txns):
        others = set().union(*(k for j, k in enumerate(kinds_used) if j != ti))
        if t.nops == 1 and ops[t.first].count == 1 and ops[t.first].optype not in others:
            txns[ti] = t._replace(simple=1)
    vmin, vmax = mix.value_size or (value_size, value_size)
    pacing = mix.pacing
    rate, per_client = (target_rate, False) if target_rate else (pacing.target_rate, pacing.per_client)
    schedule = pacing.schedule if not target_rate else None
    share = 1.0 if per_client else 1.0 / max(1, clients)
    if schedule is not None:   # the mean rate stands for the schedule in the record; the loop follows the table
        rate = schedule.mean_rate()
    per_client_rate = rate * share
    return {"txns": txns, "ops": ops, "dists": dists, "value_min": vmin, "value_max": vmax,
            "max_retries": mix.max_retries, "template_names": [t.name for t in mix.templates],
            "template_txn": {t.name: txn_kind_name(t) for t in mix.templates},
            "graph": dict(mix.graph) if mix.graph is not None else None,
            "interval_ns": 1e9 / per_client_rate if rate else 0.0, "poisson": int(pacing.arrivals == "poisson"),
            "value_pareto": astuple(mix.value_pareto) if mix.value_pareto is not None else None,
            "rate": schedule.compile(share) if schedule is not None else None,
            "pacing": {"mode": "open" if rate else "closed", "target_rate": rate * (clients if per_client else 1),
                       "per_client_rate": per_client_rate, "arrivals": pacing.arrivals if rate else None,
                       **({"schedule": schedule.to_text(), "schedule_per_client": per_client,
                           "clients": clients} if schedule is not None else {})}}
