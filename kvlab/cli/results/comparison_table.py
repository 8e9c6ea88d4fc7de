"""A comparison's frame printed in benchstat's layout (`kvlab results compare`, `kvlab rerun`)."""
from __future__ import annotations

from ...results.formatting import change_text, missing, p_text
from .. import output


def print_comparison(frame, out=None) -> None:
    """benchstat's layout: the two sides, then one table per metric (a row per matched benchmark, then the
    geometric mean), the legend and the notes."""
    import sys

    from ...results import compare, stats
    out = out or sys.stdout
    attrs = frame.attrs
    for side in ("a", "b"):
        engines = ", ".join(attrs.get(f"{side}_engines", [])) or "-"
        runs = attrs.get(f"{side}_runs")
        print(f"{side.upper()}: {attrs.get(side)}  ({'' if runs is None else f'{output.num(runs)} runs, '}"
              f"{output.num(attrs.get(f'{side}_benchmarks'))} benchmarks; {engines})", file=out)
    for warning in attrs.get("warnings", []):   # on top: they change what the table can be read to say
        print(f"warning: {warning}", file=out)
    match = attrs.get("match", list(compare.MATCH))
    level_asked = attrs.get("level", stats.LEVEL)
    below_level, too_few = set(), set()
    for m in compare.METRICS:
        part = frame[frame.metric == m.name]
        if part.empty:
            continue
        rows = []
        for rec in part.to_dict("records"):
            geomean = rec["workload"] == "geomean" and not missing(rec.get("geomean_of"))
            name = geomean_name(rec) if geomean else compare.key_text({k: rec.get(k) for k in match if k in rec})
            row = {"benchmark": name, "a": rec["a_median"], "b": rec["b_median"],
                   "change": change_text(rec["change_pct"]), "a_ci": "", "b_ci": "", "p": "", "n": "",
                   "verdict": ""}
            if not geomean:
                for side in ("a", "b"):
                    s = {"n": int(rec[f"{side}_n"]), "median_ci_level": rec[f"{side}_ci_level"],
                         "median_ci": None if missing(rec[f"{side}_ci_lo"]) else
                         [rec[f"{side}_ci_lo"], rec[f"{side}_ci_hi"]]}
                    row[f"{side}_ci"] = s
                    if s["median_ci"] and s["median_ci_level"] < level_asked:
                        below_level.add(s["n"])
                    if s["n"] < stats.MIN_SAMPLES:
                        too_few.add(s["n"])
                row["p"] = p_text(rec["p_value"])
                row["n"] = f"{int(rec['a_n'])}/{int(rec['b_n'])}"
                row["verdict"] = rec["verdict"]
            rows.append(row)
        heads = {}
        for side in ("a", "b"):
            heads[side], one = ci_header(side.upper(), [r[f"{side}_ci"] for r in rows if r[f"{side}_ci"]])
            for r in rows:
                r[f"{side}_ci"] = _short_interval(r[f"{side}_ci"], with_level=not one) if r[f"{side}_ci"] else ""
        print(file=out)
        print(f"{m.label}, {'higher' if m.higher_is_better else 'lower'} is better", file=out)
        columns = [("benchmark", "benchmark", "<"), ("a", "A median", ">"),
                   ("a_ci", heads["a"], ">"), ("b", "B median", ">"), ("b_ci", heads["b"], ">"),
                   ("change", "change", ">"), ("p", "p", ">"), ("n", "n A/B", ">"), ("verdict", "verdict", "<")]
        output.table(rows, columns, out=out)
    alpha, threshold = attrs.get("alpha", compare.ALPHA), attrs.get("threshold_pct", compare.THRESHOLD_PCT)
    measured = ", or the one `kvlab noise` measured where larger: see the notes" \
        if "floor_source" in frame and (frame.floor_source == "measured").any() else ""
    print(file=out)
    print(f"  median: of each side's samples; CI: the median's interval at the level its header (or cell) states "
          f"(exact order statistics; {stats._percent(level_asked)} asked for); change: B's median against A's, none "
          f"where a median is 0 or an interval reaches 0; p: two-sided Mann-Whitney U; ~: p >= {alpha:g}, no p, or "
          f"|change| < the noise floor ({threshold:g}%, --threshold{measured})", file=out)
    for n in sorted(below_level):
        level = 1 - 2 / 2 ** n
        print(f"  n={n}: no interval reaches {stats._percent(level_asked)}; the min-max range is a "
              f"{stats._percent(level)} interval of the median ({stats.samples_for(level_asked)} samples give "
              f"{stats._percent(level_asked)})", file=out)
    for n in sorted(too_few):
        print(f"  n={n}: no interval and no p-value below {stats.MIN_SAMPLES} samples a side", file=out)
    for note in attrs.get("notes", []):
        print(f"  note: {note}", file=out)


def geomean_name(rec) -> str:
    """'geomean of 2 (run)': how many benchmarks a geomean row pools, and their phase kind."""
    kind = rec.get("phase")
    return f"geomean of {rec['geomean_of']}" + ("" if missing(kind) or not kind else f" ({kind})")


def ci_header(side: str, summaries) -> tuple:
    """(a column's header, whether it states the one level of all its intervals): "A: median's 75% CI" when
    every interval in the column has that confidence, else "A: median's CI (level)" and each cell says its
    own."""
    from ...results.stats import _percent
    levels = {round(float(s["median_ci_level"]), 6) for s in summaries if s.get("median_ci")}
    if len(levels) == 1:
        return f"{side}: median's {_percent(levels.pop())} CI", True
    if not levels:
        return f"{side}: median's CI", True
    return f"{side}: median's CI (level)", False


def _short_interval(s, with_level: bool = True) -> str:
    """A table cell: 'lo .. hi', with its confidence in brackets where the header does not state it, or
    'n=2: no interval'."""
    from ...results.stats import _percent, interval_text
    text = interval_text({**s, "median_ci_level": 1.0}, output.num)   # the level, if wanted, comes after
    level = s.get("median_ci_level")
    if with_level and s.get("median_ci") and level is not None:
        text += f" ({_percent(level)})"
    return text
