"""The LSM family side by side (notebook 10_lsm_family; `benchmarks/lsm_family.py` prints the same table): every
built LSM engine configuration loads the same keys with fillrandom, overwrites them, then reads them at random, at
one memory budget each, `repeat` rounds with the engines in a rotating order (each round a fresh database per
engine, so whatever drifts on a shared machine falls on every engine alike).

Per engine and workload: the median ops/s with the median's distribution-free interval over the rounds (its
confidence, the level the rounds allow, in `ops_level`; below 3 rounds none), and the medians of write amplification
(the process's storage writes over the keys and values written) and space amplification (the database's allocated
size over the live keys and values), as every kvlab record has them, each with why where a round could not measure
it (the record's amplification notes).

`lsm_family_plan` lists the runs as Steps (the estimate costs them); `lsm_family` runs the same Steps and returns
the tidy frame with the records behind it."""
from __future__ import annotations

import statistics

from ...results import stats
from .plan import Step, execute

# the family, in the order the figure draws it: the C/C++ LSMs, then the Rust and Go ones
FAMILY = ("leveldb", "rocksdb", "wiredtiger-lsm", "fjall", "pebble", "badger")
WORKLOADS = ("fillrandom", "overwrite", "readrandom")

# the frame's columns, in order
COLUMNS = ["engine", "workload", "n", "median_ops_per_sec", "ops_lo", "ops_hi", "ops_level", "write_amp",
           "space_amp", "write_amp_note", "space_amp_note"]


def lsm_family_plan(engines, num: int, memory, repeat: int, seed: int = 1) -> list:
    """`repeat` rounds; in round r every engine (the first rotating) runs the three workloads on a fresh database of
    its own, `num` keys, seed `seed + r`, the memory budget `memory` (split as each engine's descriptor says)."""
    names = list(engines)
    steps = []
    for r in range(repeat):
        for n in names[r % len(names):] + names[:r % len(names)] if names else ():
            steps.append(Step(n, f"round {r + 1}", dict(workload=",".join(WORKLOADS), num=num, memory=memory,
                                                        seed=(seed + r) % 2 ** 64, interval=0)))
    return steps


def lsm_family(engines, num: int, memory, repeat: int, seed: int = 1):
    """Run lsm_family_plan: (the table as a tidy frame, the records)."""
    results = []
    for step in lsm_family_plan(engines, num, memory, repeat, seed):
        results.extend(execute(step))
    return lsm_family_table(results, engines), results


def lsm_family_table(results, engines=None):
    """One row per engine and workload (the engines in `engines`' order, else the records'), the workloads in the
    order they ran: the rounds' median ops/s with its interval, and the medians of the amplifications."""
    import pandas as pd
    names = list(dict.fromkeys(engines or [b.engine for b in results]))
    rows = []
    for name in names:
        for workload in WORKLOADS:
            mine = [b for b in results if b.engine == name and b.workload == workload and b.phase == "run"]
            if not mine:
                continue
            rates = [b.ops_per_sec for b in mine]
            ci = stats.median_interval(rates)
            wamp, wnote = _amp(mine, "write_amp")
            samp, snote = _amp(mine, "space_amp")
            rows.append({"engine": name, "workload": workload, "n": len(mine),
                         "median_ops_per_sec": statistics.median(rates),
                         "ops_lo": ci[0] if ci else None, "ops_hi": ci[1] if ci else None,
                         "ops_level": ci[2] if ci else None, "write_amp": wamp, "space_amp": samp,
                         "write_amp_note": wnote, "space_amp_note": snote})
    return pd.DataFrame(rows, columns=COLUMNS)


def _amp(records, key) -> tuple:
    """(the median of `key` over the records that measured it, or None; why the others did not, or None)."""
    amps = [b.amplification or {} for b in records]
    values = [a[key] for a in amps if a.get(key) is not None]
    notes = list(dict.fromkeys(a.get("notes", {}).get(key) for a in amps if a.get(key) is None))
    why = "; ".join(n for n in notes if n) or None
    return (statistics.median(values) if values else None), (why if why or values else "not measured")


def notebook_plan(p, engines) -> list:
    """Notebook 10_lsm_family's runs (`engines`: the family's built members)."""
    return lsm_family_plan(engines, p["num"], p.get("memory"), p["repeat"], seed=p["seed"])
