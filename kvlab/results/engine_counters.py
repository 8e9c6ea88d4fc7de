"""The engine's own per-operation counters (`--engine-counters`): what the engine counted over a phase, divided by
the phase's operations.  The adapter reports them with its statistics as "op.NAME" lines (RocksDB's PerfContext,
summed over the phase's threads as they close; SQLite's statement counters), or the descriptor names which of the
engine's statistics are per operation (WiredTiger's, kept with statistics=(fast)).  Statistics are cumulative while
the engine is open: a phase's figure is the difference from the previous phase's (or from zero, after a reopen)."""
from __future__ import annotations

PREFIX = "op."


def select(numbers: dict, named=()) -> dict:
    """The per-operation counters among an engine's statistics: its "op." lines and the ones `named`."""
    out = {}
    for k, v in (numbers or {}).items():
        if not isinstance(v, (int, float)):
            continue
        if k.startswith(PREFIX):
            out[k[len(PREFIX):]] = v
        elif k in named:
            out[named[k] if isinstance(named, dict) else k] = v
    return out


def phase_record(before: dict, after: dict, ops: int, source: str) -> dict:
    """What a record keeps (params["engine_op_counters"]): each counter's increase over the phase and per op."""
    totals = {}
    for k, v in after.items():
        b = before.get(k, 0)
        totals[k] = v - b if v >= b else v   # lower than before: the engine was reopened (counting from zero)
    return {"source": source, "ops": ops, "totals": totals,
            "per_op": {k: (v / ops if ops > 0 else None) for k, v in totals.items()},
            "note": "every operation of the phase, its warm-up's too, over every thread that ran it"}


def summary_line(rec: dict, most: int = 8) -> str:
    shown = [(k, v) for k, v in rec["per_op"].items() if v]
    shown.sort(key=lambda kv: -kv[1])
    words = ", ".join(f"{k} {v:,.3g}" for k, v in shown[:most]) or "all zero"
    return f"engine counters per op ({rec['ops']:,} ops): {words}"
