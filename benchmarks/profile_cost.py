"""What `--profile` costs a run: the same readrandom on a loaded database with and without perf sampling the
trial's worker (cpu-clock at 99 Hz a thread, or --hz, DWARF unwinding of 8 KiB of stack), rounds alternating which goes
first, on LMDB (a get in well under a microsecond: the harshest case) and RocksDB.

    python benchmarks/profile_cost.py [--rounds 6] [--seconds 3] [--threads 1] [--engines lmdb,rocksdb]

Prints, per engine, the median ops/s with and without the profile, their range, and the median of the per-round
ratios (profiled / not) with its range; the target is a cost of at most 5% (a ratio of 0.95 or more).  The time
perf takes afterwards to unwind and fold the stacks (outside the measured phase) is printed too.
"""
import argparse
import tempfile
import time

from _common import kvlab, median


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--engines", default="lmdb,rocksdb")
    ap.add_argument("--hz", type=int, default=None, help="the sampling rate (default: kvlab's, RATE_HZ)")
    args = ap.parse_args()
    if args.hz:   # before the first run starts the fork server, which the workers inherit it from
        import os
        os.environ["KVLAB_PROFILE_HZ"] = str(args.hz)
    from kvlab.execution.run import profiler
    print(f"sampling at {profiler.RATE_HZ if not args.hz else args.hz} Hz a thread, {profiler.UNWIND}")
    for engine in args.engines.split(","):
        with tempfile.TemporaryDirectory(prefix="kvlab-profile-cost-") as tmp:
            db = f"{tmp}/db"
            kvlab.run(engine, "fillseq", num=200_000, db=db, keep_db=True)
            plain, profiled, ratios, after = [], [], [], []
            for r in range(args.rounds):
                got = {}
                for profile in ((False, True) if r % 2 == 0 else (True, False)):
                    t0 = time.perf_counter()
                    res = kvlab.run(engine, "readrandom", num=200_000, db=db, keep_db=True, use_existing_db=True,
                                    duration=args.seconds, warmup=0.5, threads=args.threads, profile=profile)
                    b = res[-1]
                    got[profile] = b.ops_per_sec
                    if profile:
                        after.append(time.perf_counter() - t0 - args.seconds)
                        assert b.params.get("profile", {}).get("samples"), b.warnings
                plain.append(got[False])
                profiled.append(got[True])
                ratios.append(got[True] / got[False])
            print(f"{engine} readrandom, {args.threads} thread(s), {args.seconds:g} s a run, {args.rounds} rounds:")
            print(f"  without --profile: {median(plain):,.0f} ops/s [{min(plain):,.0f}, {max(plain):,.0f}]")
            print(f"  with --profile:    {median(profiled):,.0f} ops/s [{min(profiled):,.0f}, {max(profiled):,.0f}]")
            print(f"  ratio (with / without), median of rounds: {median(ratios):.3f} [{min(ratios):.3f}, "
                  f"{max(ratios):.3f}] (target: 0.95 or more)")
            print(f"  a profiled trial's time beyond its measured seconds (perf's start, unwinding, folding): "
                  f"{median(after):.1f} s [{min(after):.1f}, {max(after):.1f}]")


if __name__ == "__main__":
    main()
