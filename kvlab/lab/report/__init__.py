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

The package, one concern a module: gather.py (what is selected, read from the store in one query, and the
comparison), claims.py (the seeds' verdicts the store holds for these runs, and seed 001's table),
figures.py (which figures, bounded), svg.py (a figure as inline SVG), tables.py (the summary and
the comparison's tables), runs.py (each run's warnings and provenance), page.py (the page put together),
style.py (its style sheet), text.py (escaping and small text helpers), write.py (the file).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ... import errors
from ...results import compare as comparing
from ...results.compare import Selection, parse_selection
from ...results.formatting import num
from ...results.store import Store
from . import claims, gather
from .figures import MAX_BAR_GROUPS, MAX_LINES, MAX_SPECTRA, MAX_SWEEPS, MIN_SPECTRUM_OPS, draw
from .gather import Entry, Group
from .page import render
from .runs import MAX_WARNINGS_SHOWN
from .svg import Figure, tick_text
from .text import e
from .write import check_out, write

__all__ = ["report", "build", "Page", "check_out", "Group", "Entry", "Figure", "tick_text", "num", "e",
           "MAX_SPECTRA", "MAX_LINES", "MAX_BAR_GROUPS", "MAX_SWEEPS", "MAX_WARNINGS_SHOWN", "MIN_SPECTRUM_OPS"]


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
        return write(target, self.html)


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
    groups = gather.groups(selections, tag, sweep)
    sides, explicit = None, False
    if compare not in (None, False, True):
        pair = list(compare) if isinstance(compare, (list, tuple)) else None
        if pair is None or len(pair) != 2:
            raise errors.SpecError("compare: give two selections (A, B), or None or False")
        sides, explicit = [gather.group(v, f"{'AB'[i]}") for i, v in enumerate(pair)], True
        known = {g.label for g in groups}
        groups += [g for g in sides if g.selection is None or g.label not in known]
    elif compare is not False and len(groups) == 2:
        sides = list(groups)
    if not groups:
        raise errors.SpecError("nothing selected: give run ids, tag:NAME or KEY=VALUE terms, --tag TAG, "
                               "--sweep NAME, or two groups to compare")
    where_sel = where if isinstance(where, Selection) or where is None else parse_selection(str(where), "--where")
    entries = gather.load(store, groups, where_sel)
    notes = []
    comparison = None
    if sides is not None:
        comparison, note = gather.comparison(sides, where_sel, store, threshold, explicit)
        if note:
            notes.append(note)
    sweeps = list(dict.fromkeys(v for g in groups if g.selection is not None
                                for column, values in g.selection.terms if column == "sweep_id" for v in values))
    figures, figure_notes = draw(entries, sweeps, comparison, store)
    notes += figure_notes
    verdicts = claims.stored_verdicts(store, entries)
    text = render(entries, groups, where_sel, comparison, figures, notes, title, claims.section(verdicts, entries))
    return Page(text, len({en.run for en in entries}), len(entries), len(figures), comparison is not None, notes)

