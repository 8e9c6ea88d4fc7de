"""A comparison (kvlab.compare's frame) as a forest plot."""
from __future__ import annotations

from ..._optional import require
from .. import figcheck
from .style import house_style, needs_columns

_VERDICT_COLOURS = {"faster": "#1a9850", "better": "#1a9850", "slower": "#d73027", "worse": "#d73027",
                    "~": "#777777"}


def compare(frame, title: str | None = None):
    """A comparison (kvlab.compare's frame) as a forest plot: one panel per metric, one row per matched
    benchmark; B's median as the change against A's median (%), with B's interval of the median as a bar,
    A's own interval as a grey band around 0, the noise floor shaded, and the marker coloured by the
    verdict (green better, red worse, grey ~).  The geometric mean is the diamond at the bottom."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.lines import Line2D

    from ...results.compare import BY_NAME
    needs_columns(frame, ("a_median", "b_median", "change_pct", "metric", "verdict"),
                  "plots.compare draws kvlab.compare's frame")
    house_style()
    metrics = [m for m in dict.fromkeys(frame.metric) if m in BY_NAME]
    match = frame.attrs.get("match") or [c for c in ("workload", "phase", "threads") if c in frame.columns]
    rows = frame[frame.metric == metrics[0]] if metrics else frame
    # a geomean pools one phase kind: with several kinds compared (loads=True), each geomean names its own
    kinds = len(set(frame.phase[frame.geomean_of.notna()].dropna())) if {"phase", "geomean_of"} <= set(frame) else 1
    labels = list(dict.fromkeys(_compare_label(r, match, kinds) for r in rows.to_dict("records")))
    ncols = min(3, len(metrics)) or 1
    nrows = -(-len(metrics) // ncols) or 1
    fig, grid = plt.subplots(nrows, ncols, figsize=(4.4 * ncols + 1.8, 0.42 * len(labels) * nrows + 1.6 * nrows),
                             squeeze=False, sharey=True)
    position = {label: len(labels) - 1 - i for i, label in enumerate(labels)}

    def relative(v, base):
        return (v / base - 1) * 100 if v is not None and v == v and base else None

    for ax, name in zip(grid.flat, metrics):
        m = BY_NAME[name]
        part = frame[frame.metric == name]
        floors = part.floor_pct.dropna() if "floor_pct" in part else []
        floor = float(floors.max()) if len(floors) else frame.attrs.get("threshold_pct", 2.0)
        ax.axvspan(-floor, floor, color="#dddddd", alpha=0.6, linewidth=0)
        ax.axvline(0, color="#444444", linewidth=0.8)
        for r in part.to_dict("records"):
            y = position.get(_compare_label(r, match, kinds))
            base = r["a_median"]
            if y is None or base is None or base != base or base == 0:
                continue
            geomean = r.get("geomean_of") is not None and r.get("geomean_of") == r.get("geomean_of")
            if not geomean:
                a_lo, a_hi = relative(r.get("a_ci_lo"), base), relative(r.get("a_ci_hi"), base)
                if a_lo is not None:
                    ax.plot([a_lo, a_hi], [y - 0.18] * 2, color="#999999", linewidth=3, solid_capstyle="butt")
                b_lo, b_hi = relative(r.get("b_ci_lo"), base), relative(r.get("b_ci_hi"), base)
                if b_lo is not None:
                    ax.plot([b_lo, b_hi], [y + 0.05] * 2, color="#333333", linewidth=1.2)
            change = r["change_pct"]
            if change is None or change != change or abs(change) == float("inf"):
                continue
            colour = _VERDICT_COLOURS.get(r.get("verdict") or "~", "#777777")
            ax.plot([change], [y + 0.05], marker="D" if geomean else "o", markersize=7 if geomean else 6,
                    color=colour if not geomean else "#222222", markerfacecolor=colour if not geomean else "white")
        # non-breaking spaces: '(lower is better)' stays on one line when the title is wrapped to its panel
        ax.set_title(f"{m.label} ({'higher' if m.higher_is_better else 'lower'}\u00a0is\u00a0better)", fontsize=9)
        ax.set_xlabel("change of B against A's median (%)")
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(list(reversed(labels)), fontsize=8)
        ax.set_ylim(-0.7, len(labels) - 0.3)
    for ax in list(grid.flat)[len(metrics):]:
        ax.set_visible(False)
    legend = [Line2D([], [], marker="o", linestyle="", color=_VERDICT_COLOURS["better"], label="better / faster"),
              Line2D([], [], marker="o", linestyle="", color=_VERDICT_COLOURS["worse"], label="worse / slower"),
              Line2D([], [], marker="o", linestyle="", color=_VERDICT_COLOURS["~"], label="~ (no significant change)"),
              Line2D([], [], marker="D", linestyle="", color="#222222", markerfacecolor="white",
                     label="geometric mean"),
              Line2D([], [], color="#333333", linewidth=1.2, label="B: interval of its median"),
              Line2D([], [], color="#999999", linewidth=3, label="A: interval of its median"),
              Line2D([], [], color="#dddddd", linewidth=8, label="noise floor")]
    fig.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 0.95), frameon=False, fontsize=8)
    fig.suptitle(title or f"{_side_name('B', frame.attrs.get('b'))} against {_side_name('A', frame.attrs.get('a'))}",
                 fontweight="bold")
    # a metric's name can be wider than its panel (the amplification panels'): wrapped to the panel, then laid
    # out again for the taller titles, then wrapped again to the panels' final widths
    fig.tight_layout()
    for _ in range(2):
        renderer = figcheck.render(fig)
        for ax in list(grid.flat)[:len(metrics)]:
            _wrap_title_to_panel(ax, renderer)
        fig.tight_layout()
    return fig


def _side_name(side: str, label) -> str:
    """'B (tag:v4000)'; a label that already names its side ('B (lmdb, in hand)') as it is."""
    if not label:
        return side
    return str(label) if str(label).split(" ")[0] == side else f"{side} ({label})"


def _wrap_title_to_panel(ax, renderer) -> None:
    """The axes' title broken at spaces into as few lines as keep it within the panel's width."""
    import textwrap
    title = ax.title
    # split at plain spaces only (str.split() would split at the no-break spaces meant to hold words together)
    text = " ".join(w for w in title.get_text().replace("\n", " ").split(" ") if w)
    width = ax.get_window_extent(renderer).width
    for chars in range(len(text), 7, -1):
        title.set_text("\n".join(textwrap.wrap(text, chars, break_long_words=False)))
        if title.get_window_extent(renderer).width <= width:
            return


def _compare_label(r: dict, match, kinds: int = 1) -> str:
    geomean = r.get("geomean_of") is not None and r.get("geomean_of") == r.get("geomean_of")
    if geomean:
        return f"geomean ({r.get('phase')})" if kinds > 1 and r.get("phase") else "geomean"
    parts = []
    for k in match:
        v = r.get(k)
        if v is None or v != v:
            continue
        parts.append(f"{v} thr" if k == "threads" else str(v))
    return " ".join(parts)
