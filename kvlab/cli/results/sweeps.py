"""`kvlab results sweeps` (and `kvlab sweep list`): the stored sweeps and how many of their points are done."""
from __future__ import annotations

from .. import output
from ..parsing import add_store_option

NAME = "sweeps"


def add_parser(actions, make):
    sw = make(actions, NAME, help="the stored sweeps and how many of their points are done",
              description="the stored sweeps and how many of their points are done")
    add_store_option(sw)
    return sw


def handle(store, args) -> int:
    return print_sweeps(store)


def print_sweeps(store) -> int:
    """The stored sweeps, one row each (`kvlab results sweeps`, `kvlab sweep list`)."""
    if not store.path.exists():
        print(f"no results store at {store.path}")
        return 0
    from ...results import sweeps
    frame = sweeps.list_sweeps(store)
    print("no sweeps stored" if frame.empty else _frame_text(frame))
    return 0


def _frame_text(df) -> str:
    """A frame as a table of readable numbers: magnitudes, thousands separators, never scientific notation."""
    rows = df.to_dict("records")
    columns = [(c, c, "<" if any(isinstance(r[c], str) for r in rows) else ">") for c in df.columns]
    import io
    buf = io.StringIO()
    output.table(rows, columns, out=buf)
    return buf.getvalue().rstrip()
