"""`kvlab results diff A B`: the settings two runs or two selections differ in (kvlab.results.diff): the spec's,
the engine configuration kvlab gave and passed, the one the engine reported, the machine and the build.

Two engines' runs differ mostly in settings only one of them has (RocksDB's hundreds of options against LMDB's
handful): by default only the settings both sides hold are listed, the others counted in one line (--all lists
them too), and every line fits WIDTH columns, a long value cut short with an ellipsis (--json keeps it whole)."""
from __future__ import annotations

import sys
import textwrap

from ..parsing import add_store_option
from .compare import SIDE_HELP

NAME = "diff"
DIFF_HELP = "the settings A and B differ in: spec, engine config given, passed and reported, machine, build"
WIDTH = 120   # the columns every printed line fits
GAP = "  "


def add_parser(actions, make):
    d = make(actions, NAME, help=DIFF_HELP,
             description=DIFF_HELP + ". Only the settings that differ are listed, one row each with A's and B's "
             "values (a side whose benchmarks hold several values shows them joined by ' | '); by default only "
             "those both sides hold, the settings only one side has (two engines' own options) counted in a last "
             f"line. Lines fit {WIDTH} columns: a long value is cut short with an ellipsis (a long setting name "
             "loses its middle); --json keeps every value whole. The engine's "
             "reported configuration is what it wrote or returned after open (RocksDB's OPTIONS file, "
             "WiredTiger's base config, cache and table metadata, LMDB's environment info, ...).")
    d.add_argument("a", metavar="A", help="one side: " + SIDE_HELP)
    d.add_argument("b", metavar="B", help="the other side: " + SIDE_HELP)
    d.add_argument("--all", action="store_true",
                   help="list the settings only one side has too (shown as '(none)' on the other), not just their "
                        "count")
    d.add_argument("--json", default=None, metavar="FILE",
                   help="also write the differing settings to FILE (JSON records: setting, a, b; every one, "
                        "--all or not, values whole)")
    add_store_option(d)
    return d


def handle(store, args) -> int:
    from ...results import diff
    from ...results.result import write_json_atomic
    if args.json:
        from ..common import check_output_file
        check_output_file(args.json, "--json")
    frame = diff.diff(args.a, args.b, store=store)
    for line in lines(frame, args.a, args.b, everything=args.all):
        print(line)
    if args.json:
        write_json_atomic(args.json, diff.records(frame))
        print(_fit(f"differences written to {args.json}"))
    return 0


def lines(frame, a: str, b: str, everything: bool = False, width: int = WIDTH) -> list:
    """What `results diff` prints for the diff `frame` of selections a and b: the table of the differing settings
    (all of them, or those both sides hold with a line counting the rest), no line wider than `width`."""
    if frame.empty:
        return _fit(f"A ({a}) and B ({b}) differ in no setting", width).splitlines()
    rows = frame.to_dict("records")
    shown = rows if everything else [r for r in rows if r["held"] == "both"]
    out = []
    if shown:
        out += _table(shown, [f"A: {a}", f"B: {b}"], width)
    if len(shown) < len(rows):
        engines = frame.attrs.get("engines") or (a, b)
        counts = [(side, sum(r["held"] == side for r in rows), label)
                  for side, label in zip("AB", (engines[0] or a, engines[1] or b))]
        parts = [f"{n} only {side} ({label}) has" for side, n, label in counts if n]
        parts[0] = parts[0].replace(" only", " setting only" if parts[0].startswith("1 ") else " settings only", 1)
        lead = "and " if shown else f"no setting both A ({a}) and B ({b}) hold differs; "
        out += _fit(lead + ", ".join(parts) + ": --all lists them", width).splitlines()
    return out


def _table(rows: list, headers: list, width: int) -> list:
    dots = _ellipsis()
    cells = [["setting", *headers]] + [[r["setting"], r["a"], r["b"]] for r in rows]
    widths = _shares(cells, width - 2 * len(GAP))
    cut = False
    out = []
    for c in cells:
        fitted = [_cut(c[0], widths[0], dots, middle=True)] + [_cut(v, w, dots) for v, w in zip(c[1:], widths[1:])]
        cut = cut or fitted != c
        out.append(GAP.join(v.ljust(w) for v, w in zip(fitted, widths)).rstrip())
    if cut:
        out.append(_fit(f"  {dots}: cut to fit {width} columns; --json FILE keeps every value whole", width))
    return out


def _shares(cells: list, budget: int) -> list:
    """Column widths (setting, A, B) that fit `budget` (cells[0]: the headers): each column as wide as nine in
    ten of its rows need (a rare long value is cut; a long header, a long selection, weighs no more than 12), the
    widest cut down to a common cap where that is still too wide, what is left to the narrowest column still
    short of its widest cell."""
    natural = [max(len(c[i]) for c in cells) for i in range(3)]
    if sum(natural) <= budget:
        return natural
    n = len(cells) - 1
    wanted = [max(min(len(cells[0][i]), 12), sorted(len(c[i]) for c in cells[1:])[-(-9 * n // 10) - 1])
              for i in range(3)]
    if sum(wanted) > budget:   # the widest cut down to a common cap
        cap = max(c for c in range(1, max(wanted) + 1) if sum(min(w, c) for w in wanted) <= budget)
        wanted = [min(w, cap) for w in wanted]
    widths = list(wanted)
    while sum(widths) < budget:   # what is left goes to the narrowest column still short of its widest cell
        short = [i for i in range(3) if widths[i] < natural[i]]
        if not short:
            break
        widths[min(short, key=lambda i: widths[i])] += 1
    return widths


def _cut(text: str, width: int, dots: str, middle: bool = False) -> str:
    if len(text) <= width:
        return text
    keep = max(width - len(dots), 0)
    if middle:   # a setting's name: its group and its leaf say the most
        head = keep // 3
        return text[:head] + dots + text[len(text) - (keep - head):]
    return text[:keep] + dots


def _ellipsis() -> str:
    """'…' where stdout can print it, else '...'."""
    try:
        "…".encode(getattr(sys.stdout, "encoding", None) or "ascii")
        return "…"
    except (UnicodeEncodeError, LookupError):
        return "..."


def _fit(text: str, width: int = WIDTH) -> str:
    """A sentence wrapped at `width` columns (a path longer than that stays one word on its own line)."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text
