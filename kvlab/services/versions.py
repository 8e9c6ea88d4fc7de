"""`kvlab versions`: one engine's versions side by side, as Small Datum's reports show them (Mark Callaghan's
benchmark reports: each version's throughput relative to a base version, with CPU and I/O per operation).

The versions run as `kvlab compare` runs engines (kvlab.services.maincompare): each loaded once with the same keys,
then every workload at every thread count on its loaded database, repeated round-robin with the first version
rotating.  Per point and version: the median ops/s with its interval, the throughput relative to the base (the first
version given) as the Hodges-Lehmann ratio with its distribution-free interval and the Mann-Whitney p against the
base (kvlab.results.stats.ratio_interval, mann_whitney_u), the verdict `kvlab results compare` would give, and the
medians of CPU microseconds, KB read and KB written per operation and of write amplification."""
from __future__ import annotations

from .. import engines, errors
from ..results import compare as results_compare
from ..results import stats
from . import maincompare

WORKLOADS = ("readrandom",)


def check_versions(names) -> list[str]:
    """The names as given, each one configuration (CONFIG@VERSION, or the plain CONFIG compiled into kvlab), all of
    one engine and configuration, at least two and none twice; else a SpecError saying what is allowed."""
    names = [n.strip() for n in names if n.strip()]
    if len(names) < 2:
        raise errors.SpecError(f"kvlab versions needs at least two versions of one engine (given: {', '.join(names) or 'none'}); "
                               "e.g. lmdb@0.9.24 lmdb@0.9.70 (`kvlab engines` lists them)")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise errors.SpecError(f"kvlab versions: {', '.join(twice)} given twice; each version once")
    cfgs = [engines.get(n) for n in names]
    kinds = {(c.adapter, c.variant, c.name.partition(engines.VERSION_MARK)[0]) for c in cfgs}
    if len(kinds) > 1:
        raise errors.SpecError(f"kvlab versions compares versions of one engine configuration; given "
                               f"{', '.join(names)} (several: `kvlab compare --engines` sets engines side by side)")
    return names


def table(results, base: str, level: float = stats.LEVEL) -> list[dict]:
    """One row per point and version (the points in the plan's order, the base first in each): see the module."""
    groups: dict = {}
    for b in results:
        if b.phase == "run" and not b.partial and not maincompare.counted(b):
            groups.setdefault((maincompare.point_of(b), b.engine), []).append(b)
    metric = results_compare.BY_NAME["ops_per_sec"]
    rows = []
    for (point, engine), bs in groups.items():
        rates = [b.ops_per_sec for b in bs]
        base_rates = [b.ops_per_sec for b in groups.get((point, base), [])]
        s = stats.summarize(rates, level)
        rel = stats.ratio_interval(base_rates, rates, level) if engine != base else None
        p = stats.mann_whitney_u(base_rates, rates)[1] if rel is not None else None
        change = (rel["ratio"] - 1) * 100 if rel else None
        rows.append({
            "point": point, "engine": engine, "base": engine == base, "n": s["n"], "summary": s,
            "median": s["median"], "relative": 1.0 if engine == base else (rel or {}).get("ratio"),
            "relative_interval": (rel or {}).get("interval"), "relative_level": (rel or {}).get("level"), "p": p,
            "verdict": None if engine == base else results_compare.verdict(metric, change, p, results_compare.ALPHA,
                                                                            results_compare.THRESHOLD_PCT),
            "cpu_us_per_op": _median(bs, lambda b: (b.accounting["cpu_user_s"] + b.accounting["cpu_sys_s"])
                                     / b.ops * 1e6 if b.ops else None),
            "read_kb_per_op": _median(bs, lambda b: b.accounting.get("io_kb_read_per_op")),
            "write_kb_per_op": _median(bs, lambda b: b.accounting.get("io_kb_written_per_op")),
            "write_amp": _median(bs, lambda b: (b.amplification or {}).get("write_amp")),
        })
    order = list(dict.fromkeys(maincompare.point_of(b) for b in results if b.phase == "run"))
    names = list(dict.fromkeys(b.engine for b in results))
    rows.sort(key=lambda r: (order.index(r["point"]), not r["base"], names.index(r["engine"])))
    return rows


def builds(results) -> list[dict]:
    """Each version's build as its records say it (in the order they ran): where the engine came from, its compiler
    flags and whether its assertions are compiled in (the build facts every record carries)."""
    seen: dict = {}
    for b in results:
        eb = (b.versions or {}).get("engine_build") or {}
        if b.engine not in seen and eb:
            seen[b.engine] = {"engine": b.engine, "origin": eb.get("origin"), "flags": eb.get("compiler_flags"),
                              "assertions": eb.get("assertions")}
    return list(seen.values())


def build_difference(rows: list[dict]) -> str | None:
    """Why the versions' figures mix code with build, or None when they were built alike: the engines' assertions
    differ (compiled in or not), or their compiler flags come from different builds."""
    said = []
    if len({r["assertions"] for r in rows}) > 1:
        said.append("assertions compiled in: " + ", ".join(f"{r['engine']} {yes_no(r['assertions'])}" for r in rows))
    if len({_flags_kind(r["flags"]) for r in rows}) > 1:
        said.append("compiler flags: " + "; ".join(f"{r['engine']}: {r['flags'] or 'not known'}" for r in rows))
    return ("the versions were not built alike, so a difference between them is the code's and the build's "
            "together (docs/versions.md): " + "; ".join(said)) if said else None


def yes_no(v) -> str:
    return "not known" if v is None else "yes" if v else "no"


def _flags_kind(flags) -> str:
    """The build a flags description names, without the adapter's own flags (the same for every version): its -O
    level, NDEBUG and target where the description starts with them (kvlab.execution.native's), so that a crate's
    build and a CMake build with the same three are alike."""
    build = (flags or "not known").partition("; the adapter:")[0]
    return build.partition(" (")[0] if build.startswith("-O") else build


def _median(bs, value):
    got = []
    for b in bs:
        try:
            v = value(b)
        except (KeyError, TypeError):
            v = None
        if v is not None:
            got.append(v)
    return stats.summarize(got)["median"] if got else None
