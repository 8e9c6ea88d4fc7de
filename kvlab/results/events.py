"""Engine events: what each engine says about its background work (flushes, compactions, write stalls,
checkpoints, eviction), read from the `key=value` lines and the text its native `stats` call returns, and the
periods in which that work ran.

One row per adapter (`ENGINES`, from each engine's descriptor: kvlab/engines/<adapter>/events.py): a parser from (numbers, text) to named numeric fields, what each field
is (unit; a gauge read at the sample, or a cumulative counter whose increase over an interval is stored), and which
fields mark each kind of period.  A field the engine does not report is absent, never zero.  Each interval of a
result holds `events` (execution/run/intervals.py); `periods(result)` turns them into the spans `plots.timeline` shades.
"""
from __future__ import annotations

from .. import engines
from ..engines.descriptor import EngineEvents, Field  # noqa: F401 (kvlab.results.events.Field)

# what each kind of period means, for a legend and the docs
PERIOD_KINDS = {
    "flush": "memtable flush running",
    "compaction": "compaction (or LSM merge) running",
    "checkpoint": "checkpoint running",
    "stall": "writes stalled or slowed by the engine",
    "eviction": "application threads evicting pages",
}


# adapter -> how it reports its background work (its descriptor's `events`); an adapter without them records none
ENGINES: dict[str, EngineEvents] = {name: d.events for name, d in engines.DESCRIPTORS.items()
                                    if isinstance(d.events, EngineEvents)}


def parse(adapter: str, numbers: dict, text: str) -> dict | None:
    """The named fields of one stats reading, or None for an adapter without a row."""
    row = ENGINES.get(adapter)
    return None if row is None else row.parse(numbers or {}, text or "")


def interval(adapter: str, before: dict | None, after: dict | None) -> dict | None:
    """One interval's events: each gauge at its end, each counter's increase (absent where either end lacks it,
    or it went backwards: the engine was reopened)."""
    row = ENGINES.get(adapter)
    if row is None or after is None:
        return None
    out = {}
    for name, v in after.items():
        f = row.fields.get(name)
        if f is None:
            continue
        if f.kind == "gauge":
            out[name] = v
        elif before is not None and name in before and v >= before[name]:
            d = v - before[name]
            out[name] = round(d, 6) if isinstance(d, float) else d
    return out


def _adapter(b) -> str | None:
    return (b.versions or {}).get("adapter")


def periods(b, kinds=None) -> dict:
    """{kind: [(t_start_s, t_end_s), ...]} of a BenchmarkResult: runs of consecutive intervals in which a kind's
    work ran (a gauge above 0 at either end of the interval, or a counter that grew in it).  Kinds the engine
    does not report are absent; a kind it reports that never ran has an empty list."""
    adapter = _adapter(b)
    row = ENGINES.get(adapter) if adapter is not None else None
    if row is None:
        return {}
    out = {}
    for kind, names in row.periods.items():
        if kinds is not None and kind not in kinds:
            continue
        spans: list[tuple[float, float]] = []
        prev: dict = {}
        reported = False
        for iv in b.intervals:
            ev = iv.get("events")
            if ev is None:
                prev = {}
                continue
            on = False
            for name in names:
                f = row.fields[name]
                if name in ev:
                    reported = True
                    on = on or ev[name] > 0 or (f.kind == "gauge" and prev.get(name, 0) > 0)
            prev = ev
            if on:
                if spans and abs(spans[-1][1] - iv["t_start_s"]) < 1e-9:
                    spans[-1] = (spans[-1][0], iv["t_end_s"])
                else:
                    spans.append((iv["t_start_s"], iv["t_end_s"]))
        if reported:
            out[kind] = spans
    return out


def fields(adapter: str) -> dict:
    """{field: Field} an adapter reports (empty for one without a row)."""
    row = ENGINES.get(adapter)
    return dict(row.fields) if row is not None else {}
