"""`kvlab.report(...)` and `kvlab report`: stored results as one self-contained static HTML page, the kind
asv and ann-benchmarks publish, that a colleague opens without kvlab, a server or a network.

    kvlab.report("tag:fig3", out="fig3.html")                  # one group: a tag, a run id, KEY=VALUE terms
    kvlab.report("tag:before", "tag:after", out="cmp.html")    # two groups: also B compared against A
    kvlab.report(sweep="threads-grid", out="sweep.html")       # a sweep, with its figure
    kvlab.report(result, out="run.html")                       # results in hand (a RunResult)

The page holds a header (what was selected, when, by which kvlab, on which machines), one table row per
benchmark, figures (throughput per engine and benchmark; the latency percentile spectrum of each workload
from the stored histograms; a sweep's medians; a comparison's forest plot), the comparison's tables when two
groups are given (kvlab.compare, as `kvlab results compare` prints them), and each run's warnings and
provenance (spec, engine settings, versions, machine, storage) in a collapsible section.  Figures are inline
SVG, the style sheet is inline, there is no script: nothing is fetched when the page opens.  Every text that
came from a user or a record is escaped.

The number of figures is bounded (one spectrum per workload, MAX_SPECTRA of them, MAX_LINES lines each;
MAX_SWEEPS sweeps), so a report of hundreds of runs stays quick to make and to read; the page says what was
left out.  A selection, the output path or a comparison that cannot be made is an error before anything is
written; the file appears whole or not at all.
"""
from __future__ import annotations

import dataclasses
import datetime
import html
import io
import json
import math
import numbers
import os
import re
import tempfile
from pathlib import Path

from .. import errors
from .._version import __version__
from ..execution import dbdir
from ..results import compare as comparing
from ..results import stats
from ..results.compare import Selection, parse_selection
from ..results.formatting import change_text, missing, num, p_text
from ..results.result import BenchmarkResult, RunResult
from ..results.store import Store

MAX_SPECTRA = 6          # latency figures: one per workload, the first this many
MAX_LINES = 8            # lines in one latency figure (engines x threads x ...), the first this many
MAX_BAR_GROUPS = 16      # benchmarks on the throughput figure's x axis
MAX_SWEEPS = 3           # sweeps drawn (each: ops/s and p99)
MAX_WARNINGS_SHOWN = 20  # a run's warnings listed (the rest counted)
MIN_SPECTRUM_OPS = 100   # a latency spectrum needs a tail: p99 needs 100 operations


# --- numbers -----------------------------------------------------------------------------------------





def _plural(n, word: str) -> str:
    return f"{num(n)} {word}{'' if n == 1 else 's'}"


def _percent(x: float) -> str:
    return f"{x:.0%}" if round(x * 100, 6).is_integer() else f"{x:.1%}"


# --- what is reported ----------------------------------------------------------------------------------

@dataclasses.dataclass
class Group:
    """One selection as given: a Selection read from the store, or results in hand."""
    label: str
    selection: Selection | None = None
    results: list | None = None


@dataclasses.dataclass
class Entry:
    """One benchmark in the report, with where it was stored."""
    b: BenchmarkResult
    run: str                    # the run id, or "in hand N" for results not from the store
    stored_at: str | None = None
    sweep_id: str | None = None


@dataclasses.dataclass
class Figure:
    title: str
    caption: str
    svg: str
    problems: list
    section: str = "figures"     # or "comparison": drawn beside the comparison's tables


@dataclasses.dataclass
class Page:
    """A built report: the HTML text and what it holds; write() puts it in a file."""
    html: str
    runs: int
    benchmarks: int
    figures: int
    compared: bool
    notes: list

    def write(self, out) -> Path:
        target = check_out(out)
        return _write(target, self.html)


def check_out(out, flag: str = "report") -> Path:
    """The report's file: not a directory; its folder writable, or creatable below a writable one (made when
    the page is written, after everything else has been checked).  The path as given: the writer uses it."""
    if out is None or not str(out).strip():
        raise errors.SpecError(f"{flag}: a file to write is needed (out=..., --out FILE)")
    return dbdir.check_output_file(out, flag)


def _write(target: Path, text: str) -> Path:
    """The file appears whole or not at all: written beside it, then renamed."""
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise errors.ResultsError(f"report {target}: cannot be written ({exc.strerror or exc})") from None
    return target


def report(*selections, tag=None, sweep=None, where=None, compare=None, out="report.html", store=None,
           title: str | None = None, threshold: float = comparing.THRESHOLD_PCT) -> Path:
    """Write one self-contained HTML report of stored (or in-hand) results to `out`; returns its path.

    selections: each a run id, `tag:NAME`, `sweep:NAME`, `KEY=VALUE` terms (kvlab.compare's side syntax), or
    results in hand (a RunResult or a list of BenchmarkResults).  tag: a tag or a list of tags, each a group;
    sweep: a sweep's name (its points, and its figure).  where: terms every group must also satisfy.
    compare: None (two groups are compared, B against A, when they match), False (never), or (A, B), two
    selections to compare (added to the report).  store: a Store or a path (default the results store)."""
    page = build(*selections, tag=tag, sweep=sweep, where=where, compare=compare, out=out, store=store,
                 title=title, threshold=threshold)
    return page.write(out)


def build(*selections, tag=None, sweep=None, where=None, compare=None, out=None, store=None,
          title: str | None = None, threshold: float = comparing.THRESHOLD_PCT) -> Page:
    """The report as a Page, nothing written (report() writes it)."""
    if out is not None:
        check_out(out)
    store = store if isinstance(store, Store) else Store(store)
    groups = _groups(selections, tag, sweep)
    sides, explicit = None, False
    if compare not in (None, False, True):
        pair = list(compare) if isinstance(compare, (list, tuple)) else None
        if pair is None or len(pair) != 2:
            raise errors.SpecError("compare: give two selections (A, B), or None or False")
        sides, explicit = [_group(v, f"{'AB'[i]}") for i, v in enumerate(pair)], True
        known = {g.label for g in groups}
        groups += [g for g in sides if g.selection is None or g.label not in known]
    elif compare is not False and len(groups) == 2:
        sides = list(groups)
    if not groups:
        raise errors.SpecError("nothing selected: give run ids, tag:NAME or KEY=VALUE terms, --tag TAG, "
                               "--sweep NAME, or two groups to compare")
    where_sel = where if isinstance(where, Selection) or where is None else parse_selection(str(where), "--where")
    entries = _load(store, groups, where_sel)
    notes = []
    comparison = None
    if sides is not None:
        comparison, note = _comparison(sides, where_sel, store, threshold, explicit)
        if note:
            notes.append(note)
    sweeps = list(dict.fromkeys(v for g in groups if g.selection is not None
                                for column, values in g.selection.terms if column == "sweep_id" for v in values))
    figures, figure_notes = _figures(entries, sweeps, comparison, store)
    notes += figure_notes
    text = _page(entries, groups, where_sel, comparison, figures, notes, title)
    return Page(text, len({en.run for en in entries}), len(entries), len(figures), comparison is not None, notes)


def _group(value, label_for_hand: str) -> Group:
    if isinstance(value, RunResult) or (isinstance(value, (list, tuple)) and value and
                                        all(isinstance(b, BenchmarkResult) for b in value)):
        return Group(f"{label_for_hand} (results in hand)", results=list(value))
    if isinstance(value, BenchmarkResult):
        return Group(f"{label_for_hand} (results in hand)", results=[value])
    if isinstance(value, dict):
        value = ",".join(f"{k}={v}" for k, v in value.items())
    if not isinstance(value, str):
        raise errors.SpecError(f"a selection is a {type(value).__name__}; allowed: a run id, tag:NAME, sweep:NAME, "
                               "KEY=VALUE terms, a dict of filters, or results (RunResult)")
    return Group(value, selection=parse_selection(value, "selection"))


def _groups(selections, tag, sweep) -> list:
    groups = [_group(v, f"group {i + 1}") for i, v in enumerate(selections)]
    tags = [tag] if isinstance(tag, str) else list(tag or ())
    for t in tags:
        groups.append(_group(f"tag:{t}", ""))
    sweeps = [sweep] if isinstance(sweep, str) else list(sweep or ())
    for s in sweeps:
        groups.append(_group(f"sweep:{s}", ""))
    return groups


def _load(store: Store, groups, where) -> list:
    """The benchmarks every group selects (each once, in the order they were stored), read in one query; a
    group that selects nothing is an error naming it."""
    entries = []
    stored = [g for g in groups if g.selection is not None]
    if stored:
        if not store.path.exists():
            raise errors.ResultsError(f"no results store at {store.path}; give --store PATH (or set KVLAB_RESULTS)")
        sql = [g.selection.sql() for g in stored]
        args = [a for _, part in sql for a in part]
        sides = ", ".join(f"({clause}) AS side_{i}" for i, (clause, _) in enumerate(sql))
        query = (f"SELECT id, run_id, CAST(stored_at AS VARCHAR) AS stored_at, sweep_id, record, {sides} "
                 f"FROM benchmarks WHERE ({' OR '.join(f'({clause})' for clause, _ in sql)})")
        params = args + args
        if where is not None and where.terms:
            clause, extra = where.sql()
            query += f" AND {clause}"
            params += extra
        frame = store.query(query + " ORDER BY id", params)
        for i, g in enumerate(stored):
            if not frame[f"side_{i}"].fillna(False).astype(bool).any():
                raise errors.ResultsError(
                    f"{g.label!r} selects no benchmark in {store.path}"
                    f"{' with --where ' + where.text if where is not None and where.terms else ''}"
                    f"{_hint(store, g.selection)}")
        for rec in frame[["run_id", "stored_at", "sweep_id", "record"]].itertuples(index=False):
            b = BenchmarkResult.from_dict(json.loads(rec.record))
            entries.append(Entry(b, rec.run_id or "?", (rec.stored_at or "")[:19] or None,
                                 None if missing(rec.sweep_id) else rec.sweep_id))
    hand = 0
    for g in groups:
        if g.results is None:
            continue
        hand += 1
        chosen = g.results
        if where is not None and where.terms:
            keep = where.mask(comparing.result_samples(g.results))
            chosen = [b for b, k in zip(g.results, keep) if k]
        if not chosen:
            raise errors.ResultsError(f"{g.label}: no benchmark left with --where {where.text}")
        entries += [Entry(b, f"in hand {hand}") for b in chosen]
    return entries


def _hint(store: Store, selection: Selection) -> str:
    """Where a bare word matched no run id: the runs it begins, or a tag or sweep of that name."""
    hints = []
    for column, values in selection.terms:
        if column != "run_id":
            continue
        for w in values:
            runs = store.query("SELECT DISTINCT run_id FROM benchmarks WHERE starts_with(run_id, ?) ORDER BY run_id "
                               "LIMIT 4", [w]).run_id.tolist()
            if len(runs) == 1:
                hints.append(runs[0])
            elif runs:
                hints.append(f"one of {', '.join(runs[:3])}{' ...' if len(runs) > 3 else ''}")
            if not store.query("SELECT 1 FROM benchmarks WHERE list_contains(tags, ?) LIMIT 1", [w]).empty:
                hints.append(f"tag:{w}")
            if not store.query("SELECT 1 FROM benchmarks WHERE sweep_id = ? LIMIT 1", [w]).empty:
                hints.append(f"sweep:{w}")
    if hints:
        return f" (did you mean {' or '.join(hints)}?)"
    return "; `kvlab results list` shows the stored runs and their tags"


def _comparison(sides, where, store, threshold, explicit):
    """(kvlab.compare's frame, None), or (None, why not) for two groups that do not match (an error when the
    comparison was asked for by name)."""
    values = [g.results if g.results is not None else g.label for g in sides]
    try:
        frame = comparing.compare(values[0], values[1], where=where.text if where is not None else None, store=store,
                                  threshold=threshold)
    except errors.ResultsError as exc:
        if explicit:
            raise
        return None, f"the two groups are not compared: {exc}"
    frame.attrs["a"], frame.attrs["b"] = sides[0].label, sides[1].label
    return frame, None


# --- figures ---------------------------------------------------------------------------------------------

def _figures(entries, sweeps, comparison, store) -> tuple:
    """(figures, notes): throughput, one latency spectrum per workload, each sweep's medians, the comparison."""
    from . import plots
    figures, notes = [], []

    def add(make, title, caption, results=None, section="figures"):
        plt = _pyplot()
        try:
            fig = make()
        except errors.KvlabError as exc:
            notes.append(f"figure '{title}' not drawn: {exc}")
            return
        try:
            _plain_ticks(fig)
            problems = [str(p) for p in plots.check(fig, results=results)]
            figures.append(Figure(title, caption, _svg(fig, len(figures) + 1, title), problems, section))
        finally:
            plt.close(fig)

    measured = [en for en in entries if en.b.ops and not en.b.partial]
    if measured:
        frame, fixed, dropped, runs_per_bar = _throughput_frame(measured)
        log = frame.ops_per_sec.max() / max(frame.ops_per_sec[frame.ops_per_sec > 0].min(), 1e-12) >= 50 \
            if (frame.ops_per_sec > 0).any() else False

        def throughput():
            fig = plots.bars(frame, x="benchmark", y="ops_per_sec", hue="engine",
                             title="throughput: median ops/s per engine and benchmark"
                                   + (f" at {', '.join(fixed)}" if fixed else ""), log=log)
            fig.axes[0].set_ylabel("ops/s (log scale)" if log else "ops/s")
            fig.axes[0].set_xlabel("")
            return fig
        lo, hi = min(runs_per_bar), max(runs_per_bar)
        count = f"{lo}" if lo == hi else f"{lo} to {hi}"
        add(throughput, "Throughput",
            f"Each bar: the median ops/s of the benchmarks with that engine and key ({count} benchmark"
            f"{'s' if hi > 1 else ''} a bar); partial benchmarks left out."
            + (" Log scale: the engines are more than 50x apart." if log else "")
            + (f" Drawn at {', '.join(fixed)}, the most frequent setting (the others are in the table)." if fixed
               else "")
            + (f" Not drawn (more than {MAX_BAR_GROUPS} benchmarks): {', '.join(dropped)}." if dropped else ""))
    spectra, left_out, small = _spectrum_sets(entries)
    for name, chosen, lines_left, pooled in spectra:
        results = [en.b for en in chosen]
        add(lambda results=results, name=name: plots.latency_spectrum(results, title=f"{name}: latency by "
                                                                                        "percentile"),
            f"Latency by percentile: {name}",
            "HdrHistogram's percentile spectrum of each benchmark's whole latency histogram (as stored): latency "
            "(µs, log) against percentile on a 1/(1-p) axis; each line ends at the highest percentile its "
            "operations resolve." + (f" Where several benchmarks share a line's key, the one with the median ops/s "
                                     f"is drawn ({pooled})." if pooled else "")
            + (f" Lines not drawn (more than {MAX_LINES}): {', '.join(lines_left)}." if lines_left else ""),
            results=results)
    if left_out:
        notes.append(f"latency figures drawn for the first {MAX_SPECTRA} workloads; not drawn: {', '.join(left_out)}")
    if small:
        notes.append(f"not in the latency figures (fewer than {MIN_SPECTRUM_OPS} timed operations, no tail to "
                     f"draw): {', '.join(small[:10])}{' ...' if len(small) > 10 else ''}")
    for name in sweeps[:MAX_SWEEPS]:
        try:
            drawn = _sweep_figures(store, name)
        except errors.KvlabError as exc:
            notes.append(f"sweep {name}: no figure ({exc})")
            continue
        for metric, made in drawn:
            add(made, f"Sweep {name}: {plots.axis_label(metric)}",
                f"Sweep {name}: the median of each setting's repeats against its first numeric axis, the other "
                "axes that vary as colours and panels; the band, where drawn, is the interval of the median.")
    if len(sweeps) > MAX_SWEEPS:
        notes.append(f"sweep figures drawn for the first {MAX_SWEEPS} sweeps; not drawn: "
                     f"{', '.join(sweeps[MAX_SWEEPS:])}")
    if comparison is not None:
        add(lambda: plots.compare(comparison), "Comparison: B against A",
            "Per metric, B's median as its change against A's median (%), with B's interval of the median (bar) and "
            "A's (grey); the shaded band is the noise floor; green: better, red: worse, grey: no significant "
            "change; the diamond is the geometric mean.", section="comparison")
    return figures, notes


def _pyplot():
    from .._optional import require
    return require("matplotlib.pyplot", "kvlab's report")


def _label_keys(entries) -> list:
    """What tells benchmarks of one workload apart in this report: [(key, getter)] of the keys that vary
    across `entries` (a getter's value is hashable: a mix's value size range becomes a tuple)."""
    keys = []
    for k, get in (("phase", lambda b: b.phase), ("threads", lambda b: b.threads),
                   ("num", lambda b: _hashable((b.params or {}).get("num"))),
                   ("value_size", lambda b: _hashable((b.params or {}).get("value_size")))):
        if len({get(en.b) for en in entries}) > 1:
            keys.append((k, get))
    return keys


def _hashable(v):
    return tuple(v) if isinstance(v, list) else json.dumps(v, sort_keys=True) if isinstance(v, dict) else v


def _benchmark_label(b, keys) -> str:
    return " ".join([b.workload] + [_benchmark_label_part(k, get(b)) for k, get in keys])


def _benchmark_label_part(key: str, v) -> str:
    return {"phase": str(v), "threads": f"{v} thr", "num": f"num {num(v)}", "value_size": f"{num(v)} B values"}[key]


def _throughput_frame(measured):
    """(frame: engine, benchmark, median ops/s; what was held at one value; benchmarks not drawn; how many
    benchmarks each bar is the median of)."""
    import pandas as pd
    measured, fixed = _fewer_lines(measured, MAX_BAR_GROUPS // 2, per_engine=False)
    keys = _label_keys(measured)
    rows = [{"engine": en.b.engine, "benchmark": _benchmark_label(en.b, keys), "ops_per_sec": en.b.ops_per_sec}
            for en in measured]
    frame = pd.DataFrame(rows)
    labels = list(dict.fromkeys(frame.benchmark))
    dropped = labels[MAX_BAR_GROUPS:]
    frame = frame[frame.benchmark.isin(labels[:MAX_BAR_GROUPS])]
    grouped = frame.groupby(["engine", "benchmark"], sort=False).ops_per_sec
    return grouped.median().reset_index(), fixed, dropped, grouped.size().tolist()


def _spectrum_sets(entries) -> tuple:
    """([(title, representative entries, lines left out, how many were pooled)], sets left out, benchmarks too
    small): per workload and latency unit (first MAX_SPECTRA) one line per engine and key that varies (first
    MAX_LINES), each the benchmark with the median ops/s of those sharing it (one run's histogram, never a
    pool of unlike runs).  A benchmark of fewer than MIN_SPECTRUM_OPS timed operations has no tail to show."""
    sets, small = {}, []
    for en in entries:
        if not en.b.ops:
            continue
        if ((en.b.latency_us or {}).get("count") or en.b.ops) < MIN_SPECTRUM_OPS:
            small.append(f"{en.b.engine} {en.b.workload} ({en.b.phase})")
            continue
        unit = en.b.latency_unit or "op"
        title = en.b.workload + (f" (latency per {unit})" if unit != "op" else "")
        sets.setdefault(title, []).append(en)
    out = []
    for title, group in list(sets.items())[:MAX_SPECTRA]:
        whole = [en for en in group if not en.b.partial] or group
        whole, fixed = _fewer_lines(whole)
        keys = _label_keys(whole)
        lines = {}
        for en in whole:
            lines.setdefault((en.b.engine, _benchmark_label(en.b, keys)), []).append(en)
        chosen, pooled = [], []
        kept = _round_robin(list(lines), MAX_LINES)
        for engine, label in kept:
            same = lines[(engine, label)]
            ranked = sorted(same, key=lambda en: en.b.ops_per_sec)
            chosen.append(ranked[(len(ranked) - 1) // 2])
            if len(same) > 1:
                pooled.append(f"{engine} {label}: {len(same)}")
        left = [f"{engine} {label}" for engine, label in lines if (engine, label) not in kept]
        out.append((title + (f" at {', '.join(fixed)}" if fixed else ""), chosen, left, "; ".join(pooled)))
    return out, list(sets)[MAX_SPECTRA:], list(dict.fromkeys(small))


def _fewer_lines(entries, limit: int = MAX_LINES, per_engine: bool = True) -> tuple:
    """(entries, what was held): while a figure would have more than `limit` lines (or, per_engine False, x
    positions), the least telling key that varies (value size, then num, threads, phase) is held at its most
    frequent value (phase: run), so every engine keeps its line at one setting; the table has the rest."""
    fixed = []
    order = ("value_size", "num", "threads", "phase")
    while True:
        keys = dict(_label_keys(entries))
        shown = {((en.b.engine,) if per_engine else ()) + (en.b.workload,) + tuple(get(en.b) for get in keys.values())
                 for en in entries}
        free = [k for k in order if k in keys]
        if len(shown) <= limit or not free:
            return entries, fixed
        key, get = free[0], keys[free[0]]
        values = [get(en.b) for en in entries]
        value = "run" if key == "phase" and "run" in values else max(dict.fromkeys(values), key=values.count)
        entries = [en for en in entries if get(en.b) == value]
        fixed.append(_benchmark_label_part(key, value))


def _round_robin(lines: list, limit: int) -> list:
    """At most `limit` of (engine, label), taking each engine's lines in turn, so every engine is drawn."""
    by_engine = {}
    for line in lines:
        by_engine.setdefault(line[0], []).append(line)
    kept = []
    while len(kept) < min(limit, len(lines)):
        for queue in by_engine.values():
            if queue and len(kept) < limit:
                kept.append(queue.pop(0))
    return [line for line in lines if line in kept]


def _sweep_figures(store, name) -> list:
    """[(metric, a function drawing it)]: sweep `name`'s ops/s and p99 (those it has) against its first numeric
    axis, each on a log scale where its medians are 30x apart or more."""
    from ..results import sweeps as stored
    from . import plots
    frame = stored.tidy(store, name)
    defined = store.query("SELECT definition FROM sweeps WHERE sweep_id = ?", [name])
    axes = json.loads(defined.definition.iloc[0]).get("axes", {}) if not defined.empty else {}
    axes = {k: v for k, v in axes.items() if k in frame.columns}
    numeric = [k for k, v in axes.items() if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)]
    x = numeric[0] if numeric else next(iter(axes), None)
    out = []
    for metric in ("ops_per_sec", "p99_us"):
        if x is None or metric not in frame.columns:
            continue
        values = frame[metric].dropna().astype(float)
        positive = values[values > 0]
        log = bool(len(positive) == len(values) and len(values) and positive.max() / positive.min() >= 30)
        out.append((metric, lambda metric=metric, log=log: plots.sweep(frame, metric, x=x, axes=list(axes), log=log)))
    return out


def tick_text(v, _pos=None) -> str:
    """An axis tick as a reader reads it, never in scientific notation: 0.001, 0.25, 5, 5,000, 50k, 12M."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:,.3f}".rstrip("0").rstrip(".") + "M"
    if a >= 1e4:
        return f"{v / 1e3:,.3f}".rstrip("0").rstrip(".") + "k"
    return f"{v:,.10f}".rstrip("0").rstrip(".")


def _plain_ticks(fig) -> None:
    """Every tick label of matplotlib's own number formats in plain numbers (its defaults write 1e7 above an
    axis, 10^0 on a log axis, 6x10^2 on minor ticks); labels a figure function wrote itself are kept."""
    from matplotlib import ticker
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            log = axis.get_scale() == "log"
            if isinstance(axis.get_major_formatter(), (ticker.ScalarFormatter, ticker.LogFormatter)):
                axis.set_major_formatter(ticker.FuncFormatter(tick_text))
            if log and isinstance(axis.get_minor_formatter(), ticker.LogFormatter):
                lo, hi = sorted(v for v in axis.get_view_interval())
                narrow = lo > 0 and hi / lo < 10      # less than a decade: the minor ticks carry the labels
                axis.set_minor_formatter(ticker.FuncFormatter(tick_text) if narrow else ticker.NullFormatter())


_SVG_ID = re.compile(r'(\bid="|url\(#|href="#)([^")]+)')


def _svg(fig, n: int, title: str) -> str:
    """The figure as inline SVG: text kept as text (small, selectable), its ids prefixed so that several
    figures in one page never share one, no XML prolog, no external reference."""
    import matplotlib
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"kvlab-report-{n}"}):
        fig.savefig(buf, format="svg", bbox_inches="tight",
                    metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    ids = set(re.findall(r'\bid="([^"]+)"', text))
    prefix = f"fig{n}-"
    text = _SVG_ID.sub(lambda m: m.group(1) + prefix + m.group(2) if m.group(2) in ids else m.group(0), text)
    text = re.sub(r'\s+xmlns(:xlink)?="[^"]*"', "", text, count=2)
    return text.replace("<svg", f'<svg role="img" aria-label="{html.escape(title)}"', 1)


# --- the page ----------------------------------------------------------------------------------------------

def e(text) -> str:
    """Any text from a user or a record, escaped for HTML (quotes too: it may sit in an attribute)."""
    return html.escape("" if text is None else str(text), quote=True)


def _anchor(run: str) -> str:
    return "run-" + re.sub(r"[^A-Za-z0-9_-]", "-", run)


def _page(entries, groups, where, comparison, figures, notes, title) -> str:
    runs = _runs(entries)
    title = title or "kvlab report: " + ", ".join(g.label for g in groups)
    # numbered in the order they appear: the comparison's first
    shown = [f for f in figures if f.section == "comparison"] + [f for f in figures if f.section != "comparison"]
    numbers = {id(f): i for i, f in enumerate(shown, 1)}
    sections = [_header(entries, runs, groups, where, comparison, title), _contents(comparison, figures)]
    if comparison is not None:
        sections.append(_comparison_section(comparison, [f for f in shown if f.section == "comparison"], numbers))
    sections.append(_figures_section([f for f in shown if f.section != "comparison"], numbers, notes))
    sections.append(_summary_table(entries))
    sections.append(_runs_section(runs))
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<meta name=\"generator\" content=\"kvlab {e(__version__)}\">\n<title>{e(title)}</title>\n"
            f"<style>{_CSS}</style>\n</head>\n<body>\n<main>\n" + "\n".join(sections)
            + f"\n<footer>Made by kvlab {e(__version__)} (<code>kvlab report</code>). Self-contained: figures are "
            "inline SVG, nothing is fetched.</footer>\n</main>\n</body>\n</html>\n")


def _runs(entries) -> dict:
    out = {}
    for en in entries:
        out.setdefault(en.run, []).append(en)
    return out


def _machine_text(m: dict) -> str:
    mem = f"{m['memory_bytes'] / 2**30:.0f} GiB" if m.get("memory_bytes") else None
    parts = [m.get("cpu_model"), f"{m['cores']} cores" if m.get("cores") else None, mem, m.get("kernel"),
             f"Python {m['python']}" if m.get("python") else None]
    return f"{m.get('hostname') or '?'}: " + ", ".join(str(p) for p in parts if p)


def _header(entries, runs, groups, where, comparison, title) -> str:
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %z")
    started = sorted(en.b.started_at for en in entries if en.b.started_at)
    machines = list(dict.fromkeys(_machine_text(((en.b.provenance or {}).get("machine") or {}))
                                  for en in entries if (en.b.provenance or {}).get("machine")))
    versions = list(dict.fromkeys(
        f"{(en.b.versions or {}).get('kvlab', '?')} ({((en.b.versions or {}).get('git_commit') or '?')[:12]})"
        for en in entries))
    engines = {}
    for en in entries:
        v = en.b.versions or {}
        engines.setdefault(en.b.engine, f"{en.b.engine} {v.get('engine_library') or ''}".strip())
    selected = "; ".join(e(g.label) for g in groups) + (f"; where {e(where.text)}" if where is not None else "")
    partial = sum(1 for en in entries if en.b.partial)
    warned = sum(1 for rs in runs.values() if any(en.b.warnings for en in rs))
    rows = [("selected", selected),
            ("contents", f"{_plural(len(runs), 'run')}, {_plural(len(entries), 'benchmark')}"
                         + (f", {num(partial)} partial (stopped early)" if partial else "")
                         + (f"; {_plural(warned, 'run')} with warnings" if warned else "")),
            ("measured", e(f"{started[0]} to {started[-1]}" if started else "-")),
            ("engines", e("; ".join(engines.values()))),
            ("machines", "<br>".join(e(m) for m in machines) or "-"),
            ("kvlab of the runs", e(", ".join(versions))),
            ("report made", e(f"{now} by kvlab {__version__}"))]
    if comparison is not None:
        rows.insert(1, ("compared", f"B ({e(comparison.attrs.get('b'))}) against A ({e(comparison.attrs.get('a'))})"))
    body = "\n".join(f"<tr><th scope=\"row\">{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<header>\n<h1>{e(title)}</h1>\n<table class=\"facts\">\n{body}\n</table>\n</header>"


def _contents(comparison, figures) -> str:
    plain = sum(1 for f in figures if f.section != "comparison")
    items = ([("comparison", "Comparison")] if comparison is not None else []) + \
        [("figures", f"Figures ({plain})"), ("summary", "Summary"), ("runs", "Runs: warnings and provenance")]
    return "<nav><ul>" + "".join(f"<li><a href=\"#{k}\">{v}</a></li>" for k, v in items) + "</ul></nav>"


_SUMMARY_COLUMNS = [("run", "run", "l"), ("engine", "engine", "l"), ("workload", "workload", "l"),
                    ("phase", "phase", "l"), ("threads", "threads", "r"), ("num", "num", "r"),
                    ("value_size", "value B", "r"), ("ops_per_sec", "ops/s", "r"), ("p50", "p50 µs", "r"),
                    ("p99", "p99 µs", "r"), ("p999", "p99.9 µs", "r"), ("cpu", "CPU µs/op", "r"),
                    ("partial", "partial", "l"), ("tags", "tags", "l"), ("warnings", "warnings", "r")]


def _cpu_per_op(b) -> float | None:
    a = b.accounting or {}
    if a.get("cpu_user_s") is None or a.get("cpu_sys_s") is None or not b.ops:
        return None
    return (a["cpu_user_s"] + a["cpu_sys_s"]) * 1e6 / b.ops


def _summary_table(entries) -> str:
    head = "".join(f"<th class=\"{a}\" scope=\"col\">{e(h)}</th>" for _, h, a in _SUMMARY_COLUMNS)
    rows = []
    batch = False
    for en in entries:
        b = en.b
        lat = b.latency_us or {}
        unit = " <small>/batch</small>" if b.latency_unit == "batch" else ""
        batch |= bool(unit)
        cells = {
            "run": f"<a href=\"#{_anchor(en.run)}\">{e(en.run)}</a>",
            "engine": e(b.engine), "workload": e(b.workload), "phase": e(b.phase), "threads": num(b.threads),
            "num": num((b.params or {}).get("num")), "value_size": num((b.params or {}).get("value_size")),
            "ops_per_sec": num(b.ops_per_sec), "p50": num(lat.get("p50")) + unit, "p99": num(lat.get("p99")) + unit,
            "p999": num(lat.get("p999")) + unit, "cpu": num(_cpu_per_op(b)),
            "partial": "<strong class=\"partial\">PARTIAL</strong>" if b.partial else "",
            "tags": " ".join(f"<span class=\"tag\">{e(t)}</span>" for t in b.tags),
            "warnings": (f"<a class=\"warn\" href=\"#{_anchor(en.run)}\">{len(b.warnings)}</a>" if b.warnings else ""),
        }
        rows.append("<tr>" + "".join(f"<td class=\"{a}\">{cells[k]}</td>" for k, _, a in _SUMMARY_COLUMNS) + "</tr>")
    legend = ("ops/s: operations per wall-clock second; p50 ... p99.9: latency percentiles in microseconds per "
              "operation" + (" (per batch where marked /batch)" if batch else "") + ", from the whole histogram; "
              "CPU µs/op: user + system CPU time of the process per operation; partial: stopped before its end; "
              "warnings: what kvlab found suspicious about the benchmark (listed with its run below).")
    return (f"<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"scroll\"><table class=\"data\">\n<thead><tr>"
            f"{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + f"\n</tbody>\n</table></div>\n<p class=\"legend\">"
            f"{e(legend)}</p>\n</section>")




def _p_text(p) -> str:
    return html.escape(p_text(p))


def _interval_text(rec, side) -> str:
    n = rec.get(f"{side}_n")
    lo, hi, level = rec.get(f"{side}_ci_lo"), rec.get(f"{side}_ci_hi"), rec.get(f"{side}_ci_level")
    if missing(lo):
        return f"n={int(n) if not missing(n) else 0}: no interval"
    text = f"{num(lo)} .. {num(hi)}"
    if not missing(level) and level < stats.LEVEL:
        text += f" ({_percent(level)})"
    return text


def _comparison_section(frame, figures, numbers) -> str:
    attrs = frame.attrs
    match = attrs.get("match", list(comparing.MATCH))
    lines = []
    for side in ("a", "b"):
        engines = ", ".join(attrs.get(f"{side}_engines", [])) or "-"
        runs = attrs.get(f"{side}_runs")
        count = "" if runs is None else f"{_plural(runs, 'run')}, "
        lines.append(f"<p><strong>{side.upper()}</strong>: {e(attrs.get(side))} ({count}"
                     f"{_plural(attrs.get(f'{side}_benchmarks'), 'benchmark')}; {e(engines)})</p>")
    tables = []
    for m in comparing.METRICS:
        part = frame[frame.metric == m.name]
        if part.empty:
            continue
        rows = []
        for rec in part.to_dict("records"):
            geomean = rec.get("workload") == "geomean" and not missing(rec.get("geomean_of"))
            name = f"geomean of {rec['geomean_of']}" if geomean else \
                comparing.key_text({k: rec.get(k) for k in match if k in rec})
            verdict = "" if geomean else (rec.get("verdict") or "~")
            css = {"faster": "good", "better": "good", "slower": "bad", "worse": "bad"}.get(verdict, "same")
            cells = [e(name), num(rec["a_median"]), "" if geomean else e(_interval_text(rec, "a")),
                     num(rec["b_median"]), "" if geomean else e(_interval_text(rec, "b")),
                     e(change_text(rec["change_pct"])),
                     "" if geomean else _p_text(rec.get("p_value")),
                     "" if geomean else f"{int(rec['a_n'])}/{int(rec['b_n'])}",
                     f"<span class=\"verdict {css}\">{e(verdict)}</span>" if verdict else ""]
            rows.append("<tr" + (" class=\"geomean\"" if geomean else "") + ">" + "".join(
                f"<td class=\"{'l' if i in (0, 8) else 'r'}\">{c}</td>" for i, c in enumerate(cells)) + "</tr>")
        head = "".join(f"<th class=\"{'l' if i in (0, 8) else 'r'}\" scope=\"col\">{h}</th>" for i, h in enumerate(
            ("benchmark", "A median", "A: median's 95% CI", "B median", "B: median's 95% CI", "change", "p", "n A/B",
             "verdict")))
        tables.append(f"<h3>{e(m.label)}, {'higher' if m.higher_is_better else 'lower'} is better</h3>\n"
                      f"<div class=\"scroll\"><table class=\"data\"><thead><tr>{head}</tr></thead><tbody>"
                      + "".join(rows) + "</tbody></table></div>")
    alpha, threshold = attrs.get("alpha", comparing.ALPHA), attrs.get("threshold_pct", comparing.THRESHOLD_PCT)
    legend = (f"median: of each side's samples (the benchmarks with the same {', '.join(match)}); 95% CI: the "
              f"median's interval (exact order statistics; with 3-5 samples the min-max range, its confidence in "
              f"brackets; none below 3); change: B's median against A's; p: two-sided Mann-Whitney U; ~: p >= "
              f"{alpha:g}, no p, or |change| below the noise floor ({threshold:g}%).")
    notes = "".join(f"<li>{e(n)}</li>" for n in attrs.get("notes", []))
    return ("<section id=\"comparison\">\n<h2>Comparison: B against A</h2>\n" + "\n".join(lines) + "\n"
            + "\n".join(tables) + f"\n<p class=\"legend\">{e(legend)}</p>"
            + (f"\n<ul class=\"notes\">{notes}</ul>" if notes else "")
            + "".join(_figure_html(f, numbers[id(f)]) for f in figures) + "\n</section>")


def _figure_html(f: Figure, n: int) -> str:
    check = "" if not f.problems else (
        "<p class=\"check\">Figure check: " + "; ".join(e(p) for p in f.problems) + "</p>")
    return (f"<figure id=\"figure-{n}\">\n{f.svg}\n<figcaption><strong>Figure {n}. {e(f.title)}.</strong> "
            f"{e(f.caption)}</figcaption>\n{check}</figure>")


def _figures_section(figures, numbers, notes) -> str:
    parts = ["<section id=\"figures\">", "<h2>Figures</h2>"]
    parts += [_figure_html(f, numbers[id(f)]) for f in figures]
    if not figures:
        parts.append("<p>No figure: nothing was measured (every benchmark selected is empty).</p>")
    if notes:
        parts.append("<ul class=\"notes\">" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _spec_grid(spec: dict) -> str:
    """A run's spec, every field, as compact name: value cells (values as JSON, which RunSpec.from_dict reads)."""
    cells = "".join(f"<div><dt>{e(k)}</dt><dd>{e(json.dumps(v, default=str))}</dd></div>" for k, v in spec.items())
    return f"<dl class=\"spec\">{cells}</dl>"


def _kv_table(d: dict) -> str:
    if not d:
        return "<p class=\"none\">none</p>"
    rows = []
    for k, v in d.items():
        if isinstance(v, (dict, list)):
            text = json.dumps(v, default=str)
        elif isinstance(v, numbers.Real) and not isinstance(v, bool):
            text = num(v)
        else:
            text = v
        rows.append(f"<tr><th scope=\"row\">{e(k)}</th><td>{e(text)}</td></tr>")
    return "<table class=\"kv\">" + "".join(rows) + "</table>"


_SHOWN_APART = ("spec", "engine_config_given", "engine_config_effective", "machine", "storage", "build",
                "started_at", "ended_at")


def _run_section(run: str, group) -> str:
    first = group[0].b
    prov = first.provenance or {}
    engines = ", ".join(dict.fromkeys(en.b.engine for en in group))
    workloads = ", ".join(dict.fromkeys(f"{en.b.workload}" + (" (load)" if en.b.phase == "load" else "")
                                        for en in group))
    threads = ", ".join(dict.fromkeys(str(en.b.threads) for en in group))
    warnings = list(dict.fromkeys(w for en in group for w in en.b.warnings))
    partial = any(en.b.partial for en in group)
    tags = list(dict.fromkeys(t for en in group for t in en.b.tags))
    when = first.started_at or group[0].stored_at or ""
    head = (f"<h3><a href=\"#{_anchor(run)}\">run {e(run)}</a></h3>\n<p class=\"runline\">{e(engines)}; "
            f"{e(workloads)}; threads {e(threads)}; {e(when)}"
            + (f"; sweep {e(group[0].sweep_id)}" if group[0].sweep_id else "")
            + ("; <strong class=\"partial\">PARTIAL</strong>" if partial else "")
            + ("; tags " + " ".join(f"<span class=\"tag\">{e(t)}</span>" for t in tags) if tags else "") + "</p>")
    if warnings:
        shown = "".join(f"<li>{e(w)}</li>" for w in warnings[:MAX_WARNINGS_SHOWN])
        hidden = len(warnings) - MAX_WARNINGS_SHOWN
        more = f"<li>... and {hidden} more</li>" if hidden > 0 else ""
        head += f"\n<ul class=\"warnings\">{shown}{more}</ul>"
    else:
        head += "\n<p class=\"nowarn\">no warnings</p>"
    spec = prov.get("spec")
    benches = "".join(
        f"<tr><td class=\"l\">{e(en.b.workload)}</td><td class=\"l\">{e(en.b.phase)}</td><td class=\"r\">"
        f"{num(en.b.threads)}</td><td class=\"r\">{num(en.b.trial)}</td><td class=\"r\">{num(en.b.ops)}</td>"
        f"<td class=\"r\">{num(en.b.seconds)}</td><td class=\"r\">{e(en.b.seed)}</td>"
        f"<td class=\"l\">{e(en.b.started_at)}</td></tr>" for en in group)
    body = [
        "<h4>Benchmarks</h4><table class=\"data\"><thead><tr><th class=\"l\">workload</th><th class=\"l\">phase</th>"
        "<th class=\"r\">threads</th><th class=\"r\">trial</th><th class=\"r\">ops</th><th class=\"r\">seconds</th>"
        f"<th class=\"r\">seed</th><th class=\"l\">started</th></tr></thead><tbody>{benches}</tbody></table>",
        "<h4>Spec</h4>" + (_spec_grid(spec) if spec else
                           "<p class=\"none\">not recorded (a record older than provenance)</p>"),
        "<h4>Engine settings</h4>" + _kv_table({"given": prov.get("engine_config_given") or {},
                                                "in effect": prov.get("engine_config_effective") or {}}),
        "<h4>Versions</h4>" + _kv_table({**(first.versions or {}), **(prov.get("build") or {}),
                                         "key_encoding": first.key_encoding}),
        "<h4>Machine</h4>" + _kv_table(prov.get("machine") or {}),
        "<h4>Storage</h4>" + _kv_table(prov.get("storage") or {}),
    ]
    other = {k: v for k, v in prov.items() if k not in _SHOWN_APART}
    if other:
        body.append("<h4>Other provenance</h4>" + _kv_table(other))
    differing = [en for en in group[1:] if _provenance_key(en.b) != _provenance_key(first)]
    for en in differing:
        body.append(f"<h4>Provenance of {e(en.b.workload)} ({e(en.b.phase)}, trial {num(en.b.trial)}), where it "
                    f"differs</h4><pre>{e(json.dumps(en.b.provenance, indent=1, default=str))}</pre>")
    return (f"<article class=\"run\" id=\"{_anchor(run)}\">\n{head}\n<details>\n<summary>provenance: spec, engine "
            f"settings, versions, machine, storage</summary>\n" + "\n".join(body) + "\n</details>\n</article>")


def _provenance_key(b) -> str:
    p = {k: v for k, v in (b.provenance or {}).items() if k not in ("started_at", "ended_at", "trial")}
    return json.dumps(p, sort_keys=True, default=str)


def _runs_section(runs: dict) -> str:
    return ("<section id=\"runs\">\n<h2>Runs: warnings and provenance</h2>\n"
            + "\n".join(_run_section(run, group) for run, group in runs.items()) + "\n</section>")


_CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --band: #f6f8fa; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; font: 15px/1.45 system-ui, -apple-system, "Segoe UI",
       "DejaVu Sans", "Liberation Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 1.2rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: 0.2rem 0 0.8rem; word-break: break-word; }
h2 { font-size: 1.3rem; border-bottom: 1px solid var(--line); padding-bottom: 0.25rem; margin-top: 2.2rem; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 0.4rem; }
h4 { font-size: 0.95rem; margin: 1rem 0 0.3rem; color: var(--muted); }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 0.85em; }
pre { background: var(--band); padding: 0.6rem 0.8rem; overflow-x: auto; border-radius: 4px; }
table { border-collapse: collapse; }
table.facts th, table.kv th { text-align: left; font-weight: 600; padding: 0.15rem 1rem 0.15rem 0;
       vertical-align: top; white-space: nowrap; color: var(--muted); }
table.facts td, table.kv td { padding: 0.15rem 0; word-break: break-word; }
table.kv td { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85em; }
.scroll { overflow-x: auto; }
table.data { font-size: 0.85rem; font-variant-numeric: tabular-nums; width: 100%; }
table.data th { background: var(--band); border-bottom: 2px solid var(--line); padding: 0.3rem 0.5rem;
       white-space: nowrap; position: sticky; top: 0; }
table.data td { border-bottom: 1px solid var(--line); padding: 0.22rem 0.5rem; }
table.data tbody tr:nth-child(even) { background: #fbfcfd; }
.r { text-align: right; white-space: nowrap; }
.l { text-align: left; }
tr.geomean td { font-style: italic; border-top: 2px solid var(--line); }
.tag { display: inline-block; background: #eef3f8; border: 1px solid #c8d6e5; border-radius: 3px;
       padding: 0 0.3rem; margin: 0 0.15rem 0.1rem 0; font-size: 0.8em; }
.partial { color: #b35900; }
a.warn { color: #9a6700; font-weight: 600; }
.verdict { font-weight: 600; }
.verdict.good { color: #1a7f37; } .verdict.bad { color: #cf222e; } .verdict.same { color: var(--muted); }
.legend, figcaption, .runline, .nowarn, .none { color: var(--muted); font-size: 0.85rem; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.4rem 1.4rem; margin: 1rem 0; }
figure { margin: 1.2rem 0 2rem; }
figure svg { display: block; max-width: 100%; height: auto; }
.check { color: #9a6700; font-size: 0.8rem; }
ul.warnings { margin: 0.3rem 0; padding-left: 1.2rem; font-size: 0.85rem; color: #7d4e00; }
ul.notes { font-size: 0.85rem; color: var(--muted); }
article.run { border-top: 1px solid var(--line); padding-top: 0.2rem; }
details { margin: 0.4rem 0 1rem; }
dl.spec { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 0.1rem 1.2rem;
       margin: 0; font-size: 0.85em; }
dl.spec div { display: flex; gap: 0.5rem; border-bottom: 1px dotted var(--line); min-width: 0; }
dl.spec dt { color: var(--muted); font-weight: 600; }
dl.spec dd { margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
summary { cursor: pointer; color: var(--accent); font-size: 0.9rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: 0.8rem; border-top: 1px solid var(--line);
       padding-top: 0.6rem; }
@media print { details { display: block; } nav { display: none; } }
"""
