"""The page's small text helpers: escaping, anchors, counts and percentages."""
from __future__ import annotations

import html
import re

from ...results.formatting import num


def e(text) -> str:
    """Any text from a user or a record, escaped for HTML (quotes too: it may sit in an attribute)."""
    return html.escape("" if text is None else str(text), quote=True)


def anchor(run: str) -> str:
    return "run-" + re.sub(r"[^A-Za-z0-9_-]", "-", run)


def plural(n, word: str) -> str:
    return f"{num(n)} {word}{'' if n == 1 else 's'}"


def percent(x: float) -> str:
    return f"{x:.0%}" if round(x * 100, 6).is_integer() else f"{x:.1%}"
