"""Bar charts: `bars` (one bar per x, one colour per hue level) and seed 003's panels of tests."""
from __future__ import annotations

from ..._optional import require
from ...results import stats
from .. import figcheck
from .style import (
    ENGINE_HUES,
    OTHER_COLOURS,
    axis_label,
    engine_palette,
    house_style,
    one_legend,
    palette_for,
    rate_axis,
)


def _log_from_a_decade(ax):
    """Bars on a log scale start at the decade below the smallest bar, so the smallest one is a bar too (their
    lengths mean nothing on a log scale; read their tops)."""
    import math
    tops = [p.get_y() + p.get_height() for p in ax.patches if p.get_height() > 0]
    if tops:
        ax.set_ylim(bottom=10 ** math.floor(math.log10(min(tops))), top=10 ** (math.log10(max(tops)) + 0.15))


def _bar_handles(colours: dict):
    from matplotlib.patches import Patch
    return [Patch(facecolor=c, edgecolor="none", label=str(name)) for name, c in colours.items()]


def bars(frame, x, y, hue="engine", title="", log=False, ylabel=None, results=None, note=None):
    """Bars of `y` per `x`, one colour per `hue` level from engine_palette (a hue of None with x="engine":
    each bar in its engine's colour).  Each bar is the median of its rows; where a bar has 3 or more, a
    whisker is the median's interval (results.stats: exact order statistics), and the legend says its level
    (75% for the min-max of 3; 95% from 6).  A percentile (y = p99_us ...) is not drawn for an x that has too
    few operations to have it (db_bench's compact is one operation; `results` give the counts): the title
    says so.  `note`: what else a reader must know to read the bars (which x has no bar of some hue, and why),
    in smaller type under the title."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    import numpy as np
    house_style()
    dropped = []
    if figcheck.ops_needed(y) is not None:
        counts = figcheck.op_counts_of(results)
        dropped = [v for v in dict.fromkeys(frame[x]) if figcheck.too_few_ops(v, y, counts) is not None]
        frame = frame[~frame[x].isin(dropped)]
    legend = hue is not None
    if hue is None and x in ENGINE_HUES:
        hue = x
    colours = palette_for(frame, hue) or {}
    import pandas as pd
    xs = sorted(frame[x].dropna().unique()) if pd.api.types.is_numeric_dtype(frame[x]) else \
        list(dict.fromkeys(frame[x].dropna()))
    hues = [None] if hue is None or hue == x else list(dict.fromkeys(frame[hue].dropna()))
    width = 0.8 / len(hues)
    fig, ax = plt.subplots()
    levels = []
    for j, hv in enumerate(hues):
        part = frame if hv is None else frame[frame[hue] == hv]
        for i, xv in enumerate(xs):
            values = stats.clean(part[part[x] == xv][y])
            if not len(values):
                continue
            at = i + (j - (len(hues) - 1) / 2) * width
            median = float(np.median(values))
            colour = colours.get(xv if hue == x else hv, OTHER_COLOURS[0])
            ax.bar([at], [median], width=width, color=colour, edgecolor="none")
            ci = stats.median_interval(values)
            if ci is not None:
                ax.errorbar([at], [median], yerr=[[median - ci[0]], [ci[1] - median]], fmt="none",
                            ecolor=_WHISKER, elinewidth=1.2, capsize=3, gid="median-interval")
                levels.append(ci[2])
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([str(v) for v in xs])
    ax.set_xlim(-0.6, len(xs) - 0.4)
    ax.set_xlabel(x)
    if log:
        ax.set_yscale("log")
        _log_from_a_decade(ax)
    if dropped:
        counts = figcheck.op_counts_of(results)
        said = ", ".join(f"{d} ({counts.get(d, 1)} op{'s' * (counts.get(d, 1) != 1)})" for d in dropped)
        title = f"{title}\nnot drawn: {said}, too few for a {y.split('_')[0]}"
    _titled(ax, fig, title, note)
    ax.set_ylabel(ylabel or axis_label(y))
    if not log:
        rate_axis(ax)
    _slant_if_crowded(ax)
    fig.tight_layout()
    handles = _bar_handles(colours) if legend and hue != x else []
    if levels:
        handles.append(_whisker_handle(levels))
    if handles:   # beside the axes, never over the bars
        one_legend(fig, handles, title=hue if legend and hue != x else None)
    return fig


_WHISKER = "#333333"
NOTE_SIZE = 8   # points: a note under a title


def _titled(ax, fig, title, note=None):
    """The title, and `note` (wrapped to the figure's width) in smaller grey type between it and the axes."""
    if not note:
        ax.set_title(title)
        return
    import textwrap
    width = max(40, int(fig.get_size_inches()[0] * 72 * 0.8 / (NOTE_SIZE * 0.55)))   # characters that fit
    lines = textwrap.wrap(note, width)
    ax.annotate("\n".join(lines), xy=(0.5, 1.0), xycoords="axes fraction", xytext=(0, 4), textcoords="offset points",
                ha="center", va="bottom", fontsize=NOTE_SIZE, color="#444444", gid="note")
    ax.set_title(title, pad=8 + len(lines) * NOTE_SIZE * 1.25)


def _whisker_handle(levels):
    """The legend's entry for the whiskers, with the confidence they have: 'median's 75% interval (min-max of
    3)', or its range where bars differ in how many values they have."""
    from matplotlib.lines import Line2D
    lo, hi = min(levels), max(levels)
    said = stats._percent(lo) if round(lo, 6) == round(hi, 6) else f"{stats._percent(lo)} to {stats._percent(hi)}"
    return Line2D([], [], color=_WHISKER, marker="|", markersize=10, linewidth=1.2,
                  label=f"bar: median; whisker: median's {said} interval")


def _slant_if_crowded(ax):
    labels = [t.get_text() for t in ax.get_xticklabels()]
    if labels and max(len(t) for t in labels) * len(labels) > 60:   # names wider than their slots would overlap
        ax.set_xticks(ax.get_xticks())
        ax.set_xticklabels(labels, rotation=30, ha="right", rotation_mode="anchor")


def seed003_tests(measured, published=None, title="seed 003's tests: the embedded engines beside FoundationDB's "
                                                    "published figure"):
    """Seed 003's six tests, one panel per unit (writes/s, reads/s, ops/s, keys/s), FoundationDB's published
    bar in each beside the embedded engines'; log scales (the engines are orders of magnitude apart)."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    import pandas as pd
    house_style()
    cols = ["engine", "test", "metric", "value"]
    frame = measured[cols]
    if published is not None:
        frame = pd.concat([published.assign(engine="FoundationDB (published)")[cols], frame], ignore_index=True)
    engines = list(dict.fromkeys(frame["engine"]))
    colours = engine_palette(engines)
    units = list(dict.fromkeys(frame["metric"]))
    widths = [frame[frame.metric == u]["test"].nunique() for u in units]
    fig, axes = plt.subplots(1, len(units), figsize=(1.6 * sum(widths) + 1.0 * len(units), 4.4), squeeze=False,
                             gridspec_kw={"width_ratios": widths})
    for ax, unit in zip(axes[0], units):
        part = frame[frame.metric == unit]
        sns.barplot(data=part, x="test", y="value", hue="engine", hue_order=engines, palette=colours, saturation=1,
                    legend=False, ax=ax)
        ax.set_yscale("log")
        _log_from_a_decade(ax)
        ax.set_ylabel(axis_label(unit) + " (log scale)")
        ax.set_xlabel("")
        ax.set_xticks(ax.get_xticks())
        ax.set_xticklabels([t.get_text() for t in ax.get_xticklabels()], rotation=20, ha="right",
                           rotation_mode="anchor")
    fig.suptitle(title, fontweight="bold")
    fig.tight_layout(w_pad=1.5)
    one_legend(fig, _bar_handles(colours), title="engine")
    return fig
