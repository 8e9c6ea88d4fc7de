"""A sweep's figure: its metric against one axis, with the median's interval as a band, in a grid of panels for
the other axes that vary."""
from __future__ import annotations

from ... import errors
from ..._optional import require
from .style import ENGINE_HUES, axis_label, engine_palette, house_style, si


def sweep(frame, metric: str = "ops_per_sec", x: str = "threads", axes=None, hue: str | None = None,
          col: str | None = None, row: str | None = None, log: bool = False, title: str | None = None):
    """A sweep's tidy frame (kvlab.results.sweeps.tidy): `metric` (the median across repeats, with its
    median's interval as a band) against axis `x`; the other axes that vary go to hue, then columns, then rows
    (or as named).  Several workloads or phases in the frame get columns of their own."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    import numpy as np
    frame, hue, hue_label, col, row = _sweep_layout(frame, metric, x, axes, hue, col, row)
    house_style()
    rows = list(dict.fromkeys(frame[row])) if row else [None]
    cols = list(dict.fromkeys(frame[col])) if col else [None]
    fig, grid = plt.subplots(len(rows), len(cols), figsize=(min(16, 4.6 * len(cols) + 1.6), 3.6 * len(rows)),
                             squeeze=False, sharex=True, sharey=True)
    band, band_words = _sweep_band(frame, metric)
    hues = list(dict.fromkeys(frame[hue])) if hue else [None]
    colors = engine_palette(hues) if hue in ENGINE_HUES else \
        dict(zip(hues, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 10))
    numeric_x = np.issubdtype(frame[x].dtype, np.number)
    for i, rv in enumerate(rows):
        for j, cv in enumerate(cols):
            ax = grid[i][j]
            part = frame
            if row:
                part = part[part[row] == rv]
            if col:
                part = part[part[col] == cv]
            for hv in hues:
                d = part[part[hue] == hv] if hue else part
                if not d.empty:
                    _sweep_line(ax, d, x, metric, colors[hv], str(hv) if hue else metric, band, numeric_x)
            _sweep_axes(ax, frame, x, log, numeric_x)
            parts = [f"{row}={rv}" if row else "", f"{col}={cv}" if col else ""]
            ax.set_title(", ".join(p for p in parts if p), fontsize=10)
            ax.set_xlabel(axis_label(x) if i == len(rows) - 1 else "")
            ax.set_ylabel(axis_label(metric) if j == 0 else "")
    if hue:
        seen = {}
        for ax in grid.flat:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
        fig.legend(list(seen.values()), list(seen), title=hue_label, loc="upper left", bbox_to_anchor=(1.0, 0.95),
                   frameon=False)
    n = sorted(set(frame["repeats"])) if "repeats" in frame.columns else []
    reps = f"{n[0]} repeats" if len(n) == 1 else "repeats"
    # two lines: one panel is narrower than the whole sentence
    fig.suptitle(title or f"{metric.replace('_', ' ')} by {x}: median of {reps}\n{band_words}", fontweight="bold",
                 fontsize=11)
    fig.tight_layout()
    return fig


def _sweep_layout(frame, metric, x, axes, hue, col, row):
    """(frame, hue, its legend title, col, row): the sweep's axes that vary, given to hue, then columns, then
    rows unless named; more than three join the hue."""
    if metric not in frame.columns:
        allowed = [c for c in frame.columns if f"{c}_ci95_lo" in frame.columns]
        raise errors.SpecError(f"metric {metric!r} is not in the sweep's frame; allowed: {', '.join(allowed)}")
    axes = [a for a in (axes or [c for c in frame.columns if c not in ("workload", "phase", "repeats", "hosts")
                                 and not c.endswith(("_ci95_lo", "_ci95_hi", "_ci_level")) and c != metric])
            if a in frame.columns]
    if x not in frame.columns:
        raise errors.SpecError(f"x={x!r} is not an axis of the sweep; allowed: {', '.join(axes)}")
    varying = [a for a in axes if a != x and frame[a].astype(str).nunique() > 1]
    for extra in ("workload", "phase"):
        if frame[extra].nunique() > 1:
            varying.append(extra)
    free = [a for a in varying if a not in (hue, col, row)]
    hue = hue or (free.pop(0) if free else None)
    col = col or (free.pop(0) if free else None)
    row = row or (free.pop(0) if free else None)
    if free:   # more varying axes than hue, columns and rows: they join the hue
        frame = frame.assign(_hue=frame[[hue] + free].astype(str).agg(", ".join, axis=1))
        return frame, "_hue", ", ".join([hue] + free), col, row
    return frame, hue, hue, col, row


def _sweep_band(frame, metric) -> tuple:
    """(draw the band, the words for the title): the median's interval exists from 3 repeats (results.stats);
    below 95% with 3-5 (the min-max range)."""
    band = "repeats" in frame.columns and frame["repeats"].min() >= 3 and f"{metric}_ci95_lo" in frame.columns
    level = float(frame[f"{metric}_ci_level"].astype(float).min()) \
        if band and f"{metric}_ci_level" in frame.columns else 0.95
    words = ("(an interval band needs 3 or more)" if not band else
             f"band: min-max, a {level:.0%} interval of the median (95% needs 6 repeats)"
             if level < 0.95 else "band: 95% interval of the median")
    return band, words


def _sweep_line(ax, d, x, metric, colour, label, band, numeric_x) -> None:
    d = d.sort_values(x) if numeric_x else d
    xs = d[x] if numeric_x else d[x].astype(str)
    ax.plot(xs, d[metric], marker="o", color=colour, label=label)
    lo, hi = d.get(f"{metric}_ci95_lo"), d.get(f"{metric}_ci95_hi")
    if lo is not None and band and lo.notna().any():
        ax.fill_between(xs, lo.astype(float), hi.astype(float), color=colour, alpha=0.18, linewidth=0)


def _sweep_axes(ax, frame, x, log, numeric_x) -> None:
    ticker = require("matplotlib.ticker", "kvlab's plots")
    if log:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(si))   # 2M, not a '1e6' above the axis
    if numeric_x and frame[x].nunique() > 1 and frame[x].min() > 0 and frame[x].max() / frame[x].min() >= 8:
        ax.set_xscale("log", base=2 if x == "threads" else 10)
    if numeric_x:
        ax.set_xticks(sorted(frame[x].unique()))
        ax.set_xticklabels([str(v) for v in sorted(frame[x].unique())])
        ax.minorticks_off()
