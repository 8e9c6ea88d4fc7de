"""Named workloads: YCSB's core workloads A-F (the properties of YCSB's own workload files),
the six tests of seed 003 (FoundationDB's "Benchmarking" page), each written the way its source
writes it, so the parsers are what defines them, and Meta's mixgraph with the paper's fitted
parameters (mixgraph.py, db_bench's flags)."""
from __future__ import annotations

from ... import errors
from .mako import from_mako
from .mix import Mix
from .mixgraph import PAPER, mixgraph
from .ycsb import CORE_FILES, from_properties

YCSB = {
    "ycsb-a": ("update heavy: 50% reads, 50% updates, zipfian", CORE_FILES["workloada"]),
    "ycsb-b": ("read mostly: 95% reads, 5% updates, zipfian", CORE_FILES["workloadb"]),
    "ycsb-c": ("read only: 100% reads, zipfian", CORE_FILES["workloadc"]),
    "ycsb-d": ("read latest: 95% reads, 5% inserts, latest", CORE_FILES["workloadd"]),
    "ycsb-e": ("short ranges: 95% scans (uniform length up to 100), 5% inserts, zipfian", CORE_FILES["workloade"]),
    "ycsb-f": ("read-modify-write: 50% reads, 50% read-modify-writes, zipfian", CORE_FILES["workloadf"]),
}

# Seed 003: 1M rows, 16-byte keys, values of 8-100 random bytes, one minute, the server on one core
_FDB = {"record_count": 1_000_000, "value_size": (8, 100)}
FDB = {
    "fdb-write-1": ("seed 003 write test #1: 1 client, 1 random write per transaction", "o1", 1),
    "fdb-write-10": ("seed 003 write test #2: 1 client, 10 random writes per transaction", "o10", 1),
    "fdb-write-10-c100": ("seed 003 write test #3: 100 clients, 10 random writes per transaction", "o10", 100),
    "fdb-read-10-c100": ("seed 003 read test: 100 clients, 10 random reads per transaction (no commit)", "g10", 100),
    "fdb-90-10-c100": ("seed 003 90/10 test: 100 clients, 9 reads + 1 write per transaction", "g9o1", 100),
    "fdb-range-1000-c100": ("seed 003 range read test: 100 clients, one 1000-key range read", "gr1:1000", 100),
}


def _build() -> dict:
    out = {}
    for name, (desc, props) in YCSB.items():
        mix = from_properties(props, name=name, source=f"preset:{name}")
        out[name] = Mix(**{**mix.__dict__, "description": desc, "notes": ()})
    for name, (desc, spec, clients) in FDB.items():
        mix = from_mako(spec, name=name, description=desc, run_defaults={"clients": clients, "duration": 60},
                        **_FDB)
        out[name] = Mix(**{**mix.__dict__, "source": f"preset:{name} (mako {spec})"})
    mix = mixgraph(**PAPER)
    out["mixgraph"] = Mix(**{**mix.__dict__, "source": "preset:mixgraph (db_bench's mixgraph flags)",
                             "description": "Meta's mixgraph (Cao et al., FAST 2020) with the paper's fitted all_dist "
                                            "parameters: 83% gets, 14% puts, 3% seeks, closed loop"})
    return out


PRESETS: dict[str, Mix] = _build()


def preset(name: str) -> Mix:
    try:
        return PRESETS[name]
    except KeyError:
        raise errors.SpecError(f"workload preset {name!r} is unknown; allowed: {', '.join(PRESETS)}") from None
