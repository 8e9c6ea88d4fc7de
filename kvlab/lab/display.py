"""How progress is shown in the notebook face: a widget with a Stop button in Jupyter, else the one-line
bar on a terminal that both faces use (kvlab.services.progress).  Both are observers of a RunControl (kvlab.execution.progress);
the runner calls them without knowing what they draw."""
from __future__ import annotations

import html

from ..execution.progress import Progress, RunControl
from ..services.progress import SweepTextBar, TextBar


def in_kernel() -> bool:
    """True inside a Jupyter kernel with ipywidgets installed."""
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and hasattr(ip, "kernel")


def attach_progress(control: RunControl, spec, background: bool) -> RunControl:
    """Show progress for a run: a widget in Jupyter (Stop button for background runs;
    a foreground cell is stopped with the kernel's interrupt), else a bar on stderr."""
    if in_kernel():
        from IPython.display import display
        w = ProgressWidget(control, stop_button=background)
        display(w.box)
    else:
        control.observers.append(TextBar())
    return control


class ProgressWidget:
    """A progress bar, a status line and a Stop button for one RunControl."""

    def __init__(self, control: RunControl | None = None, stop_button: bool = True):
        import ipywidgets as W
        self.bar = W.FloatProgress(value=0.0, min=0.0, max=1.0, description="", bar_style="info",
                                   layout=W.Layout(width="320px"))
        self.text = W.HTML(value="<i>waiting to start</i>")
        self.text.add_class("kvlab-progress-text")
        self.stop_button = W.Button(description="Stop", icon="stop", button_style="danger",
                                    tooltip="stop the native threads; the result is kept, marked partial")
        self.stop_button.add_class("kvlab-stop")
        self.stop_button.on_click(lambda _b: self._stop())
        self.stop_button.layout.display = None if stop_button else "none"
        self.box = W.VBox([W.HBox([self.bar, self.stop_button]), self.text])
        self.box.add_class("kvlab-progress")
        self.control = None
        self.updates = 0
        if control is not None:
            self.bind(control)

    def bind(self, control: RunControl):
        """Follow (and stop) `control` from now on."""
        self.control = control
        if self not in control.observers:
            control.observers.append(self)
        self.stop_button.disabled = False
        self.bar.bar_style = "info"

    def _stop(self):
        if self.control is not None:
            self.control.stop()
            self.stop_button.disabled = True
            self.text.value += " <b>stopping…</b>"

    def __call__(self, p: Progress):
        self.updates += 1
        frac = p.fraction
        self.bar.value = frac if frac is not None else (self.updates % 10) / 10  # unknown end: a pulse
        if p.finished:
            self.bar.bar_style = "warning" if p.stopping else "success"
        self.text.value = html.escape(p.describe())

    def finish(self, ok: bool = True):
        self.bar.bar_style = "success" if ok else "danger"
        self.stop_button.disabled = True


def attach_sweep_progress(control, background: bool):
    """Show a sweep's progress: points done / total, ETA and the point in flight's own progress
    (a widget in Jupyter, with Stop for a background sweep; else a bar on stderr)."""
    if in_kernel():
        from IPython.display import display
        w = SweepWidget(control, stop_button=background)
        display(w.box)
    else:
        control.observers.append(SweepTextBar())
    return control


class SweepWidget:
    """A points bar and status line for a sweep, above the existing ProgressWidget of the point in flight."""

    def __init__(self, control, stop_button: bool = True):
        import ipywidgets as W
        self.control = control
        self.bar = W.IntProgress(value=0, min=0, max=1, bar_style="info", layout=W.Layout(width="320px"))
        self.text = W.HTML(value="<i>expanding the sweep</i>")
        self.text.add_class("kvlab-sweep-text")
        self.point = ProgressWidget(None, stop_button=False)
        self.stop_button = W.Button(description="Stop sweep", icon="stop", button_style="danger",
                                    tooltip="stop the point in flight (not stored) and the sweep")
        self.stop_button.on_click(lambda _b: self._stop())
        self.stop_button.layout.display = None if stop_button else "none"
        self.box = W.VBox([W.HBox([self.bar, self.stop_button]), self.text, self.point.box])
        self.box.add_class("kvlab-sweep-progress")
        control.observers.append(self)

    def _stop(self):
        self.control.stop()
        self.stop_button.disabled = True

    def __call__(self, p):
        self.bar.max, self.bar.value = max(1, p.total), p.done
        if p.finished:
            self.bar.bar_style = "warning" if p.stopping or p.failed else "success"
            self.stop_button.disabled = True
        self.text.value = html.escape(p.describe())
        if p.current is not None:
            self.point(p.current)
