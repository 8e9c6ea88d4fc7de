"""Versions of one engine side by side (`kvlab versions`' table, kvlab.lab.seeds.versions' frame): per workload
and thread count, each version's throughput relative to the base with its interval, and its CPU per operation."""
from __future__ import annotations

from ..._optional import require
from .style import REFERENCE_COLOUR, engine_palette, house_style, needs_columns

# the verdict's colours, as plots.compare marks them: green faster, red slower, grey no significant change
VERDICT_COLOURS = {"faster": "#1a9850", "slower": "#d73027", "~": "#555555", "base": REFERENCE_COLOUR}
NEEDED = ("workload", "threads", "version", "base", "relative", "relative_lo", "relative_hi", "verdict",
          "cpu_us_per_op")


def shades(names) -> dict:
    """One colour per version, all of the engine's own hue (engine_palette's): lighter to darker in the order
    given; the plain name (the version compiled into kvlab) keeps the engine's colour itself."""
    from matplotlib.colors import to_rgb
    names = list(dict.fromkeys(names))
    engine = str(names[0]).partition("@")[0] if names else ""
    colour = to_rgb(engine_palette([engine])[engine]) if engine else (0.5, 0.5, 0.5)
    others = [n for n in names if n != engine]
    steps = [0.6 - 1.05 * i / (len(others) - 1) for i in range(len(others))] if len(others) > 1 else [0.45]
    out = {n: colour for n in names if n == engine}
    for name, t in zip(others, steps):
        towards = (1.0, 1.0, 1.0) if t > 0 else (0.0, 0.0, 0.0)
        out[name] = tuple(c + abs(t) * (w - c) for c, w in zip(colour, towards))
    return {n: out[n] for n in names}


def versions(frame, title: str | None = None):
    """Two panels over the same categories (workload at a thread count): above, each version's throughput relative
    to the base (a bar at the Hodges-Lehmann ratio, 1.00 the base's, dashed), its interval an error bar and the
    verdict against the base written above it (faster, slower, ~, with its p); below, the median CPU microseconds
    per operation.  The versions are in one engine's colour, lighter to darker in the order given."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    needs_columns(frame, NEEDED, "plots.versions draws kvlab.lab.reproduce.versions' frame")
    house_style()
    names = list(dict.fromkeys(frame["version"]))
    base = frame.attrs.get("base") or next(iter(frame.loc[frame["base"], "version"]), names[0])
    colours = shades(names)
    points = list(dict.fromkeys(zip(frame["workload"], frame["threads"])))
    width = 0.8 / max(1, len(names))
    # one panel above the other, the categories shared: each bar wide enough for its verdict and p above it
    fig, (rel_ax, cpu_ax) = plt.subplots(2, 1, figsize=(max(6.5, len(points) * (0.5 * len(names) + 0.3) + 1.5), 7.0),
                                         sharex=True)
    tops = [1.0]
    for r in frame.to_dict("records"):
        i, j = points.index((r["workload"], r["threads"])), names.index(r["version"])
        x = i - 0.4 + width * (j + 0.5)
        rel, lo, hi = r["relative"], r["relative_lo"], r["relative_hi"]
        if _is(rel):
            rel_ax.bar(x, rel, width * 0.9, color=colours[r["version"]], edgecolor="none")
            top = rel
            if _is(lo) and _is(hi):
                rel_ax.errorbar(x, rel, yerr=[[max(0.0, rel - lo)], [max(0.0, hi - rel)]], fmt="none",
                                ecolor="#222222", elinewidth=1.1, capsize=3)
                top = max(top, hi)
            verdict = r["verdict"] or "~"
            said = verdict + (f"\np={r['p']:.2g}" if _is(r.get("p")) else "")
            rel_ax.text(x, top * 1.02, said, ha="center", va="bottom", fontsize=7.5, zorder=4,
                        color=VERDICT_COLOURS.get(verdict, "#555555"),
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.6, alpha=0.85))
            tops.append(top)
        if _is(r["cpu_us_per_op"]):
            cpu_ax.bar(x, r["cpu_us_per_op"], width * 0.9, color=colours[r["version"]], edgecolor="none")
    rel_ax.axhline(1.0, color=REFERENCE_COLOUR, linestyle="--", linewidth=1.2, gid="reference", zorder=3)
    rel_ax.set_ylim(0, max(tops) * 1.25)
    rel_ax.set_ylabel(f"throughput relative to\n{base} (ratio)")
    rel_ax.set_title("throughput (higher is better)", fontsize=10)
    cpu_ax.set_ylabel("CPU per operation (µs)")
    cpu_ax.set_ylim(bottom=0, top=cpu_ax.get_ylim()[1] * 1.08)
    cpu_ax.set_title("CPU per operation (lower is better)", fontsize=10)
    labels = [f"{w}\n{t} thread{'s' if t > 1 else ''}" for w, t in points]
    for ax in (rel_ax, cpu_ax):
        ax.grid(axis="x", visible=False)
    cpu_ax.set_xticks(range(len(points)), labels)
    cpu_ax.set_xlim(-0.6, len(points) - 0.4)
    cpu_ax.set_xlabel("workload, threads")
    levels = sorted({round(v * 100) for v in frame["relative_level"] if _is(v)}) if "relative_level" in frame else []
    marks = [Line2D([], [], color=REFERENCE_COLOUR, linestyle="--", label="1.00: the base")]
    if levels:
        marks.append(Line2D([], [], color="#222222", marker="_", markersize=8, linestyle="-", linewidth=1.1,
                            label=f"the ratio's interval ({', '.join(f'{v}%' for v in levels)})"))
    fig.legend(handles=[Patch(facecolor=colours[n], edgecolor="none", label=n + (" (base)" if n == base else ""))
                        for n in names] + marks, loc="lower center", bbox_to_anchor=(0.5, 1.0),
               ncol=min(4, len(names) + len(marks)), frameon=False, fontsize=9)
    if title:
        fig.suptitle(title, y=1.06)
    fig.tight_layout()
    return fig


def _is(v) -> bool:
    return v is not None and v == v
