"""Cost of live progress: LMDB readrandom on 2 threads with and without a progress display
(target: at most 1% slower).  Rounds alternate between the two so drift hits both alike.

The display is the notebook's ProgressWidget (its state updates, without a browser) fed every
0.1 s, which is 2.5 times more often than kvlab's default of 0.25 s.

Wall time on this VM swings by about 5% between identical runs, more than the 1% to resolve, so
the script also prints the exact cost: progress runs on the calling thread (the runner's sampler),
so the extra CPU that thread uses with progress on, over the CPU the two workers had, bounds what
progress can take from them.

    python benchmarks/progress_overhead.py [--num 1000000] [--reads 3000000] [--rounds 7]
"""
import argparse
import shutil
import tempfile
import time

from _common import kvlab, median

from kvlab.execution.progress import RunControl


def observer():
    try:
        from kvlab.widgets import ProgressWidget
        return ProgressWidget(stop_button=True), "ProgressWidget"
    except ImportError:  # no ipywidgets: the text the widget would show
        return (lambda p: p.describe()), "Progress.describe()"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--reads", type=int, default=3_000_000, help="per thread")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--every", type=float, default=0.1)
    args = ap.parse_args()
    db = tempfile.mkdtemp(prefix="kvlab-progress-")
    shutil.rmtree(db)
    kvlab.run("lmdb", "fillseq", num=args.num, db=db, seed=1, keep_db=True)
    plain, watched, updates = [], [], []
    cpu = {False: [], True: []}      # calling-thread CPU seconds per run
    worker_cpu = []                  # the workers' CPU seconds per run
    display, name = observer()
    try:
        for r in range(args.rounds):
            for into, with_progress in ((plain, False), (watched, True)) if r % 2 == 0 else \
                    ((watched, True), (plain, False)):
                control = None
                if with_progress:
                    seen = []
                    control = RunControl([display, seen.append], every=args.every)
                c0 = time.thread_time()
                res = kvlab.run("lmdb", "readrandom", num=args.num, reads=args.reads, threads=2, db=db,
                                use_existing_db=True, keep_db=True, seed=r, control=control)
                cpu[with_progress].append(time.thread_time() - c0)
                b = res.by_workload("readrandom")
                into.append(b.ops_per_sec)
                worker_cpu.append(sum(t["cpu_user_s"] + t["cpu_sys_s"] for t in b.accounting["threads"]))
                if with_progress:
                    updates.append(len(seen))
    finally:
        shutil.rmtree(db, ignore_errors=True)
    a, b = median(plain), median(watched)
    print(f"lmdb readrandom, 2 threads, num={args.num}, reads/thread={args.reads}, median of {args.rounds}:")
    print(f"  without progress           : {a:>12,.0f} ops/s")
    print(f"  with {name} every {args.every}s: {b:>12,.0f} ops/s  ({median(updates):.0f} updates a run)")
    print(f"  overhead, wall clock       : {(a - b) / a * 100:+.2f}% (target <= 1%; this VM's noise is ~5%)")
    extra = median(cpu[True]) - median(cpu[False])
    print(f"  calling thread CPU per run : {median(cpu[False]) * 1e3:.1f} ms without, {median(cpu[True]) * 1e3:.1f} ms "
          f"with progress")
    print(f"  overhead, CPU taken        : {extra / median(worker_cpu) * 100:+.3f}% of the workers' CPU "
          f"({extra * 1e3:.1f} ms against {median(worker_cpu):.2f} s; target <= 1%)")


if __name__ == "__main__":
    main()
