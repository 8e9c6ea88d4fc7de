"""Numbers as kvlab prints them, in the terminal and in reports: by magnitude, with thousands separators,
never in scientific notation; '-' for a missing value."""
from __future__ import annotations

import math
import numbers
from typing import cast


def missing(v) -> bool:
    """None, NaN or pandas' NA (a frame's empty cell)."""
    if v is None:
        return True
    if isinstance(v, float):
        return math.isnan(v)
    return type(v).__name__ == "NAType"


def num(v, unit: str = "") -> str:
    """1,234,567 / 12,345 / 123.4 / 1.23 / 0.0123, and below 0.001 two significant digits written out
    (0.0000032); '-' for none."""
    if missing(v):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not isinstance(v, numbers.Real):
        return str(v)
    # typeshed's numbers.Real declares no comparisons; the Reals met here (int, float, numpy's) compare as floats
    a = abs(cast(float, v))
    if math.isinf(a):
        text = "inf" if cast(float, v) > 0 else "-inf"
    elif isinstance(v, numbers.Integral) or a >= 1000:
        text = f"{v:,.0f}"
    elif a >= 100:
        text = f"{v:.1f}"
    elif a >= 1:
        text = f"{v:.2f}"
    elif a >= 0.001:
        text = f"{v:.4f}"
    elif a == 0:
        text = "0"
    else:
        digits = 1 - math.floor(math.log10(a))       # two significant digits, written out
        text = f"{v:.{digits}f}"
    return f"{text} {unit}".rstrip() if unit else text


def change_text(c) -> str:
    """A change in percent, signed: +3.25%, -61.70%, +1,234%."""
    if missing(c):
        return "-"
    if math.isinf(c):
        return "+inf%" if c > 0 else "-inf%"
    if abs(c) < 1000:
        return f"{c:+.2f}%"
    return f"{'+' if c >= 0 else '-'}{num(abs(c))}%"


def p_text(p) -> str:
    """A p-value: three decimals, or <0.001."""
    if missing(p):
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"
