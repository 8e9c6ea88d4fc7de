"""The best rate under a latency bound: the curve `kvlab sla` walked (kvlab.services.sla's Outcome)."""
from __future__ import annotations

from ..._optional import require
from .style import REFERENCE_COLOUR, engine_palette, house_style, si

# how each verdict is drawn: (marker, filled, legend words)
_VERDICTS = {"pass": ("o", True, "pass"), "fail": ("s", True, "fail: over the bound"),
             "undecided": ("D", False, "undecided: interval holds the bound"),
             "overloaded": ("v", False, "overloaded: achieved short of the target")}


def sla(outcome, title=None):
    """The percentile of response time (from the intended start) against the achieved rate of each probe,
    in the engine's colour, with the interval of its median as an error bar and its verdict as the marker;
    the bound drawn as a labelled horizontal line, the answer as a vertical line, the closed-loop capacity as a
    grey dashed one.  Latency on a log axis (past saturation it climbs by decades), rates on a linear one."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    ticker = require("matplotlib.ticker", "kvlab's plots")
    house_style()
    bound = outcome.bound
    name = f"p{bound.percentile:g}"
    scale, unit = (1000.0, "ms") if bound.latency_us >= 1000 else (1.0, "µs")
    engine = outcome.spec.engine
    colour = engine_palette([engine])[engine]
    fig, ax = plt.subplots(figsize=(8.5, 4.6))
    probes = [p for p in outcome.probes if p.latency.get("median") is not None]
    for verdict, (marker, filled, words) in _VERDICTS.items():
        part = [p for p in probes if p.verdict == verdict]
        if not part:
            continue
        x = [p.achieved["median"] for p in part]
        y = [p.latency["median"] / scale for p in part]
        ax.plot(x, y, linestyle="none", marker=marker, markersize=7, color=colour,
                markerfacecolor=colour if filled else "white", markeredgecolor=colour,
                label=f"{engine} probe: {words}")
        spread = [(p.achieved["median"], p.latency["median"] / scale, p.latency["median_ci"]) for p in part
                  if p.latency.get("median_ci") and p.latency["median_ci"][1] > p.latency["median_ci"][0]]
        if spread:   # the interval of the median, where the runs gave one that is not a point
            ax.errorbar([s[0] for s in spread], [s[1] for s in spread], fmt="none", ecolor=colour, capsize=3,
                        yerr=[[s[1] - s[2][0] / scale for s in spread], [s[2][1] / scale - s[1] for s in spread]])
    walked = sorted(probes, key=lambda p: p.achieved["median"])
    ax.plot([p.achieved["median"] for p in walked], [p.latency["median"] / scale for p in walked], color=colour,
            linewidth=1, alpha=0.5)
    ax.axhline(bound.latency_us / scale, color="#C00000", linestyle="-", linewidth=1.4,
               label=f"bound: {name} ≤ {bound.latency_us / scale:g} {unit}")
    lo, hi = outcome.bracket
    if outcome.answer is not None:
        ax.axvline(outcome.answer, color=colour, linestyle=":", linewidth=1.6,
                   label=f"answer: {outcome.answer:,.0f} txn/s (target)")
        if hi is not None:
            ax.axvspan(lo, hi, color=colour, alpha=0.12, linewidth=0, label=f"bracket: {lo:,.0f} to {hi:,.0f} txn/s")
    if outcome.capacity:
        ax.axvline(outcome.capacity, color=REFERENCE_COLOUR, linestyle="--", linewidth=1.2,
                   label=f"closed-loop capacity: {outcome.capacity:,.0f} txn/s")
    ax.set_yscale("log")
    ax.set_xlim(left=0)
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(si))
    ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:,g}"))   # 0.5, 2, 20,000: never 2x10^0
    ax.yaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("achieved rate (transactions/s, median of the runs at a target)")
    ax.set_ylabel(f"{name} response time ({unit}, log scale)")
    workload = ",".join(outcome.spec.workloads)
    ax.set_title(title or f"{engine} {workload}: highest rate under {name} ≤ {bound.latency_us / scale:g} {unit}",
                 fontsize=11)
    ax.grid(True, which="major", alpha=0.6)
    fig.tight_layout()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False, fontsize=9)
    return fig
