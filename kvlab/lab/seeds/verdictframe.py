"""The verdict table as a notebook shows it: a pandas DataFrame (kept apart from claims.py, which the `kvlab`
command imports at start, so that pandas is imported only where a table is made)."""
from __future__ import annotations

import pandas as pd

from ...results.claims import COLUMNS
from .verdict_text import counts, text


class VerdictFrame(pd.DataFrame):
    """A verdict table (claims.verdicts): shown whole in a notebook, with the counts under it, and printed as
    `kvlab reproduce` prints it; a frame of other columns (a selection of it) is a DataFrame as any other."""

    @property
    def _constructor(self):
        return VerdictFrame

    def _whole(self) -> bool:
        return list(self.columns) == COLUMNS

    def __repr__(self) -> str:
        return (text(self).lstrip("\n") + "\n" + counts(self)) if self._whole() else super().__repr__()

    def _repr_html_(self) -> str | None:
        with pd.option_context("display.max_colwidth", None):
            html = super()._repr_html_()
        return (html + f"<p>{counts(self)}</p>") if self._whole() and html else html
