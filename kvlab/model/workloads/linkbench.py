"""LinkBench (facebookarchive/linkbench) as data: its graph, its load and its request mix.

A `LinkBench` holds LinkBench's settings under LinkBench's property names (maxid1, startid1,
link_type_count, requesters, loaders, requests, maxtime, warmup_time, the ten mix weights addlink ...
deletenode, the id1 skew shapes, payload sizes, multiget size) with LinkBench's defaults, except the
scale (`maxid1`) and the run length, which kvlab scales to a laptop.  It compiles to
- the graph the native core loads and queries (`graph_plan()`, kv_graph.h: one encoding for every
  engine, the out-degrees, payload sizes, which links exist), and
- a `Mix` of ten templates, one per operation, weighted as LinkBench's request mix, each drawing its
  node from LinkBench's skew (a zipfian over the node ids, shuffled so hot ids are spread out).

Where kvlab departs from LinkBench, on purpose (also in `notes` of every run):
- out-degrees at load follow a power law P(d) ~ (d + 1)^-nlinks_shape, d <= nlinks_max (LinkBench's
  default is an empirical table from Facebook, `nlinks_func = real`; shape 2 gives a mean near 5);
- popular ids are not also the high-degree ids (LinkBench correlates 0.5% of link reads and 5% of
  link writes that way; kvlab draws all of them uncorrelated);
- get_links_list never runs LinkBench's history queries (getlinklist_history, 0.3% of lists).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from ... import errors
from .distributions import Distribution
from .mix import GRAPH_OPS, Mix, Op, Template

# LinkBench's request mix property -> the operation (config/FBWorkload.properties' percentages)
MIX_PROPERTIES = {
    "getnode": "get_node", "addnode": "add_node", "updatenode": "update_node", "deletenode": "delete_node",
    "getlink": "get_link", "addlink": "add_link", "updatelink": "update_link", "deletelink": "delete_link",
    "countlink": "count_link", "multigetlink": "multiget_link", "getlinklist": "get_links_list",
}
DEFAULT_MIX = {   # LinkBench's FBWorkload.properties (percent); multiget_link is not in its default mix
    "addlink": 8.9886601, "deletelink": 2.9907664, "updatelink": 8.0122125, "countlink": 4.8863567,
    "getlink": 0.5261142, "getlinklist": 50.7119145, "getnode": 12.9326683, "addnode": 2.5732789,
    "updatenode": 7.366437, "deletenode": 1.0115914, "multigetlink": 0.0,
}
# which skew each operation's id1 follows (LinkBench: read_*, write_*, node_read_*, node_update_*, node_delete_*)
OP_SKEW = {
    "get_link": "read_shape", "count_link": "read_shape", "multiget_link": "read_shape",
    "get_links_list": "read_shape", "add_link": "write_shape", "update_link": "write_shape",
    "delete_link": "write_shape", "get_node": "node_read_shape", "update_node": "node_update_shape",
    "delete_node": None, "add_node": None,    # LinkBench: node deletes uniform; adds take new ids
}
# LinkBench's id2 chooser: the chance a link op's id2 is a link that exists at load
P_EXISTS = {"get_link": 0.5, "multiget_link": 0.5, "add_link": 0.05, "update_link": 0.9, "delete_link": 0.9}
# LinkBench properties kvlab reads but does not use (they shape LinkBench's own reporting or MySQL)
IGNORED = ("displayfreq", "progressfreq", "maxsamples", "getlinklist_history", "req_progress_interval",
           "load_progress_interval", "max_failed_requests", "requestrate", "generate_nodes", "id2gen_config",
           "randomid2max", "read_function", "write_function", "node_read_function", "node_update_function",
           "node_delete_function", "read_uncorr_function", "write_uncorr_function", "read_uncorr_blend",
           "write_uncorr_blend", "read_uncorr_shape", "write_uncorr_shape", "nlinks_func", "nlinks_config",
           "nlinks_default", "link_multiget_dist", "link_multiget_dist_min", "loader_chunk_size",
           "mysql_bulk_insert_batch", "link_datagen", "node_datagen", "link_datagen_startbyte",
           "link_datagen_endbyte", "link_datagen_uniqueness", "link_datagen_motif_length",
           "node_datagen_startbyte", "node_datagen_endbyte", "node_datagen_uniqueness",
           "node_datagen_motif_length", "store", "dbid", "host", "user", "password", "port", "tablename",
           "counttable", "nodetable", "workload_file", "link_add_datagen", "link_up_datagen",
           "node_add_datagen", "node_up_datagen", "debuglevel")


@dataclass(frozen=True)
class LinkBench:
    """LinkBench's settings (its property names); validated on construction."""
    maxid1: int = 100_001              # LinkBench: 10,000,001 (about 1 GB per 1M ids in MySQL)
    startid1: int = 1
    link_type_count: int = 2
    loaders: int = 2                   # LinkBench: 10
    requesters: int = 12               # the seed's 12 clients (LinkBench: 100)
    requests: int | None = None        # per requester; None: bounded by maxtime (LinkBench: 500,000)
    maxtime: float = 60.0              # seconds of the request phase (LinkBench: 100,000)
    warmup_time: float = 0.0
    intervals: int = 12                # the seed's 12 one-hour intervals, scaled: intervals x interval_seconds
    interval_seconds: float = 5.0
    range_limit: int = 10_000          # LinkStore.DEFAULT_LIMIT
    mix: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    read_shape: float = 0.8
    write_shape: float = 0.741
    node_read_shape: float = 0.625
    node_update_shape: float = 0.606
    nlinks_shape: float = 2.0          # kvlab's power law for out-degrees at load (see the module)
    nlinks_max: int = 10_000
    link_datasize: float = 8.0         # log-normal medians (bytes), sigma datasize_sigma
    node_datasize: float = 128.0
    datasize_sigma: float = 1.0
    link_datasize_max: int = 255       # LinkBench's MAX_LINK_DATA
    link_multiget_dist_prob: float = 0.382    # geometric number of id2s in [1, link_multiget_dist_max)
    link_multiget_dist_max: int = 128
    load_batch: int = 1024             # writes per load batch (LinkBench's MySQL bulk insert: 1024 rows)
    seed: int = 1
    notes: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "notes", tuple(self.notes))
        _int("startid1", self.startid1, 0, 2 ** 62)
        _int("maxid1", self.maxid1, self.startid1 + 1, 2 ** 62)
        for name, lo, hi in (("link_type_count", 1, 1000), ("loaders", 1, 1024), ("requesters", 1, 4096),
                             ("intervals", 1, 100_000), ("range_limit", 1, 10_000_000), ("nlinks_max", 0, 10_000_000),
                             ("link_datasize_max", 1, 255), ("link_multiget_dist_max", 2, 128),
                             ("load_batch", 1, 1_000_000), ("seed", 0, 2 ** 63)):
            _int(name, getattr(self, name), lo, hi)
        if self.requests is not None:
            _int("requests", self.requests, 1, 10 ** 12)
        for name, lo, hi, lo_open in (("maxtime", 0.0, 1e7, False), ("warmup_time", 0.0, 1e7, False),
                                      ("interval_seconds", 0.0, 1e6, True), ("read_shape", 0.0, 100.0, True),
                                      ("write_shape", 0.0, 100.0, True), ("node_read_shape", 0.0, 100.0, True),
                                      ("node_update_shape", 0.0, 100.0, True), ("nlinks_shape", 0.0, 100.0, True),
                                      ("link_datasize", 1.0, 255.0, False), ("node_datasize", 1.0, 65536.0, False),
                                      ("datasize_sigma", 0.0, 10.0, False),
                                      ("link_multiget_dist_prob", 0.0, 1.0, True)):
            _num(name, getattr(self, name), lo, hi, lo_open)
        if not isinstance(self.mix, Mapping):
            raise errors.SpecError(f"linkbench mix={self.mix!r}: allowed: a mapping of {', '.join(MIX_PROPERTIES)} "
                                   "to percentages")
        full = dict(DEFAULT_MIX)
        for k, v in self.mix.items():
            if k not in MIX_PROPERTIES:
                raise errors.SpecError(f"linkbench mix: {k!r} is not an operation; allowed: "
                                       f"{', '.join(MIX_PROPERTIES)}")
            _num(k, v, 0.0, 100.0, False)
            full[k] = float(v)
        if sum(full.values()) <= 0:
            raise errors.SpecError("linkbench mix: every operation has weight 0; give at least one a weight > 0")
        object.__setattr__(self, "mix", full)

    @property
    def nodes(self) -> int:
        """Node ids loaded: startid1 .. maxid1 - 1."""
        return self.maxid1 - self.startid1

    @property
    def duration(self) -> float:
        """The request phase: intervals x interval_seconds when bounded by time."""
        return self.intervals * self.interval_seconds

    def graph_plan(self) -> dict:
        """The graph the native core loads and queries (kv_graph in cython_ext/include/kv_graph.h)."""
        return {
            "startid1": self.startid1, "nodes": self.nodes, "link_types": self.link_type_count,
            "range_limit": self.range_limit, "degree_shape": float(self.nlinks_shape),
            "degree_max": self.nlinks_max, "node_data_median": float(self.node_datasize),
            "link_data_median": float(self.link_datasize), "data_sigma": float(self.datasize_sigma),
            "link_data_max": self.link_datasize_max, "multiget_p": float(self.link_multiget_dist_prob),
            "multiget_max": self.link_multiget_dist_max,
            "p_exists": [P_EXISTS.get(op, 1.0) for op in GRAPH_OPS], "seed": self.seed,
            "load_writes": self.load_batch, "loaders": self.loaders,
        }

    def workload(self, name: str = "linkbench") -> Mix:
        """LinkBench's request mix: one template per operation with a weight > 0."""
        templates = []
        for prop, op in MIX_PROPERTIES.items():
            weight = self.mix[prop]
            if weight <= 0:
                continue
            skew = OP_SKEW[op]
            dist = Distribution("zipfian-plain", {"theta": getattr(self, skew)}) if skew else Distribution("uniform")
            templates.append(Template(op, (Op(op, distribution=dist),), weight=weight))
        return Mix(name=name, templates=tuple(templates), record_count=self.nodes,
                   operation_count=self.requests, source="linkbench",
                   description="LinkBench's request mix on its social graph",
                   notes=self.notes + NOTES, graph=self.graph_plan())

    def to_dict(self) -> dict:
        return {f.name: (dict(getattr(self, f.name)) if f.name == "mix" else
                         list(getattr(self, f.name)) if f.name == "notes" else getattr(self, f.name))
                for f in fields(self)}


INT_FIELDS = {"maxid1", "startid1", "link_type_count", "loaders", "requesters", "requests", "intervals",
              "range_limit", "nlinks_max", "link_datasize_max", "link_multiget_dist_max", "load_batch", "seed"}
NOTES = ("out-degrees at load follow kvlab's power law (nlinks_shape), not LinkBench's empirical table",
         "hot ids are not correlated with high out-degree (LinkBench correlates 0.5% of link reads, 5% of writes)",
         "get_links_list runs no history queries (LinkBench: getlinklist_history 0.3%)")


def from_properties(props: Mapping[str, object], **overrides) -> LinkBench:
    """A LinkBench from LinkBench's own properties (a .properties file's key=value pairs, strings or
    numbers), then keyword overrides.  Unknown properties are an error that lists the known ones;
    LinkBench properties kvlab does not use are kept in `notes`."""
    kw: dict[str, Any] = {}   # LinkBench's fields, each parsed to its own type
    notes, mix = [], {}
    names = {f.name for f in fields(LinkBench)} - {"mix", "notes"}
    for key, raw in {**dict(props), **overrides}.items():
        if key in MIX_PROPERTIES:
            mix[key] = _parse_number(key, raw)
        elif key in names:
            kw[key] = None if raw is None else (_parse_int(key, raw) if key in INT_FIELDS else _parse_number(key, raw))
        elif key in IGNORED or key.startswith(("mysql_", "rocksdb_", "hbase_")):
            notes.append(f"{key} is read but not used by kvlab")
        else:
            allowed = sorted(names | set(MIX_PROPERTIES))
            raise errors.SpecError(f"LinkBench property {key!r} is unknown; allowed: {', '.join(allowed)}")
    return LinkBench(**kw, mix=mix, notes=tuple(notes))


def read_properties(path) -> dict:
    """key=value lines of a Java .properties file (# and ! comments, blank lines skipped)."""
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise errors.SpecError(f"cannot read LinkBench properties {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise errors.SpecError(f"cannot read LinkBench properties {path}: not UTF-8 text ({exc.reason}); "
                               "expected a .properties file of name=value lines") from None
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, value = line.partition("=" if "=" in line else ":")
        if not sep:
            raise errors.SpecError(f"{path}:{n}: {line!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def _parse_int(key, raw) -> int:
    if isinstance(raw, bool):
        raise errors.SpecError(f"LinkBench {key}={raw!r}: allowed: an integer")
    if isinstance(raw, int):
        return raw
    try:
        return int(str(raw).strip().replace("_", ""))
    except ValueError:
        raise errors.SpecError(f"LinkBench {key}={raw!r} is not an integer") from None


def _parse_number(key, raw) -> float:
    if isinstance(raw, bool):
        raise errors.SpecError(f"LinkBench {key}={raw!r}: allowed: a number")
    try:
        v = float(raw)
    except (TypeError, ValueError):
        raise errors.SpecError(f"LinkBench {key}={raw!r} is not a number") from None
    return v


def _int(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise errors.SpecError(f"linkbench {name}={value!r} is out of range; allowed: an integer from {lo:,} to {hi:,}")


def _num(name, value, lo, hi, lo_open):
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and \
        (lo < value if lo_open else lo <= value) and value <= hi
    if not ok:
        raise errors.SpecError(f"linkbench {name}={value!r} is out of range; allowed: a number in "
                               f"{'(' if lo_open else '['}{lo:g}, {hi:g}]")
