"""Progress on a terminal or in a log, for both faces (`kvlab` commands, and kvlab.run outside Jupyter): a
one-line bar redrawn in place on a tty, one line per step in a log.  Each is an observer of a RunControl
(kvlab.execution.progress); the runner calls it without knowing what it draws."""
from __future__ import annotations

import sys

from ..execution.progress import Progress


class TextBar:
    """A tqdm-style one-line bar on a terminal (stderr), redrawn in place."""

    def __init__(self, stream=None, width: int = 24):
        self.stream = stream or sys.stderr
        self.width = width
        self._last_len = 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def __call__(self, p: Progress):
        frac = p.fraction
        bar = "" if frac is None else \
            "|" + "#" * int(frac * self.width) + "-" * (self.width - int(frac * self.width)) + f"| {frac:4.0%} "
        line = bar + p.describe()
        if self.tty:
            pad = " " * max(0, self._last_len - len(line))
            self.stream.write("\r" + line + pad + ("\n" if p.finished else ""))
            self._last_len = 0 if p.finished else len(line)
        elif p.finished:  # a log file gets one line per workload, not a redraw per tick
            self.stream.write(line + "\n")
        self.stream.flush()


class SweepTextBar:
    """On a terminal: one line redrawn in place, the sweep's points and the current point's progress.
    In a log: one line per point as it ends."""

    def __init__(self, stream=None, width: int = 20):
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_len = 0
        self._done = -1

    def __call__(self, p):
        frac = p.fraction
        bar = "|" + "#" * int(frac * self.width) + "-" * (self.width - int(frac * self.width)) + "| "
        line = bar + p.describe()
        if p.current is not None and not p.finished:
            line += " | " + p.current.describe()
        if self.tty:
            pad = " " * max(0, self._last_len - len(line))
            self.stream.write("\r" + line + pad + ("\n" if p.finished else ""))
            self._last_len = 0 if p.finished else len(line)
        elif p.finished or p.done != self._done:
            self.stream.write(bar + p.describe() + "\n")
        self._done = p.done
        self.stream.flush()
