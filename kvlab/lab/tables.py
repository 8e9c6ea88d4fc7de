"""Tables in a notebook as kvlab prints them: every number by magnitude (kvlab.results.formatting.num, the CLI's:
162,420 / 123.4 / 1.23 / 0.0123, never 1.624205e+05; '-' for a missing value) and the unit in each column's header
(ops_per_sec -> 'ops/s', p99_us -> 'p99 (us)', db_size_bytes -> 'db size (MiB)').

`setup()`, called once in each notebook's first cell, has IPython show every pandas DataFrame a cell returns this way,
so that no cell formats its own table and a frame kept in a variable stays the numbers it was (its columns' names
unchanged: only what is shown changes).  `shown(frame)` is the shown frame itself (strings), for a frame printed
outside a cell's result; `header(name)` the one column's header.  A frame of its own kind (a DataFrame subclass
with a display of its own, such as the seeds' verdict table) keeps its own display.
"""
from __future__ import annotations

import numbers
import re

from ..results.formatting import missing, num

# a column name's word that is its unit: the header's unit, and the factor a value is shown multiplied by
_UNITS = {"us": "us", "micros": "us", "ms": "ms", "ns": "ns", "s": "s", "sec": "s", "kb": "KB", "mb": "MB",
          "gb": "GB", "mib": "MiB", "gib": "GiB", "pct": "%", "bytes": "B"}
_RATE_WORDS = {"mb": "MB", "kb": "KB", "bytes": "B", "qps": "queries"}
_STAT = re.compile(r"p\d+|max|min|mean|median|stddev")   # a statistic of its prefix, in the prefix's unit
MIB = 2 ** 20
BYTES_AS_MIB = MIB   # a bytes column shown in MiB where its largest value is at least this


def header(name, values=None) -> str:
    """The header a column named `name` is shown with: its unit in it, from the words of the name
    ('readrandom_ops_per_sec' -> 'readrandom (ops/s)', 'latency_us.p99' -> 'latency.p99 (us)',
    'recovery_ms_p50' -> 'recovery p50 (ms)', 'cpu_pct' -> 'cpu (%)', 'kb_written_per_query' -> 'written
    (KB/query)'); a bytes column is in MiB where `values` (the column) reach a MiB.  A name without a unit word
    (engine, threads, write_amp), or not a string, is shown as it is."""
    if not isinstance(name, str):
        return name
    label, _ = _parse(name, values)
    return label


def _parse(name: str, values=None) -> tuple:
    """(header, factor): the header of column `name` and what its values are multiplied by to be shown in its
    unit (1 except a bytes column shown in MiB)."""
    prefix, _, last = name.rpartition(".")
    if prefix and _STAT.fullmatch(last) and _unit_of(prefix.split("_")):   # latency_us.p99: the prefix's unit
        words = prefix.split("_")
        unit = _UNITS[_unit_of(words)]
        return f"{' '.join(w for w in words if w != _unit_of(words))}.{last} ({unit})", 1
    label, factor = _segment(last, values)
    return (f"{prefix}.{label}" if prefix else label), factor


def _unit_of(words) -> str | None:
    """The last word of `words` that names a unit, or None."""
    return next((w for w in reversed(words) if w in _UNITS), None)


def _segment(name: str, values=None) -> tuple:
    words = name.split("_")
    if name == "qps":
        return "QPS", 1
    rate = next((i for i in range(1, len(words) - 1) if words[i] == "per" and words[i + 1] in ("sec", "s")), None)
    if rate is not None:   # a rate: ops_per_sec -> ops/s, readrandom_ops_per_sec -> readrandom (ops/s)
        thing, rest = words[rate - 1], words[:rate - 1] + words[rate + 2:]   # ops_per_sec_ci95_lo: ci95 lo (ops/s)
        unit = f"{_RATE_WORDS.get(thing, thing)}/s"
        return (f"{' '.join(rest)} ({unit})" if rest else unit), 1
    if "per" in words[1:-1]:   # per something: cpu_us_per_op -> cpu (us/op), disk_reads_per_op -> disk reads/op
        i = words.index("per", 1)
        top, per = words[:i], "_".join(words[i + 1:])
        unit = _unit_of(top)
        if unit is None:
            return f"{' '.join(top)}/{per}", 1
        rest = [w for w in top if w != unit]
        said = f"{_UNITS[unit]}/{per}"
        return (f"{' '.join(rest)} ({said})" if rest else said), 1
    unit = _unit_of(words)
    if unit is None or len(words) == 1:
        return name, 1
    rest = " ".join(w for w in words if w != unit)
    if unit == "bytes" and _largest(values) >= BYTES_AS_MIB:
        return f"{rest} (MiB)", 1 / MIB
    return f"{rest} ({_UNITS[unit]})", 1


def _largest(values) -> float:
    """The largest magnitude among `values` (a column, or None: 0)."""
    if values is None:
        return 0.0
    try:
        got = [abs(float(v)) for v in values if _number(v)]
    except (TypeError, ValueError):
        return 0.0
    return max(got, default=0.0)


def _number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and not missing(v)


def cell(v, factor: float = 1) -> str:
    """One value as the table shows it: a number by kvlab's num (times `factor`: bytes as MiB), '-' for a missing
    one, yes/no for a boolean, anything else as pandas would show it (str)."""
    if missing(v):
        return "-"
    if isinstance(v, bool) or type(v).__module__ == "numpy" and type(v).__name__ in ("bool", "bool_"):
        return "yes" if v else "no"
    if isinstance(v, numbers.Real):
        return num(v * factor if factor != 1 else v)
    return v


def shown(frame):
    """`frame` as a notebook shows it (a DataFrame of strings): every number by kvlab's num, units in the headers
    (`header`; a MultiIndex's labels each), a float index's values by num.  The frame itself is not changed."""
    import pandas as pd
    out = pd.DataFrame(index=frame.index)
    heads = []
    for i, name in enumerate(frame.columns):
        column = frame.iloc[:, i]
        if isinstance(name, tuple):   # a MultiIndex: each label its header; the unit word is in one of them
            labels, factor = [], 1
            for label in name:
                if isinstance(label, str):
                    text, f = _parse(label, column)
                    labels.append(text)
                    factor = factor if f == 1 else f
                else:
                    labels.append(label)
            heads.append(tuple(labels))
        else:
            text, factor = _parse(name, column) if isinstance(name, str) else (name, 1)
            heads.append(text)
        out[i] = [cell(v, factor) for v in column.tolist()]
    out.columns = (pd.MultiIndex.from_tuples(heads, names=frame.columns.names)
                   if isinstance(frame.columns, pd.MultiIndex) else pd.Index(heads, name=frame.columns.name))
    if isinstance(frame.index, pd.MultiIndex):
        out.index = frame.index
    elif pd.api.types.is_float_dtype(frame.index.dtype):
        out.index = pd.Index([cell(v) for v in frame.index], name=frame.index.name)
    return out


def html(frame) -> str | None:
    """The HTML a notebook shows for `frame` (pandas' own table, of the shown frame)."""
    import pandas as pd
    return pd.DataFrame._repr_html_(shown(frame))


def text(frame) -> str:
    """The plain text a notebook (or a terminal) shows for `frame`."""
    import pandas as pd
    return pd.DataFrame.__repr__(shown(frame))


def _plain(frame, p, cycle) -> None:   # IPython's pretty printer's signature
    p.text(text(frame) if _ours(frame) else repr(frame))


def _html(frame):
    return html(frame) if _ours(frame) else frame._repr_html_()


def _ours(frame) -> bool:
    """A plain DataFrame: a subclass with a display of its own keeps it."""
    import pandas as pd
    return type(frame) is pd.DataFrame


def setup(ip=None) -> bool:
    """Show every DataFrame a cell returns as `shown` gives it, in this IPython session (`ip`: the running one);
    False, and nothing changed, outside IPython.  Called again, it changes nothing more."""
    import pandas as pd
    if ip is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        ip = get_ipython()
    if ip is None:
        return False
    formatters = ip.display_formatter.formatters
    formatters["text/plain"].for_type(pd.DataFrame, _plain)
    formatters["text/html"].for_type(pd.DataFrame, _html)
    return True
