"""The report's tables: the summary (one row per benchmark) and the comparison's (one per metric, as
`kvlab results compare` prints them)."""
from __future__ import annotations

import html

from ...results import compare as comparing
from ...results import stats
from ...results.formatting import change_text, missing, num, p_text
from .svg import figure_html
from .text import anchor, e, percent, plural

_SUMMARY_COLUMNS = [("run", "run", "l"), ("trial", "trial", "r"), ("engine", "engine", "l"),
                    ("workload", "workload", "l"), ("definition", "definition", "l def"),
                    ("threads", "threads", "r"), ("num", "num", "r"), ("value_size", "value B", "r"),
                    ("ops_per_sec", "ops/s", "r"), ("latency", "p50 / p99 / p99.9 µs", "r"),
                    ("cpu", "CPU µs/op", "r"), ("partial", "partial", "l"), ("tags", "tags", "l tags"),
                    ("warnings", "warnings", "r")]


def _cpu_per_op(b) -> float | None:
    a = b.accounting or {}
    if a.get("cpu_user_s") is None or a.get("cpu_sys_s") is None or not b.ops:
        return None
    return (a["cpu_user_s"] + a["cpu_sys_s"]) * 1e6 / b.ops


def definition(b) -> str:
    """What a benchmark's workload does, in a few words: a mix's templates with their shares and its key
    distribution ('read 50%, update 50%; zipfian'), else the workload's description from the registry."""
    mix = (b.mix or {}).get("definition")
    if mix and mix.get("templates"):
        total = sum(t.get("weight") or 0 for t in mix["templates"]) or 1
        shares = ", ".join(f"{t['name']} {100 * (t.get('weight') or 0) / total:.3g}%" for t in mix["templates"])
        dist = ((b.mix or {}).get("distribution") or mix.get("distribution") or {}).get("name")
        return shares + (f"; {dist}" if dist else "")
    from ...model import workloads
    known = workloads.REGISTRY.get(b.workload)
    return known.description if known is not None else ""


def summary_table(entries) -> str:
    any_partial = any(en.b.partial for en in entries)
    any_tags = any(en.b.tags for en in entries)
    columns = [c for c in _SUMMARY_COLUMNS if (c[0] != "partial" or any_partial) and (c[0] != "tags" or any_tags)]
    head = "".join(f"<th class=\"{a}\" scope=\"col\">{e(h)}</th>" for _, h, a in columns)
    rows = []
    batch = False
    for en in entries:
        b = en.b
        lat = b.latency_us or {}
        unit = " <small>/batch</small>" if b.latency_unit == "batch" else ""
        batch |= bool(unit)
        cells = {
            "run": f"<a href=\"#{anchor(en.run)}\">{e(en.run)}</a>", "trial": num(b.trial),
            "engine": e(b.engine), "workload": e(b.workload) + (" <small>(load)</small>" if b.phase == "load" else ""),
            "definition": e(definition(b)), "threads": num(b.threads),
            "num": num((b.params or {}).get("num")), "value_size": num((b.params or {}).get("value_size")),
            "ops_per_sec": num(b.ops_per_sec),
            "latency": " / ".join(num(lat.get(k)) for k in ("p50", "p99", "p999")) + unit, "cpu": num(_cpu_per_op(b)),
            "partial": "<strong class=\"partial\">PARTIAL</strong>" if b.partial else "",
            "tags": " ".join(f"<span class=\"tag\">{e(t)}</span>" for t in b.tags),
            "warnings": (f"<a class=\"warn\" href=\"#{anchor(en.run)}\">{len(b.warnings)}</a>" if b.warnings else ""),
        }
        rows.append("<tr>" + "".join(f"<td class=\"{a}\">{cells[k]}</td>" for k, _, a in columns) + "</tr>")
    legend = ("trial: the repeat of its run (0 first); workload: marked (load) where it filled the database "
              "before the run's phases; definition: what the workload does (a mix: its transactions' shares and "
              "key distribution; every setting is in the run's spec below); ops/s: operations per wall-clock "
              "second; p50 / p99 / p99.9: latency percentiles in microseconds per operation"
              + (" (per batch where marked /batch)" if batch else "") + ", from the whole histogram; "
              "CPU µs/op: user + system CPU time of the process per operation; "
              + ("partial: stopped before its end; " if any_partial else "")
              + "warnings: what kvlab found suspicious about the benchmark (listed with its run below).")
    return (f"<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"scroll\"><table class=\"data summary\">\n"
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + f"\n</tbody>\n</table></div>\n"
            f"<p class=\"legend\">{e(legend)}</p>\n</section>")


def _p_text(p) -> str:
    return html.escape(p_text(p))


def _interval_text(rec, side, with_level: bool) -> str:
    n = rec.get(f"{side}_n")
    lo, hi, level = rec.get(f"{side}_ci_lo"), rec.get(f"{side}_ci_hi"), rec.get(f"{side}_ci_level")
    if missing(lo):
        return f"n={int(n) if not missing(n) else 0}: no interval"
    text = f"{num(lo)} .. {num(hi)}"
    if with_level and not missing(level):
        text += f" ({percent(level)})"
    return text


def _ci_head(part, side) -> tuple:
    """(the interval column's header, whether it states the level of every interval in it): the level used,
    never the one asked for (3 samples give 75%, not 95%)."""
    levels = {round(float(v), 6) for v, lo in zip(part[f"{side}_ci_level"], part[f"{side}_ci_lo"])
              if not missing(v) and not missing(lo)}
    if len(levels) == 1:
        return f"{side.upper()}: median's {percent(levels.pop())} CI", True
    return f"{side.upper()}: median's CI" + (" (level)" if levels else ""), not levels


def _geomean_name(rec) -> str:
    kind = rec.get("phase")
    return f"geomean of {rec['geomean_of']}" + ("" if missing(kind) or not kind else f" ({kind})")


def comparison_section(frame, figures, numbers) -> str:
    attrs = frame.attrs
    match = attrs.get("match", list(comparing.MATCH))
    lines = []
    for side in ("a", "b"):
        engines = ", ".join(attrs.get(f"{side}_engines", [])) or "-"
        runs = attrs.get(f"{side}_runs")
        count = "" if runs is None else f"{plural(runs, 'run')}, "
        lines.append(f"<p><strong>{side.upper()}</strong>: {e(attrs.get(side))} ({count}"
                     f"{plural(attrs.get(f'{side}_benchmarks'), 'benchmark')}; {e(engines)})</p>")
    tables = []
    warnings = "".join(f"<li>{e(w)}</li>" for w in attrs.get("warnings", []))
    for m in comparing.METRICS:
        part = frame[frame.metric == m.name]
        if part.empty:
            continue
        (head_a, one_a), (head_b, one_b) = _ci_head(part, "a"), _ci_head(part, "b")
        rows = []
        for rec in part.to_dict("records"):
            geomean = rec.get("workload") == "geomean" and not missing(rec.get("geomean_of"))
            name = _geomean_name(rec) if geomean else comparing.key_text({k: rec.get(k) for k in match if k in rec})
            verdict = "" if geomean else (rec.get("verdict") or "~")
            css = {"faster": "good", "better": "good", "slower": "bad", "worse": "bad"}.get(verdict, "same")
            cells = [e(name), num(rec["a_median"]), "" if geomean else e(_interval_text(rec, "a", not one_a)),
                     num(rec["b_median"]), "" if geomean else e(_interval_text(rec, "b", not one_b)),
                     e(change_text(rec["change_pct"])),
                     "" if geomean else _p_text(rec.get("p_value")),
                     "" if geomean else f"{int(rec['a_n'])}/{int(rec['b_n'])}",
                     f"<span class=\"verdict {css}\">{e(verdict)}</span>" if verdict else ""]
            rows.append("<tr" + (" class=\"geomean\"" if geomean else "") + ">" + "".join(
                f"<td class=\"{'l' if i in (0, 8) else 'r'}\">{c}</td>" for i, c in enumerate(cells)) + "</tr>")
        head = "".join(f"<th class=\"{'l' if i in (0, 8) else 'r'}\" scope=\"col\">{h}</th>" for i, h in enumerate(
            ("benchmark", "A median", e(head_a), "B median", e(head_b), "change", "p", "n A/B", "verdict")))
        tables.append(f"<h3>{e(m.label)}, {'higher' if m.higher_is_better else 'lower'} is better</h3>\n"
                      f"<div class=\"scroll\"><table class=\"data\"><thead><tr>{head}</tr></thead><tbody>"
                      + "".join(rows) + "</tbody></table></div>")
    alpha, threshold = attrs.get("alpha", comparing.ALPHA), attrs.get("threshold_pct", comparing.THRESHOLD_PCT)
    legend = (f"median: of each side's samples (the benchmarks with the same {', '.join(match)}); CI: the "
              f"median's interval at the level its header (or, where they differ, each cell) states (exact order "
              f"statistics; {percent(attrs.get('level', stats.LEVEL))} asked for: with 3-5 samples the min-max range "
              f"at 75-93.75%; none below 3); change: B's median against A's, none where a median is 0 or its "
              f"interval reaches 0; p: two-sided Mann-Whitney U; ~: p >= {alpha:g}, no p, or |change| below the "
              f"noise floor ({threshold:g}%).")
    notes = "".join(f"<li>{e(n)}</li>" for n in attrs.get("notes", []))
    return ("<section id=\"comparison\">\n<h2>Comparison: B against A</h2>\n" + "\n".join(lines) + "\n"
            + (f"<ul class=\"notes warnings\">{warnings}</ul>\n" if warnings else "")
            + "\n".join(tables) + f"\n<p class=\"legend\">{e(legend)}</p>"
            + (f"\n<ul class=\"notes\">{notes}</ul>" if notes else "")
            + "".join(figure_html(f, numbers[id(f)]) for f in figures) + "\n</section>")
