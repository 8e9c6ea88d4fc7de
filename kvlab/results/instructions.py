"""Instructions per operation (`--count instructions`): what callgrind counted in a measured phase, per thread,
read from its dumps, and what a record keeps of it.

callgrind counts every instruction a thread executes in user space (the kernel's are not seen), exactly and the
same from run to run where the work is the same: the figure wall-clock time cannot give on a shared machine.  A
phase's dump holds one file per thread; each thread is one of
  - "benchmark": a thread of kvlab's loop (it ran the driver's thread function, `worker` in kvlab's extension):
    the operations' own cost;
  - "background": a thread the engine started (flushes, compactions, checkpoints, eviction): work an LSM does
    off the operation's path that a B-tree does inline, so a ranking must say which it counts;
  - "caller": the worker's Python threads (the one that waits for the loop and the one that samples it): neither.
Each thread's instructions are split by component as a profile's are (kvlab.results.profile.component), from the
self cost callgrind gives each function and the object it is in.

    parse(text)                      # one dump file: {"events": [...], "totals": {...}, "functions": {...}}
    phase_record(dumps, ops, ...)    # what a record keeps (params["instructions"])
    per_op(rec)                      # instructions (and misses) per operation, by thread kind and component
"""
from __future__ import annotations

import re

from . import profile as prof

THREAD_KINDS = ("benchmark", "background", "caller")
LOOP_FUNCTION = "worker"   # the driver's thread function (cython_ext/src/driver.c), in kvlab's extension
KEEP_FUNCTIONS = 60          # the functions a record keeps per thread kind, most instructions first
# callgrind's event names and what kvlab calls them (--cache-sim=yes adds the misses)
EVENT_WORDS = {"Ir": "instructions", "Dr": "data reads", "Dw": "data writes", "I1mr": "L1 instruction misses",
               "D1mr": "L1 data read misses", "D1mw": "L1 data write misses", "ILmr": "last-level instruction misses",
               "DLmr": "last-level data read misses", "DLmw": "last-level data write misses"}
WHAT_IT_CANNOT_SEE = ("instructions are deterministic: two runs of the same work count the same to a fraction of a "
                      "percent, on any machine; they do not see memory stalls, contention between threads, waits for "
                      "I/O or the kernel's own work, which wall-clock time does")

_NAMED = re.compile(r"^(ob|fl|fi|fe|fn|cob|cfi|cfl|cfn)=(?:\((\d+)\))?\s*(.*)$")


def parse(text: str) -> dict:
    """One callgrind output file (any name compression): its events, its trigger, its totals, and each function's
    self cost keyed by "function (object)"."""
    events: list = []
    trigger = ""
    totals: list = []
    names: dict = {}
    ob = fn = ""
    functions: dict = {}
    skip_next = False
    for line in text.splitlines():
        if not line:
            continue
        c = line[0]
        if c.isdigit() or c in "+-*":
            if skip_next:   # the line after calls=: the call's inclusive cost, not the function's own
                skip_next = False
                continue
            parts = line.split()
            costs = [int(x) for x in parts[1:1 + len(events)]] if len(parts) > 1 else []
            if costs and fn:
                key = f"{fn} ({prof.library_name(ob) if ob else '[unknown library]'})"
                have = functions.setdefault(key, [0] * len(events))
                for i, v in enumerate(costs):
                    have[i] += v
            continue
        m = _NAMED.match(line)
        if m:
            kind, ident, name = m.groups()
            table = names.setdefault("fn" if kind in ("fn", "cfn") else "ob" if kind in ("ob", "cob") else "fl", {})
            if ident is not None:
                if name:
                    table[ident] = name
                name = table.get(ident, name)
            if kind == "ob":
                ob = name
            elif kind == "fn":
                fn = name
            continue
        if line.startswith("calls="):
            skip_next = True
        elif line.startswith("events:"):
            events = line.split(":", 1)[1].split()
        elif line.startswith("desc: Trigger:"):
            trigger = line.split(":", 2)[2].strip()
        elif line.startswith(("totals:", "summary:")):
            totals = [int(x) for x in line.split(":", 1)[1].split()]
    total = dict(zip(events, totals)) if totals else {e: sum(v[i] for v in functions.values())
                                                       for i, e in enumerate(events)}
    return {"events": events, "trigger": trigger, "totals": total,
            "functions": {k: dict(zip(events, v)) for k, v in functions.items()}}


def thread_kind(parsed: dict, main: bool) -> str:
    """A dumped thread's kind (see the module's text); `main`: the process's first thread (callgrind's thread 1).
    An engine's own threads run no Python and not the driver's thread function."""
    libraries = set()
    for f in parsed["functions"]:
        name, lib = f.rsplit(" (", 1)[0], prof.frame_library(f)
        if name == LOOP_FUNCTION and prof.KVLAB.match(lib):
            return "benchmark"
        libraries.add(lib)
    return "caller" if main or any(prof.PYTHON.match(lib) for lib in libraries) else "background"


def phase_record(dumps: list, ops: int, engine_libraries, *, tool: str, version: str, cache: bool) -> dict:
    """What a record keeps: per thread kind, the events' totals, the threads counted, the events per component and
    the functions with the most instructions (self).  `dumps`: [(callgrind's thread number, parsed)]."""
    events = next((p["events"] for _, p in dumps if p["events"]), ["Ir"])
    kinds: dict = {}
    for tid, p in dumps:
        kind = thread_kind(p, tid == 1)
        k = kinds.setdefault(kind, {"threads": 0, "totals": dict.fromkeys(events, 0),
                                    "components": {c: dict.fromkeys(events, 0) for c in prof.COMPONENTS},
                                    "functions": {}})
        if not any(p["totals"].values()):
            continue   # a thread that ran nothing in the phase (an idle pool thread)
        k["threads"] += 1
        for e in events:
            k["totals"][e] += p["totals"].get(e, 0)
        for f, costs in p["functions"].items():
            comp = prof.component(f, engine_libraries)
            for e in events:
                k["components"][comp][e] += costs.get(e, 0)
            have = k["functions"].setdefault(f, dict.fromkeys(events, 0))
            for e in events:
                have[e] += costs.get(e, 0)
    for k in kinds.values():
        ranked = sorted(k["functions"].items(), key=lambda kv: -kv[1].get("Ir", 0))
        k["functions"] = dict(ranked[:KEEP_FUNCTIONS])
    return {"tool": tool, "version": version, "scope": "user space only (the kernel's instructions are not counted)",
            "events": events, "cache_simulated": cache, "ops": ops, "threads": kinds,
            "note": WHAT_IT_CANNOT_SEE}


def per_op(rec: dict, kind: str = "benchmark", event: str = "Ir") -> float | None:
    """`event` per operation in the threads of `kind` ("all": every thread but the caller's)."""
    ops = int(rec.get("ops") or 0)
    if ops <= 0:
        return None
    kinds = rec.get("threads") or {}
    picked = [k for name, k in kinds.items() if (kind == "all" and name != "caller") or name == kind]
    if not picked:
        return 0.0 if kind == "background" else None
    return sum(k["totals"].get(event, 0) for k in picked) / ops


def components_per_op(rec: dict, kind: str = "benchmark", event: str = "Ir") -> dict:
    ops = max(int(rec.get("ops") or 0), 1)
    k = (rec.get("threads") or {}).get(kind) or {}
    return {c: v.get(event, 0) / ops for c, v in (k.get("components") or {}).items()}


def top_functions(rec: dict, kind: str = "benchmark", most: int = 10, event: str = "Ir") -> list:
    ops = max(int(rec.get("ops") or 0), 1)
    k = (rec.get("threads") or {}).get(kind) or {}
    return [(f, v.get(event, 0) / ops) for f, v in list((k.get("functions") or {}).items())[:most]]


def summary_line(rec: dict) -> str:
    """One line for a run's output."""
    bench, back = per_op(rec, "benchmark"), per_op(rec, "background")
    comps = components_per_op(rec)
    parts = ", ".join(f"{c} {v:,.0f}" for c, v in comps.items() if v >= 0.5)
    text = (f"instructions per op: {bench:,.1f} in kvlab's loop threads ({parts}), "
            f"{back:,.1f} more in the engine's own threads; {rec['ops']:,} ops counted by {rec['tool']}, "
            "user space only")
    if rec.get("cache_simulated"):
        misses = {e: per_op(rec, "benchmark", e) for e in ("D1mr", "DLmr") if e in rec["events"]}
        text += "; per op, simulated: " + ", ".join(f"{EVENT_WORDS[e]} {v:,.2f}" for e, v in misses.items())
    return text
