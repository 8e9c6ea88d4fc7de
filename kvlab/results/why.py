"""`kvlab results why A B` (Python `kvlab.why(a, b)`): why B's figures differ from A's, from the CPU profiles the
runs kept (`--profile`): benchmarks matched by workload and threads (across engines or versions alike), each
side's profiles merged over its repeats, then per operation the CPU in each component and the functions whose cost
changed most (kvlab.results.profile.why), beside the wall-clock figures: the median ops/s of each side and B's
change, and where either side also holds counted runs of the benchmark (`--count instructions`, `--metric
instructions`), their instructions per op (callgrind's: kvlab's loop threads, user space).
"""
from __future__ import annotations

import statistics

from .. import errors
from . import profile as prof
from .diff import _records


def _key(r: dict) -> tuple:
    return (r.get("workload"), r.get("threads"))


def _label(key: tuple) -> str:
    return f"{key[0]} {key[1]} thr"


def _instructions(records) -> float | None:
    """The median instructions per op of the counted records among `records` (a compare's warm-up pass left out)."""
    from . import instructions as ins
    per = [ins.per_op(r["params"]["instructions"]) for r in records
           if (r.get("params") or {}).get("instructions") and not r.get("partial")
           and ((r.get("provenance") or {}).get("compare") or {}).get("pass") != "warm-up"]
    got = [float(g) for g in per if g]
    return statistics.median(got) if got else None


def why(a, b, *, store=None, most: int = 15) -> list:
    """One entry per benchmark both sides profiled: {"benchmark", "a_engines", "b_engines", "a_ops_per_sec",
    "b_ops_per_sec", "change_pct", "a_profile", "b_profile" (merged), "why" (profile.why)}."""
    sides, counted = [], []
    for side, what in ((a, "A"), (b, "B")):
        groups: dict = {}
        counts: dict = {}
        for r in _records(side, what, store):
            p = (r.get("params") or {}).get("profile")
            if p and r.get("phase") == "run" and not r.get("partial"):
                groups.setdefault(_key(r), []).append(r)
            if (r.get("params") or {}).get("instructions") and r.get("phase") == "run":
                counts.setdefault(_key(r), []).append(r)
        counted.append(counts)
        if not groups:
            raise errors.ResultsError(f"{what} ({side if isinstance(side, str) else 'the results given'}) holds no "
                                      "profiled benchmark: run it with --profile (profile=True)")
        sides.append(groups)
    keys = [k for k in sides[0] if k in sides[1]]
    if not keys:
        raise errors.ResultsError(f"A and B profiled no benchmark in common: A has {', '.join(map(_label, sides[0]))}; "
                                  f"B has {', '.join(map(_label, sides[1]))} (matched by workload and threads)")
    out = []
    for k in keys:
        ra, rb = sides[0][k], sides[1][k]
        pa = prof.merged(r["params"]["profile"] for r in ra)
        pb = prof.merged(r["params"]["profile"] for r in rb)
        same = {r["engine"].split("@", 1)[0] for r in ra + rb}   # a configuration without its version
        if len(same) == 1:   # versions of one engine: their functions matched by name, whichever library holds them
            pa, pb = prof.comparable(pa), prof.comparable(pb)
        oa = statistics.median(r["ops_per_sec"] for r in ra)
        ob = statistics.median(r["ops_per_sec"] for r in rb)
        out.append({"benchmark": _label(k), "a_engines": sorted({r["engine"] for r in ra}),
                    "b_engines": sorted({r["engine"] for r in rb}), "a_n": len(ra), "b_n": len(rb),
                    "a_ops_per_sec": oa, "b_ops_per_sec": ob,
                    "change_pct": (ob / oa - 1.0) * 100.0 if oa else None,
                    "a_profile": pa, "b_profile": pb, "why": prof.why(pa, pb, most),
                    "a_instructions": _instructions(counted[0].get(k, [])),
                    "b_instructions": _instructions(counted[1].get(k, []))})
    return out
