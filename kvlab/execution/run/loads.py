"""How a load writes (RunSpec.load) and where a resumed one starts (RunSpec.resume).

A load is fillseq: record i under key i (YCSB's hashed insert order: under key_hash(i)), in order.  "batched"
puts them in batches of LOAD_BATCH through the engine's ordinary writes; "bulk" hands them to the engine's bulk
path (kv_engine.h: LMDB's MDB_APPEND, RocksDB's SST ingestion, WiredTiger's bulk cursor, BerkeleyDB's
DB_MULTIPLE_KEY puts) in chunks of about BULK_CHUNK_BYTES (a fillseq workload's batch, where given).  Either
way one thread commits the records in index order, so what a killed load left behind is a prefix of its records:
`resume` finds where the prefix ends with a binary search of point reads and continues from there.
"""
from __future__ import annotations

from ... import engines, errors
from ...model import workloads
from .. import native
from ..worker import spawn

LOAD_BATCH = 1000        # a batched load's puts per batch
BULK_CHUNK_BYTES = 256 << 20   # a bulk load's chunk (one LMDB txn, one RocksDB SST file): about this many bytes
                                # of keys and values (fewer ingestions; an LMDB txn's dirty pages stay in memory)
PREFIX_CHECKS = 64       # records below the prefix's end read back to confirm it is one


def hashed_keys(spec) -> bool:
    """The run's records live under hashed keys (a mix of YCSB's insertorder=hashed)."""
    mixes = (workloads.get(name, spec.mixes).mix for name in spec.workloads)
    return any(m is not None and m.insert_order == "hashed" for m in mixes)


def check(spec, lib, key_hash: bool) -> None:
    """Refuse, before anything is written, a load this build cannot run for `spec`."""
    if spec.load != "bulk":
        return
    cfg = native.require_built(spec.engine, load_now=False)
    if cfg.build:   # a version loaded at run time: asked of a worker that loads it (the caller loads no engine)
        got = spawn.call("kvlab.execution.run.loads:bulk_loads_of", (spec.engine,))
        if got.error is not None:
            raise got.error
        adapter, have = cfg.native_name, got.value if got.returned else {}
    else:
        adapter, have = cfg.adapter, lib.bulk_loads()
    if adapter not in have:
        able = [name for name, cfg in engines.REGISTRY.items() if cfg.adapter in have]
        raise errors.SpecError(f"{spec.engine} has no bulk load path; allowed: load='batched', or load='bulk' on "
                               f"{', '.join(able) or 'no engine of this build'}")
    if key_hash:
        raise errors.SpecError("load='bulk' writes keys in ascending order, and this workload stores its records "
                               "under hashed keys (YCSB's insertorder=hashed); allowed: load='batched', or "
                               "insertorder=ordered")


def bulk_loads_of(link, engine: str) -> dict:
    """In a worker: {adapter: how its bulk path writes} (the extension's bulk_loads), `engine`'s built version loaded
    first."""
    native.adapter_name(native.require_built(engine))
    return dict(native.load().bulk_loads())


def bulk_chunk(key_size: int, value_size: int) -> int:
    """Records per bulk chunk: BULK_CHUNK_BYTES of them, at least 1,000 and at most 10M."""
    return max(1000, min(10_000_000, BULK_CHUNK_BYTES // (key_size + value_size)))


def method(spec, lib, adapter: str) -> str:
    """What the result says of how its load wrote."""
    if spec.load == "bulk":
        return lib.bulk_loads()[adapter]
    return f"puts in batches of {LOAD_BATCH} (one engine batch or transaction each)"


def committed_prefix(engine, lib, num: int, key_size: int, key_hash: bool, where: str) -> int:
    """How many of the load's `num` records, from record 0 on, the open `engine` holds: a binary search for the
    first missing record, then PREFIX_CHECKS records below it read back.  A database that is not such a prefix
    (written out of order or by several threads) is a SpecError: resume cannot know what is missing."""
    reader = engine.session()   # a context of its own, closed after: no snapshot of it outlives the search (an
    try:                        # LMDB reader would pin every page the load then frees)
        return _prefix(reader, lib, num, key_size, key_hash, where)
    finally:
        reader.close()


def _prefix(reader, lib, num, key_size, key_hash, where) -> int:
    def has(i: int) -> bool:
        return reader.get(lib.make_key(lib.key_hash(i) if key_hash else i, key_size)) is not None

    lo, hi = 0, num   # records below lo are there; hi: the first missing one is at most hi
    while lo < hi:
        mid = (lo + hi) // 2
        if has(mid):
            lo = mid + 1
        else:
            hi = mid
    step = max(1, lo // PREFIX_CHECKS)
    for i in range(0, lo, step):
        if not has(i):
            raise errors.SpecError(f"resume: the database in {where} holds record {lo - 1:,} of the load but not "
                                   f"record {i:,}: it is not the prefix an ordered one-thread load leaves behind, "
                                   "so what is missing cannot be known; allowed: resume a fillseq or load phase "
                                   "killed while it ran (threads=1), or start the load over without resume")
    return lo
