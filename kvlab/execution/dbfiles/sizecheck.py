"""Sizes before the start: a run that makes a database is refused, before anything is written, when the keys
and values it writes alone (no engine overhead counted, so a refusal is certain, never a guess) exceed the free
space where the database goes or the engine's own bound on its size (LMDB's map).  A run whose database would
need more than the free space at a typical space amplification gets a warning instead."""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ... import errors
from ...model import workloads
from ...model.spec import RunSpec
from . import dbdir

TYPICAL_SPACE_AMP = 2.0   # what the seeds' engines took here (docs/loads.md: 1.1-1.8 after a load, 3.2 LSM at worst)


def _gb(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} bytes"


_COMPRESSION_OPTION = re.compile(r"(?:compression\w*|block_compressor)\s*[=:]\s*\(?\s*(?:type\s*=\s*)?([\w-]+)", re.I)
_NO_COMPRESSION = ("none", "no", "knocompression", "nocompression", "disable", "false", "0")


def compresses(spec: RunSpec, cfg) -> bool:
    """Whether this run's engine compresses its values: the compression the run gives, else its configuration's
    default (kvlab's adapters compress only when told: RocksDB's and LevelDB's kNoCompression, WiredTiger with no
    block_compressor), or an options string that turns it on."""
    chosen = spec.engine_settings.get("compression")
    if chosen is None:
        chosen = cfg.defaults.get("compression", "none")
    options = " ".join(str(o) for o in (cfg.defaults.get("options"), spec.engine_settings.get("options"),
                                        spec.engine_settings.get("table_options")) if o)
    named = [m.group(1).lower() for m in _COMPRESSION_OPTION.finditer(options)]
    return str(chosen).lower() not in _NO_COMPRESSION or any(n not in _NO_COMPRESSION for n in named)


def data_bytes(spec: RunSpec, cfg) -> int:
    """The least the run's writes leave in the database: for each workload, the records it writes (num, or what
    it implies: fillsync's num/1000; a read workload's load) times key + its smallest value, values at the run's
    compression ratio where this run's engine compresses (compresses()); the largest of the workloads.  A LinkBench graph is not
    counted (its size is the graph's, not num's)."""
    compressed = compresses(spec, cfg)
    most = 0
    for name in spec.workloads:
        wl = workloads.get(name, spec.mixes)
        if not (wl.writes or wl.needs_data) or (wl.mix is not None and getattr(wl.mix, "graph", None)):
            continue
        value = spec.value_size
        if wl.mix is not None and wl.mix.value_size:
            value = min(wl.mix.value_size)
        if compressed:
            value = int(value * spec.compressed_fraction)
        keys = spec.num // int(wl.implies.get("num_divisor", 1))
        most = max(most, keys * (spec.key_size + value))
    return most


def where(spec: RunSpec) -> Path:
    """The nearest existing folder of the place the database goes."""
    place = Path(spec.db).expanduser().absolute() if spec.db else \
        Path(os.environ.get("KVLAB_TMPDIR") or tempfile.gettempdir())
    return dbdir.nearest_existing(place.absolute())


def check(spec: RunSpec, cfg) -> list:
    """Refuse a run that cannot fit (NotEnoughDisk, EngineFull's kind of error before it happens); warnings for one
    that may not.  A run on an existing database (use_existing_db) is not checked: it writes over what is there."""
    if spec.use_existing_db or spec.resume or not cfg.stores_data:
        return []
    need = data_bytes(spec, cfg)
    if not need:
        return []
    if cfg.capacity:
        bound = int(spec.engine_settings.get(cfg.capacity) or cfg.defaults.get(cfg.capacity) or 0)
        if bound and need > bound:
            raise errors.SpecError(
                f"the run does not fit {cfg.name}'s {cfg.capacity}: its records are {_gb(need)} of keys and values "
                f"alone ({spec.num:,} keys of {spec.key_size} bytes and their values), over the "
                f"{_gb(bound)} {cfg.capacity}; nothing was written. Allowed: a larger {cfg.capacity} (--map-size), "
                "or fewer or smaller records")
    place = where(spec)
    st = os.statvfs(place)
    free = st.f_bavail * st.f_frsize
    if spec.db and Path(spec.db).is_dir() and (Path(spec.db) / dbdir.MARKER).exists():
        free += dbdir.size_on_disk(Path(spec.db))   # a fresh run clears it first
    if need > free:
        raise errors.NotEnoughDisk(
            f"the run does not fit on the disk: its records are {_gb(need)} of keys and values alone, "
            f"and {place} has {_gb(free)} free; nothing was written. Allowed: fewer or smaller records, or a "
            "--db (or $KVLAB_TMPDIR) on a disk with room")
    if need * TYPICAL_SPACE_AMP > free:
        return [f"the database may not fit: {_gb(need)} of keys and values take about {_gb(need * TYPICAL_SPACE_AMP)}"
                f" at a typical space amplification of {TYPICAL_SPACE_AMP:g}, and {place} has {_gb(free)} free"]
    return []
