"""The LSM family side by side (notebook 10_lsm_family runs the same: kvlab.lab.seeds.lsm_family): every built LSM
engine configuration loads the same keys with fillrandom, overwrites them, then reads them at random, at one memory
budget each, `--repeat` rounds with the engines in a rotating order.  Per engine and workload: the median ops/s with
the median's interval over the rounds (3 or more), and the medians of write amplification (the process's storage writes over the keys and
values written) and space amplification (the database's allocated size over the live keys and values), as every
kvlab record has them; `--figure FILE` draws the three side by side.

    python benchmarks/lsm_family.py [--num 200000] [--memory 256MiB] [--repeat 3] [--figure lsm.svg]

What the figures hold, and what they do not: fjall preallocates its live journal (64 MiB on disk while the database
is open), which its space amplification includes; an engine whose flushes and compactions have not run by the end of
a phase shows the write amplification of its log alone; a space amplification below 1 is an engine that compresses
(the values are half compressible); "n/a" in the figure is a figure kvlab could not measure for that engine (the
record's amplification notes say why).  Every engine runs with sync off and its own defaults
besides the budget's split (`kvlab engines` prints them).
"""
import argparse
import time

from _common import kvlab  # noqa: F401  (sets up the path)

from kvlab.lab import coverage, plots
from kvlab.lab.seeds import lsm_family as family


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default=",".join(family.FAMILY))
    ap.add_argument("--num", type=int, default=200_000)
    ap.add_argument("--memory", default="256MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--figure", default=None, metavar="FILE")
    args = ap.parse_args()
    asked = args.engines.split(",")
    names, left = coverage.chosen(asked)
    for n, why in left.items():
        if n in asked:
            print(f"{n}: left out: {why}")
    t0 = time.time()
    table, _ = family.lsm_family(names, args.num, args.memory, args.repeat, seed=args.seed)
    print(f"\nthe LSM family: {args.num:,} keys, memory {args.memory} each, {args.repeat} rounds "
          f"({time.time() - t0:.0f} s); ops/s median [the median's interval], amplification medians")
    print(f"{'engine':<16} {'workload':<11} {'ops/s':>10} {'interval':>23} {'write amp':>9} {'space amp':>9}")
    for r in table.itertuples():
        interval = "-" if r.ops_level != r.ops_level or r.ops_level is None else \
            f"[{r.ops_lo:,.0f} .. {r.ops_hi:,.0f}]"
        print(f"{r.engine:<16} {r.workload:<11} {r.median_ops_per_sec:>10,.0f} {interval:>23} "
              f"{_amp(r.write_amp):>9} {_amp(r.space_amp):>9}")
    if args.figure:
        fig = plots.lsm_family(table, title=f"The LSM family: {args.num:,} keys of 16+100 bytes, memory "
                                            f"{args.memory} each, sync off, {args.repeat} round"
                                            f"{'s' if args.repeat > 1 else ''}")
        fig.savefig(args.figure, bbox_inches="tight")
        print(f"figure: {args.figure}")


def _amp(v) -> str:
    return "-" if v is None or v != v else f"{v:.2f}"


if __name__ == "__main__":
    main()
