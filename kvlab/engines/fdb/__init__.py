"""FoundationDB, planned: no reachable package registry ships its client library (libfdb_c) or server."""
from ..descriptor import Absent, Descriptor, EngineConfig

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring)
BUILD = {"package": "libfdb_c (FoundationDB client; no reachable registry ships it)",
         "planned": "no reachable package registry ships FoundationDB's libfdb_c, and kvlab has no adapter for it"}

_PLANNED = "the adapter is not written"

DESCRIPTOR = Descriptor(
    "fdb", title="FoundationDB", rank=100, build=BUILD, planned=BUILD["planned"],
    configs=(EngineConfig(
        "fdb", "fdb", "FoundationDB through libfdb_c (needs a running cluster)",
        honours=frozenset({"options"}), notes="adapter not written yet; loads libfdb_c at run time",
        colour="#332288", aliases=("foundationdb", "foundationdb (published)")),),
    format=Absent(_PLANNED), events=Absent(_PLANNED), counters=Absent(_PLANNED), cache=Absent(_PLANNED),
    memory=Absent(_PLANNED),
    own_config=Absent(_PLANNED),
)
