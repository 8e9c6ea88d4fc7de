"""Figures inline as SVG: plain tick labels, the figure as SVG text with ids of its own, and its HTML element."""
from __future__ import annotations

import dataclasses
import html
import io
import math
import re

from .text import e


@dataclasses.dataclass
class Figure:
    """A drawn figure: its title and caption, the SVG text, what the figure check found."""
    title: str
    caption: str
    svg: str
    problems: list
    section: str = "figures"     # or "comparison": drawn beside the comparison's tables


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


def plain_ticks(fig) -> None:
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


def svg(fig, n: int, title: str) -> str:
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



def figure_html(f: Figure, n: int) -> str:
    check = "" if not f.problems else (
        "<p class=\"check\">Figure check: " + "; ".join(e(p) for p in f.problems) + "</p>")
    return (f"<figure id=\"figure-{n}\">\n{f.svg}\n<figcaption><strong>Figure {n}. {e(f.title)}.</strong> "
            f"{e(f.caption)}</figcaption>\n{check}</figure>")
