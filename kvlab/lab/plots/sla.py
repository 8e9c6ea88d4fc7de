"""The best rate under a latency bound: the curve `kvlab sla` walked (kvlab.services.sla's Outcome), and every
engine's walk at one bound in one figure (`sla_curves`, from kvlab.lab.seeds.field.curves_frame)."""
from __future__ import annotations

from ..._optional import require
from .style import REFERENCE_COLOUR, engine_palette, house_style, one_legend, si

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


def sla_curves(frame, title=None):
    """Every engine's walk at one bound (kvlab.lab.seeds.field.curves_frame: a row per probe): the measured
    percentile's median against the offered rate (the probe's target), both on log axes (the walk spans decades of
    rate, and past saturation latency climbs by decades), a line per engine in its colour through its probes in
    rate order, each probe's marker its verdict (filled: passed), the bound as a horizontal line and each engine's
    answer (the highest rate shown to pass) as a star on its curve."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    ticker = require("matplotlib.ticker", "kvlab's plots")
    from matplotlib.lines import Line2D
    house_style()
    bound_us, q = float(frame.bound_us.iloc[0]), float(frame.percentile.iloc[0])
    name = f"p{q:g}"
    scale, unit = (1000.0, "ms") if bound_us >= 1000 else (1.0, "µs")
    engines = list(dict.fromkeys(frame.engine))
    colours = engine_palette(engines)
    fig, ax = plt.subplots(figsize=(9, 4.8))
    handles = []
    answers = []
    for engine in engines:
        walk = frame[(frame.engine == engine) & frame.latency_us.notna()].sort_values("target_rate")
        colour = colours[engine]
        if walk.target_rate.nunique() > 1:   # a walk of one rate is its marker alone (a line of one vertex hides)
            ax.plot(walk.target_rate, walk.latency_us / scale, color=colour, linewidth=1.2, alpha=0.8)
        for verdict, (marker, filled, _) in _VERDICTS.items():
            part = walk[walk.verdict == verdict]
            ax.plot(part.target_rate, part.latency_us / scale, linestyle="none", marker=marker, markersize=7,
                    color=colour, markerfacecolor=colour if filled else "white", markeredgecolor=colour)
        answer = walk.answer.iloc[0] if len(walk) else None
        said = "no rate passed"
        if answer is not None and answer == answer:
            at = walk[walk.target_rate == answer]
            if len(at):
                ax.plot([answer], [at.latency_us.iloc[0] / scale], linestyle="none", marker="*", markersize=17,
                        color=colour, markeredgecolor="black", markeredgewidth=0.8, zorder=5)
            said = f"{answer:,.0f} txn/s"
            answers.append(answer)
        handles.append(Line2D([], [], color=colour, marker="o", label=f"{engine}: {said}"))
    ax.axhline(bound_us / scale, color="#C00000", linewidth=1.4)
    handles.append(Line2D([], [], color="#C00000", linewidth=1.4,
                          label=f"bound: {name} ≤ {bound_us / scale:g} {unit}"))
    handles.append(Line2D([], [], linestyle="none", marker="*", markersize=13, color="white",
                          markeredgecolor="black", label="answer: the highest rate shown to pass"))
    grey = "#555555"
    for verdict, (marker, filled, words) in _VERDICTS.items():
        if (frame.verdict == verdict).any():
            handles.append(Line2D([], [], linestyle="none", marker=marker, markersize=7, color=grey,
                                  markerfacecolor=grey if filled else "white", markeredgecolor=grey, label=words))
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_minor_formatter(ticker.NullFormatter())
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(si))
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:,g}"))
    ax.set_xlabel("offered rate (transactions/s, the probe's target; log scale)")
    ax.set_ylabel(f"{name} response time ({unit}, median of the runs; log scale)")
    workload = frame.workload.iloc[0]
    ax.set_title(title or f"{workload}: the highest rate under {name} ≤ {bound_us / scale:g} {unit}, per engine",
                 fontsize=11)
    ax.grid(True, which="major", alpha=0.6)
    fig.tight_layout()
    one_legend(fig, handles, title="engine: its answer")
    return fig
