"""The workload model: a weighted mix of transaction templates, each an ordered list of
operations drawing keys from distributions, with a pacing mode.

Every way of writing a workload (mako's spec strings, YCSB's properties, a TOML file, the
Python API, the presets) compiles to a `Mix`; the native loop will execute a Mix and nothing
else, so a new workload is data, never a C function.

Transaction semantics, shaped so FoundationDB's maps onto them unchanged: a template runs as
one transaction; its reads see one snapshot, its writes are buffered and applied at commit,
which may conflict, and a conflicted transaction is retried from its start (up to
`max_retries`, with randomized backoff).  A template without writes is not committed, as
mako does, unless `commit_reads` is set (mako's --commitget).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from ... import errors
from .distributions import Distribution
from .distributions import distribution as make_distribution
from .rate import RateSchedule
from .rate import parse as parse_schedule
from .sizes import SCAN_DEFAULTS, Pareto, pareto


@dataclass(frozen=True)
class OpKind:
    name: str
    description: str
    reads: bool = False
    writes: bool = False
    ranged: bool = False          # takes a length
    new_keys: bool = False        # extends the key space
    graph: bool = False           # a LinkBench operation on the graph (kv_graph.h); needs the mix's graph
    alone: str | None = None      # the transaction it needs as a template's only op: none, read, write
                                  # (None: decided from reads/writes, as for key-value ops)


OP_KINDS: dict[str, OpKind] = {k.name: k for k in (
    OpKind("get", "read one key", reads=True),
    OpKind("put", "blind write of an existing key (YCSB's update, mako's o)", writes=True),
    OpKind("insert", "write a new key: the key space grows by one", writes=True, new_keys=True),
    OpKind("delete", "remove one key (mako's c)", writes=True),
    OpKind("rmw", "read a key, then write it (YCSB's read-modify-write, mako's u)", reads=True, writes=True),
    OpKind("range", "read the keys in [k, k + length) (mako's gr; a negative length reads backwards)",
           reads=True, ranged=True),
    OpKind("scan", "read the next `length` entries from key k (YCSB's scan)", reads=True, ranged=True),
    OpKind("clear_range", "remove the keys in [k, k + length) (mako's cr)", writes=True, ranged=True),
    # LinkBench's operations on its graph (kvlab.model.workloads.linkbench; the encoding is kv_graph.h's)
    OpKind("get_node", "LinkBench: read a node", reads=True, graph=True, alone="none"),
    OpKind("add_node", "LinkBench: add a node with a new id", writes=True, new_keys=True, graph=True, alone="none"),
    OpKind("update_node", "LinkBench: read a node and write it with new data and version", reads=True, writes=True,
           graph=True, alone="write"),
    OpKind("delete_node", "LinkBench: remove a node", writes=True, graph=True, alone="none"),
    OpKind("get_link", "LinkBench: read one link (id1, type, id2)", reads=True, graph=True, alone="none"),
    OpKind("add_link", "LinkBench: add a link (or revive/update it) and count it, in one transaction", reads=True,
           writes=True, graph=True, alone="write"),
    OpKind("update_link", "LinkBench: update a link (an upsert, as add_link), in one transaction", reads=True,
           writes=True, graph=True, alone="write"),
    OpKind("delete_link", "LinkBench: hide a visible link and count it out, in one transaction", reads=True,
           writes=True, graph=True, alone="write"),
    OpKind("count_link", "LinkBench: read the link count of (id1, type)", reads=True, graph=True, alone="none"),
    OpKind("multiget_link", "LinkBench: read several links of one (id1, type) from one snapshot", reads=True,
           graph=True, alone="read"),
    OpKind("get_links_list", "LinkBench: the newest links of (id1, type), one short range read", reads=True,
           graph=True, alone="read"),
)}
GRAPH_OPS = tuple(k for k, v in OP_KINDS.items() if v.graph)   # mixplan maps them to the C core's codes by name

# YCSB's scanlengthdistribution, plus fixed, plus mixgraph's generalized Pareto (length_pareto; lengths from 0)
LENGTH_DISTRIBUTIONS = ("constant", "uniform", "zipfian", "pareto")
ARRIVALS = ("uniform", "poisson")


@dataclass(frozen=True)
class Op:
    """One operation of a template, done `count` times in a row."""
    kind: str
    count: int = 1
    length: int | None = None            # range/scan/clear_range: keys (the maximum when drawn)
    min_length: int = 1                  # the least length when drawn
    length_distribution: str = "constant"
    distribution: Distribution | None = None   # None: the mix's distribution
    snapshot: bool = False               # a snapshot read (FDB: no read conflict); reads only
    length_pareto: Pareto | None = None  # length_distribution "pareto": its k, sigma, theta (default db_bench's
                                         # iter_k, iter_sigma, iter_theta); `length` bounds it as mix_max_scan_len

    def __post_init__(self):
        kind = OP_KINDS.get(self.kind)
        if kind is None:
            raise errors.SpecError(f"operation {self.kind!r} is unknown; allowed: {', '.join(OP_KINDS)}")
        _int("count", self.count, 1, 1_000_000, f"operation {self.kind}")
        if kind.ranged:
            if self.length is None:
                raise errors.SpecError(f"operation {self.kind} needs a length (keys to read or remove)")
            if isinstance(self.length, bool) or not isinstance(self.length, int) or self.length == 0 \
                    or abs(self.length) > 10_000_000:
                raise errors.SpecError(f"operation {self.kind}: length={self.length!r} is out of range; allowed: "
                                       "a nonzero integer up to 10,000,000 in size (negative: backwards)")
            if self.length < 0 and self.kind != "range":
                raise errors.SpecError(f"operation {self.kind}: a negative length (backwards) is for range only")
            if self.length_distribution not in LENGTH_DISTRIBUTIONS:
                raise errors.SpecError(f"operation {self.kind}: length distribution {self.length_distribution!r} "
                                       f"is unknown; allowed: {', '.join(LENGTH_DISTRIBUTIONS)}")
            pareto_lengths = self.length_distribution == "pareto"
            _int("min_length", self.min_length, 0 if pareto_lengths else 1, abs(self.length), f"operation {self.kind}")
            if pareto_lengths:
                object.__setattr__(self, "length_pareto", pareto(self.length_pareto or {}, SCAN_DEFAULTS,
                                                                 f"operation {self.kind}: length_pareto"))
                if self.length < 0:
                    raise errors.SpecError(f"operation {self.kind}: a Pareto length is read forwards; allowed: a "
                                           "positive length (its bound)")
            elif self.length_pareto is not None:
                raise errors.SpecError(f"operation {self.kind}: length_pareto applies to length_distribution "
                                       "\"pareto\" only")
        elif self.length is not None or self.length_distribution != "constant" or self.length_pareto is not None:
            raise errors.SpecError(f"operation {self.kind} takes no length; only "
                                   f"{', '.join(k for k, v in OP_KINDS.items() if v.ranged)} do")
        if self.snapshot and not (kind.reads and not kind.writes):
            raise errors.SpecError(f"operation {self.kind}: snapshot applies to reads (get, range, scan) only")
        if self.distribution is not None and not isinstance(self.distribution, Distribution):
            object.__setattr__(self, "distribution", make_distribution(self.distribution))

    @property
    def info(self) -> OpKind:
        return OP_KINDS[self.kind]

    def describe(self) -> str:
        s = f"{self.kind}x{self.count}" if self.count > 1 else self.kind
        if self.length_pareto is not None:
            s += f":{self.length_pareto.describe()}({self.min_length}..{self.length})"
        elif self.length is not None:
            s += f":{self.length}" if self.length_distribution == "constant" else \
                f":{self.length_distribution}({self.min_length}..{self.length})"
        if self.distribution is not None:
            s += f"@{self.distribution.describe()}"
        return ("snapshot " if self.snapshot else "") + s


@dataclass(frozen=True)
class Template:
    """A transaction: its ops in order, and its weight in the mix."""
    name: str
    ops: tuple
    weight: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "ops", tuple(self.ops))
        if not self.name or not isinstance(self.name, str):
            raise errors.SpecError(f"a template needs a name, got {self.name!r}")
        if not self.ops:
            raise errors.SpecError(f"template {self.name!r} has no operations")
        for op in self.ops:
            if not isinstance(op, Op):
                raise errors.SpecError(f"template {self.name!r}: {op!r} is not an Op")
        if isinstance(self.weight, bool) or not isinstance(self.weight, (int, float)) or \
                not math.isfinite(self.weight) or self.weight <= 0:
            raise errors.SpecError(f"template {self.name!r}: weight={self.weight!r} is out of range; "
                                   "allowed: a number > 0")

    @property
    def writes(self) -> bool:
        return any(op.info.writes for op in self.ops)

    @property
    def ops_per_txn(self) -> int:
        return sum(op.count for op in self.ops)

    def describe(self) -> str:
        return " ".join(op.describe() for op in self.ops)


@dataclass(frozen=True)
class Pacing:
    """Closed loop (target_rate 0 and no schedule: each client starts its next transaction when one ends), or
    open loop: transactions start on a schedule fixed in advance, `target_rate` per second in total (or per
    client), or a rate that varies in time (`schedule`: kvlab.model.workloads.rate), evenly spaced or as
    Poisson arrivals; latency is then also measured from the intended start (response time), not only from
    the actual one (service time)."""
    target_rate: float = 0.0
    per_client: bool = False
    arrivals: str = "uniform"
    schedule: RateSchedule | None = None   # the target over time (in total, or per client), instead of target_rate

    def __post_init__(self):
        r = self.target_rate
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or not 0 <= r <= 1e9:
            raise errors.SpecError(f"target_rate={r!r} is out of range; allowed: 0 (closed loop) to 1e9 "
                                   "transactions/s")
        if self.arrivals not in ARRIVALS:
            raise errors.SpecError(f"arrivals {self.arrivals!r} is unknown; allowed: {', '.join(ARRIVALS)}")
        if self.schedule is not None:
            object.__setattr__(self, "schedule", parse_schedule(self.schedule))
            if r:
                raise errors.SpecError(f"pacing: give target_rate ({r:g}) or a rate schedule "
                                       f"({self.schedule.to_text()}), not both")

    @property
    def open_loop(self) -> bool:
        return self.target_rate > 0 or self.schedule is not None

    def to_dict(self) -> dict:
        return {"target_rate": self.target_rate, "per_client": self.per_client, "arrivals": self.arrivals,
                **({"schedule": self.schedule.to_text()} if self.schedule is not None else {})}

    def describe(self) -> str:
        if not self.open_loop:
            return "closed loop"
        rate = self.schedule.describe() if self.schedule is not None else f"{self.target_rate:g} txn/s"
        return f"open loop {rate}{' per client' if self.per_client else ''} ({self.arrivals})"


@dataclass(frozen=True)
class Mix:
    """A workload: weighted transaction templates, the default key distribution, pacing, and what
    the source said about the data set and the run (None: the RunSpec decides)."""
    name: str
    templates: tuple
    distribution: Distribution = field(default_factory=Distribution)
    pacing: Pacing = field(default_factory=Pacing)
    record_count: int | None = None        # keys loaded before the run (a run's num unless given)
    operation_count: int | None = None     # transactions in the run, all clients together (None: the RunSpec's)
    threads: int | None = None             # clients the source runs (YCSB's threadcount; None: the RunSpec's)
    duration: float | None = None          # seconds the run lasts (YCSB's maxexecutiontime; None: by count)
    value_size: tuple | None = None        # (min, max) bytes, drawn uniformly; None: the RunSpec's
    value_pareto: Pareto | None = None     # value sizes from a generalized Pareto within value_size (mixgraph)
    insert_order: str = "ordered"          # ordered: new keys follow the last; hashed: YCSB's scattered keys
    commit_reads: bool = False             # commit read-only transactions too (mako's --commitget)
    max_retries: int = 100                 # a conflicted transaction is retried from its start
    run_defaults: Mapping[str, object] = field(default_factory=dict)   # clients, duration, cpus a preset implies
    source: str = "python"                 # how it was written: mako:..., ycsb:..., toml:..., preset
    description: str = ""
    notes: tuple = ()                      # what kvlab did with what the source said (unused, applied)
    graph: Mapping | None = None           # LinkBench's graph (linkbench.LinkBench.graph_plan) for its ops

    def __post_init__(self):
        object.__setattr__(self, "templates", tuple(self.templates))
        if self.graph is None and any(op.info.graph for t in self.templates for op in t.ops):
            raise errors.SpecError(f"workload {self.name!r}: LinkBench operations ({', '.join(GRAPH_OPS)}) need a "
                                   "graph; build the workload with kvlab.model.workloads.linkbench (kvlab linkbench)")
        object.__setattr__(self, "notes", tuple(self.notes))
        if not self.templates:
            raise errors.SpecError(f"workload {self.name!r} has no templates")
        names = [t.name for t in self.templates]
        if len(set(names)) != len(names):
            raise errors.SpecError(f"workload {self.name!r}: template names repeat: {', '.join(names)}")
        if not isinstance(self.distribution, Distribution):
            object.__setattr__(self, "distribution", make_distribution(self.distribution))
        for key, lo, hi in (("record_count", 1, 10**15), ("operation_count", 1, 10**15), ("threads", 1, 1024)):
            v = getattr(self, key)
            if v is not None:
                _int(key, v, lo, hi, f"workload {self.name!r}")
        d = self.duration
        if d is not None and (isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 < d <= 7 * 24 * 3600):
            raise errors.SpecError(f"workload {self.name!r}: duration={d!r} is out of range; allowed: seconds, "
                                   "more than 0 and up to 604,800 (a week), or none (the run goes by count)")
        if self.value_size is not None:
            vs = self.value_size
            if isinstance(vs, int) and not isinstance(vs, bool):
                vs = (vs, vs)
            if not (isinstance(vs, (tuple, list)) and len(vs) == 2 and all(isinstance(x, int) for x in vs)
                    and 1 <= vs[0] <= vs[1] <= 64 << 20):
                raise errors.SpecError(f"workload {self.name!r}: value_size={self.value_size!r}; allowed: bytes as "
                                       "an integer or a (min, max) pair, 1 <= min <= max <= 64 MiB")
            object.__setattr__(self, "value_size", tuple(vs))
        if self.value_pareto is not None:
            object.__setattr__(self, "value_pareto", pareto(self.value_pareto, where=f"workload {self.name!r}: "
                                                                                     "value_pareto"))
            if self.value_size is None:
                raise errors.SpecError(f"workload {self.name!r}: value_pareto needs value_size, the (min, max) bytes "
                                       "it is held to (db_bench's mixgraph: [10, mix_max_value_size])")
        if self.insert_order not in ("ordered", "hashed"):
            raise errors.SpecError(f"insert_order {self.insert_order!r} is unknown; allowed: ordered, hashed")
        _int("max_retries", self.max_retries, 0, 1_000_000, f"workload {self.name!r}")

    def check_runnable(self):
        """Raise SpecError for what the model holds but the native loop (execution/run/mixplan.py) cannot run yet,
        so a run is refused when its spec is made, before any database is touched."""
        for t in self.templates:
            for op in t.ops:
                if op.length is not None and op.length < 0:
                    raise errors.SpecError(f"workload {self.name!r}, template {t.name!r}: a backwards range "
                                           f"({op.describe()}) is not supported by the native loop yet; allowed: "
                                           "a positive length (e.g. gr1:50)")

    @property
    def weights(self) -> list:
        total = sum(t.weight for t in self.templates)
        return [t.weight / total for t in self.templates]

    @property
    def writes(self) -> bool:
        return any(t.writes for t in self.templates)

    def describe(self) -> str:
        """One line: the templates with their shares, the distribution, the pacing."""
        parts = [f"{w:.0%} {t.name} [{t.describe()}]" if len(self.templates) > 1 else f"[{t.describe()}]"
                 for w, t in zip(self.weights, self.templates)]
        values = f"; values {self.value_pareto.describe()} in {self.value_size}" if self.value_pareto else ""
        return f"{', '.join(parts)}; keys {self.distribution.describe()}{values}; {self.pacing.describe()}"

    def to_dict(self) -> dict:
        def op_dict(op):
            d = {"kind": op.kind, "count": op.count}
            if op.length is not None:
                d.update(length=op.length, min_length=op.min_length, length_distribution=op.length_distribution)
            if op.distribution is not None:
                d["distribution"] = op.distribution.to_dict()
            if op.snapshot:
                d["snapshot"] = True
            if op.length_pareto is not None:
                d["length_pareto"] = op.length_pareto.to_dict()
            return d
        return {
            "name": self.name, "source": self.source,
            "templates": [{"name": t.name, "weight": t.weight, "ops": [op_dict(o) for o in t.ops]}
                          for t in self.templates],
            "distribution": self.distribution.to_dict(),
            "pacing": self.pacing.to_dict(),
            "record_count": self.record_count, "operation_count": self.operation_count,
            "threads": self.threads, "duration": self.duration,
            "value_size": list(self.value_size) if self.value_size else None,
            **({"value_pareto": self.value_pareto.to_dict()} if self.value_pareto is not None else {}),
            "insert_order": self.insert_order,
            "commit_reads": self.commit_reads, "max_retries": self.max_retries,
            "run_defaults": dict(self.run_defaults), "notes": list(self.notes),
            **({"graph": dict(self.graph)} if self.graph is not None else {}),
        }


def _int(name, value, lo, hi, where):
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise errors.SpecError(f"{where}: {name}={value!r} is out of range; allowed: an integer from {lo:,} to {hi:,}")
