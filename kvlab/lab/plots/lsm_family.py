"""The LSM family side by side (kvlab.lab.seeds.lsm_family's frame): per workload, each engine's throughput with
the median's interval, its write amplification and its space amplification, one colour per engine."""
from __future__ import annotations

from ..._optional import require
from .style import engine_palette, house_style, needs_columns, rate_axis

NEEDED = ("engine", "workload", "median_ops_per_sec", "ops_lo", "ops_hi", "ops_level", "write_amp", "space_amp")
_WHISKER = "#333333"


def lsm_family(frame, title: str | None = None):
    """Three panels over the workloads, one bar per engine in its colour: the median ops/s over the rounds (the
    median's interval a whisker, where 3 or more rounds give one), the median write amplification (the workloads
    that write) and the median space amplification after each phase.  A figure kvlab could not measure for an
    engine is written "n/a" where its bar would be, never drawn as 0; one legend above the panels."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    needs_columns(frame, NEEDED, "plots.lsm_family draws kvlab.lab.reproduce.lsm_family's frame")
    house_style()
    names = list(dict.fromkeys(frame["engine"]))
    workloads = list(dict.fromkeys(frame["workload"]))
    writing = [w for w in workloads if frame[(frame.workload == w)]["write_amp"].notna().any()] or workloads
    colours = engine_palette(names)
    width = 0.8 / max(1, len(names))
    fig, axes = plt.subplots(1, 3, figsize=(max(12.0, 1.2 * len(names) * 3), 4.2))
    levels = []
    panels = ((axes[0], "median_ops_per_sec", workloads, "throughput (ops/s, higher is better)"),
              (axes[1], "write_amp", writing, "write amplification (lower is better)"),
              (axes[2], "space_amp", workloads, "space amplification after the phase (lower is better)"))
    for ax, column, ws, label in panels:
        for j, name in enumerate(names):
            mine = frame[frame.engine == name].set_index("workload")
            for i, w in enumerate(ws):
                x = i - 0.4 + width * (j + 0.5)
                v = mine[column].get(w) if w in mine.index else None
                if not _is(v):
                    ax.text(x, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize=8, color="#444444")
                    continue
                ax.bar(x, v, width * 0.9, color=colours[name], edgecolor="none")
                lo, hi = (mine["ops_lo"].get(w), mine["ops_hi"].get(w)) if column == "median_ops_per_sec" else \
                    (None, None)
                if _is(lo) and _is(hi):
                    ax.errorbar(x, v, yerr=[[max(0.0, v - lo)], [max(0.0, hi - v)]], fmt="none", ecolor=_WHISKER,
                                elinewidth=1.1, capsize=2, gid="median-interval")
                    levels.append(mine["ops_level"].get(w))
        ax.set_title(label, fontsize=10)
        ax.set_xticks(range(len(ws)), ws)
        ax.set_xlim(-0.6, len(ws) - 0.4)
        ax.grid(axis="x", visible=False)
    rate_axis(axes[0])
    for ax in axes[1:]:
        ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], 1.05) * 1.05)
        ax.axhline(1.0, color="#666666", linestyle=":", linewidth=1.0, gid="reference")
    handles = [Patch(facecolor=colours[n], edgecolor="none", label=n) for n in names]
    handles.append(Line2D([], [], color="#666666", linestyle=":", label="1.0: no amplification"))
    shown = sorted({round(100 * v) for v in levels if _is(v)})
    if shown:
        handles.append(Line2D([], [], color=_WHISKER, marker="|", markersize=10, linewidth=1.1,
                              label=f"whisker: the median's {', '.join(f'{v}%' for v in shown)} interval"))
    fig.tight_layout()
    # one legend above the panels (the caption plots.save writes goes below them; a legend anchored to the figure's
    # foot moves onto it when the saved figure's box is made tight), the title above the legend
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(handles), 5),
               fontsize=9, frameon=False)
    if title:
        rows = -(-len(handles) // 5)
        fig.suptitle(title, fontsize=10, y=1.05 + 0.065 * rows)
    return fig


def _is(v) -> bool:
    import math
    return v is not None and not (isinstance(v, float) and math.isnan(v))
