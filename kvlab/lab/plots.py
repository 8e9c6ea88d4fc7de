"""Figures in one house style, exported as SVG, PNG and PDF with a caption line.

Plots only read results (frames and BenchmarkResults); they never run anything.
Every caption names the engines with their library version and build, flags
builds with assertions, and states the scale and the machine.
"""
from __future__ import annotations

from pathlib import Path

from .._optional import require
from ..execution import accounting


# Published engines drawn in the colour of the kvlab configuration that is the same engine, so a reader
# matches "rocksdb (published)" to "rocksdb (measured)" across panels and figures.
_SAME_ENGINE = {"wiredtiger": "wiredtiger-btree", "foundationdb": "fdb", "foundationdb (published)": "fdb",
                "berkeleydb": "bdb"}


def engine_palette(names) -> dict:
    """One colour per engine, the same in every figure: kvlab's configurations in registry order take the
    house palette's colours; published names take their kvlab twin's; anything else a colour of its own."""
    sns = require("seaborn", "kvlab's plots")
    from ..model import engines
    base, extra = sns.color_palette("colorblind", 10), sns.color_palette("dark", 10)
    fixed = {name: base[i % len(base)] for i, name in enumerate(engines.REGISTRY)}
    out, spare = {}, iter(extra)
    for name in dict.fromkeys(names):
        key = _SAME_ENGINE.get(str(name).lower(), str(name).lower())
        out[name] = fixed[key] if key in fixed else next(spare, (0.5, 0.5, 0.5))
    return out


_ENGINE_HUES = ("engine", "engine_published")


def _palette_for(frame, hue):
    return engine_palette(frame[hue].dropna().unique()) if hue in _ENGINE_HUES else None


def house_style():
    matplotlib = require("matplotlib", "kvlab's plots")
    matplotlib.use("Agg", force=False)
    sns = require("seaborn", "kvlab's plots")
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind",
                  rc={"figure.figsize": (7.5, 4.2), "axes.titleweight": "bold", "savefig.bbox": "tight"})


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


def save(fig, out_dir, name: str, caption_text: str) -> list:
    """Write name.svg/.png/.pdf with the caption under the axes; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    import textwrap
    # under everything the axes draw (slanted tick labels, axis titles), not at a fixed place
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bottom = min([ax.get_tightbbox(renderer).y0 / fig.bbox.height for ax in fig.axes] + [0.0])
    fig.text(0.01, bottom - 0.02, "\n".join(textwrap.wrap(caption_text, 130)), ha="left", va="top", fontsize=7,
             color="#444444")
    paths = []
    for ext in ("svg", "png", "pdf"):
        p = out / f"{name}.{ext}"
        fig.savefig(p, dpi=150 if ext == "png" else None)
        paths.append(p)
    return paths


def _counts_on_x(ax, values):
    """Thread and reader counts are whole numbers: ticks at the counts measured, no 1.2 or 1.4."""
    ticks = sorted({int(v) for v in values})
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])


def _rate_from_zero(ax):
    """A rate drawn from 0, without an offset: a paced 1000/s with noise of 0.1% is a flat line at
    1000, not a trend across a 1000.0-1002.0 axis."""
    ScalarFormatter = require("matplotlib.ticker", "kvlab's plots").ScalarFormatter
    ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], 1) * 1.05)
    fmt = ax.yaxis.get_major_formatter()
    if isinstance(fmt, ScalarFormatter):
        fmt.set_useOffset(False)


def read_scalability(measured, published=None, metric="ops_per_sec"):
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    fig, axes = plt.subplots(1, 2 if published is not None else 1, figsize=(11, 4.2), squeeze=False)
    sns.lineplot(data=measured, x="threads", y=metric, hue="engine", marker="o", ax=axes[0][0],
                 palette=_palette_for(measured, "engine"))
    axes[0][0].set_title("measured here")
    if published is not None:
        sns.lineplot(data=published, x="threads", y=metric, hue="engine", marker="o", ax=axes[0][1],
                     palette=_palette_for(published, "engine"))
        axes[0][1].set_title("published (seed 000)")
    for ax, data in zip(axes[0], (measured, published)):
        ax.set_xlabel("reader threads")
        ax.set_ylabel(axis_label(metric))
        _counts_on_x(ax, data["threads"])
        _rate_from_zero(ax)
    return fig


def speedup(frame):
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    fig, ax = plt.subplots()
    sns.lineplot(data=frame, x="threads", y="speedup", hue="engine", style="source", marker="o", ax=ax)
    ax.set_xlabel("threads")
    _counts_on_x(ax, frame["threads"])
    ax.set_ylabel("throughput relative to 1 thread")
    ax.set_title("scaling: measured vs published")
    return fig


def latency_cdf(results, op="read"):
    """CDF of per-op latency from each result's histogram percentiles."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    house_style()
    fig, ax = plt.subplots()
    qs = [1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99]
    for b in results:
        lat = b.latency_by_op.get(op)
        if not lat:
            continue
        pts = {50: lat["p50"], 75: lat["p75"], 99: lat["p99"], 99.9: lat["p999"], 99.99: lat["p9999"]}
        xs = [pts[q] for q in qs if q in pts]
        ys = [q / 100 for q in qs if q in pts]
        ax.plot(xs, ys, marker="o", label=f"{b.engine} ({b.threads} thr)")
    ax.set_xscale("log")
    ax.set_xlabel(f"{op} latency (us, log)")
    ax.set_ylabel("fraction of ops")
    ax.legend()
    ax.set_title(f"{op} latency distribution")
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
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
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


def bars(frame, x, y, hue="engine", title="", log=False):
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    fig, ax = plt.subplots()
    sns.barplot(data=frame, x=x, y=y, hue=hue, ax=ax, palette=_palette_for(frame, hue))
    if log:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.set_ylabel(axis_label(y))
    labels = [t.get_text() for t in ax.get_xticklabels()]
    if labels and max(len(t) for t in labels) * len(labels) > 60:   # names wider than their slots would overlap: slant them
        ax.set_xticks(ax.get_xticks())
        ax.set_xticklabels(labels, rotation=30, ha="right")
    if ax.get_legend() is not None:   # beside the axes, never over the bars
        ax.legend(title=hue, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def rww(frame):
    """Seed 001's readwhilewriting: read and write rates, and CPU against the ideal line."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    sns.lineplot(data=frame, x="readers", y="reads_per_sec", hue="engine", marker="o", ax=axes[0])
    axes[0].set_title("read rate")
    sns.lineplot(data=frame, x="readers", y="writes_per_sec", hue="engine", marker="o", ax=axes[1])
    axes[1].set_title("write rate")
    sns.lineplot(data=frame, x="readers", y="cpu_pct", hue="engine", marker="o", ax=axes[2])
    ideal = frame.drop_duplicates("readers").sort_values("readers")
    axes[2].plot(ideal.readers, ideal.ideal_cpu_pct, "k--", label="ideal (readers + writer)")
    axes[2].legend()
    axes[2].set_title("CPU %")
    for ax, label in zip(axes, ("reads/s", "writes/s", "CPU % (100 = one core)")):
        ax.set_ylabel(label)
        _counts_on_x(ax, frame["readers"])
        _rate_from_zero(ax)
    return fig


def latency_throughput(frame, title="latency against throughput (open loop)"):
    """Service and response latency (p50, p99) against the achieved rate, on the same axes: past
    saturation the response time climbs while the service time does not."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    house_style()
    fig, ax = plt.subplots()
    for col, style, label in (("service_p50_us", "o-", "service p50"), ("service_p99_us", "o--", "service p99"),
                              ("response_p50_us", "s-", "response p50"), ("response_p99_us", "s--", "response p99")):
        ax.plot(frame["achieved_rate"], frame[col], style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("achieved transactions/s")
    ax.set_ylabel("latency (us)")
    ax.set_title(title)
    ax.legend(loc="upper left", frameon=True)
    return fig


def sweep(frame, metric: str = "ops_per_sec", x: str = "threads", axes=None, hue: str | None = None,
          col: str | None = None, row: str | None = None, log: bool = False, title: str | None = None):
    """A sweep's tidy frame (kvlab.results.sweeps.tidy): `metric` (the median across repeats, with its
    median's interval as a band) against axis `x`; the other axes that vary go to hue, then columns, then rows
    (or as named).  Several workloads or phases in the frame get columns of their own."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    import numpy as np
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
        hue_label, hue = ", ".join([hue] + free), "_hue"
    else:
        hue_label = hue
    house_style()
    rows = list(dict.fromkeys(frame[row])) if row else [None]
    cols = list(dict.fromkeys(frame[col])) if col else [None]
    fig, grid = plt.subplots(len(rows), len(cols), figsize=(min(16, 4.6 * len(cols) + 1.6), 3.6 * len(rows)),
                             squeeze=False, sharex=True, sharey=True)
    # the median's interval exists from 3 repeats (results.stats); below 95% with 3-5 (the min-max range)
    band = "repeats" in frame.columns and frame["repeats"].min() >= 3 and f"{metric}_ci95_lo" in frame.columns
    band_level = float(frame[f"{metric}_ci_level"].astype(float).min()) \
        if band and f"{metric}_ci_level" in frame.columns else 0.95
    band_words = (" (an interval band needs 3 or more)" if not band else
                  f", band: min-max, a {band_level:.0%} interval of the median (95% needs 6 repeats)"
                  if band_level < 0.95 else ", band: 95% interval of the median")
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
                if d.empty:
                    continue
                d = d.sort_values(x) if numeric_x else d
                xs = d[x] if numeric_x else d[x].astype(str)
                ax.plot(xs, d[metric], marker="o", color=colors[hv], label=str(hv) if hue else metric)
                lo, hi = d.get(f"{metric}_ci95_lo"), d.get(f"{metric}_ci95_hi")
                if lo is not None and band and lo.notna().any():
                    ax.fill_between(xs, lo.astype(float), hi.astype(float), color=colors[hv], alpha=0.18, linewidth=0)
            if log:
                ax.set_yscale("log")
            else:
                ax.set_ylim(bottom=0)
            if numeric_x and frame[x].nunique() > 1 and frame[x].min() > 0 and frame[x].max() / frame[x].min() >= 8:
                ax.set_xscale("log", base=2 if x == "threads" else 10)
            if numeric_x:
                ax.set_xticks(sorted(frame[x].unique()))
                ax.set_xticklabels([str(v) for v in sorted(frame[x].unique())])
                ax.minorticks_off()
            parts = [f"{row}={rv}" if row else "", f"{col}={cv}" if col else ""]
            ax.set_title(", ".join(p for p in parts if p), fontsize=10)
            ax.set_xlabel(axis_label(x) if i == len(rows) - 1 else "")
            ax.set_ylabel(axis_label(metric) if j == 0 else "")
    if hue:
        seen = {}
        for ax in grid.flat:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(lab, h)
        handles, labels = list(seen.values()), list(seen)
        fig.legend(handles, labels, title=hue_label, loc="upper left", bbox_to_anchor=(1.0, 0.95), frameon=False)
    n = sorted(set(frame["repeats"])) if "repeats" in frame.columns else []
    reps = f"{n[0]} repeats" if len(n) == 1 else "repeats"
    fig.suptitle(title or f"{metric.replace('_', ' ')} by {x}: median of {reps}"
                 f"{band_words}", fontweight="bold")
    fig.tight_layout()
    return fig


def linkbench_qps(measured, published=None):
    """Seed 004's figure: QPS per interval, cached and larger than RAM, measured here above the seed's own
    (its hours, through MongoDB); legends beside the axes, rates from 0 (or a log scale where engines are
    more than 30x apart, as larger than RAM they are), whole-number intervals."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    sns = require("seaborn", "kvlab's plots")
    house_style()
    settings = [s for s in ("cached", "larger_than_ram") if (measured.setting == s).any()]
    rows = 2 if published is not None else 1
    fig, axes = plt.subplots(rows, len(settings), figsize=(6.5 * len(settings), 3.6 * rows), squeeze=False)
    for j, setting in enumerate(settings):
        frames = [("measured here", measured[measured.setting == setting], "engine")]
        if published is not None:
            frames.append(("published (MongoDB, 1 h intervals)", published[published.setting == setting],
                           "engine_published"))
        for i, (label, df, hue) in enumerate(frames):
            ax = axes[i][j]
            sns.lineplot(data=df, x="interval", y="qps", hue=hue, marker="o", ax=ax, palette=_palette_for(df, hue))
            ax.set_title(f"{setting.replace('_', ' ')}: {label}")
            _counts_on_x(ax, df["interval"])
            positive = df.qps[df.qps > 0]
            if len(positive) and positive.max() / positive.min() > 30:   # engines 100x apart: each one readable
                ax.set_yscale("log")
                ax.set_ylabel("QPS (log scale)")
            else:
                ax.set_ylabel("QPS")
                _rate_from_zero(ax)
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
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
    from ..results.compare import BY_NAME
    from .. import errors
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
        ax.set_title(f"{m.label} ({'higher' if m.higher_is_better else 'lower'} is better)", fontsize=9)
        ax.set_xlabel("change of B against A's median (%)")
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels(list(reversed(labels)), fontsize=8)
        ax.set_ylim(-0.7, len(labels) - 0.3)
    for ax in list(grid.flat)[len(metrics):]:
        ax.set_visible(False)
    legend = [Line2D([], [], marker="o", linestyle="", color=_VERDICT_COLOURS["better"], label="better / faster"),
              Line2D([], [], marker="o", linestyle="", color=_VERDICT_COLOURS["worse"], label="worse / slower"),
              Line2D([], [], marker="o", linestyle="", color=_VERDICT_COLOURS["~"], label="~ (no significant change)"),
              Line2D([], [], marker="D", linestyle="", color="#222222", markerfacecolor="white", label="geometric mean"),
              Line2D([], [], color="#333333", linewidth=1.2, label="B: interval of its median"),
              Line2D([], [], color="#999999", linewidth=3, label="A: interval of its median"),
              Line2D([], [], color="#dddddd", linewidth=8, label="noise floor")]
    fig.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.0, 0.95), frameon=False, fontsize=8)
    a, b = frame.attrs.get("a", "A"), frame.attrs.get("b", "B")
    fig.suptitle(title or f"B ({b}) against A ({a})", fontweight="bold")
    fig.tight_layout()
    return fig


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
