"""`kvlab results why A B`: why B's figures differ from A's, from the CPU profiles their runs kept (--profile):
per benchmark, the wall-clock figures, the CPU per op by component and the functions whose cost changed most, and a
differential flame graph (kvlab.results.why)."""
from __future__ import annotations

from pathlib import Path

from .. import output
from ..parsing import add_format_option, add_store_option, count
from .compare import SIDE_HELP

NAME = "why"
WHY_HELP = "why B differs from A: CPU per op by component and function, from their --profile runs"


def add_parser(actions, make):
    w = make(actions, NAME, help=WHY_HELP,
             description=WHY_HELP + ". Benchmarks are matched by workload and threads, so two engines or two "
             "versions compare alike; each side's repeats are merged. Every figure is per operation: the CPU "
             "perf's samples give it (cpu-clock, every thread of the trial's worker), by component (the engine's "
             "library, kvlab's harness, libc and the allocator, the kernel, Python) and by function (self time), "
             "beside the median ops/s of each side. A differential flame graph per benchmark is written (B's "
             "widths, red where B spends more per op, blue where less).")
    w.add_argument("a", metavar="A", help="the baseline: " + SIDE_HELP)
    w.add_argument("b", metavar="B", help="compared against A: " + SIDE_HELP)
    w.add_argument("--top", type=count(1, 1000), default=12, metavar="N",
                   help="functions listed per benchmark (default 12)")
    w.add_argument("--svg", default=None, metavar="DIR",
                   help="folder for the differential flame graphs (default: profiles/ in kvlab's per-user folder)")
    add_format_option(w)
    add_store_option(w)
    return w


COMPONENT_COLUMNS = [("component", "component", "<"), ("a_us", "A CPU us/op", ">"), ("a_share", "A share", ">"),
                     ("b_us", "B CPU us/op", ">"), ("b_share", "B share", ">"), ("change_us", "change us/op", ">")]
FUNCTION_COLUMNS = [("function", "function (library)", "<"), ("component", "component", "<"),
                    ("a_us", "A self us/op", ">"), ("b_us", "B self us/op", ">"), ("change_us", "change", ">")]


def handle(store, args) -> int:
    import time

    from ...lab.plots.flame import flame_diff
    from ...results import why
    from ...results.store import kvlab_home
    got = why.why(args.a, args.b, store=store, most=args.top)
    folder = Path(args.svg) if args.svg else kvlab_home() / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    for e in got:
        w = e["why"]
        change = "-" if e["change_pct"] is None else f"{e['change_pct']:+.1f}%"
        print(f"\n{e['benchmark']}: A {', '.join(e['a_engines'])} {output.num(e['a_ops_per_sec'])} ops/s "
              f"(median of {e['a_n']}), B {', '.join(e['b_engines'])} {output.num(e['b_ops_per_sec'])} ops/s "
              f"(median of {e['b_n']}): {change}; CPU per op A {w['a_total_us']:.4g} us, B {w['b_total_us']:.4g} us "
              f"({w['a_samples']:,} and {w['b_samples']:,} samples)")
        ia, ib = e.get("a_instructions"), e.get("b_instructions")
        if ia and ib:
            print(f"  instructions per op (callgrind, kvlab's loop threads, user space): A {ia:,.0f}, B {ib:,.0f} "
                  f"({(ib / ia - 1) * 100:+.1f}%)")
        elif ia or ib:
            print(f"  instructions per op: only {'A' if ia else 'B'} has counted runs ({(ia or ib):,.0f}); count the "
                  "other with --count instructions")
        def share(us, total):
            return f"{100 * us / total:.0f}%" if total > 0 else "-"
        rows = [{**c, "a_share": share(c["a_us"], w["a_total_us"]), "b_share": share(c["b_us"], w["b_total_us"])}
                for c in w["components"] if c["a_us"] or c["b_us"]]
        output.table(rows, COMPONENT_COLUMNS)
        output.table(w["functions"], FUNCTION_COLUMNS)
        name = f"why-{time.strftime('%Y%m%d-%H%M%S')}-{e['benchmark'].replace(' ', '-')}.svg"
        path = folder / name
        path.write_text(flame_diff(e["a_profile"], e["b_profile"],
                                   f"{e['benchmark']}: {', '.join(e['b_engines'])} against {', '.join(e['a_engines'])}"))
        print(f"  differential flame graph: {path}")
    print("\n  CPU us/op: perf's cpu-clock samples over the measured phases, per operation; a component's figure is "
          "its functions' self time; instructions per op, where the sides hold counted runs (--count instructions, "
          "--metric instructions), are deterministic and blind to stalls and waits (docs/profile.md)")
    return 0
