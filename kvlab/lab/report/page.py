"""The page: the header (what was selected, when, by which kvlab, on which machines), the contents, the
sections in order, the style sheet inline, no script."""
from __future__ import annotations

import datetime

from ..._version import __version__
from ...results.formatting import num
from .runs import runs_section
from .style import CSS
from .svg import figure_html
from .tables import comparison_section, summary_table
from .text import e, plural


def render(entries, groups, where, comparison, figures, notes, title, claims: str = "") -> str:
    runs = _runs(entries)
    title = title or "kvlab report: " + ", ".join(g.label for g in groups)
    # numbered in the order they appear: the comparison's first
    shown = [f for f in figures if f.section == "comparison"] + [f for f in figures if f.section != "comparison"]
    numbers = {id(f): i for i, f in enumerate(shown, 1)}
    sections = [_header(entries, runs, groups, where, comparison, title), _contents(comparison, figures, bool(claims))]
    if claims:   # the seeds' verdicts stored with these runs: what the runs were for, first
        sections.append(claims)
    if comparison is not None:
        sections.append(comparison_section(comparison, [f for f in shown if f.section == "comparison"], numbers))
    sections.append(_figures_section([f for f in shown if f.section != "comparison"], numbers, notes))
    sections.append(summary_table(entries))
    sections.append(runs_section(runs))
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<meta name=\"generator\" content=\"kvlab {e(__version__)}\">\n<title>{e(title)}</title>\n"
            f"<style>{CSS}</style>\n</head>\n<body>\n<main>\n" + "\n".join(sections)
            + f"\n<footer>Made by kvlab {e(__version__)} (<code>kvlab report</code>). Self-contained: figures are "
            "inline SVG, nothing is fetched.</footer>\n</main>\n</body>\n</html>\n")


def _runs(entries) -> dict:
    out = {}
    for en in entries:
        out.setdefault(en.run, []).append(en)
    return out


def _machine_text(m: dict) -> str:
    mem = f"{m['memory_bytes'] / 2**30:.0f} GiB" if m.get("memory_bytes") else None
    parts = [m.get("cpu_model"), f"{m['cores']} cores" if m.get("cores") else None, mem, m.get("kernel"),
             f"Python {m['python']}" if m.get("python") else None]
    return f"{m.get('hostname') or '?'}: " + ", ".join(str(p) for p in parts if p)


def _header(entries, runs, groups, where, comparison, title) -> str:
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %z")
    started = sorted(en.b.started_at for en in entries if en.b.started_at)
    machines = list(dict.fromkeys(_machine_text(((en.b.provenance or {}).get("machine") or {}))
                                  for en in entries if (en.b.provenance or {}).get("machine")))
    versions = list(dict.fromkeys(
        f"{(en.b.versions or {}).get('kvlab', '?')} ({((en.b.versions or {}).get('git_commit') or '?')[:12]})"
        for en in entries))
    engines = {}
    for en in entries:
        v = en.b.versions or {}
        engines.setdefault(en.b.engine, f"{en.b.engine} {v.get('engine_library') or ''}".strip())
    selected = "; ".join(e(g.label) for g in groups) + (f"; where {e(where.text)}" if where is not None else "")
    partial = sum(1 for en in entries if en.b.partial)
    warned = sum(1 for rs in runs.values() if any(en.b.warnings for en in rs))
    rows = [("selected", selected),
            ("contents", f"{plural(len(runs), 'run')}, {plural(len(entries), 'benchmark')}"
                         + (f", {num(partial)} partial (stopped early)" if partial else "")
                         + (f"; {plural(warned, 'run')} with warnings" if warned else "")),
            ("measured", e(f"{started[0]} to {started[-1]}" if started else "-")),
            ("engines", e("; ".join(engines.values()))),
            ("machines", "<br>".join(e(m) for m in machines) or "-"),
            ("kvlab of the runs", e(", ".join(versions))),
            ("report made", e(f"{now} by kvlab {__version__}"))]
    if comparison is not None:
        rows.insert(1, ("compared", f"B ({e(comparison.attrs.get('b'))}) against A ({e(comparison.attrs.get('a'))})"))
    body = "\n".join(f"<tr><th scope=\"row\">{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<header>\n<h1>{e(title)}</h1>\n<table class=\"facts\">\n{body}\n</table>\n</header>"


def _contents(comparison, figures, claims: bool = False) -> str:
    plain = sum(1 for f in figures if f.section != "comparison")
    items = ([("claims", "The seeds' claims")] if claims else []) + \
        ([("comparison", "Comparison")] if comparison is not None else []) + \
        [("figures", f"Figures ({plain})"), ("summary", "Summary"), ("runs", "Runs: warnings and provenance")]
    return "<nav><ul>" + "".join(f"<li><a href=\"#{k}\">{v}</a></li>" for k, v in items) + "</ul></nav>"



def _figures_section(figures, numbers, notes) -> str:
    parts = ["<section id=\"figures\">", "<h2>Figures</h2>"]
    parts += [figure_html(f, numbers[id(f)]) for f in figures]
    if not figures:
        parts.append("<p>No figure: nothing was measured (every benchmark selected is empty).</p>")
    if notes:
        parts.append("<ul class=\"notes\">" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)
