"""Jupyter widgets: the run builder (the progress widget lives in kvlab.lab.display).

Widgets only build specs and call the runner (`kvlab.start_spec`); every figure
they show comes from the results.  Updates come from the run's sampling thread as plain
widget state changes, so they reach the browser while the kernel runs other cells.
ipywidgets is imported when a widget is made, so `kvlab` imports without it.
"""
from __future__ import annotations

import html
import io
import os

from .. import engines as engine_registry
from .. import errors
from ..execution import native
from ..execution.progress import RunControl
from ..model import workloads
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
    """Pick engines, workloads, scale, threads, value size and engine options; see the
    equivalent Python call and `kvlab` command; run it in the background with live progress
    and a Stop button; get the result table and a figure inline.

        kvlab.widgets.RunBuilder()      # as the last line of a cell
    """

    def __init__(self, engine_names=None, workload_names=("fillseq", "readrandom"), num: int = 100_000,
                 threads: int | None = None, duration: float = 0.0, value_size: int = 100, seed: int = 1):
        import ipywidgets as W
        built = [r["engine"] for r in native.describe() if r["built"]]
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
                  self.seed, self.options):
            w.observe(lambda _c: self.refresh(), names="value")
        form = W.HBox([W.VBox([self.engines, self.workloads]),
                       W.VBox([self.num, self.threads, self.duration, self.value_size, self.seed, self.options])])
        self.box = W.VBox([form, self.code, W.HBox([self.run_button]), self.progress.box, self.status,
                           self.table, self.figure])
        self.box.add_class("kvlab-run-builder")
        self.handles = []
        self.results = []
        self.refresh()

    def _ipython_display_(self):
        from IPython.display import display
        display(self.box)

    def specs(self) -> list:
        """One RunSpec per chosen engine (raises SpecError naming what is wrong)."""
        from ..model.spec import make_spec
        if not self.engines.value:
            raise errors.SpecError(f"no engine chosen; built: {', '.join(self.engines.options)}")
        if not self.workloads.value:
            raise errors.SpecError(f"no workload chosen; allowed: {', '.join(workloads.REGISTRY)}")
        order = [w for w in workloads.REGISTRY if w in self.workloads.value]
        settings = _settings_from_text(self.options.value)
        return [make_spec(e, ",".join(order), num=self.num.value, threads=self.threads.value,
                          duration=float(self.duration.value), value_size=self.value_size.value,
                          seed=self.seed.value, **settings) for e in self.engines.value]

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
        self.code.value = (f"<b>Python</b><pre>import kvlab\n{html.escape(py)}</pre>"
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
        self.status.value = f"running {len(specs)} engine(s)…"
        queue = list(specs)

        def next_run(_handle=None):
            if _handle is not None:
                try:
                    self.results.extend(_handle.result())
                except Exception as exc:  # shown, never raised into the kernel from a thread
                    self._done(f"<span style='color:#b00'>{html.escape(type(exc).__name__)}: "
                               f"{html.escape(str(exc))}</span>", ok=False)
                    return
            if queue and not control.stop_requested:
                if _handle is not None:
                    self._show_results()
                h = start_spec(queue.pop(0), control=control)
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
        self.table.value = frame.to_html(index=False, float_format=lambda v: f"{v:,.2f}", na_rep="-")
        runs = [b for b in self.results if b.phase == "run"]
        if runs:
            self.figure.value = _png(_ops_figure(runs))
            self.figure.layout.display = None


def _ops_figure(results):
    """ops/sec per workload and engine, p99 latency beside it.  Built on a bare Figure (no
    pyplot), so drawing it on the run's thread leaves the notebook's backend alone."""
    import pandas as pd

    from .._optional import require
    sns = require("seaborn", "the run builder's figure", extra="jupyterlab")
    Figure = require("matplotlib.figure", "the run builder's figure", extra="jupyterlab").Figure
    from .plots import house_style
    house_style()
    frame = pd.DataFrame([{"engine": b.engine, "workload": b.workload + (" (partial)" if b.partial else ""),
                           "ops_per_sec": b.ops_per_sec, "p99_us": b.latency_us.get("p99")} for b in results])
    fig = Figure(figsize=(10, 3.6))
    axes = fig.subplots(1, 2)
    sns.barplot(data=frame, x="workload", y="ops_per_sec", hue="engine", ax=axes[0])
    axes[0].set_title("throughput (ops/s)")
    sns.barplot(data=frame, x="workload", y="p99_us", hue="engine", ax=axes[1])
    axes[1].set_title("p99 latency (us)")
    fig.tight_layout()
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()
