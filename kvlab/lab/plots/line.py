"""Line charts of a rate against a count: throughput against reader threads (seed 000), scaling against threads,
seed 001's readwhilewriting panels, and LinkBench's QPS per interval (seed 004)."""
from __future__ import annotations

from ..._optional import require
from ...execution.host import accounting
from .style import REFERENCE_COLOUR, axis_label, engine_handles, engine_palette, house_style, one_legend, rate_axis, si


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
        rate_axis(ax)
    fig.tight_layout()
    for ax, (data, _) in zip(axes[0], panels):
        _counts_on_x(ax, data["threads"])
    one_legend(fig, engine_handles(colours), title="engine")
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
    handles = engine_handles(colours, marker=None, linewidth=2)
    handles += [Line2D([], [], color="#444444", marker=markers[s], linestyle="-" if s == "measured" else "--",
                       label=s) for s in sources]
    handles += [Line2D([], [], color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4,
                       label=f"ideal here: linear\nup to {cores} cores")]
    one_legend(fig, handles)
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
              (axes[1], "writes_per_sec", "write rate" + (f" (writer paced to {si(target)}/s)" if target else ""),
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
        rate_axis(ax)
    handles = [Line2D([], [], color=colours[e], marker=markers[e], markeredgecolor="white", markeredgewidth=0.6,
                      label=e) for e in engines]
    if target:
        axes[1].axhline(target, color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4, zorder=1.5,
                        label=f"target: {si(target)} writes/s", gid="reference-target")
        axes[1].set_ylim(top=max(axes[1].get_ylim()[1], target * 1.1))
        handles.append(Line2D([], [], color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4,
                              label=f"target: {si(target)} writes/s"))
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
    one_legend(fig, handles, title="engine (side by side\nat each reader count)")
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
                rate_axis(ax, log=True)
            else:
                ax.set_ylabel("QPS")
                rate_axis(ax)
    fig.tight_layout()
    for j, setting in enumerate(settings):
        for i in range(rows):
            df = measured if i == 0 else published
            _counts_on_x(axes[i][j], df[df.setting == setting]["interval"])
    one_legend(fig, engine_handles(colours), title="engine")
    return fig
