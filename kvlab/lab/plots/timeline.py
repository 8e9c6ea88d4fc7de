"""`plots.timeline`: throughput and p99 latency over time, one panel above the other, with the periods in which
the engine flushed, compacted, checkpointed, evicted from application threads or stalled writes shaded behind
both (kvlab.results.events reads them from each interval's `events`).

Phases of one run (a load, then a workload) are drawn one after another on one time axis, each from its own
start, with a dotted line where the next begins.  Plots only read results.
"""
from __future__ import annotations

import statistics

from ... import errors
from ..._optional import require
from ...results import events
from .style import REFERENCE_COLOUR, engine_palette, house_style, rate_axis

# Shading per kind of period: light, none an engine's colour, distinct also as hatching where two overlap.
KIND_STYLE = {
    "compaction": {"facecolor": "#F4C7A1", "hatch": None},
    "flush": {"facecolor": "none", "edgecolor": "#7F7F7F", "hatch": "////"},
    "checkpoint": {"facecolor": "#C9B8E8", "hatch": None},
    "eviction": {"facecolor": "#D9D9D9", "hatch": None},
    "stall": {"facecolor": "#E8A0A0", "hatch": None},
}
# drawn bottom to top: eviction (often long) under the others, the flush hatch over every fill
_ORDER = ("eviction", "compaction", "checkpoint", "stall", "flush")
# an interval with fewer operations has no such percentile (the figure check's rule, applied per interval)
_MIN_OPS = {"p50": 2, "p99": 100, "p999": 1000}
_PERCENTILE_WORDS = {"p50": "p50", "p99": "p99", "p999": "p99.9", "max": "max"}


def _benchmarks(result, engine, workloads) -> list:
    """The BenchmarkResults to draw: with intervals, of one engine, in the order they ran."""
    bs = list(getattr(result, "benchmarks", None) or ([result] if hasattr(result, "intervals") else result))
    if workloads is not None:
        wanted = [workloads] if isinstance(workloads, str) else list(workloads)
        bs = [b for b in bs if b.workload in wanted]
    if engine is not None:
        bs = [b for b in bs if b.engine == engine]
    bs = [b for b in bs if b.intervals]
    if not bs:
        raise errors.SpecError("timeline: no result with intervals to draw (run with interval > 0)")
    names = list(dict.fromkeys(b.engine for b in bs))
    if len(names) > 1:
        raise errors.SpecError(f"timeline draws one engine; these results hold {', '.join(names)}: pass engine=")
    return bs


def _series(b, op, percentile):
    """(the op whose latency is drawn, [(t_start, t_end, ops/s, p99 µs or None)]) of one phase: a mix's
    transactions, else the op with the most operations."""
    totals = {}
    for iv in b.intervals:
        for name, n in iv["workers"]["ops"].items():
            totals[name] = totals.get(name, 0) + n
    if op is None:
        op = "txn" if "txn" in totals else max(totals, key=totals.get)
    rows = []
    for iv in b.intervals:
        w = iv["workers"]
        rate = w["ops_per_sec"].get("txn") if "txn" in totals else sum(w["ops_per_sec"].values())
        lat = w["latency_us"].get(op, {})
        enough = percentile == "max" or w["ops"].get(op, 0) >= _MIN_OPS[percentile]
        p99 = lat.get(percentile) if enough else None
        rows.append((iv["t_start_s"], iv["t_end_s"], rate or 0.0, p99))
    return op, rows


def timeline(result, engine: str | None = None, workloads=None, op: str | None = None, kinds=None,
             percentile: str = "p99", title: str | None = None):
    """Throughput (top) and p99 latency (bottom) per interval of `result` (a RunResult, a BenchmarkResult or a
    list of them, one engine: pass `engine` to pick one), with the engine's background work shaded: a period is
    the intervals in which that work was running or its counter grew (kvlab.results.events).  `workloads`: the
    phases to draw (default all with intervals); `op`: whose p99 (default a mix's transactions, else the most
    frequent op); `percentile`: the latency drawn ("p50", "p99", "p999" or "max"); `kinds`: the kinds of period
    to shade (default every kind the engine reports)."""
    if percentile not in _PERCENTILE_WORDS:
        raise errors.SpecError(f"percentile={percentile!r}; allowed: {', '.join(_PERCENTILE_WORDS)}")
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.patches import Patch
    house_style()
    bs = _benchmarks(result, engine, workloads)
    name = bs[0].engine
    colour = engine_palette([name])[name]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7.5, 5.0))
    offset, reported, ran, ops, p99_all = 0.0, {}, set(), [], []
    boundaries = []
    for i, b in enumerate(bs):
        op_b, rows = _series(b, op, percentile)
        ops.append(op_b)
        x = [offset + (t0 + t1) / 2 for t0, t1, _, _ in rows]
        top.plot(x, [r for _, _, r, _ in rows], color=colour, marker="o", ms=3, lw=1.4,
                 label=name if i == 0 else "_" + name)
        px = [(xx, p) for xx, (_, _, _, p) in zip(x, rows) if p is not None]
        if px:
            bottom.plot([a for a, _ in px], [p for _, p in px], color=colour, marker="o", ms=3, lw=1.4,
                        label="_" + name)
            p99_all += [p for _, p in px]
        for kind, spans in events.periods(b, kinds).items():
            reported.setdefault(kind, 0)
            for t0, t1 in spans:
                ran.add(kind)
                reported[kind] += 1
                for ax in (top, bottom):
                    ax.axvspan(offset + t0, offset + t1, lw=0, zorder=0.5 + _ORDER.index(kind) / 10,
                               alpha=0.9, **KIND_STYLE[kind])
        end = offset + rows[-1][1]
        boundaries.append((offset, end, b.workload))
        offset = end
    for start, _, _ in boundaries[1:]:
        for ax in (top, bottom):
            ax.axvline(start, color=REFERENCE_COLOUR, ls=":", lw=1.0, zorder=1)
    unit = bs[0].latency_unit
    rate_word = "transactions/s" if ops[0] == "txn" else "ops/s"
    top.set_ylabel(rate_word)
    rate_axis(top)
    if p99_all and min(p99_all) > 0 and max(p99_all) / min(p99_all) > 30:
        bottom.set_yscale("log")
        # decades labelled, never the minor ticks (a range of under two decades labels some, and they collide)
        bottom.yaxis.set_minor_formatter(require("matplotlib.ticker", "kvlab's plots").NullFormatter())
    else:
        bottom.set_ylim(bottom=0)
    what = "transaction" if ops[0] == "txn" else f"{'/'.join(dict.fromkeys(ops))} {'batch' if unit == 'batch' else 'op'}"
    bottom.set_ylabel(f"{_PERCENTILE_WORDS[percentile]} per {what} (µs)")
    bottom.set_xlabel("time since the phase started (s)" if len(bs) == 1 else
                      "time (s): phases one after another, each from its start")
    phases = " then ".join(w for _, _, w in boundaries)
    secs = statistics.median(iv["seconds"] for iv in max(bs, key=lambda b: len(b.intervals)).intervals)
    heading = f"{name}: throughput and {_PERCENTILE_WORDS[percentile]} per {secs:.2g} s interval"
    top.set_title(title or (f"{heading}, {phases}" if len(bs) == 1 else heading), fontsize=11)
    for start, end, w in boundaries if len(boundaries) > 1 else []:
        top.text((start + end) / 2, 1.01, w, transform=top.get_xaxis_transform(), ha="center", va="bottom",
                 fontsize=8, color="#444444")
    if len(boundaries) > 1:
        top.set_title(title or heading, fontsize=11, pad=14)
    fig.tight_layout()
    handles = []   # the title names the engine; the legend says what the shading means
    for kind in _ORDER:
        if kind in reported:
            label = events.PERIOD_KINDS[kind] + ("" if kind in ran else " (none here)")
            handles.append(Patch(label=label, **{k: v for k, v in KIND_STYLE[kind].items()
                                                 if k != "edgecolor" or kind == "flush"}))
    if not handles:
        handles.append(Patch(facecolor="none", edgecolor="none", label="no engine events recorded"))
    fig.legend(handles=handles, title="shaded: intervals with", loc="upper left", bbox_to_anchor=(1.0, 0.92),
               frameon=False, fontsize=8, title_fontsize=9)
    return fig
