"""`--metric instructions` on compare and versions: the counted round's table, per point, engines by instructions
per op (kvlab.services.maincompare.rank_instructions), the timed figures beside."""
from __future__ import annotations

from ..results import instructions as ins
from ..services import maincompare
from . import output

COLUMNS = [("engine", "engine", "<"), ("point", "point", "<"), ("per_op", "instr/op", ">"),
           ("x_fewest", "x fewest", ">"), ("engine_part", "engine", ">"), ("kvlab", "kvlab", ">"),
           ("libc", "libc+alloc", ">"), ("background", "engine threads", ">"), ("ops", "ops counted", ">"),
           ("median_ops_s", "median ops/s (timed)", ">")]
LEGEND = ("  instr/op: callgrind's count of the instructions kvlab's loop threads executed per get, user space, one "
          "run of --count-reads gets a thread on the loaded database after a first pass of as many that warms its cache (instructions repeat within 0.5% between "
          "identical runs: tests/test_count.py), by component; x fewest: its ratio to the fewest; engine threads: "
          "the engine's own threads' instructions per get, apart (not ranked); median ops/s: the timed runs', beside")


def report(args, results, rows) -> None:
    ranking = maincompare.rank_instructions(results, rows)
    if not ranking or args.quiet:
        return
    cells = []
    for point, entries in ranking:
        for e in entries:
            c = e["components"]
            cells.append({"engine": e["engine"], "point": point.label(), "per_op": e["per_op"],
                          "x_fewest": f"{e['x_fewest']:.2f}", "engine_part": c.get("engine", 0.0),
                          "kvlab": c.get("kvlab", 0.0), "libc": c.get("libc+alloc", 0.0),
                          "background": e["background"], "ops": e["ops"],
                          "median_ops_s": e["median_ops_s"] if e["median_ops_s"] is not None else "-"})
    print()
    print("ranked by instructions per op (fewest first):")
    output.table(cells, COLUMNS, legend=LEGEND)
    print(f"  {ins.WHAT_IT_CANNOT_SEE}; where the two rankings disagree, the engine's time goes to what instructions "
          "do not count")
