"""Jupyter widgets: the run builder (the progress widget lives in kvlab.lab.display).

Widgets only build specs and call the runner (`kvlab.start_spec`); every figure
they show comes from the results.  Updates come from the run's sampling thread as plain
widget state changes, so they reach the browser while the kernel runs other cells.
ipywidgets is imported when a widget is made, so `kvlab` imports without it.
"""
from __future__ import annotations

import dataclasses
import html
import io
import os

from .. import engines as engine_registry
from .. import errors
from ..execution import native
from ..execution.progress import RunControl
from ..model import workloads
from ..services import maincompare
from .display import ProgressWidget

SCALES = (("10 thousand keys", 10_000), ("100 thousand keys", 100_000), ("1 million keys", 1_000_000),
          ("10 million keys", 10_000_000))
SUMMARY_COLUMNS = ("engine", "workload", "phase", "threads", "ops", "seconds", "ops_per_sec",
                   "micros_per_op", "latency_us.p50", "latency_us.p99", "latency_us.p9999", "latency_us.max",
                   "found", "partial")


def _settings_from_text(text: str) -> dict:
    """Engine options as typed in the builder: one KEY=VALUE a line, # for comments."""
    return dict(engine_registry.parse_setting(line.strip(), f"engine options line {n}")
                for n, line in enumerate(text.splitlines(), 1) if line.strip() and not line.strip().startswith("#"))


class RunBuilder:
    """Pick engines, workloads, scale, threads, value size, a memory budget, repeats and engine options; see the
    equivalent Python calls and `kvlab` commands; run them in the background with live progress and a Stop button
    (each trial in a worker of its own, as every run is); get the ranking with intervals and significance, as
    `kvlab compare` gives it, the result table and a figure inline.

    The engines are compared as `kvlab compare`'s main job compares them: every engine at one memory budget
    (1 GiB unless given; "none": each engine's own defaults, and the status says they were not compared at equal
    memory), `repeat` rounds in which every engine runs once, round-robin (the engine that goes first rotating
    from round to round, each round's keys another stream), ranked per workload by the median ops/s of its
    rounds with the median's interval.

        kvlab.widgets.RunBuilder()      # as the last line of a cell
    """

    def __init__(self, engine_names=None, workload_names=("fillseq", "readrandom"), num: int = 100_000,
                 threads: int | None = None, duration: float = 0.0, value_size: int = 100, seed: int = 1,
                 memory: str = maincompare.MEMORY, repeat: int = maincompare.REPEAT):
        import ipywidgets as W
        built = list(dict.fromkeys(n for r in native.describe() if r["built"]
                                   for n in engine_registry.runs_as(r["engine"])))
        chosen = tuple(e for e in (engine_names or ("lmdb",)) if e in built) or tuple(built[:1])
        cores = os.cpu_count() or 1
        style = {"description_width": "110px"}
        self.engines = W.SelectMultiple(options=built, value=chosen, rows=min(len(built), 9),
                                        description="engines", style=style)
        self.workloads = W.SelectMultiple(options=list(workloads.REGISTRY), value=tuple(workload_names),
                                          rows=7, description="workloads", style=style)
        scales = list(SCALES) if num in dict(SCALES).values() else list(SCALES) + [(f"{num:,} keys", num)]
        self.num = W.Dropdown(options=scales, value=num, description="scale", style=style)
        self.threads = W.BoundedIntText(value=threads or min(2, cores), min=1, max=max(64, 4 * cores),
                                        description="threads", style=style)
        self.duration = W.BoundedFloatText(value=duration, min=0.0, max=7 * 24 * 3600.0, step=1.0,
                                           description="duration s", style=style,
                                           tooltip="0: each workload runs its count (num / reads)")
        self.duration.add_class("kvlab-duration")
        self.value_size = W.BoundedIntText(value=value_size, min=1, max=1 << 20, description="value bytes",
                                           style=style)
        self.seed = W.BoundedIntText(value=seed, min=0, max=2**32 - 1, description="seed", style=style)
        self.memory = W.Text(value=str(memory), description="memory", style=style,
                             tooltip="one budget for every engine (1GiB, 512MiB; none: each engine's defaults)")
        self.repeat = W.BoundedIntText(value=repeat, min=1, max=100, description="repeats", style=style,
                                       tooltip="rounds, each engine once a round, round-robin")
        self.options = W.Textarea(value="", placeholder="one KEY=VALUE a line, e.g.\ncompression=snappy\n"
                                  "cache_size=1073741824", description="engine options", style=style,
                                  layout=W.Layout(width="420px", height="80px"))
        self.code = W.HTML()
        self.code.add_class("kvlab-code")
        self.run_button = W.Button(description="Run", icon="play", button_style="success")
        self.run_button.add_class("kvlab-run")
        self.run_button.on_click(lambda _b: self.run())
        self.progress = ProgressWidget(stop_button=True)
        self.status = W.HTML()
        self.status.add_class("kvlab-status")
        self.table = W.HTML()
        self.table.add_class("kvlab-results")
        self.figure = W.Image(format="png", layout=W.Layout(max_width="720px", display="none"))
        for w in (self.engines, self.workloads, self.num, self.threads, self.duration, self.value_size,
                  self.seed, self.memory, self.repeat, self.options):
            w.observe(lambda _c: self.refresh(), names="value")
        form = W.HBox([W.VBox([self.engines, self.workloads]),
                       W.VBox([self.num, self.threads, self.duration, self.value_size, self.seed, self.memory,
                               self.repeat, self.options])])
        self.box = W.VBox([form, self.code, W.HBox([self.run_button]), self.progress.box, self.status,
                           self.table, self.figure])
        self.box.add_class("kvlab-run-builder")
        self.handles = []
        self.results = []
        self.refresh()

    def _ipython_display_(self):
        from IPython.display import display
        display(self.box)

    def _memory(self):
        text = self.memory.value.strip()
        return None if text.lower() in ("", "none") else text

    def specs(self) -> list:
        """One RunSpec per chosen engine, for the first round (raises SpecError naming what is wrong)."""
        from ..model.spec import make_spec
        if not self.engines.value:
            raise errors.SpecError(f"no engine chosen; built: {', '.join(self.engines.options)}")
        if not self.workloads.value:
            raise errors.SpecError(f"no workload chosen; allowed: {', '.join(workloads.REGISTRY)}")
        order = [w for w in workloads.REGISTRY if w in self.workloads.value]
        settings = _settings_from_text(self.options.value)
        return [make_spec(e, ",".join(order), num=self.num.value, threads=self.threads.value,
                          duration=float(self.duration.value), value_size=self.value_size.value,
                          seed=self.seed.value, memory=self._memory(), **settings) for e in self.engines.value]

    def rounds(self, specs) -> list:
        """Every trial in the order it runs: `repeat` rounds, each engine once a round, the engine that goes first
        rotating from round to round (kvlab compare's order), each round's keys another stream."""
        out = []
        for r in range(self.repeat.value):
            shift = r % len(specs)
            out += [s.replace(seed=(s.seed + r) % 2 ** 32) for s in specs[shift:] + specs[:shift]]
        return out

    def refresh(self):
        """Show the Python call and the command line for the current choices (or what is wrong)."""
        try:
            specs = self.specs()
        except errors.KvlabError as exc:
            self.code.value = f"<span style='color:#b00'>{html.escape(str(exc))}</span>"
            self.run_button.disabled = True
            return None
        py = "\n".join(s.python_call() for s in specs)
        cli = "\n".join(s.cli_command() for s in specs)
        rounds = (f"<i>{self.repeat.value} rounds, each engine once a round, round-robin (the seed + the round's "
                  "number each round)</i>" if self.repeat.value > 1 else "")
        self.code.value = (f"<b>Python</b> (one round){rounds}<pre>import kvlab\n{html.escape(py)}</pre>"
                           f"<b>Command line</b><pre>{html.escape(cli)}</pre>")
        self.run_button.disabled = bool(self.handles and not self.handles[-1].done())
        return specs

    def run(self):
        """Start the chosen runs, one engine after another, in the background."""
        from .api import start_spec
        specs = self.refresh()
        if not specs:
            return None
        control = RunControl(every=0.25)
        self.progress.bind(control)
        self.results = []
        self.handles = []
        self.table.value = ""
        self.figure.layout.display = "none"
        self.run_button.disabled = True
        queue = [(i // len(specs), s) for i, s in enumerate(self.rounds(specs))]   # (round, spec)
        self.status.value = f"running {len(specs)} engine(s), {len(queue)} trial(s)…"

        def next_run(_handle=None):
            if _handle is not None:
                try:   # each record as a new one with its round (the ranking pairs the engines within a round)
                    self.results.extend(dataclasses.replace(b, trial=_handle.round) for b in _handle.result())
                except Exception as exc:  # shown, never raised into the kernel from a thread
                    self._done(f"<span style='color:#b00'>{html.escape(type(exc).__name__)}: "
                               f"{html.escape(str(exc))}</span>", ok=False)
                    return
            if queue and not control.stop_requested:
                if _handle is not None:
                    self._show_results()
                r, spec = queue.pop(0)
                h = start_spec(spec, control=control)
                h.round = r
                self.handles.append(h)
                h.add_done_callback(next_run)
                return
            # the end: say so first (a stopped run is reported at once), then draw the table and figure
            partial = any(b.partial for b in self.results)
            self._done(f"<b>stopped</b>: partial result ({sum(b.ops for b in self.results):,} ops kept, "
                       "marked partial)" if partial else
                       f"<b>finished</b>: {len(self.results)} result(s)", ok=not partial, enable=False)
            try:
                if _handle is not None:
                    self._show_results()
            finally:
                self.run_button.disabled = False

        next_run()
        return self.handles

    def stop(self):
        if self.progress.control is not None:
            self.progress.control.stop()

    def wait(self, timeout: float | None = None):
        """Block until every run of the last Run click ended (for scripts and tests)."""
        import time
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            pending = [h for h in self.handles if not h.done()]
            if not pending and (not self.run_button.disabled or not self.handles):
                return self.results
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("runs still going")
            time.sleep(0.05)

    def _done(self, message, ok, enable=True):
        self.status.value = message
        self.status.add_class("kvlab-finished")
        self.progress.finish(ok)
        if enable:
            self.run_button.disabled = False

    def _show_results(self):
        import pandas as pd

        from ..results.result import frame_rows
        frame = pd.DataFrame([{k: row.get(k) for k in SUMMARY_COLUMNS}
                              for row in frame_rows(self.results, "summary")])
        self.table.value = (ranking_html(self.results, self._memory())
                            + "<details><summary>every trial</summary>"
                            + frame.to_html(index=False, float_format=lambda v: f"{v:,.2f}", na_rep="-")
                            + "</details>")
        runs = [b for b in self.results if b.phase == "run"]
        if runs:
            self.figure.value = _png(_ops_figure(runs))
            self.figure.layout.display = None


def ranking_html(results, memory) -> str:
    """The ranking `kvlab compare` prints, as a table: per workload and thread count, the engines by their median
    ops/s with its interval, each one's ratio to the best with its interval, and the engines it is
    indistinguishable from (maincompare.rank); the budget they shared."""
    import pandas as pd

    from ..results import stats
    rows = maincompare.summarize(results)
    ranking = maincompare.rank(rows, loads=True)
    if not ranking:
        return ""
    lines = []
    for point, entries in ranking:
        for i, e in enumerate(entries, 1):
            r, v = e["row"], e["vs_best"]
            ratio = "-" if v["ratio"] is None else (
                f"{v['ratio']:.3f}" + (f" [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}]" if v["ci"] else ""))
            same = ("fewer than 3 rounds: no test" if r["n"] < 3 else
                    ", ".join(e["same_as"]) or "different from every other")
            lines.append({"point": point.label(), "rank": i, "engine": r["engine"], "rounds": r["n"],
                          "median ops/s": f"{r['median']:,.0f}",
                          "interval": stats.interval_text(r["summary"], fmt=lambda v: f"{v:,.0f}"),
                          "x best [95%]": ratio, "indistinguishable from": same})
    budget = (f"every engine at one memory budget of {memory}" if memory else
              "<b>not at equal memory</b>: each engine's own defaults (memory none)")
    return (f"<p><b>ranking</b> ({budget}; as <code>kvlab compare</code> ranks: every pair of engines compared "
            "within each round, paired ratios and Student's t, Holm's correction over a point's pairs (at most "
            f"{maincompare.results_compare.ALPHA} chance of calling any equal pair different), a difference also "
            f"{maincompare.results_compare.THRESHOLD_PCT:g}% or more)</p>"
            + pd.DataFrame(lines).to_html(index=False, escape=True, classes="kvlab-ranking"))


def _ops_figure(results):
    """Per workload and engine, the median of the rounds' ops/s with the median's interval as a whisker, and the
    median p99 latency beside it; one legend right of the panels, never over the bars; rates as 500k, 2M (no
    '1e6' offset).  Built on a bare Figure (no pyplot), so drawing it on the run's thread leaves the notebook's
    backend alone."""
    import numpy as np

    from .._optional import require
    from ..results import stats
    Figure = require("matplotlib.figure", "the run builder's figure", extra="jupyterlab").Figure
    from matplotlib.patches import Patch

    from .plots.bar import _whisker_handle as whisker_handle
    from .plots.style import engine_palette, house_style, one_legend, rate_axis
    house_style()
    whole = [b for b in results if not b.partial]
    engines = list(dict.fromkeys(b.engine for b in whole))
    points = list(dict.fromkeys((b.workload, b.threads) for b in whole))
    colours = engine_palette(engines)
    fig = Figure(figsize=(10, 3.8))
    axes = fig.subplots(1, 2)
    width = 0.8 / max(1, len(engines))
    levels: list = []
    for ax, metric, title in ((axes[0], "ops_per_sec", "throughput (ops/s)"), (axes[1], "p99", "p99 latency (µs)")):
        for j, e in enumerate(engines):
            for i, (w, t) in enumerate(points):
                values = [b.ops_per_sec if metric == "ops_per_sec" else b.latency_us.get("p99") for b in whole
                          if b.engine == e and b.workload == w and b.threads == t]
                values = [v for v in values if v is not None]
                if not values:
                    continue
                at = i + (j - (len(engines) - 1) / 2) * width
                median = float(np.median(values))
                ax.bar([at], [median], width=width, color=colours[e], edgecolor="none")
                ci = stats.median_interval(values)
                if ci is not None:
                    ax.errorbar([at], [median], yerr=[[median - ci[0]], [ci[1] - median]], fmt="none",
                                ecolor="#333333", elinewidth=1.2, capsize=3, gid="median-interval")
                    levels.append(ci[2])
        ax.set_xticks(range(len(points)))
        ax.set_xticklabels([f"{w}\n{t} thr" for w, t in points])
        ax.set_title(title)
        rate_axis(ax)
    fig.tight_layout()
    handles = [Patch(facecolor=colours[e], edgecolor="none", label=e) for e in engines]
    if levels:   # what a whisker is, with the confidence it has
        handles.append(whisker_handle(levels))
    one_legend(fig, handles, title="engine")
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()
