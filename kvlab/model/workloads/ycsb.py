"""YCSB's CoreWorkload properties (a workload file such as `workloads/workloada`, and `-p`
overrides) as a Mix: each operation type a one-op template weighted by its proportion, the
request distribution with its parameters, scan lengths, record and operation counts; and what YCSB's
client reads (threadcount, target, maxexecutiontime) as the mix's threads, pacing and duration, which a
run uses unless it is given its own.  Defaults are CoreWorkload's and the client's (0.17.0)."""
from __future__ import annotations

import difflib
import math
from pathlib import Path

from ... import errors
from .distributions import distribution as make_distribution
from .mix import Mix, Op, Pacing, Template

# property -> default, as CoreWorkload reads them
DEFAULTS = {
    "readproportion": "0.95", "updateproportion": "0.05", "insertproportion": "0",
    "scanproportion": "0", "readmodifywriteproportion": "0",
    "requestdistribution": "uniform", "zipfianconstant": "0.99",
    "minscanlength": "1", "maxscanlength": "1000", "scanlengthdistribution": "uniform",
    "recordcount": "1000", "operationcount": None, "insertorder": "hashed",
    "hotspotdatafraction": "0.2", "hotspotopnfraction": "0.8",
    "exponential.percentile": "95", "exponential.frac": "0.8571428571",
    "fieldcount": "10", "fieldlength": "100",
}
# YCSB operation -> (template name, kvlab op)
OPERATIONS = (("readproportion", "read", "get"), ("updateproportion", "update", "put"),
              ("insertproportion", "insert", "insert"), ("scanproportion", "scan", "scan"),
              ("readmodifywriteproportion", "readmodifywrite", "rmw"))
# read by YCSB's Client, not by CoreWorkload: the Mix carries them and a run uses them unless given
# (threads, target_rate, duration); 0 is YCSB's "unthrottled" and "no time limit"
CLIENT = {"threadcount": "1", "target": "0", "maxexecutiontime": "0"}
# read by YCSB's client or by DB bindings, not by CoreWorkload's mix: kept in the notes
NOT_USED = ("workload", "db", "measurementtype", "readallfields", "writeallfields",
            "fieldlengthdistribution", "table", "exporter", "status.interval", "dataintegrity",
            "insertstart", "insertcount", "zeropadding", "hdrhistogram.percentiles")


def read_properties(text: str, where: str = "properties") -> dict:
    """Java .properties: key=value, key: value or key value; # and ! start comments."""
    out = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        for sep in ("=", ":", " ", "\t"):
            if sep in line:
                key, _, value = line.partition(sep)
                break
        else:
            raise errors.SpecError(f"{where} line {n}: {raw!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


def _number(props, key, kind=float):
    raw = props.get(key, DEFAULTS.get(key, CLIENT.get(key)))
    try:
        return kind(raw) if kind is float else int(float(raw))
    except (TypeError, ValueError, OverflowError):
        raise errors.SpecError(f"YCSB property {key}={raw!r} is not a number"
                               + (" (an integer is needed)" if kind is not float else "")) from None


# what a Mix field is called in YCSB, for errors raised by the Mix's own checks
_YCSB_NAMES = {"record_count": "recordcount", "operation_count": "operationcount",
               "value_size": "fieldcount x fieldlength", "weight": "<operation>proportion",
               "theta": "zipfianconstant", "hot_fraction": "hotspotdatafraction", "hot_ops": "hotspotopnfraction",
               "percentile": "exponential.percentile", "frac": "exponential.frac", "length": "maxscanlength",
               "threads": "threadcount", "target_rate": "target", "duration": "maxexecutiontime"}


def from_properties(props: dict, name: str = "ycsb", source: str = "ycsb") -> Mix:
    """A Mix from CoreWorkload properties; any error names the YCSB properties it came from."""
    try:
        return _from_properties(props, name, source)
    except errors.SpecError as exc:
        msg = str(exc)
        if msg.startswith("YCSB"):
            raise
        said = sorted({y for field, y in _YCSB_NAMES.items() if field in msg})
        raise errors.SpecError(f"YCSB properties ({source}): {msg}" +
                               (f" (YCSB's {', '.join(said)})" if said else "")) from None


def _from_properties(props: dict, name: str, source: str) -> Mix:
    props = {k.strip(): str(v).strip() for k, v in props.items()}
    unknown = sorted(k for k in props if k not in DEFAULTS and k not in CLIENT and k not in NOT_USED)
    # a name close to one CoreWorkload (or the client) reads is a typo that would silently change the run
    known = [*DEFAULTS, *CLIENT]
    close = {k: difflib.get_close_matches(k, known, n=1, cutoff=0.85) for k in unknown}
    typos = [f"{k} (did you mean {m[0]}?)" if m else k for k, m in close.items()
             if m or k.endswith(("proportion", "distribution"))]
    if typos:
        raise errors.SpecError(f"YCSB propert{'y' if len(typos) == 1 else 'ies'} {', '.join(typos)} unknown; "
                               f"allowed: {', '.join(known)}")
    templates = []
    for prop, tname, kind in OPERATIONS:
        share = _number(props, prop)
        if not math.isfinite(share):
            raise errors.SpecError(f"YCSB property {prop}={props.get(prop)!r} must be a finite number >= 0")
        if share < 0:
            raise errors.SpecError(f"YCSB property {prop}={share} must be >= 0")
        if share > 0:
            if kind == "scan":
                lo, hi = _number(props, "minscanlength", int), _number(props, "maxscanlength", int)
                how = props.get("scanlengthdistribution", DEFAULTS["scanlengthdistribution"])
                if how not in ("uniform", "zipfian"):
                    raise errors.SpecError(f"YCSB scanlengthdistribution={how!r}; allowed: uniform, zipfian")
                if not 1 <= lo <= hi:
                    raise errors.SpecError(f"YCSB scan lengths minscanlength={lo}, maxscanlength={hi}: "
                                           "need 1 <= min <= max")
                op = Op("scan", length=hi, min_length=lo, length_distribution=how)
            else:
                op = Op(kind)
            templates.append(Template(tname, (op,), weight=share))
    if not templates:
        raise errors.SpecError("YCSB properties give every operation a proportion of 0; set at least one of "
                               + ", ".join(p for p, _, _ in OPERATIONS))
    dist_name = props.get("requestdistribution", DEFAULTS["requestdistribution"])
    dist_params = {
        "zipfian": {"theta": _number(props, "zipfianconstant")},
        "latest": {"theta": _number(props, "zipfianconstant")},
        "hotspot": {"hot_fraction": _number(props, "hotspotdatafraction"),
                    "hot_ops": _number(props, "hotspotopnfraction")},
        "exponential": {"percentile": _number(props, "exponential.percentile"),
                        "frac": _number(props, "exponential.frac")},
    }
    if dist_name not in ("uniform", "zipfian", "latest", "hotspot", "sequential", "exponential"):
        raise errors.SpecError(f"YCSB requestdistribution={dist_name!r}; allowed: uniform, zipfian, latest, "
                               "hotspot, sequential, exponential")
    record_count = _number(props, "recordcount", int)
    op_count = _number(props, "operationcount", int) if props.get("operationcount") else None
    params = dist_params.get(dist_name, {})
    if dist_name == "zipfian":
        # CoreWorkload sizes the hash range for the inserts it expects: operationcount x insertproportion x 2
        params["expected_inserts"] = int((op_count or 0) * _number(props, "insertproportion") * 2.0)
    order = props.get("insertorder", DEFAULTS["insertorder"])
    if order not in ("hashed", "ordered"):
        raise errors.SpecError(f"YCSB insertorder={order!r}; allowed: hashed, ordered")
    value = _number(props, "fieldcount", int) * _number(props, "fieldlength", int)
    threads, target, limit = (_number(props, "threadcount", int), _number(props, "target"),
                              _number(props, "maxexecutiontime", int))
    for key, v, what in (("target", target, "operations/s in total, 0: unthrottled"),
                         ("maxexecutiontime", limit, "seconds, 0: no time limit")):
        if not math.isfinite(v) or v < 0:
            raise errors.SpecError(f"YCSB property {key}={props.get(key)!r} is out of range; allowed: a number "
                                   f">= 0 ({what})")
    notes = [f"{k}={props[k]} (not used by kvlab's mix)" for k in sorted(props) if k in NOT_USED or k in unknown]
    if limit and op_count:
        notes.append(f"maxexecutiontime={limit} and operationcount={op_count}: kvlab runs by time alone (YCSB "
                     "stops at whichever comes first)")
    return Mix(name, tuple(templates), distribution=make_distribution(dist_name, **params), record_count=record_count,
               operation_count=op_count, value_size=(value, value), insert_order=order, source=source,
               threads=threads if "threadcount" in props else None, duration=limit or None,
               pacing=Pacing(target_rate=target),
               description=f"YCSB CoreWorkload properties ({source})", notes=tuple(notes))


# YCSB 0.17.0's workloads/workload[a-f] (recordcount and operationcount 1000, as the files set them): the
# ycsb-a ... ycsb-f presets, and what `-P workloada` reads where no such file is in the working directory
_CORE_COMMON = {"recordcount": "1000", "operationcount": "1000", "requestdistribution": "zipfian",
                "readallfields": "true"}
CORE_FILES = {name: {**_CORE_COMMON, **props} for name, props in {
    "workloada": {"readproportion": "0.5", "updateproportion": "0.5"},
    "workloadb": {"readproportion": "0.95", "updateproportion": "0.05"},
    "workloadc": {"readproportion": "1", "updateproportion": "0"},
    "workloadd": {"readproportion": "0.95", "updateproportion": "0", "insertproportion": "0.05",
                  "requestdistribution": "latest"},
    "workloade": {"readproportion": "0", "updateproportion": "0", "scanproportion": "0.95",
                  "insertproportion": "0.05", "maxscanlength": "100", "scanlengthdistribution": "uniform"},
    "workloadf": {"readproportion": "0.5", "updateproportion": "0", "readmodifywriteproportion": "0.5"},
}.items()}


def from_ycsb(files=(), overrides=None, name: str | None = None) -> Mix:
    """`kvlab ycsb -P workloada -p recordcount=...`: files read in order, then -p overrides."""
    props, names, said = {}, [], []
    for f in ([files] if isinstance(files, (str, Path)) else files):
        path = Path(f)
        try:
            props.update(read_properties(path.read_text(), str(path)))
        except UnicodeDecodeError as exc:
            raise errors.SpecError(f"YCSB workload file {str(path)!r} is not text (byte {exc.start} is not UTF-8); "
                                   "allowed: a Java properties file, name=value lines") from None
        except OSError as exc:
            core = CORE_FILES.get(str(f)) if isinstance(exc, FileNotFoundError) else None
            if core is None:
                raise errors.SpecError(f"YCSB workload file {str(path)!r} cannot be read: {exc.strerror or exc} "
                                       "(YCSB's core files workloada ... workloadf are also known by name, where "
                                       "no such file is in the working directory)") from None
            props.update(core)   # a bare core file name with no such file here: YCSB's own file, built in
            said.append(f"no file {str(f)!r} here: YCSB 0.17.0's core {f} (kvlab's preset ycsb-{str(f)[-1]})")
        names.append(path.name)
    for item in (overrides or {}).items() if isinstance(overrides, dict) else (overrides or ()):
        key, value = item if isinstance(item, tuple) else _split_override(item)
        props[key] = value
    mix = from_properties(props, name or ("ycsb-" + "+".join(names) if names else "ycsb"),
                          source="ycsb:" + ",".join(names or ["properties"]))
    return Mix(**{**mix.__dict__, "notes": tuple(said) + mix.notes}) if said else mix


def _split_override(item: str):
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise errors.SpecError(f"-p {item!r}: expected name=value, e.g. -p recordcount=100000")
    return key.strip(), value.strip()
