"""What the `kvlab` command prints: numbers formatted by magnitude (never scientific notation in a
table), latency percentiles on every result, the accounting table with a legend, one line per warning."""
from __future__ import annotations

import contextlib
import csv
import sys

from .. import engines
from ..engines.descriptor import defaults_line, memory_split
from ..results.formatting import num


def mib(v) -> str:
    return "-" if v is None else num(v / 1048576)


def memory_line(memory: int | None, names, given=None) -> str:
    """The header's line on memory: the budget and each engine configuration's split of it (settings `given`
    win), or, without a budget, every engine's own defaults with the figures."""
    if memory is None:   # the engines in the run (their descriptors once each), or every one where none is named
        return defaults_line(list({id(d): d for d in (engines.descriptor(engines.get(n)) for n in names)}.values())
                             if names else engines.DESCRIPTORS.values())
    given = given or {}
    parts = []
    for name in names:
        cfg = engines.get(name)
        split = {k: v for k, v in memory_split(engines.descriptor(cfg), cfg, memory).items() if k not in given}
        parts.append(f"{name} " + (", ".join(f"{k} {v / 1048576:.0f} MiB" for k, v in split.items())
                                   or "none (the OS page cache)"))
    return (f"memory budget: {memory / 1048576:.0f} MiB each, page cache included where a memory cgroup can be made; "
            + "; ".join(parts))


def percentiles(lat: dict | None, unit: str = "us") -> str:
    """p50, p99, p99.9 and max of a latency summary (microseconds)."""
    lat = lat or {}
    parts = [f"{name} {num(lat.get(key))}" for key, name in
             (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max"))]
    return ", ".join(parts) + f" {unit}"


# --format: how a command that takes it prints its tables (a paper takes markdown or LaTeX, a tool csv)
FORMATS = ("text", "markdown", "latex", "csv")
FORMAT_HELP = ("how the tables are printed: text (default), markdown, latex (each table a tabular, every other line "
               "of the output a %% comment, so that it pastes into a .tex file) or csv (the tables alone on stdout, a "
               "blank line between two, every other line on stderr)")
_AS = {"fmt": "text", "stdout": None}


@contextlib.contextmanager
def tables_as(fmt: str | None):
    """Within it, table() prints in `fmt`; with csv, everything else printed to stdout goes to stderr."""
    fmt = fmt or "text"
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}; allowed: {', '.join(FORMATS)}")
    before = dict(_AS)
    _AS.update(fmt=fmt, stdout=sys.stdout, tables=0)
    try:
        with contextlib.redirect_stdout(sys.stderr) if fmt == "csv" else \
                contextlib.redirect_stdout(_Commented(sys.stdout)) if fmt == "latex" else contextlib.nullcontext():
            yield
    finally:
        _AS.clear()
        _AS.update(before)


class _Commented:
    """stdout with every line a LaTeX comment (--format latex: the prose around the tables)."""

    def __init__(self, real):
        self.real, self.at_start = real, True

    def write(self, text: str) -> int:
        for piece in text.splitlines(keepends=True):
            if self.at_start and piece.strip():
                self.real.write("% ")
            self.real.write(piece)
            self.at_start = piece.endswith("\n")
        return len(text)

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return False


def table(rows: list, columns: list, legend: str | None = None, out=None) -> None:
    """Rows of dicts printed under `columns` [(key, header, align)], each column as wide as its widest cell (or
    in the format tables_as() set)."""
    if not rows:
        return
    if _AS["fmt"] != "text":
        return _table_as(_AS["fmt"], rows, columns, legend, out)
    out = out or sys.stdout
    cells = [[_cell(r.get(k)) for k, _, _ in columns] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, (_, h, _) in enumerate(columns)]

    def line(values):
        return "  ".join(v.ljust(w) if a == "<" else v.rjust(w)
                         for v, w, (_, _, a) in zip(values, widths, columns)).rstrip()
    print(line([h for _, h, _ in columns]), file=out)
    for c in cells:
        print(line(c), file=out)
    if legend:
        print(legend, file=out)


def _cell(v) -> str:
    return v if isinstance(v, str) else num(v)


LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                 "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(c, c) for c in text)


def _table_as(fmt, rows, columns, legend, out) -> None:
    heads = [h or k for k, h, _ in columns]
    if fmt == "csv":   # the values as stored (no thousands separators), on the real stdout
        real = _AS["stdout"] or sys.stdout
        if _AS.get("tables"):
            print(file=real)
        _AS["tables"] = _AS.get("tables", 0) + 1
        w = csv.writer(real, lineterminator="\n")
        w.writerow(heads)
        for r in rows:
            w.writerow(["" if r.get(k) is None else r.get(k) for k, _, _ in columns])
        if legend:
            print(legend.strip(), file=sys.stderr)
        return
    if out is None or out is sys.stdout:   # the real stdout, not the commented prose around the tables
        out = _AS["stdout"] or sys.stdout
    cells = [[_cell(r.get(k)) for k, _, _ in columns] for r in rows]
    if fmt == "markdown":
        def line(values):
            return "| " + " | ".join(v.replace("|", "\\|").replace("\n", " ") for v in values) + " |"
        print(line(heads), file=out)
        print("|" + "|".join("---:" if a == ">" else ":---" for _, _, a in columns) + "|", file=out)
        for c in cells:
            print(line(c), file=out)
        if legend:
            print("\n" + " ".join(part.strip() for part in legend.splitlines()), file=out)
        return
    print("\\begin{tabular}{" + "".join("r" if a == ">" else "l" for _, _, a in columns) + "}", file=out)
    print("\\hline", file=out)
    print(" & ".join(latex_escape(h) for h in heads) + r" \\", file=out)
    print("\\hline", file=out)
    for c in cells:
        print(" & ".join(latex_escape(v) for v in c) + r" \\", file=out)
    print("\\hline", file=out)
    print("\\end{tabular}", file=out)
    for part in (legend or "").splitlines():
        print("% " + part.strip(), file=out)


ACCOUNTING_COLUMNS = [
    ("workload", "workload", "<"), ("phase", "phase", "<"), ("wall_s", "wall s", ">"),
    ("cpu_user_s", "user CPU s", ">"), ("cpu_sys_s", "system CPU s", ">"), ("cpu_pct", "CPU %", ">"),
    ("db_mib", "DB size MiB", ">"), ("rss_mib", "peak RSS MiB", ">"),
    ("ctx_voluntary", "waits", ">"), ("ctx_involuntary", "preempted", ">"),
    ("kb_written_per_op", "KB written/op", ">"), ("write_amp", "write amp", ">"), ("read_amp", "read amp", ">"),
    ("space_amp", "space amp", ">"),
]
ACCOUNTING_LEGEND = ("  CPU % of one core; waits/preempted: voluntary/involuntary context switches; KB written/op: "
                     "the process's storage writes per operation ('-': not measurable here)\n"
                     "  write amp: the process's storage writes / the keys and values written; read amp: the device's "
                     "block reads per read op; space amp: allocated size / live keys and values ('-': not "
                     "computable here, or nothing to compute; the reason is in the result's amplification.notes)")


def accounting_rows(result) -> list:
    rows = []
    for b in result:
        a = b.accounting or {}
        rows.append({"workload": b.workload, "phase": b.phase, "wall_s": a.get("wall_s"),
                     "cpu_user_s": a.get("cpu_user_s"), "cpu_sys_s": a.get("cpu_sys_s"),
                     "cpu_pct": a.get("cpu_pct"), "db_mib": mib(a.get("db_size_bytes")),
                     "rss_mib": mib(a.get("process_peak_rss_bytes")), "ctx_voluntary": a.get("ctx_voluntary"),
                     "ctx_involuntary": a.get("ctx_involuntary"),
                     "kb_written_per_op": a.get("io_kb_written_per_op"),
                     **{k: (b.amplification or {}).get(k) for k in ("write_amp", "read_amp", "space_amp")}})
    return rows


def warnings_once(result, out=None, said=()) -> None:
    """Each warning of a run once, however many of its benchmarks carry it (those `said` before the run, not
    again)."""
    out = out or sys.stderr
    seen = list(said)
    for b in result:
        for w in b.warnings:
            if w not in seen:
                seen.append(w)
    for w in seen[len(said):]:
        print(f"warning: {w}", file=out)


# db_bench's own lines, as its users read them
def format_line(b) -> str:
    """db_bench's result line: `name : X micros/op Y ops/sec; Z MB/s (F of N found)`."""
    line = (f"{b.workload:<12} : {b.micros_per_op:11.3f} micros/op {b.ops_per_sec:.0f} ops/sec;"
            f" {b.mb_per_sec:6.1f} MB/s")
    by_op = b.latency_by_op or {}
    if b.found is not None and b.workload != "deleterandom" and not getattr(b, "mix", None):
        if "read" in by_op and "write" in by_op:   # readrandomwriterandom: db_bench's own words
            line += (f" ( reads:{by_op['read'].get('count', 0)} writes:{by_op['write'].get('count', 0)} "
                     f"total:{b.ops} found:{b.found})")
        elif "rmw" in by_op:   # updaterandom
            line += f" ( updates:{b.ops} found:{b.found})"
        else:
            line += f" ({b.found} of {b.ops} found)"
    mix = getattr(b, "mix", None) or {}
    if str((mix.get("definition") or {}).get("source", "")).startswith(("mixgraph", "preset:mixgraph")):
        by_type = mix.get("ops_by_type") or {}   # db_bench's mixgraph words (its found count has no like here)
        line += f" ( Gets:{by_type.get('read', 0)} Puts:{by_type.get('write', 0)} Seek:{by_type.get('scan', 0)})"
    params = b.params or {}
    how = [f"{params['load']} load"] if params.get("load") == "bulk" else []
    if params.get("first_key"):
        how.append(f"resumed at record {params['first_key']:,}")
    if b.phase == "load" or how:
        line += f" [{', '.join((['load phase'] if b.phase == 'load' else []) + how)}]"
    if b.partial:
        line += " [stopped early: partial]"
    return line


def format_histogram(b) -> str:
    lat = b.latency_us
    unit = "batch" if b.latency_unit == "batch" else "op"
    return (f"Microseconds per {unit}:\n"
            f"Count: {lat['count']} Average: {lat['mean']:.4f}  StdDev: {lat['stddev']:.2f}\n"
            f"Min: {lat['min']:.4f}  Median: {lat['p50']:.4f}  Max: {lat['max']:.4f}\n"
            f"Percentiles: P50: {lat['p50']:.2f} P75: {lat['p75']:.2f} P99: {lat['p99']:.2f} "
            f"P99.9: {lat['p999']:.2f} P99.99: {lat['p9999']:.2f}\n")


def duration(seconds: float) -> str:
    """A wall time as a person reads it: "42 s", "3 min 05 s"."""
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"
