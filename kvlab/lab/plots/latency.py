"""Latency figures: the percentile spectrum of a histogram, and latency against throughput (open loop)."""
from __future__ import annotations

from ... import errors
from ..._optional import require
from .style import REFERENCE_COLOUR, engine_handles, engine_palette, house_style, one_legend, setting_words, si

_SPECTRUM_DECADES = 5          # 0% ... 99.999%
_VARIANT_MARKERS = ("o", "s", "^", "D", "v", "P")


def latency_spectrum(results, op="all", title=None):
    """HdrHistogram's percentile spectrum of each result's whole latency histogram: latency (µs, log)
    against percentile on a 1/(1-p) log axis from 0% to 99.999%, so the tail gets as much room as the body.
    One line per engine and op type (`op`: "all", an op type, "writer", or a list of them), in the engine's
    colour; lines of one engine that differ (op type, threads, workload) carry markers of their own.  An
    open-loop result draws its response time (solid) beside its service time (dashed).  Each line ends at
    the highest percentile its op count resolves (1 - 1/n).  A record without histograms (older than
    kvlab.result/6) shows the percentiles it saved, as points."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    ticker = require("matplotlib.ticker", "kvlab's plots")
    house_style()
    results = list(results)
    ops = [op] if isinstance(op, str) else list(op)
    colours = engine_palette([b.engine for b in results])
    # what tells two lines of one engine apart, named only where the results differ in it: every setting
    lines, variants = [], {}
    for b, words in zip(results, setting_words(results)):
        for o in ops:
            extra = ([o] if len(ops) > 1 else []) + words
            label = b.engine + (f" {', '.join(extra)}" if extra else "")
            seen = variants.setdefault(b.engine, {})
            lines.append((b, o, label, seen.setdefault(label, len(seen))))
    fig, ax = plt.subplots(figsize=(8.5, 4.6))
    drawn, open_loop = 0, False
    for b, o, label, variant in lines:
        colour = colours[b.engine]
        marker = _VARIANT_MARKERS[variant % len(_VARIANT_MARKERS)] if len(variants[b.engine]) > 1 else None
        if b.histograms is None:   # an older record: its saved points, no line between them
            lat = b.latency_us if o == "all" else (b.writer or {}).get("latency_us") if o == "writer" \
                else b.latency_by_op.get(o)
            pts = [(1 / (1 - q / 100), lat.get(k)) for k, q in (("p50", 50), ("p75", 75), ("p95", 95), ("p99", 99),
                                                                 ("p999", 99.9), ("p9999", 99.99))] if lat else []
            pts = [(x, v) for x, v in pts if v]
            if pts:
                ax.plot(*zip(*pts), linestyle="none", marker=marker or "o", color=colour,
                        label=f"{label} (saved percentiles)")
                drawn += 1
            continue
        has = o == "all" or o in b.latency_by_op or (o == "writer" and b.histograms.get("writer"))
        sides = [("service", b.histogram(o) if has else None)]
        if o == "all" and "response" in b.latency_by_op:
            sides.append(("response", b.histogram(o, kind="response")))
            open_loop = True
        for kind, h in sides:
            if h is None or h.count == 0:
                continue
            pct, ns = h.spectrum()
            x = 1 / (1 - pct / 100)
            ax.plot(x, ns / 1000, color=colour, linestyle="--" if kind == "service" and len(sides) > 1 else "-",
                    linewidth=1.6, marker=marker, markevery=_decade_points(x) if marker else None, markersize=5,
                    label=label + (f" ({kind})" if len(sides) > 1 else ""))
            drawn += 1
    if not drawn:
        have = sorted({k for b in results for k in b.latency_by_op})
        raise errors.SpecError(f"no result has a latency histogram for op {op!r}; they have: all, "
                               f"{', '.join(have)}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1, 10 ** _SPECTRUM_DECADES)
    ticks = [10 ** k for k in range(_SPECTRUM_DECADES + 1)]
    ax.set_xticks(ticks)
    ax.set_xticklabels(["0%"] + [f"{100 - 100 / t:.{max(k - 2, 0)}f}%" for k, t in enumerate(ticks[1:], 1)])
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(si))   # 100k us, never 1e+05
    ax.set_xlabel("percentile (log scale of 1/(1-p))")
    ax.set_ylabel("latency (µs, log scale)")
    workloads = list(dict.fromkeys(b.workload for b in results))
    ax.set_title(title or (f"{workloads[0]}: " if len(workloads) == 1 else "") + "latency by percentile"
                 + (f" ({', '.join(ops)})" if ops != ["all"] else "")
                 + ("; open loop: response solid, service dashed" if open_loop else ""), fontsize=11)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
    ax.grid(True, which="major", alpha=0.6)
    return fig


def _decade_points(x):
    """Indexes of a line's points nearest each decade of 1/(1-p) it reaches, for its markers."""
    import numpy as np
    return sorted({int(np.argmin(np.abs(np.log10(x) - k))) for k in range(_SPECTRUM_DECADES + 1)
                   if k <= np.log10(x[-1]) + 1e-9})


def latency_throughput(frame, title="latency against throughput (open loop)"):
    """Service and response latency (p50, p99) against the achieved rate, on the same axes, in the engine's
    colour: response solid, service dashed (as latency_spectrum draws them), p50 circles, p99 triangles.
    Past saturation the response time climbs while the service time does not."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.lines import Line2D
    house_style()
    engines = list(dict.fromkeys(frame["engine"])) if "engine" in frame.columns else [None]
    colours = engine_palette([e for e in engines if e is not None])
    series = (("response_p50_us", "-", "o", "response p50"), ("response_p99_us", "-", "^", "response p99"),
              ("service_p50_us", "--", "o", "service p50"), ("service_p99_us", "--", "^", "service p99"))
    fig, ax = plt.subplots()
    for engine in engines:
        part = frame if engine is None else frame[frame.engine == engine]
        part = part.sort_values("achieved_rate")
        for col, style, marker, label in series:
            ax.plot(part["achieved_rate"], part[col], linestyle=style, marker=marker, markersize=5,
                    color=colours.get(engine, REFERENCE_COLOUR),
                    label=f"{engine} {label}" if engine is not None and len(engines) > 1 else label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("achieved transactions/s (log scale)")
    ax.set_ylabel("latency (µs, log scale)")
    ax.set_title(title if len(engines) != 1 or engines[0] is None else f"{engines[0]}: {title}")
    fig.tight_layout()
    handles = [Line2D([], [], color="#444444", linestyle=style, marker=marker, label=label)
               for _, style, marker, label in series]
    if len(engines) > 1:
        handles = engine_handles(colours, marker=None) + handles
    one_legend(fig, handles)
    return fig
