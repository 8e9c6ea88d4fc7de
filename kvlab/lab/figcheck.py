"""The figure check: what makes a figure untrustworthy to a reader, found on the drawn figure itself.

`check_figure(fig)` draws the figure (Agg) and returns a list of `Problem`s, empty when the figure is
clean.  `plots.save` runs it on every figure it exports (so every figure the notebooks write); the rules are
STYLE.md's point 17, each one a function of what is on the canvas, in display coordinates:

- legend-over-data: a legend's box holds a data point (a line's vertex, a scatter point) or covers part of
  a bar, in any panel (a legend beside its axes can still fall on the next panel);
- text-overlap: two texts overlap (titles, axis labels, tick labels in view, legend texts, annotations,
  the caption; rotated labels as rotated boxes), a panel's text runs into another panel's plot area (an axis
  label into its neighbour), a panel's title wider than its panel reaches over a neighbouring panel (a
  reader cannot tell whose title it is, even where the neighbour's own title is short enough to miss it), or a
  legend's box covers a text that is not its own;
- hidden-line: a data line lies exactly under one drawn after it (every vertex within a point of the upper
  line's, the same or no marker, no wider, not dashed over solid): engines paced to one rate draw one line,
  and only the last shows;
- repeated-legend: one label in two legends of one figure: panels that share hues get one legend;
- duplicate-legend-entry: two entries of one legend with the same text (a reader cannot tell the lines
  apart: the setting that differs between them, a value size, a thread count, is not in their labels);
- reference-beyond-machine: a reference line (labelled "ideal...", or with gid "reference") on a CPU %
  axis above 100% x the cores, or on a speedup axis ("relative to 1 thread", "speedup") above the cores;
- percentile-of-too-few-ops: a category on a percentile axis (p50, p99, p99.9 ...) that has too few
  operations to have that percentile (p99 needs 100; db_bench's compact is one operation);
- axis-without-unit: an axis labelled 'value' (or 'values', 'metric'): one panel per unit instead;
- engine-colour: one engine drawn in two colours, or (given the house palette) not in its own colour.

Texts may touch: every box is shrunk by 1 pixel (at the figure's dpi) before it is tested.  A closed figure
is drawn on a fresh Agg canvas (`render`).
"""
from __future__ import annotations

import math
import os
import re
from typing import NamedTuple

from .._optional import require

# Operations a workload makes when no result says otherwise: db_bench's compact compacts once.
ONE_OPERATION = {"compact": 1}

# Labels that name no quantity, so no unit.
_UNITLESS_LABELS = {"value", "values", "metric", "metrics", "y"}

_TOLERANCE_PX = 1.0   # texts may touch: each box is shrunk by this much on every side before testing


class Problem(NamedTuple):
    rule: str
    message: str

    def __str__(self):
        return f"{self.rule}: {self.message}"


def check_figure(fig, results=None, palette=None, cores: int | None = None, op_counts=None) -> list:
    """Every problem of `fig` (see the module's docstring), as a list of Problems.

    results: BenchmarkResults the figure draws, for the operation counts behind percentiles (op_counts, a
    {workload: ops} mapping, may be given instead or as well).  palette: the house palette, a function of
    names giving {name: colour} (plots.engine_palette); without it, engine colours are checked only for
    agreement within the figure.  cores: the machine that reference lines describe (default: this one)."""
    require("matplotlib", "the figure check")
    renderer = render(fig)
    cores = cores or os.cpu_count() or 1
    counts = op_counts_of(results, op_counts)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    legends = _legends(fig, axes)
    problems = []
    problems += _legend_over_data(axes, legends, renderer)
    problems += _text_overlap(fig, axes, legends, renderer)
    problems += _title_over_neighbour(axes, renderer)
    problems += _hidden_lines(axes, renderer)
    problems += _repeated_legend(legends)
    problems += _duplicate_legend_entries(legends)
    problems += _reference_beyond_machine(axes, cores)
    problems += _percentile_of_too_few_ops(axes, counts)
    problems += _axis_without_unit(axes)
    problems += _engine_colour(axes, legends, palette)
    return problems


# --- what is on the canvas ---------------------------------------------------------------------------

def render(fig):
    """Lay the figure out and draw it, as savefig would; returns the renderer.  A closed figure (plt.close)
    is left a canvas that draws nothing, with texts where they were last put: it gets an Agg canvas."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def _legends(fig, axes):
    out = [ax.get_legend() for ax in axes if ax.get_legend() is not None and ax.get_legend().get_visible()]
    return out + [lg for lg in fig.legends if lg.get_visible()]


def _where(ax) -> str:
    title = ax.get_title() or ax.get_ylabel() or "axes"
    return f"panel '{_short(title)}'"


def _short(text: str, n: int = 40) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


def _finite_box(bbox, clip):
    """A display box with infinities (a bar from 0 on a log axis) cut to `clip`."""
    x0, y0, x1, y1 = (v if math.isfinite(v) else (-1e9 if v < 0 else 1e9) for v in bbox.extents)
    x0, x1 = sorted((x0, x1))
    y0, y1 = sorted((y0, y1))
    cx0, cy0, cx1, cy1 = clip.extents
    return max(x0, cx0), max(y0, cy0), min(x1, cx1), min(y1, cy1)


def _data_points(ax):
    """(line or collection, [(x, y) display points inside the axes])."""
    import numpy as np
    box = ax.bbox
    out = []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = np.asarray(line.get_xydata(), dtype=float)
        if xy.size == 0:
            continue
        pts = line.get_transform().transform(xy)
        pts = pts[np.isfinite(pts).all(axis=1)]
        pts = pts[(pts[:, 0] >= box.x0 - 1) & (pts[:, 0] <= box.x1 + 1) & (pts[:, 1] >= box.y0 - 1)
                  & (pts[:, 1] <= box.y1 + 1)]
        if len(pts):
            out.append((line, pts))
    for coll in ax.collections:
        if not coll.get_visible() or type(coll).__name__ != "PathCollection":
            continue
        offsets = np.asarray(coll.get_offsets(), dtype=float)
        if offsets.size == 0:
            continue
        pts = coll.get_offset_transform().transform(offsets)
        pts = pts[np.isfinite(pts).all(axis=1)]
        if len(pts):
            out.append((coll, pts))
    return out


def _bars(ax, renderer):
    from matplotlib.patches import Rectangle
    out = []
    for patch in ax.patches:
        if not patch.get_visible() or not isinstance(patch, Rectangle):
            continue
        if patch.get_width() == 0 or patch.get_height() == 0:
            continue
        x0, y0, x1, y1 = _finite_box(patch.get_window_extent(renderer), ax.bbox)
        if x1 > x0 and y1 > y0:
            out.append((patch, (x0, y0, x1, y1)))
    return out


# --- legend over data --------------------------------------------------------------------------------

def _legend_over_data(axes, legends, renderer):
    problems = []
    for lg in legends:
        b = lg.get_window_extent(renderer)
        x0, y0, x1, y1 = b.x0 + _TOLERANCE_PX, b.y0 + _TOLERANCE_PX, b.x1 - _TOLERANCE_PX, b.y1 - _TOLERANCE_PX
        for ax in axes:
            hidden = 0
            for _, pts in _data_points(ax):
                hidden += int(((pts[:, 0] > x0) & (pts[:, 0] < x1) & (pts[:, 1] > y0) & (pts[:, 1] < y1)).sum())
            bars = sum(1 for _, (bx0, by0, bx1, by1) in _bars(ax, renderer)
                       if bx0 < x1 and bx1 > x0 and by0 < y1 and by1 > y0)
            if hidden or bars:
                what = ", ".join(p for p in (f"{hidden} data point{'s' * (hidden != 1)}" if hidden else "",
                                             f"{bars} bar{'s' * (bars != 1)}" if bars else "") if p)
                problems.append(Problem("legend-over-data", f"the legend ({_legend_name(lg)}) covers {what} of "
                                                            f"{_where(ax)}: put it beside the axes"))
    return problems


def _legend_name(lg) -> str:
    labels = [t.get_text() for t in lg.get_texts()]
    return _short(", ".join(labels), 50)


# --- overlapping text --------------------------------------------------------------------------------

def _texts(fig, axes, legends):
    """Every text drawn: (artist, owner: its legend, its axes, or None for the figure's own)."""
    from matplotlib.text import Text
    out, seen = [], set()

    def add(t, owner=None):
        if id(t) in seen or not isinstance(t, Text) or not t.get_visible() or not t.get_text().strip():
            return
        seen.add(id(t))
        out.append((t, owner))

    for t in fig.texts:
        add(t)
    if fig._suptitle is not None:
        add(fig._suptitle)
    for label in (getattr(fig, "_supxlabel", None), getattr(fig, "_supylabel", None)):
        if label is not None:
            add(label)
    for ax in axes:
        for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
            if t is not None:
                add(t, ax)
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():
                continue
            add(axis.label, ax)
            add(axis.get_offset_text(), ax)
            for tick in _ticks_drawn(axis):
                for label in (tick.label1, tick.label2):
                    add(label, ax)
        for t in ax.texts:
            add(t, ax)
    for lg in legends:
        for t in lg.get_texts() + [lg.get_title()]:
            add(t, lg)
    return out


def _ticks_drawn(axis):
    """The ticks the axis draws: the ones in view (matplotlib keeps spare ticks at stale places)."""
    if hasattr(axis, "_update_ticks"):
        return axis._update_ticks()
    lo, hi = sorted(axis.get_view_interval())
    locs = list(axis.get_majorticklocs())
    return [t for t, loc in zip(axis.get_major_ticks(len(locs)), locs) if lo <= loc <= hi]


def _polygon(t, renderer):
    """A text's ink box as four display corners: rotated texts as rotated boxes, not their upright bounds."""
    ext = t.get_window_extent(renderer)
    angle = t.get_rotation() % 360
    cx, cy = (ext.x0 + ext.x1) / 2, (ext.y0 + ext.y1) / 2
    if angle % 90 == 0:
        w, h = ext.width, ext.height
        angle = 0.0
    else:
        t.set_rotation(0)
        flat = t.get_window_extent(renderer)
        t.set_rotation(angle)
        w, h = flat.width, flat.height
    w, h = max(w - 2 * _TOLERANCE_PX, 0), max(h - 2 * _TOLERANCE_PX, 0)
    a = math.radians(angle)
    c, s = math.cos(a), math.sin(a)
    return [(cx + dx * c - dy * s, cy + dx * s + dy * c) for dx, dy in
            ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))]


def _box_polygon(b):
    x0, y0 = b.x0 + _TOLERANCE_PX, b.y0 + _TOLERANCE_PX
    x1, y1 = b.x1 - _TOLERANCE_PX, b.y1 - _TOLERANCE_PX
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _overlap(p, q) -> bool:
    """Two convex polygons overlap (separating axis theorem); touching is not overlapping."""
    if (max(x for x, _ in p) <= min(x for x, _ in q) or max(x for x, _ in q) <= min(x for x, _ in p)
            or max(y for _, y in p) <= min(y for _, y in q) or max(y for _, y in q) <= min(y for _, y in p)):
        return False
    for poly in (p, q):
        for i in range(len(poly)):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % len(poly)]
            nx, ny = y0 - y1, x1 - x0
            if nx == 0 and ny == 0:
                continue
            pa = [nx * x + ny * y for x, y in p]
            qa = [nx * x + ny * y for x, y in q]
            if max(pa) <= min(qa) or max(qa) <= min(pa):
                return False
    return True


def _text_overlap(fig, axes, legends, renderer):
    texts = [(t, owner, _polygon(t, renderer)) for t, owner in _texts(fig, axes, legends)]
    texts = [(t, owner, poly) for t, owner, poly in texts if poly[1][0] != poly[0][0] or poly[2][1] != poly[1][1]]
    problems = []
    for i, (a, _, pa) in enumerate(texts):
        for b, _, pb in texts[i + 1:]:
            if _overlap(pa, pb):
                problems.append(Problem("text-overlap", f"'{_short(a.get_text())}' overlaps "
                                                        f"'{_short(b.get_text())}'"))
    for ax in axes:   # an axis label or tick label of one panel running into the next panel's plot area
        area = _box_polygon(ax.bbox)
        for t, owner, poly in texts:
            if owner is not ax and owner in axes and _overlap(area, poly):
                problems.append(Problem("text-overlap", f"'{_short(t.get_text())}' of {_where(owner)} runs into "
                                                        f"{_where(ax)}"))
    boxes = [(lg, _box_polygon(lg.get_window_extent(renderer))) for lg in legends]
    for lg, box in boxes:
        for t, owner, poly in texts:
            if owner is not lg and _overlap(box, poly):
                problems.append(Problem("text-overlap", f"the legend ({_legend_name(lg)}) covers "
                                                        f"'{_short(t.get_text())}'"))
    for i, (a, pa) in enumerate(boxes):
        for b, pb in boxes[i + 1:]:
            if _overlap(pa, pb):
                problems.append(Problem("text-overlap", f"the legends ({_legend_name(a)}) and "
                                                        f"({_legend_name(b)}) overlap"))
    return problems


def _titles(ax):
    return [t for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None))
            if t is not None and t.get_visible() and t.get_text().strip()]


def _title_over_neighbour(axes, renderer):
    """A panel's title reaching over another panel's column: across its plot area's width, from its bottom to
    above its top by twice the title's height (where that panel's own title would be).  A title that also
    meets the other's title or plot area is left to _text_overlap, which names that."""
    from matplotlib.transforms import Bbox
    problems = []
    for ax in axes:
        for t in _titles(ax):
            poly = _polygon(t, renderer)
            height = max(y for _, y in poly) - min(y for _, y in poly)
            for other in axes:
                b = other.bbox
                if other is ax or b.width <= 0:
                    continue
                column = _box_polygon(Bbox.from_extents(b.x0, b.y0, b.x1, b.y1 + 2 * height + 4))
                met = [_polygon(u, renderer) for u in _titles(other)] + [_box_polygon(b)]
                if _overlap(poly, column) and not any(_overlap(poly, q) for q in met):
                    problems.append(Problem("text-overlap", f"the title '{_short(t.get_text())}' of {_where(ax)} "
                                                            f"reaches over {_where(other)}: wrap it to its panel"))
    return problems


# --- a line hidden under another ---------------------------------------------------------------------

def _no_marker(line) -> bool:
    return line.get_marker() in (None, "None", "none", "", " ", ",")


def _draws_segments(line) -> bool:
    return line.get_linestyle() not in ("None", "none", "", " ") and line.get_linewidth() > 0


def _hidden_lines(axes, renderer):
    """Each data line whose every vertex sits within a point of a vertex of a line drawn above it, with the
    same marker (or none) no larger and, where it draws segments, the upper one's no thinner: nothing of it
    shows.  Reference lines are left out (a data line on the ideal is the ideal reached)."""
    import numpy as np
    tol = renderer.points_to_pixels(1.0)
    problems = []
    for ax in axes:
        children = {id(c): k for k, c in enumerate(ax.get_children())}
        drawn = []
        for line in ax.get_lines():
            if not line.get_visible() or _is_reference(line) or (line.get_alpha() or 1) <= 0:
                continue
            if str(line.get_gid() or "") == "median-interval":   # an interval's caps: one over the other when narrow
                continue
            if _no_marker(line) and not _draws_segments(line):
                continue
            xy = np.asarray(line.get_xydata(), dtype=float)
            if xy.size == 0:
                continue
            pts = line.get_transform().transform(xy)
            pts = pts[np.isfinite(pts).all(axis=1)]
            if len(pts):
                drawn.append(((line.get_zorder(), children.get(id(line), 0)), line, pts))
        drawn.sort(key=lambda d: d[0])
        for i, (_, low, lp) in enumerate(drawn):
            for _, high, hp in drawn[i + 1:]:
                if _covers(high, hp, low, lp, tol):
                    problems.append(Problem("hidden-line", f"{_line_name(low)} in {_where(ax)} lies exactly under "
                                                           f"{_line_name(high)}: nothing of it shows (give each "
                                                           "its own marker and a small dodge, or draw the "
                                                           "shared value once)"))
                    break
    return problems


def _covers(high, hp, low, lp, tol) -> bool:
    import numpy as np
    if (high.get_alpha() or 1) < 1:
        return False
    if not _no_marker(low) and (high.get_marker() != low.get_marker()
                                or high.get_markersize() < low.get_markersize() - 1e-9):
        return False
    segments = _draws_segments(low) and len(lp) > 1
    if segments and (not _draws_segments(high) or high.get_linewidth() < low.get_linewidth() - 1e-9
                     or (high.get_linestyle() not in ("-", "solid") and high.get_linestyle() != low.get_linestyle())):
        return False   # a dashed line over a solid one shows the solid one in its gaps
    dist = np.hypot(lp[:, None, 0] - hp[None, :, 0], lp[:, None, 1] - hp[None, :, 1])
    nearest = dist.argmin(axis=1)
    if not (dist[np.arange(len(lp)), nearest] <= tol).all():
        return False
    # segments lie on the upper line's only between neighbouring vertices of it
    return not segments or bool((np.abs(np.diff(nearest)) == 1).all())


def _line_name(line) -> str:
    from matplotlib.colors import to_rgb
    label = str(line.get_label())
    return f"'{label}'" if label and not label.startswith("_") else f"the {_hex(to_rgb(line.get_color()))} line"


# --- one legend for shared hues ----------------------------------------------------------------------

def _repeated_legend(legends):
    problems, seen = [], {}
    for k, lg in enumerate(legends):
        for t in lg.get_texts():
            label = t.get_text().strip().lower()
            if label and label in seen and seen[label] != k:
                problems.append(Problem("repeated-legend", f"'{t.get_text()}' is in {len(legends)} legends: "
                                                           "panels that share hues get one legend"))
                break
            seen.setdefault(label, k)
    return problems


def _duplicate_legend_entries(legends):
    problems = []
    for lg in legends:
        counts: dict[str, int] = {}
        for t in lg.get_texts():
            if t.get_visible() and t.get_text().strip():
                counts[t.get_text().strip()] = counts.get(t.get_text().strip(), 0) + 1
        for label, n in counts.items():
            if n > 1:
                problems.append(Problem("duplicate-legend-entry", f"the legend ({_legend_name(lg)}) has {n} entries "
                                f"'{_short(label)}': name the setting that differs between their lines"))
    return problems


# --- reference lines bounded by the machine ----------------------------------------------------------

def _is_reference(line) -> bool:
    return str(line.get_label()).strip().lower().startswith("ideal") or \
        str(line.get_gid() or "").startswith("reference")


def _reference_beyond_machine(axes, cores):
    import numpy as np
    problems = []
    for ax in axes:
        ylabel = ax.get_ylabel()
        if re.search(r"CPU\s*%", ylabel, re.I):
            bound, unit = 100 * cores, f"{100 * cores}% ({cores} cores)"
        elif re.search(r"relative to 1 thread|speedup", ylabel, re.I):
            bound, unit = cores, f"{cores}x ({cores} cores)"
        else:
            continue
        for line in ax.get_lines():
            if not _is_reference(line):
                continue
            y = np.asarray(line.get_ydata(), dtype=float)
            y = y[np.isfinite(y)]
            if len(y) and y.max() > bound * (1 + 1e-9):
                problems.append(Problem("reference-beyond-machine",
                                        f"'{line.get_label()}' in {_where(ax)} reaches {y.max():g}, above what this "
                                        f"machine can do: {unit}"))
    return problems


# --- percentiles of too few operations ---------------------------------------------------------------

_PERCENTILE = re.compile(r"(?<![a-z0-9])p(\d{2,})(?!\d)", re.I)   # p99, p99_us, "p99 (µs)"; not "top99"


def op_counts_of(results=None, given=None) -> dict:
    """{workload: the fewest operations any of `results` made of it}, with `given` ({name: ops}) and
    ONE_OPERATION beneath."""
    counts = dict(ONE_OPERATION)
    for name, n in (given or {}).items():
        counts[name] = min(counts.get(name, n), n)
    for b in results or []:
        counts[b.workload] = min(counts.get(b.workload, b.ops), b.ops)
    return counts


def ops_needed(label: str) -> int | None:
    """The operations a percentile named in `label` needs to differ from the maximum: p99 -> 100,
    p99.9/p999 -> 1000, p50 -> 2; None when the label names no percentile."""
    m = _PERCENTILE.search(label.replace("p99.99", "p9999").replace("p99.9", "p999"))
    if not m:
        return None
    q = float("0." + m.group(1))
    return math.ceil(1 / (1 - q) - 1e-9)


def too_few_ops(name: str, label: str, counts: dict) -> int | None:
    """The op count of `name` when it is too small for the percentile `label` names, else None."""
    needed = ops_needed(label)
    n = counts.get(str(name).strip(), ONE_OPERATION.get(str(name).strip()))
    return n if needed is not None and n is not None and n < needed else None


def _percentile_of_too_few_ops(axes, counts):
    problems = []
    for ax in axes:
        for label, axis in ((ax.get_ylabel() or ax.get_title(), ax.xaxis), (ax.get_xlabel(), ax.yaxis)):
            if ops_needed(label or "") is None:
                continue
            names = [t.get_text() for tick in _ticks_drawn(axis) for t in (tick.label1,) if t.get_visible()]
            names += [t.get_text() for t in (ax.get_legend().get_texts() if ax.get_legend() else [])]
            for name in names:
                n = too_few_ops(name, label, counts)
                if n is not None:
                    problems.append(Problem("percentile-of-too-few-ops",
                                            f"'{name}' in {_where(ax)} is {n} operation{'s' * (n != 1)}: it has no "
                                            f"{_PERCENTILE.search(label.replace('.', '')).group(0)} "
                                            f"(that needs {ops_needed(label)})"))
    return problems


# --- one unit per axis -------------------------------------------------------------------------------

def _axis_without_unit(axes):
    problems = []
    for ax in axes:
        for which, label in (("y", ax.get_ylabel()), ("x", ax.get_xlabel())):
            if label.strip().lower() in _UNITLESS_LABELS:
                problems.append(Problem("axis-without-unit", f"the {which} axis of {_where(ax)} is labelled "
                                                             f"'{label}': one panel per unit, each named"))
    return problems


# --- one colour per engine ---------------------------------------------------------------------------

def _handle_colour(h):
    from matplotlib.colors import to_rgb
    try:
        if hasattr(h, "get_color") and type(h).__name__ == "Line2D":
            if h.get_linestyle() in ("None", "none", "", " ") and h.get_marker() in (None, "None", "none", ""):
                return None   # seaborn's title rows in a legend
            return to_rgb(h.get_color())
        if hasattr(h, "get_facecolor"):
            fc = h.get_facecolor()
            if hasattr(fc, "ndim") and fc.ndim == 2:
                fc = fc[0] if len(fc) else None
            return to_rgb(fc) if fc is not None and (len(fc) < 4 or fc[3] > 0) else None
    except (ValueError, TypeError):
        return None
    return None


def _engine_of(label: str):
    from .. import engines
    token = re.split(r"[\s,:(]", label.strip().lower(), maxsplit=1)[0]
    return token if token in engines.listed() else None


def engine_colours(fig) -> dict:
    """{engine: {colour (r, g, b rounded to 3 places): a label drawn in it}} for every registered engine that a
    legend entry or a labelled line of `fig` names (by its first word: "rocksdb (service)" is rocksdb)."""
    render(fig)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    return _drawn_engines(axes, _legends(fig, axes))


def _drawn_engines(axes, legends):
    drawn = {}
    for lg in legends:
        for h, t in zip(getattr(lg, "legend_handles", None) or getattr(lg, "legendHandles", []), lg.get_texts()):
            colour = _handle_colour(h)
            engine = _engine_of(t.get_text())
            if colour is not None and engine:
                drawn.setdefault(engine, {}).setdefault(tuple(round(c, 3) for c in colour), t.get_text())
    for ax in axes:
        for line in ax.get_lines():
            label = str(line.get_label())
            engine = None if label.startswith("_") else _engine_of(label)
            colour = _handle_colour(line)
            if engine and colour is not None:
                drawn.setdefault(engine, {}).setdefault(tuple(round(c, 3) for c in colour), label)
    return drawn


def _engine_colour(axes, legends, palette):
    drawn = _drawn_engines(axes, legends)
    problems = []
    for engine, colours in drawn.items():
        if len(colours) > 1:
            problems.append(Problem("engine-colour", f"{engine} is drawn in {len(colours)} colours "
                                                     f"({', '.join(_hex(c) for c in colours)})"))
        if palette is not None:
            from matplotlib.colors import to_rgb
            want = tuple(round(c, 3) for c in to_rgb(palette([engine])[engine]))
            wrong = [c for c in colours if max(abs(a - b) for a, b in zip(c, want)) > 0.002]
            if wrong:
                problems.append(Problem("engine-colour", f"{engine} is drawn in {_hex(wrong[0])}, not its colour "
                                                         f"{_hex(want)} (plots.engine_palette)"))
    return problems


def _hex(c) -> str:
    return "#" + "".join(f"{round(v * 255):02x}" for v in c[:3])
