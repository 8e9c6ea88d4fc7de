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
    match = attrs.get("match", list(compare.MATCH))
    below_level, cannot_reach, too_few = set(), set(), set()
    for m in compare.METRICS:
        part = frame[frame.metric == m.name]
        if part.empty:
            continue
        rows = []
        for rec in part.to_dict("records"):
            geomean = rec["workload"] == "geomean" and not missing(rec.get("geomean_of"))
            name = f"geomean of {rec['geomean_of']}" if geomean else \
                compare.key_text({k: rec.get(k) for k in match if k in rec})
            row = {"benchmark": name, "a": rec["a_median"], "b": rec["b_median"],
                   "change": change_text(rec["change_pct"]), "a_ci": "", "b_ci": "", "p": "", "n": "",
                   "verdict": ""}
            if not geomean:
                for side in ("a", "b"):
                    s = {"n": int(rec[f"{side}_n"]), "median_ci_level": rec[f"{side}_ci_level"],
                         "median_ci": None if missing(rec[f"{side}_ci_lo"]) else
                         [rec[f"{side}_ci_lo"], rec[f"{side}_ci_hi"]]}
                    row[f"{side}_ci"] = _short_interval(s)
                    if s["median_ci"] and s["median_ci_level"] < attrs.get("level", stats.LEVEL):
                        below_level.add(s["n"])
                    if s["n"] < stats.MIN_SAMPLES:
                        too_few.add(s["n"])
                row["p"] = p_text(rec["p_value"])
                row["n"] = f"{int(rec['a_n'])}/{int(rec['b_n'])}"
                row["verdict"] = rec["verdict"]
                if not missing(rec.get("min_p")) and rec["min_p"] >= attrs.get("alpha", compare.ALPHA):
                    cannot_reach.add((int(rec["a_n"]), int(rec["b_n"]), rec["min_p"]))
            rows.append(row)
        print(file=out)
        print(f"{m.label}, {'higher' if m.higher_is_better else 'lower'} is better", file=out)
        columns = [("benchmark", "benchmark", "<"), ("a", "A median", ">"),
                   ("a_ci", "A: median's 95% CI", ">"), ("b", "B median", ">"), ("b_ci", "B: median's 95% CI", ">"),
                   ("change", "change", ">"), ("p", "p", ">"), ("n", "n A/B", ">"), ("verdict", "verdict", "<")]
        output.table(rows, columns, out=out)
    alpha, threshold = attrs.get("alpha", compare.ALPHA), attrs.get("threshold_pct", compare.THRESHOLD_PCT)
    measured = ", or the one `kvlab noise` measured where larger: see the notes" \
        if "floor_source" in frame and (frame.floor_source == "measured").any() else ""
    print(file=out)
    print(f"  median: of each side's samples; 95% CI: the median's interval (exact order statistics); change: B's "
          f"median against A's; p: two-sided Mann-Whitney U; ~: p >= {alpha:g}, no p, or |change| < the noise floor "
          f"({threshold:g}%, --threshold{measured})", file=out)
    for n in sorted(below_level):
        level = 1 - 2 / 2 ** n
        print(f"  ({stats._percent(level)}): with {n} samples no interval reaches 95%; the min-max range is a "
              f"{stats._percent(level)} interval of the median ({stats.samples_for()} samples give 95%)", file=out)
    for n in sorted(too_few):
        print(f"  n={n}: no interval and no p-value below {stats.MIN_SAMPLES} samples a side", file=out)
    for na, nb, smallest in sorted(cannot_reach):
        print(f"  n={na}/{nb}: the smallest p these sizes can give is {smallest:.3f}, so no change can be "
              f"significant at {alpha:g}; run more samples", file=out)
    for note in attrs.get("notes", []):
        print(f"  note: {note}", file=out)


def _short_interval(s) -> str:
    """A table cell: 'lo .. hi', 'lo .. hi (75%)' below 95%, or 'n=2: no interval'."""
    from ...results.stats import _percent, interval_text
    text = interval_text({**s, "median_ci_level": 1.0}, output.num)   # the level, if below, comes after
    level = s.get("median_ci_level")
    if s.get("median_ci") and level is not None and level < 0.95:
        text += f" ({_percent(level)})"
    return text
