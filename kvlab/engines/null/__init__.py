"""The null engine: no storage, as YCSB's BasicDB; it measures kvlab's harness alone (engine_null.c)."""
from ..descriptor import Absent, AdapterFormat, Descriptor, EngineConfig

# setup.py reads this with `ast` before kvlab can be imported: keep it a literal (kvlab.engines' docstring).
# No header or library: compiled into every build.
BUILD = {"package": "nothing (built into every kvlab)"}

_NO_STORAGE = "the null engine stores nothing"

DESCRIPTOR = Descriptor(
    "null", title="the null engine", rank=90, build=BUILD,
    configs=(EngineConfig(
        "null", "null",
        "no storage: every get finds a value, writes are dropped (YCSB's BasicDB); the harness alone",
        stores_data=False, notes="for measuring kvlab's own cost; never a claim about a storage engine",
        colour="#BBBBBB"),),
    format=AdapterFormat(),
    events=Absent(f"{_NO_STORAGE}: no background work"),
    counters=Absent(f"{_NO_STORAGE}: nothing written"),
    cache=Absent(f"{_NO_STORAGE}: no cache"), memory=Absent(f"{_NO_STORAGE}: no memory to budget"),
    own_config=Absent(f"{_NO_STORAGE}: no configuration of its own to report"),
)
