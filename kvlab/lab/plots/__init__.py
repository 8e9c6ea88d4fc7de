"""Figures in one house style, exported as SVG, PNG and PDF with a caption line.

Plots only read results (frames and BenchmarkResults); they never run anything.
Every caption names the engines with their library version and build, flags
builds with assertions, and states the scale and the machine.

The house style and the palette live in `style`; each kind of figure has a module of its own (`bar`, `line`,
`latency`, `sweepgrid`, `comparison`, `timeline`, `sla`, `versions`, `mixgraph`, `schedule`, `lsm_family`) that
imports from `style` and from nothing above it; this module only re-exports, so `plots.bars(...)`,
`plots.timeline(...)` (the function, not its module) and `plots.save(...)` are what the notebooks call.
"""
from __future__ import annotations

from .bar import bars, seed003_tests
from .comparison import compare
from .flame import flame, flame_diff, flame_of, why
from .latency import latency_spectrum, latency_throughput
from .line import _machine_cores, linkbench_qps, read_scalability, rww, speedup  # noqa: F401 (tests read _machine_cores)
from .lsm_family import lsm_family
from .mixgraph import mixgraph
from .schedule import rate_schedule
from .sla import sla, sla_curves
from .style import (
    ENGINE_COLOURS,
    OTHER_COLOURS,
    REFERENCE_COLOUR,
    FigureCheckWarning,
    axis_label,
    caption,
    check,
    engine_colour,
    engine_palette,
    house_style,
    save,
)
from .sweepgrid import sweep
from .timeline import timeline
from .versions import versions

__all__ = [
    "ENGINE_COLOURS", "OTHER_COLOURS", "REFERENCE_COLOUR", "engine_colour", "engine_palette",   # the palette
    "house_style", "axis_label", "check", "FigureCheckWarning", "caption", "save",               # style, export
    "bars", "seed003_tests",                                                                      # bar
    "read_scalability", "speedup", "rww", "linkbench_qps",                                        # line
    "latency_spectrum", "latency_throughput",                                                     # latency
    "sweep", "compare", "timeline", "sla",
    "versions",                                                                                   # versions
    "lsm_family",                                                                                 # LSM family
    "mixgraph", "rate_schedule", "sla_curves",                                                    # from the field
    "flame", "flame_diff", "flame_of", "why",                                                     # profiles
]
