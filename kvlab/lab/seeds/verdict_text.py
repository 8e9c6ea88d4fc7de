"""The verdict table (claims.verdicts) as text: as `kvlab reproduce` prints it, as a markdown table, and its counts
of each verdict.  No pandas import: the `kvlab` command imports this at start."""
from __future__ import annotations

from ...results.claims import VERDICTS


def text(table) -> str:
    """The verdict table as `kvlab reproduce` prints it: per claim, its verdict, statement, published and measured
    figures and the reason, wrapped."""
    import textwrap
    wrap = textwrap.TextWrapper(width=118, initial_indent="    ", subsequent_indent="      ")
    out = []
    for r in table.itertuples():
        out += ["", f"{r.claim}: {r.verdict.upper()}", wrap.fill(r.statement)]
        for label, value in (("published", r.published), ("measured", r.measured), ("why", r.reason)):
            if value:
                out.append(wrap.fill(f"{label}: {value}"))
    return "\n".join(out)


def markdown(table) -> str:
    """The verdict table as a markdown table (`kvlab reproduce --format markdown`)."""
    def cell(v) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")
    lines = ["| claim | statement | published | measured | verdict | reason |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(cell(v) for v in (r.claim, r.statement, r.published, r.measured, r.verdict,
                                                   r.reason)) + " |" for r in table.itertuples()]
    return "\n".join(lines)


def counts(table) -> str:
    """'2 reproduced, 1 not reproduced, 0 cannot test here'."""
    n = table.verdict.value_counts()
    return ", ".join(f"{n.get(v, 0)} {v}" for v in VERDICTS)
