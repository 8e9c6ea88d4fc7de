"""Figures in one house style, exported as SVG, PNG and PDF with a caption line.

Plots only read results (frames and BenchmarkResults); they never run anything.
Every caption names the engines with their library version and build, flags
builds with assertions, and states the scale and the machine.
"""
from __future__ import annotations

from pathlib import Path

from .._optional import require
from ..execution import accounting
from . import figcheck

# Published engines drawn in the colour of the kvlab configuration that is the same engine, so a reader
# matches "rocksdb (published)" to "rocksdb (measured)" across panels and figures.
_SAME_ENGINE = {"wiredtiger": "wiredtiger-btree", "foundationdb": "fdb", "foundationdb (published)": "fdb",
                "berkeleydb": "bdb"}

# One fixed colour per registered engine configuration, in the registry's order (lmdb, leveldb, rocksdb,
# rocksdb-tuned, wiredtiger-btree, wiredtiger-lsm, bdb, bdb-notxn, null, fdb): Okabe and Ito's colour-blind-safe
# palette without its yellow (too pale for a line on white), then Tol's indigo and wine, and a light grey for the
# null engine.  Every pair stays apart by CIEDE2000 >= 20 to normal vision and >= 10 under simulated protanopia,
# deuteranopia and tritanopia (tests/test_figures.py); seaborn's "colorblind" gave wiredtiger-btree and bdb two
# pinks 14.5 apart.
ENGINE_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#56B4E9", "#CC79A7", "#D55E00", "#000000", "#882255",
                  "#BBBBBB", "#332288")
# Names that are no engine (a setting, a loop, an engine published but not built here) take these, which no
# engine has, in order of appearance; also the default cycle, so an unnamed series never looks like an engine.
OTHER_COLOURS = ("#8B4513", "#DDCC77", "#AA4499", "#44AA99", "#999933", "#CC6677", "#117733", "#88CCEE")
# Reference lines (ideal, machine bounds): grey, dashed, no markers.
REFERENCE_COLOUR = "#666666"


def engine_palette(names) -> dict:
    """One colour per engine, the same in every figure: kvlab's configurations in registry order take
    ENGINE_COLOURS; published names take their kvlab twin's; anything else one of OTHER_COLOURS, in order."""
    from matplotlib.colors import to_rgb

    from ..model import engines
    known = list(engines.listed())   # a planned engine too: its published figures keep their colour
    fixed = {name: to_rgb(ENGINE_COLOURS[i]) for i, name in enumerate(known) if i < len(ENGINE_COLOURS)}
    spare = [to_rgb(c) for c in OTHER_COLOURS]
    for name in known[len(ENGINE_COLOURS):]:   # a configuration registered after these ten
        fixed[name] = spare.pop(0) if spare else (0.5, 0.5, 0.5)
    out, others = {}, iter(spare)
    for name in dict.fromkeys(names):
        key = _SAME_ENGINE.get(str(name).lower(), str(name).lower())
        out[name] = fixed[key] if key in fixed else next(others, (0.5, 0.5, 0.5))
    return out


_ENGINE_HUES = ("engine", "engine_published")


def _palette_for(frame, hue):
    """Every hue's colours come from engine_palette: engines in theirs, other names in colours no engine has."""
    return engine_palette(list(dict.fromkeys(frame[hue].dropna()))) if hue else None


def house_style():
    matplotlib = require("matplotlib", "kvlab's plots")
    matplotlib.use("Agg", force=False)
    sns = require("seaborn", "kvlab's plots")
    sns.set_theme(context="notebook", style="whitegrid", palette=list(OTHER_COLOURS),
                  rc={"figure.figsize": (7.5, 4.2), "axes.titleweight": "bold", "savefig.bbox": "tight"})


def check(fig, results=None, cores=None) -> list:
    """The figure check (kvlab.lab.figcheck) with the house palette: a list of problems, empty when the
    figure can be shown."""
    return figcheck.check_figure(fig, results=results, palette=engine_palette, cores=cores)


class FigureCheckWarning(UserWarning):
    """An exported figure failed the figure check; the problems are also in NAME.check.txt beside it."""


def caption(results, scale: str) -> str:
    """'engines: rocksdb 7.8.3 (Debian package ..., ASSERTIONS ON); scale: ...; machine: ...'"""
    seen = {}
    for b in results:
        facts = b.versions.get("engine_build") or {}
        tag = f"{b.engine} {b.versions.get('engine_library')} ({facts.get('origin', 'unknown build')}"
        tag += ", ASSERTIONS ON)" if facts.get("assertions") else ")"
        seen.setdefault(b.engine, tag)
    m = accounting.machine()
    mem = f"{m['memory_bytes'] / 2**30:.0f} GiB" if m.get("memory_bytes") else "?"
    return (f"engines: {'; '.join(seen.values())} | scale: {scale} | machine: {m.get('cpu_model')}, "
            f"{m.get('cores')} cores, {mem}, {m.get('kernel')}")


def save(fig, out_dir, name: str, caption_text: str, results=None, check: bool = True) -> list:
    """Write name.svg/.png/.pdf with the caption under the axes; returns the paths.  The figure check runs on
    the captioned figure (`results`: what it draws, for the operation counts behind percentiles): its problems
    are warned (FigureCheckWarning) and written to name.check.txt; a clean figure leaves no such file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    import textwrap
    # under everything the axes draw (slanted tick labels, axis titles), not at a fixed place
    renderer = figcheck.render(fig)
    bottom = min([ax.get_tightbbox(renderer).y0 / fig.bbox.height for ax in fig.axes if ax.get_visible()] + [0.0])
    fig.text(0.01, bottom - 0.02, "\n".join(textwrap.wrap(caption_text, 130)), ha="left", va="top", fontsize=7,
             color="#444444")
    report = out / f"{name}.check.txt"
    problems = figcheck.check_figure(fig, results=results, palette=engine_palette) if check else []
    if problems:
        import warnings
        report.write_text("".join(f"{p}\n" for p in problems))
        warnings.warn(f"figure {name}: " + "; ".join(map(str, problems)), FigureCheckWarning, stacklevel=2)
    elif report.exists():
        report.unlink()
    paths = []
    for ext in ("svg", "png", "pdf"):
        p = out / f"{name}.{ext}"
        fig.savefig(p, dpi=150 if ext == "png" else None)
        paths.append(p)
    return paths


def _counts_on_x(ax, values):
    """Thread and reader counts are whole numbers: ticks at the counts measured, no 1.2 or 1.4.  A label that
    would run into its neighbour's (1 and 2 on an axis to 32) is left blank; its tick stays."""
    import math
    ticks = sorted({int(v) for v in values})
    ax.set_xticks(ticks)
    lo, hi = ax.get_xlim()
    if ax.get_xscale() == "log":   # positions along a log axis: measured in log space
        ticks_u, (lo, hi) = [math.log(t) for t in ticks], (math.log(lo), math.log(hi))
    else:
        ticks_u = ticks
    fig = ax.get_figure()
    width_pt = ax.get_position().width * fig.get_figwidth() * 72
    size = ax.xaxis.get_ticklabels()[0].get_fontsize() if ax.xaxis.get_ticklabels() else 10
    labels, last = [], None
    for t, u in zip(ticks, ticks_u):
        at = (u - lo) / (hi - lo) * width_pt if hi > lo else 0.0
        half = 0.32 * size * len(str(t))
        if last is None or at - half >= last + 0.5 * size or t == ticks[-1]:
            labels.append(str(t))
            last = at + half
        else:
            labels.append("")
    if len(ticks) > 1 and labels[-2] and labels[-1]:   # the last one kept may crowd the one before it
        prev = (ticks_u[-2] - lo) / (hi - lo) * width_pt + 0.32 * size * len(str(ticks[-2]))
        if (ticks_u[-1] - lo) / (hi - lo) * width_pt - 0.32 * size * len(str(ticks[-1])) < prev + 0.5 * size:
            labels[-2] = ""
    ax.set_xticklabels(labels)


def _rates(ax, log=False):
    """A rate on a readable axis: from 0 without an offset or a '1e6' above it (a paced 1000/s with noise of
    0.1% is a flat line at 1000, not a trend across a 1000.0-1002.0 axis), ticks as 500k, 2M."""
    ticker = require("matplotlib.ticker", "kvlab's plots")
    if not log:
        top = ax.get_ylim()[1]
        ax.set_ylim(bottom=0, top=(top if top > 0 else 1) * 1.05)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(_si))


def _log_from_a_decade(ax):
    """Bars on a log scale start at the decade below the smallest bar, so the smallest one is a bar too (their
    lengths mean nothing on a log scale; read their tops)."""
    import math
    tops = [p.get_y() + p.get_height() for p in ax.patches if p.get_height() > 0]
    if tops:
        ax.set_ylim(bottom=10 ** math.floor(math.log10(min(tops))), top=10 ** (math.log10(max(tops)) + 0.15))


def _si(v, _pos=None) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def _engine_handles(colours: dict, marker="o", **kw):
    """Legend entries for hue levels drawn by seaborn with legend=False: one per name, in its colour."""
    from matplotlib.lines import Line2D
    return [Line2D([], [], color=c, marker=marker, label=str(name), **kw) for name, c in colours.items()]


def _bar_handles(colours: dict):
    from matplotlib.patches import Patch
    return [Patch(facecolor=c, edgecolor="none", label=str(name)) for name, c in colours.items()]


def _one_legend(fig, handles, title=None, top=0.92):
    """One legend for the whole figure, right of the panels (after tight_layout), never over one."""
    return fig.legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.0, top), frameon=False,
                      fontsize=9, title_fontsize=10)


def _machine_cores() -> int:
    return accounting.machine().get("cores") or 1


def read_scalability(measured, published=None, metric="ops_per_sec"):
    """Seed 000's ladder: `metric` against reader threads, measured here beside the seed's published table;
    one legend for both panels."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    panels = [(measured, "measured here")] + ([(published, "published (seed 000)")] if published is not None else [])
    named = list(measured["engine"]) + [e for d, _ in panels[1:] for e in d["engine"]]
    colours = engine_palette(list(dict.fromkeys(named)))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels) + 0.6, 4.2), squeeze=False)
    for ax, (data, title) in zip(axes[0], panels):
        sns.lineplot(data=data, x="threads", y=metric, hue="engine", marker="o", ax=ax, palette=colours, legend=False)
        ax.set_title(title)
        ax.set_xlabel("reader threads")
        ax.set_ylabel(axis_label(metric))
        _rates(ax)
    fig.tight_layout()
    for ax, (data, _) in zip(axes[0], panels):
        _counts_on_x(ax, data["threads"])
    _one_legend(fig, _engine_handles(colours), title="engine")
    return fig


def speedup(frame):
    """Throughput relative to each engine's 1-thread figure, measured (solid) and published (dashed), with the
    ideal of this machine: linear up to its cores, flat past them.  Every engine starts at 1 and engines that
    scale alike meet at every count: each series is set a few points sideways (as rww's), so none hides another."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.lines import Line2D
    from matplotlib.transforms import ScaledTranslation
    house_style()
    colours = engine_palette(list(dict.fromkeys(frame["engine"])))
    fig, ax = plt.subplots()
    sources = list(dict.fromkeys(frame["source"]))
    markers = {s: "o" if s == "measured" else "s" for s in sources}
    series = frame.groupby(["source", "engine", "threads"], sort=False)["speedup"].median().reset_index()
    drawn = []
    for source in sources:
        for engine in dict.fromkeys(frame["engine"]):
            part = series[(series.source == source) & (series.engine == engine)].sort_values("threads")
            if not part.empty:
                (line,) = ax.plot(part["threads"], part["speedup"], color=colours[engine], marker=markers[source],
                                  markersize=6, markeredgecolor="white", markeredgewidth=0.6, linewidth=1.6,
                                  linestyle="-" if source == "measured" else (0, (4, 2)))
                drawn.append(line)
    cores = _machine_cores()
    threads = sorted({int(t) for t in frame["threads"]})
    xs = sorted(set(threads) | ({cores} if threads[0] < cores < threads[-1] else set()))
    ax.plot(xs, [min(t, cores) for t in xs], color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4,
            label=f"ideal here: linear up to {cores} cores", gid="reference")
    ax.set_xlabel("threads")
    ax.set_ylabel("throughput relative to 1 thread")
    ax.set_ylim(bottom=0)
    ax.set_title("scaling: measured vs published")
    fig.tight_layout()
    step, limits = _dodge(ax, threads, len(drawn), False)
    ax.set_xlim(*limits)
    _counts_on_x(ax, frame["threads"])
    for i, line in enumerate(drawn):   # after plotting: the data limits came from the data
        line.set_transform(ax.transData + ScaledTranslation((i - (len(drawn) - 1) / 2) * step / 72, 0,
                                                            fig.dpi_scale_trans))
    handles = _engine_handles(colours, marker=None, linewidth=2)
    handles += [Line2D([], [], color="#444444", marker=markers[s], linestyle="-" if s == "measured" else "--",
                       label=s) for s in sources]
    handles += [Line2D([], [], color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4,
                       label=f"ideal here: linear\nup to {cores} cores")]
    _one_legend(fig, handles)
    return fig


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
    from .. import errors
    house_style()
    results = list(results)
    ops = [op] if isinstance(op, str) else list(op)
    colours = engine_palette([b.engine for b in results])
    # what tells two lines of one engine apart, named only where the results differ in it
    differs = {k: len({getattr(b, k) for b in results}) > 1 for k in ("workload", "phase", "threads")}
    lines, variants = [], {}
    for b in results:
        for o in ops:
            extra = ([o] if len(ops) > 1 else []) + ([b.workload] if differs["workload"] else []) \
                + ([b.phase] if differs["phase"] else []) + ([f"{b.threads} thr"] if differs["threads"] else [])
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
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(_si))   # 100k us, never 1e+05
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


_UNIT_WORDS = {"kb": "KB", "mib": "(MiB)", "txn/s": "transactions/s", "txn": "transactions", "us": "(µs)",
               "ms": "(ms)", "s": "(s)", "qps": "QPS"}


def axis_label(column: str) -> str:
    """A column name as an axis label: kb_written_per_query -> 'KB written per query', txn_per_sec ->
    'transactions/s', p99_us -> 'p99 (µs)'."""
    text = column.replace("_per_sec", "/s").replace("_per_", " per ")
    return " ".join(_UNIT_WORDS.get(w, w) for w in text.split("_"))


def bars(frame, x, y, hue="engine", title="", log=False, ylabel=None, results=None):
    """Bars of `y` per `x`, one colour per `hue` level from engine_palette (a hue of None with x="engine":
    each bar in its engine's colour).  A percentile (y = p99_us ...) is not drawn for an x that has too few
    operations to have it (db_bench's compact is one operation; `results` give the counts): the title says so."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    dropped = []
    if figcheck.ops_needed(y) is not None:
        counts = figcheck.op_counts_of(results)
        dropped = [v for v in dict.fromkeys(frame[x]) if figcheck.too_few_ops(v, y, counts) is not None]
        frame = frame[~frame[x].isin(dropped)]
    legend = hue is not None
    if hue is None and x in _ENGINE_HUES:
        hue = x
    fig, ax = plt.subplots()
    sns.barplot(data=frame, x=x, y=y, hue=hue, ax=ax, palette=_palette_for(frame, hue), saturation=1,
                legend=legend)
    if log:
        ax.set_yscale("log")
        _log_from_a_decade(ax)
    if dropped:
        counts = figcheck.op_counts_of(results)
        said = ", ".join(f"{d} ({counts.get(d, 1)} op{'s' * (counts.get(d, 1) != 1)})" for d in dropped)
        title = f"{title}\nnot drawn: {said}, too few for a {y.split('_')[0]}"
    ax.set_title(title)
    ax.set_ylabel(ylabel or axis_label(y))
    if not log:
        _rates(ax)
    _slant_if_crowded(ax)
    fig.tight_layout()
    if legend and ax.get_legend() is not None:   # beside the axes, never over the bars
        handles = _bar_handles(_palette_for(frame, hue))
        ax.get_legend().remove()
        _one_legend(fig, handles, title=hue)
    return fig


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
    _one_legend(fig, _bar_handles(colours), title="engine")
    return fig


_ENGINE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
_DODGE_PT = 6.5   # sideways step between engines at one x, in points, at most: markers (6 pt) side by side


def rww(frame, target: float | None = None):
    """Seed 001's readwhilewriting: read and write rates, and CPU against the ideal line: readers + the writer
    (100% each), bounded by this machine's cores (the seed's 200/300/500... assumed 64).  One legend.

    The writer is paced (`target` writes/s, drawn as the reference line "target"), so every engine that keeps
    up sits on the same value: each engine has a marker of its own and its points are set side by side at
    each reader count (a few points apart), in all three panels, so that none hides another; the write rate
    is points only (a rate held at its target is a check, not a trend)."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.lines import Line2D
    from matplotlib.transforms import ScaledTranslation
    house_style()
    engines = list(dict.fromkeys(frame["engine"]))
    colours = engine_palette(engines)
    markers = {e: _ENGINE_MARKERS[i % len(_ENGINE_MARKERS)] for i, e in enumerate(engines)}
    medians = frame.groupby(["engine", "readers"], sort=False)[["reads_per_sec", "writes_per_sec", "cpu_pct"]] \
        .median().reset_index()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    readers = sorted({int(n) for n in frame["readers"]})
    log_x = readers[0] > 0 and readers[-1] / readers[0] >= 8
    panels = ((axes[0], "reads_per_sec", "read rate", "reads/s", "-"),
              (axes[1], "writes_per_sec", "write rate" + (f" (writer paced to {_si(target)}/s)" if target else ""),
               "writes/s", "none"),
              (axes[2], "cpu_pct", "CPU", "CPU % (100 = one core)", "-"))
    dodged = []
    for ax, column, title, label, linestyle in panels:
        if log_x:
            ax.set_xscale("log", base=2)
        for i, engine in enumerate(engines):
            part = medians[medians.engine == engine].sort_values("readers")
            (line,) = ax.plot(part["readers"], part[column], color=colours[engine], marker=markers[engine],
                              markersize=6, markeredgecolor="white", markeredgewidth=0.6, linestyle=linestyle,
                              linewidth=1.6, label=engine)
            dodged.append((ax, i, line))
        ax.set_title(title)
        ax.set_xlabel("reader threads")
        ax.set_ylabel(label)
        _rates(ax)
    handles = [Line2D([], [], color=colours[e], marker=markers[e], markeredgecolor="white", markeredgewidth=0.6,
                      label=e) for e in engines]
    if target:
        axes[1].axhline(target, color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4, zorder=1.5,
                        label=f"target: {_si(target)} writes/s", gid="reference-target")
        axes[1].set_ylim(top=max(axes[1].get_ylim()[1], target * 1.1))
        handles.append(Line2D([], [], color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4,
                              label=f"target: {_si(target)} writes/s"))
    cores = _machine_cores()
    xs = sorted(set(readers) | ({cores - 1} if readers[0] < cores - 1 < readers[-1] else set()))
    ideal = f"ideal: readers + writer,\nat most {cores} cores"
    axes[2].plot(xs, [100 * min(n + 1, cores) for n in xs], color=REFERENCE_COLOUR, linestyle="--", linewidth=1.4,
                 label=ideal, gid="reference")
    axes[2].set_ylim(top=max(axes[2].get_ylim()[1], 100 * cores * 1.08))
    handles.append(Line2D([], [], color=REFERENCE_COLOUR, linestyle="--", label=ideal))
    fig.tight_layout(w_pad=2.5)
    step, (lo, hi) = _dodge(axes[0], readers, len(engines), log_x)
    for ax in axes:
        ax.set_xlim(lo, hi)
        _counts_on_x(ax, frame["readers"])
        if log_x:
            ax.xaxis.set_minor_locator(require("matplotlib.ticker", "kvlab's plots").NullLocator())
    for ax, i, line in dodged:   # set after plotting: the data limits came from the data, not the shifted points
        line.set_transform(ax.transData + ScaledTranslation((i - (len(engines) - 1) / 2) * step / 72, 0,
                                                            fig.dpi_scale_trans))
    _one_legend(fig, handles, title="engine (side by side\nat each reader count)")
    return fig


def _dodge(ax, xs, n: int, log: bool) -> tuple:
    """(step in points, x limits) for `n` series set side by side at each of `xs`: the step at most _DODGE_PT
    and the n points at one x within 80% of the gap to the next; limits that leave the outer clusters room."""
    import math
    u = [math.log2(x) for x in xs] if log else [float(x) for x in xs]
    width = ax.get_window_extent().width * 72 / ax.get_figure().dpi
    span = u[-1] - u[0]
    if span <= 0:
        lo, hi = u[0] - 1, u[0] + 1
        return _DODGE_PT, ((2 ** lo, 2 ** hi) if log else (lo, hi))
    pad = (n - 1) / 2 * _DODGE_PT + 10
    gap = min(b - a for a, b in zip(u, u[1:])) * max(width - 2 * pad, 1) / span
    step = min(_DODGE_PT, 0.8 * gap / max(n, 1))
    pad = (n - 1) / 2 * step + 10
    margin = pad * span / max(width - 2 * pad, 1)
    lo, hi = u[0] - margin, u[-1] + margin
    return step, ((2 ** lo, 2 ** hi) if log else (lo, hi))


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
        handles = _engine_handles(colours, marker=None) + handles
    _one_legend(fig, handles)
    return fig


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
    colors = engine_palette(hues) if hue in _ENGINE_HUES else \
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
    from .. import errors
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
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(_si))   # 2M, not a '1e6' above the axis
    if numeric_x and frame[x].nunique() > 1 and frame[x].min() > 0 and frame[x].max() / frame[x].min() >= 8:
        ax.set_xscale("log", base=2 if x == "threads" else 10)
    if numeric_x:
        ax.set_xticks(sorted(frame[x].unique()))
        ax.set_xticklabels([str(v) for v in sorted(frame[x].unique())])
        ax.minorticks_off()


def linkbench_qps(measured, published=None):
    """Seed 004's figure: QPS per interval, cached and larger than RAM, measured here above the seed's own
    (its hours, through MongoDB); one legend for every panel (a published engine in its kvlab twin's colour),
    rates from 0 (or a log scale where engines are more than 30x apart, as larger than RAM they are),
    whole-number intervals."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    settings = [s for s in ("cached", "larger_than_ram") if (measured.setting == s).any()]
    rows = 2 if published is not None else 1
    names = list(measured["engine"]) + (list(published["engine_published"]) if published is not None else [])
    colours = engine_palette(list(dict.fromkeys(names)))
    fig, axes = plt.subplots(rows, len(settings), figsize=(6.0 * len(settings) + 0.4, 3.6 * rows), squeeze=False)
    for j, setting in enumerate(settings):
        frames = [("measured here", measured[measured.setting == setting], "engine")]
        if published is not None:
            frames.append(("published (MongoDB, 1 h intervals)", published[published.setting == setting],
                           "engine_published"))
        for i, (label, df, hue) in enumerate(frames):
            ax = axes[i][j]
            sns.lineplot(data=df, x="interval", y="qps", hue=hue, marker="o", ax=ax, palette=colours, legend=False)
            ax.set_title(f"{setting.replace('_', ' ')}: {label}")
            positive = df.qps[df.qps > 0]
            if len(positive) and positive.max() / positive.min() > 30:   # engines 100x apart: each one readable
                ax.set_yscale("log")
                ax.set_ylabel("QPS (log scale)")
                _rates(ax, log=True)
            else:
                ax.set_ylabel("QPS")
                _rates(ax)
    fig.tight_layout()
    for j, setting in enumerate(settings):
        for i in range(rows):
            df = measured if i == 0 else published
            _counts_on_x(axes[i][j], df[df.setting == setting]["interval"])
    _one_legend(fig, _engine_handles(colours), title="engine")
    return fig


_VERDICT_COLOURS = {"faster": "#1a9850", "better": "#1a9850", "slower": "#d73027", "worse": "#d73027",
                    "~": "#777777"}


def compare(frame, title: str | None = None):
    """A comparison (kvlab.compare's frame) as a forest plot: one panel per metric, one row per matched
    benchmark; B's median as the change against A's median (%), with B's interval of the median as a bar,
    A's own interval as a grey band around 0, the noise floor shaded, and the marker coloured by the
    verdict (green better, red worse, grey ~).  The geometric mean is the diamond at the bottom."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.lines import Line2D

    from .. import errors
    from ..results.compare import BY_NAME
    needed = {"metric", "a_median", "b_median", "change_pct", "verdict"}
    if not needed <= set(frame.columns):
        raise errors.SpecError(f"plots.compare draws kvlab.compare's frame; missing columns: "
                               f"{', '.join(sorted(needed - set(frame.columns)))}")
    house_style()
    metrics = [m for m in dict.fromkeys(frame.metric) if m in BY_NAME]
    match = frame.attrs.get("match") or [c for c in ("workload", "phase", "threads") if c in frame.columns]
    rows = frame[frame.metric == metrics[0]] if metrics else frame
    labels = list(dict.fromkeys(_compare_label(r, match) for r in rows.to_dict("records")))
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
            y = position.get(_compare_label(r, match))
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


def _compare_label(r: dict, match) -> str:
    geomean = r.get("geomean_of") is not None and r.get("geomean_of") == r.get("geomean_of")
    if geomean:
        return "geomean"
    parts = []
    for k in match:
        v = r.get(k)
        if v is None or v != v:
            continue
        parts.append(f"{v} thr" if k == "threads" else str(v))
    return " ".join(parts)


from .timeline import bind_timeline  # noqa: E402  (timeline.py imports nothing from here)

timeline = bind_timeline(engine_palette, house_style, _rates, REFERENCE_COLOUR)
