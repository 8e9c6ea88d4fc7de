"""The report's last section: each run's warnings and provenance (spec, engine settings, versions, machine,
storage), collapsed."""
from __future__ import annotations

import json
import numbers

from ...results.formatting import num
from .text import anchor, e

MAX_WARNINGS_SHOWN = 20  # a run's warnings listed (the rest counted)


def _spec_grid(spec: dict) -> str:
    """A run's spec, every field, as compact name: value cells (values as JSON, which RunSpec.from_dict reads)."""
    cells = "".join(f"<div><dt>{e(k)}</dt><dd>{e(json.dumps(v, default=str))}</dd></div>" for k, v in spec.items())
    return f"<dl class=\"spec\">{cells}</dl>"


def _kv_table(d: dict) -> str:
    if not d:
        return "<p class=\"none\">none</p>"
    rows = []
    for k, v in d.items():
        if isinstance(v, (dict, list)):
            text = json.dumps(v, default=str)
        elif isinstance(v, numbers.Real) and not isinstance(v, bool):
            text = num(v)
        else:
            text = v
        rows.append(f"<tr><th scope=\"row\">{e(k)}</th><td>{e(text)}</td></tr>")
    return "<table class=\"kv\">" + "".join(rows) + "</table>"


_SHOWN_APART = ("spec", "engine_config_given", "engine_config_effective", "machine", "storage", "build",
                "started_at", "ended_at")


def _run_section(run: str, group) -> str:
    first = group[0].b
    prov = first.provenance or {}
    engines = ", ".join(dict.fromkeys(en.b.engine for en in group))
    workloads = ", ".join(dict.fromkeys(f"{en.b.workload}" + (" (load)" if en.b.phase == "load" else "")
                                        for en in group))
    threads = ", ".join(dict.fromkeys(str(en.b.threads) for en in group))
    warnings = list(dict.fromkeys(w for en in group for w in en.b.warnings))
    partial = any(en.b.partial for en in group)
    tags = list(dict.fromkeys(t for en in group for t in en.b.tags))
    when = first.started_at or group[0].stored_at or ""
    head = (f"<h3><a href=\"#{anchor(run)}\">run {e(run)}</a></h3>\n<p class=\"runline\">{e(engines)}; "
            f"{e(workloads)}; threads {e(threads)}; {e(when)}"
            + (f"; sweep {e(group[0].sweep_id)}" if group[0].sweep_id else "")
            + ("; <strong class=\"partial\">PARTIAL</strong>" if partial else "")
            + ("; tags " + " ".join(f"<span class=\"tag\">{e(t)}</span>" for t in tags) if tags else "") + "</p>")
    if warnings:
        shown = "".join(f"<li>{e(w)}</li>" for w in warnings[:MAX_WARNINGS_SHOWN])
        hidden = len(warnings) - MAX_WARNINGS_SHOWN
        more = f"<li>... and {hidden} more</li>" if hidden > 0 else ""
        head += f"\n<ul class=\"warnings\">{shown}{more}</ul>"
    else:
        head += "\n<p class=\"nowarn\">no warnings</p>"
    spec = prov.get("spec")
    benches = "".join(
        f"<tr><td class=\"l\">{e(en.b.workload)}</td><td class=\"l\">{e(en.b.phase)}</td><td class=\"r\">"
        f"{num(en.b.threads)}</td><td class=\"r\">{num(en.b.trial)}</td><td class=\"r\">{num(en.b.ops)}</td>"
        f"<td class=\"r\">{num(en.b.seconds)}</td><td class=\"r\">{e(en.b.seed)}</td>"
        f"<td class=\"l\">{e(en.b.started_at)}</td></tr>" for en in group)
    body = [
        "<h4>Benchmarks</h4><table class=\"data\"><thead><tr><th class=\"l\">workload</th><th class=\"l\">phase</th>"
        "<th class=\"r\">threads</th><th class=\"r\">trial</th><th class=\"r\">ops</th><th class=\"r\">seconds</th>"
        f"<th class=\"r\">seed</th><th class=\"l\">started</th></tr></thead><tbody>{benches}</tbody></table>",
        "<h4>Spec</h4>" + (_spec_grid(spec) if spec else
                           "<p class=\"none\">not recorded (a record older than provenance)</p>"),
        "<h4>Engine settings</h4>" + _kv_table({"given": prov.get("engine_config_given") or {},
                                                "in effect": prov.get("engine_config_effective") or {}}),
        "<h4>Versions</h4>" + _kv_table({**(first.versions or {}), **(prov.get("build") or {}),
                                         "key_encoding": first.key_encoding}),
        "<h4>Machine</h4>" + _kv_table(prov.get("machine") or {}),
        "<h4>Storage</h4>" + _kv_table(prov.get("storage") or {}),
    ]
    other = {k: v for k, v in prov.items() if k not in _SHOWN_APART}
    if other:
        body.append("<h4>Other provenance</h4>" + _kv_table(other))
    differing = [en for en in group[1:] if _provenance_key(en.b) != _provenance_key(first)]
    for en in differing:
        body.append(f"<h4>Provenance of {e(en.b.workload)} ({e(en.b.phase)}, trial {num(en.b.trial)}), where it "
                    f"differs</h4><pre>{e(json.dumps(en.b.provenance, indent=1, default=str))}</pre>")
    return (f"<article class=\"run\" id=\"{anchor(run)}\">\n{head}\n<details>\n<summary>provenance: spec, engine "
            f"settings, versions, machine, storage</summary>\n" + "\n".join(body) + "\n</details>\n</article>")


def _provenance_key(b) -> str:
    p = {k: v for k, v in (b.provenance or {}).items() if k not in ("started_at", "ended_at", "trial")}
    return json.dumps(p, sort_keys=True, default=str)


def runs_section(runs: dict) -> str:
    return ("<section id=\"runs\">\n<h2>Runs: warnings and provenance</h2>\n"
            + "\n".join(_run_section(run, group) for run, group in runs.items()) + "\n</section>")
