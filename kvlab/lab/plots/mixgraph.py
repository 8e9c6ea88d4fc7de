"""`plots.mixgraph`: Meta's mixgraph per engine (kvlab.lab.seeds.field.mixgraph_queries' frame): queries/s, each
bar cut into its gets, puts and seeks, and beside it each engine's mix as shares of its queries."""
from __future__ import annotations

from ..._optional import require
from .style import engine_palette, house_style, one_legend, rate_axis

# each query type drawn in the engine's colour, told apart by its fill: (frame column stem, legend words, style)
_TYPES = (("get", "gets", dict(alpha=1.0, hatch=None)),
          ("put", "puts", dict(alpha=0.55, hatch="///")),
          ("seek", "seeks (scans)", dict(alpha=0.3, hatch="xxx")))


def mixgraph(frame, title: str | None = None):
    """Left: queries/s per engine (closed loop), each bar stacked from its gets/s, puts/s and seeks/s; right:
    the share of each query type in the engine's queries (%), the mix the preset asks for (83/14/3)."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.patches import Patch
    house_style()
    engines = list(frame.engine)
    colours = engine_palette(engines)
    fig, (rate, share) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    xs = range(len(engines))
    for ax, unit in ((rate, "_per_sec"), (share, "_pct")):
        bottom = [0.0] * len(engines)
        for stem, _, style in _TYPES:
            values = list(frame[f"{stem}s{unit}" if unit == "_per_sec" else f"{stem}{unit}"])
            ax.bar(xs, values, bottom=bottom, width=0.7, color=[colours[e] for e in engines],
                   edgecolor="white", linewidth=0.6, **style)
            bottom = [b + v for b, v in zip(bottom, values)]
        ax.set_xticks(list(xs))
        ax.set_xticklabels(engines, rotation=30 if len(engines) > 3 else 0,
                           ha="right" if len(engines) > 3 else "center", rotation_mode="anchor")
        ax.set_xlim(-0.6, len(engines) - 0.4)
        ax.set_xlabel("engine")
        ax.grid(False, axis="x")   # a category axis: no line through the bars' lighter parts
    rate.set_ylabel("queries/s (gets + puts + seeks)")
    rate_axis(rate)
    rate.set_title("queries/s, closed loop", fontsize=11)
    share.set_ylabel("share of the queries (%)")
    share.set_ylim(0, 100)
    share.set_title("the mix each engine ran", fontsize=11)
    fig.suptitle(title or "mixgraph (the paper's parameters) per engine", fontsize=12, fontweight="bold")
    fig.tight_layout()
    grey = "#7F7F7F"
    handles = [Patch(facecolor=grey, edgecolor="white", label=words, **style) for _, words, style in _TYPES]
    one_legend(fig, handles, title="query type\n(bars in each\nengine's colour)")
    return fig
