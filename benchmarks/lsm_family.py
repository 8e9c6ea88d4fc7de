"""The LSM family side by side (issue 49, item 6; Pebble and Badger join when they are engines): every built LSM
engine configuration loads the same keys with fillrandom, overwrites them, then reads them at random, at one memory
budget each, `--repeat` rounds with the engines in a rotating order.  Per engine and workload: the median ops/s with
its range over the rounds, and the medians of write amplification (the process's storage writes over the keys and
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
import statistics
import time

from _common import kvlab  # noqa: F401  (sets up the path)

from kvlab import engines
from kvlab.execution import native

FAMILY = ("leveldb", "rocksdb", "wiredtiger-lsm", "fjall", "pebble", "badger")
WORKLOADS = ("fillrandom", "overwrite", "readrandom")


def built(names) -> list:
    out = []
    for n in names:
        if n not in engines.REGISTRY:
            print(f"{n}: not an engine kvlab has yet, left out")
        elif not native.available(engines.get(n)):
            print(f"{n}: not built here, left out (`kvlab engines` says how to build it)")
        else:
            out.append(n)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", default=",".join(FAMILY))
    ap.add_argument("--num", type=int, default=200_000)
    ap.add_argument("--memory", default="256MiB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--figure", default=None, metavar="FILE")
    args = ap.parse_args()
    names = built(args.engines.split(","))
    got = {(n, w): [] for n in names for w in WORKLOADS}
    t0 = time.time()
    for r in range(args.repeat):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            for b in kvlab.run(n, ",".join(WORKLOADS), num=args.num, memory=args.memory, seed=args.seed + r,
                               interval=0):
                got[(n, b.workload)].append(b)
    print(f"\nthe LSM family: {args.num:,} keys, memory {args.memory} each, {args.repeat} rounds "
          f"({time.time() - t0:.0f} s); ops/s median [min .. max], amplification medians")
    print(f"{'engine':<16} {'workload':<11} {'ops/s':>10} {'range':>23} {'write amp':>9} {'space amp':>9}")
    rows = []
    for (n, w), bs in got.items():
        rates = [b.ops_per_sec for b in bs]
        wamp = [a for b in bs if (a := (b.amplification or {}).get("write_amp")) is not None]
        samp = [a for b in bs if (a := (b.amplification or {}).get("space_amp")) is not None]
        row = (n, w, statistics.median(rates), min(rates), max(rates),
               statistics.median(wamp) if wamp else None, statistics.median(samp) if samp else None)
        rows.append(row)
        print(f"{n:<16} {w:<11} {row[2]:>10,.0f} {f'[{row[3]:,.0f} .. {row[4]:,.0f}]':>23} "
              f"{'-' if row[5] is None else f'{row[5]:.2f}':>9} {'-' if row[6] is None else f'{row[6]:.2f}':>9}")
    if args.figure:
        figure(rows, names, args)


def figure(rows, names, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    width = 0.8 / len(names)
    for i, n in enumerate(names):
        mine = {w: r for r in rows if r[0] == n for w in [r[1]]}
        xs = [k + i * width for k in range(len(WORKLOADS))]
        med = [mine[w][2] / 1e3 for w in WORKLOADS]
        err = [[mine[w][2] / 1e3 - mine[w][3] / 1e3 for w in WORKLOADS],
               [mine[w][4] / 1e3 - mine[w][2] / 1e3 for w in WORKLOADS]]
        axes[0].bar(xs, med, width, yerr=err, capsize=2, label=n, color=engines.get(n).colour)
        for ax, col, ws in ((axes[1], 5, WORKLOADS[:2]), (axes[2], 6, WORKLOADS)):
            values = [mine[w][col] for w in ws]
            ax.bar(xs[:len(ws)], [v or 0 for v in values], width, color=engines.get(n).colour)
            for x, v in zip(xs, values):   # a figure kvlab could not measure is said, not drawn as 0
                if v is None:
                    ax.text(x, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize=7)
    for ax, title, labels in ((axes[0], "thousand ops/s (median, min..max)", WORKLOADS),
                              (axes[1], "write amplification (median)", WORKLOADS[:2]),
                              (axes[2], "space amplification after the phase (median)", WORKLOADS)):
        ax.set_title(title, fontsize=10)
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(labels))], labels)
    handles, labels = axes[0].get_legend_handles_labels()   # one legend for the three, below them: no bar hidden
    fig.legend(handles, labels, loc="lower center", ncol=len(names), fontsize=8, frameon=False)
    fig.suptitle(f"The LSM family: {args.num:,} keys of 16+100 bytes, memory {args.memory} each, sync off, "
                 f"{args.repeat} round{'s' if args.repeat > 1 else ''}", fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(args.figure)
    print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
