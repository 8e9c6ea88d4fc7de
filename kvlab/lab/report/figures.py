"""The report's figures: throughput per engine and benchmark, one latency spectrum per workload, each sweep's
medians, the comparison's forest plot; each bounded (MAX_*) so that a report of hundreds of runs stays quick."""
from __future__ import annotations

import json

from ... import errors
from ...results.formatting import num
from .svg import Figure, plain_ticks, svg

MAX_SPECTRA = 6          # latency figures: one per workload, the first this many
MAX_LINES = 8            # lines in one latency figure (engines x threads x ...), the first this many
MAX_BAR_GROUPS = 16      # benchmarks on the throughput figure's x axis
MAX_SWEEPS = 3           # sweeps drawn (each: ops/s and p99)
MIN_SPECTRUM_OPS = 100   # a latency spectrum needs a tail: p99 needs 100 operations
MAX_FLAMES = 4           # flame graphs of profiled benchmarks (--profile), the first this many


def draw(entries, sweeps, comparison, store) -> tuple:
    """(figures, notes): throughput, one latency spectrum per workload, each sweep's medians, the comparison."""
    drawn = _Drawn()
    _throughput(drawn, entries)
    _spectra(drawn, entries)
    _sweeps(drawn, sweeps, store)
    _flames(drawn, entries)
    if comparison is not None:
        from .. import plots
        drawn.add(lambda: plots.compare(comparison), "Comparison: B against A",
                  "Per metric, B's median as its change against A's median (%), with B's interval of the median (bar) "
                  "and A's (grey); the shaded band is the noise floor; green: better, red: worse, grey: no significant "
                  "change; the diamond is the geometric mean.", section="comparison")
    return drawn.figures, drawn.notes


class _Drawn:
    """The figures made so far, each checked and kept as SVG, and the notes on what was not drawn."""

    def __init__(self):
        self.figures, self.notes = [], []

    def add(self, make, title, caption, results=None, section="figures"):
        from .. import plots
        plt = _pyplot()
        try:
            fig = make()
        except errors.KvlabError as exc:
            self.notes.append(f"figure '{title}' not drawn: {exc}")
            return
        try:
            plain_ticks(fig)
            problems = [str(p) for p in plots.check(fig, results=results)]
            self.figures.append(Figure(title, caption, svg(fig, len(self.figures) + 1, title), problems, section))
        finally:
            plt.close(fig)


def _throughput(drawn: _Drawn, entries) -> None:
    """The median ops/s per engine and benchmark, as bars (log scale where the engines are 50x apart)."""
    from .. import plots
    measured = [en for en in entries if en.b.ops and not en.b.partial]
    if not measured:
        return
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
    drawn.add(throughput, "Throughput",
              f"Each bar: the median ops/s of the benchmarks with that engine and key ({count} benchmark"
              f"{'s' if hi > 1 else ''} a bar); partial benchmarks left out."
              + (" Log scale: the engines are more than 50x apart." if log else "")
              + (f" Drawn at {', '.join(fixed)}, the most frequent setting (the others are in the table)." if fixed
                 else "")
              + (f" Not drawn (more than {MAX_BAR_GROUPS} benchmarks): {', '.join(dropped)}." if dropped else ""))


def _spectra(drawn: _Drawn, entries) -> None:
    """One latency percentile spectrum per workload (the first MAX_SPECTRA), from the stored histograms."""
    from .. import plots
    spectra, left_out, small = _spectrum_sets(entries)
    for name, chosen, lines_left, pooled in spectra:
        results = [en.b for en in chosen]
        drawn.add(lambda results=results, name=name: plots.latency_spectrum(results, title=f"{name}: latency by "
                                                                                              "percentile"),
                  f"Latency by percentile: {name}",
                  "HdrHistogram's percentile spectrum of each benchmark's whole latency histogram (as stored): "
                  "latency (µs, log) against percentile on a 1/(1-p) axis; each line ends at the highest percentile "
                  "its operations resolve." + (f" Where several benchmarks share a line's key, the one with the "
                                               f"median ops/s is drawn ({pooled})." if pooled else "")
                  + (f" Lines not drawn (more than {MAX_LINES}): {', '.join(lines_left)}." if lines_left else ""),
                  results=results)
    if left_out:
        drawn.notes.append(f"latency figures drawn for the first {MAX_SPECTRA} workloads; not drawn: "
                           f"{', '.join(left_out)}")
    if small:
        drawn.notes.append(f"not in the latency figures (fewer than {MIN_SPECTRUM_OPS} timed operations, no tail "
                           f"to draw): {', '.join(small[:10])}{' ...' if len(small) > 10 else ''}")


def _flames(drawn: _Drawn, entries) -> None:
    """A flame graph of each profiled benchmark (the first MAX_FLAMES): self-contained SVG, its text searchable."""
    from ..plots.flame import flame
    profiled = [en for en in entries if (en.b.params or {}).get("profile") and not en.b.partial]
    for en in profiled[:MAX_FLAMES]:
        b = en.b
        title = f"CPU profile: {b.engine} {b.workload} at {b.threads} thread{'s' if b.threads > 1 else ''}"
        text = flame(b.params["profile"], title)
        text = text[text.index("<svg"):].replace("<svg", f'<svg role="img" aria-label="{title}"', 1)
        drawn.figures.append(Figure(title, "perf's cpu-clock samples of the measured phase (--profile), each frame as "
                                    "wide as its CPU microseconds per operation, coloured by component (engine, kvlab, "
                                    "libc and the allocator, kernel); hover a frame for its figures (docs/profile.md).",
                                    text, [], "figures"))
    if len(profiled) > MAX_FLAMES:
        drawn.notes.append(f"flame graphs drawn for the first {MAX_FLAMES} profiled benchmarks; not drawn: "
                           + ", ".join(f"{en.b.engine} {en.b.workload}" for en in profiled[MAX_FLAMES:]))


def _sweeps(drawn: _Drawn, sweeps, store) -> None:
    """Each sweep's medians (the first MAX_SWEEPS), ops/s and p99."""
    from .. import plots
    for name in sweeps[:MAX_SWEEPS]:
        try:
            made = _sweep_figures(store, name)
        except errors.KvlabError as exc:
            drawn.notes.append(f"sweep {name}: no figure ({exc})")
            continue
        for metric, make in made:
            drawn.add(make, f"Sweep {name}: {plots.axis_label(metric)}",
                      f"Sweep {name}: the median of each setting's repeats against its first numeric axis, the other "
                      "axes that vary as colours and panels; the band, where drawn, is the interval of the median.")
    if len(sweeps) > MAX_SWEEPS:
        drawn.notes.append(f"sweep figures drawn for the first {MAX_SWEEPS} sweeps; not drawn: "
                           f"{', '.join(sweeps[MAX_SWEEPS:])}")


def _pyplot():
    from ..._optional import require
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
    from ...results import sweeps as stored
    from .. import plots
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
