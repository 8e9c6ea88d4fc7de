"""The house style every kvlab figure shares: one fixed colour per engine (the palette), fonts and figure size,
the axes and legends the figure kinds draw alike, and the provenance footer (`caption`, `save`) under every
exported figure.  The figure kinds import from here; this module imports none of them."""
from __future__ import annotations

import json
from pathlib import Path

from ... import engines, errors
from ..._optional import require
from ...execution.host import accounting
from .. import figcheck

# Each engine configuration's colour is its own, written in its descriptor (kvlab/engines/<adapter>/: `colour`):
# Okabe and Ito's colour-blind-safe palette without its yellow (too pale for a line on white), then Tol's indigo
# and wine, and a light grey for the null engine.  Every pair stays apart by CIEDE2000 >= 20 to normal vision and
# >= 10 under simulated protanopia, deuteranopia and tritanopia (tests/test_figures.py); seaborn's "colorblind" gave
# wiredtiger-btree and bdb two pinks 14.5 apart.  Published engines are drawn in the colour of the kvlab
# configuration that is the same engine (its `aliases`: "berkeleydb"), so a reader matches "rocksdb (published)" to
# "rocksdb (measured)" across panels and figures.
ENGINE_COLOURS = tuple(cfg.colour for cfg in engines.listed().values())
# Names that are no engine (a setting, a loop, an engine published but not built here) take these, which no
# engine has, in order of appearance; also the default cycle, so an unnamed series never looks like an engine.
OTHER_COLOURS = ("#8B4513", "#DDCC77", "#AA4499", "#44AA99", "#999933", "#CC6677", "#117733", "#88CCEE")
# Reference lines (ideal, machine bounds): grey, dashed, no markers.
REFERENCE_COLOUR = "#666666"


def engine_colour(config: str):
    """The colour of engine configuration `config` (an RGB tuple), the same in every figure: its descriptor's
    (planned configurations too: their published figures keep their colour); None for a name that is no
    configuration kvlab knows of."""
    from matplotlib.colors import to_rgb

    cfg = engines.listed().get(config)
    return to_rgb(cfg.colour) if cfg is not None and cfg.colour else None


def engine_palette(names) -> dict:
    """One colour per engine, the same in every figure: kvlab's configurations take engine_colour's; published
    names take their kvlab twin's; anything else one of OTHER_COLOURS that no configuration has, in order."""
    from matplotlib.colors import to_rgb

    taken = {engine_colour(name) for name in engines.listed()}
    others = (c for c in map(to_rgb, OTHER_COLOURS) if c not in taken)
    out = {}
    for name in dict.fromkeys(names):
        colour = engine_colour(engines.known_as(name) or str(name).lower())
        out[name] = colour if colour is not None else next(others, (0.5, 0.5, 0.5))
    return out


ENGINE_HUES = ("engine", "engine_published")


def palette_for(frame, hue):
    """Every hue's colours come from engine_palette: engines in theirs, other names in colours no engine has."""
    return engine_palette(list(dict.fromkeys(frame[hue].dropna()))) if hue else None


def needs_columns(frame, needed, draws: str) -> None:
    """A SpecError naming what a figure kind draws and the columns `frame` lacks, before anything is drawn: `draws`
    is "plots.versions draws kvlab.lab.reproduce.versions' frame" and the like."""
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise errors.SpecError(f"{draws}; missing columns: {', '.join(missing)}")


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
    # under everything the axes draw (slanted tick labels, axis titles) and any legend of the figure's own (one
    # below the panels), not at a fixed place
    renderer = figcheck.render(fig)
    bottom = min([ax.get_tightbbox(renderer).y0 / fig.bbox.height for ax in fig.axes if ax.get_visible()]
                 + [lg.get_window_extent(renderer).y0 / fig.bbox.height for lg in fig.legends] + [0.0])
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


def rate_axis(ax, log=False):
    """A rate on a readable axis: from 0 without an offset or a '1e6' above it (a paced 1000/s with noise of
    0.1% is a flat line at 1000, not a trend across a 1000.0-1002.0 axis), ticks as 500k, 2M."""
    ticker = require("matplotlib.ticker", "kvlab's plots")
    if not log:
        top = ax.get_ylim()[1]
        ax.set_ylim(bottom=0, top=(top if top > 0 else 1) * 1.05)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(si))


def si(v, _pos=None) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def engine_handles(colours: dict, marker="o", **kw):
    """Legend entries for hue levels drawn by seaborn with legend=False: one per name, in its colour."""
    from matplotlib.lines import Line2D
    return [Line2D([], [], color=c, marker=marker, label=str(name), **kw) for name, c in colours.items()]


def one_legend(fig, handles, title=None, top=0.92):
    """One legend for the whole figure, right of the panels (after tight_layout), never over one."""
    return fig.legend(handles=handles, title=title, loc="upper left", bbox_to_anchor=(1.0, top), frameon=False,
                      fontsize=9, title_fontsize=10)


_UNIT_WORDS = {"kb": "KB", "mib": "(MiB)", "txn/s": "transactions/s", "txn": "transactions", "us": "(µs)",
               "ms": "(ms)", "s": "(s)", "qps": "QPS"}


def axis_label(column: str) -> str:
    """A column name as an axis label: kb_written_per_query -> 'KB written per query', txn_per_sec ->
    'transactions/s', p99_us -> 'p99 (µs)'."""
    text = column.replace("_per_sec", "/s").replace("_per_", " per ")
    return " ".join(_UNIT_WORDS.get(w, w) for w in text.split("_"))


def _setting(b, key):
    v = (b.params or {}).get(key)
    return json.dumps(v, sort_keys=True) if isinstance(v, (list, dict)) else v


# what can tell two results of one engine apart, and how a legend names it
_SETTINGS = (
    ("workload", lambda b: b.workload, str),
    ("phase", lambda b: b.phase, str),
    ("threads", lambda b: b.threads, lambda v: f"{v} thr"),
    ("num", lambda b: _setting(b, "num"), lambda v: f"num {si(v) if isinstance(v, (int, float)) else v}"),
    ("value_size", lambda b: _setting(b, "value_size"), lambda v: f"{v} B values"),
    ("key_size", lambda b: _setting(b, "key_size"), lambda v: f"{v} B keys"),
    ("batch", lambda b: _setting(b, "batch"), lambda v: f"batch {v}"),
    ("settings", lambda b: _engine_settings(b), lambda v: v or "defaults"),
)


def _engine_settings(b) -> str:
    from ...results.store import settings_text
    return settings_text(b)


def setting_words(results) -> list:
    """For each result, the words that name each setting differing across `results` (workload, phase, threads,
    num, value and key size, batch, engine settings; the engine is its colour), so that every legend names
    what varies between its lines; results alike in all of them are told apart by their trial, then by their
    order."""
    results = list(results)
    def varies(key, get) -> bool:
        if key == "settings":   # each engine has settings of its own: named where one engine's differ
            return any(len({get(b) for b in results if b.engine == e}) > 1 for e in {b.engine for b in results})
        return len({get(b) for b in results}) > 1
    varying = [(get, say) for key, get, say in _SETTINGS if varies(key, get)]
    words = [[say(get(b)) for get, say in varying] for b in results]
    labels = [(b.engine, *w) for b, w in zip(results, words)]
    for i, b in enumerate(results):
        if labels.count(labels[i]) > 1:
            same = [j for j, lab in enumerate(labels) if lab == labels[i]]
            if len({results[j].trial for j in same}) == len(same):
                words[i] = words[i] + [f"trial {b.trial}"]
            else:
                words[i] = words[i] + [f"#{same.index(i) + 1}"]
    return words
