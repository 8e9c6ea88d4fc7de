"""The power-loss campaign (issue 26, item 4): for each engine and each of its durability settings
(kvlab.execution.crash.crashtest.DURABILITY), N power cuts of a writer on forgetfs per loss model, beside N
SIGKILLs of the same configuration; one table.  A setting that promises durability must lose and tear
nothing; one that promises a prefix must tear nothing and always reopen.  Then fillseq ops/s through
forgetfs against straight on the backing directory, per engine (forgetfs is for crash tests: it
serialises every request).  Exits 1 if a setting broke its promise; such databases are kept, with
the file system's log, and their paths printed.

    python benchmarks/powerloss_campaign.py [--cuts 100] [--engines lmdb,leveldb,...] [--loss all,random,torn]
                                            [--seed 1] [--num 10000] [--fillseq 20000] [--json powerloss.json]
"""
import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from _common import kvlab

from kvlab import errors
from kvlab.execution import native
from kvlab.execution.crash import forgetfs
from kvlab.execution.crash.crashtest import DURABILITY, crashtest

SIX = ("lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb")


def fillseq_ops(engine: str, num: int, through_forgetfs: bool) -> float:
    """fillseq ops/s with the engine's defaults, on a fresh directory, straight or through forgetfs."""
    backing = Path(tempfile.mkdtemp(prefix="kvlab-plspeed-"))
    try:
        if not through_forgetfs:
            return kvlab.run(engine, "fillseq", num=num, db=str(backing / "db"), seed=1)[0].ops_per_sec
        with forgetfs.Mount(backing) as m:
            r = kvlab.run(engine, "fillseq", num=num, db=str(m.path / "db"), seed=1)
            m.cut()
        return r[0].ops_per_sec
    finally:
        shutil.rmtree(backing, ignore_errors=True)


def row(r, sigkill=None) -> str:
    s = r.summary
    rec = "-" if s["recovery_ms_p50"] is None else f"{s['recovery_ms_p50']:.1f}/{s['recovery_ms_max']:.1f}"
    k = sigkill.summary if sigkill else None
    beside = "-" if k is None else f"{k['acked_txns_lost']} lost, {k['torn_txns']} torn, {k['reopen_failures']} fail"
    verdict = "BROKEN: " + "; ".join(r.broken_promises) if r.broken_promises else "ok"
    return (f"{s['engine']:<17} {s['setting']:<18} {r.claim:<8} {r.loss:<7} {s['kills']:>4} {s['reopen_failures']:>6} "
            f"{s['acked_txns']:>9,} {s['acked_txns_lost']:>9,} {s['kills_with_loss']:>9} {s['torn_txns']:>5} "
            f"{s['torn_half']:>4} "
            f"{rec:>13}  {beside:<24} {verdict}")


HEAD = (f"{'engine':<17} {'setting':<18} {'promise':<8} {'loss':<7} {'cuts':>4} {'reopen':>6} {'acked txn':>9} "
        f"{'txns lost':>9} {'cuts/loss':>9} {'torn':>5} {'half':>4} {'recov ms p50/max':>13}  "
        f"{'SIGKILL (same kills)':<24} verdict")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cuts", type=int, default=100, help="power cuts per configuration and loss model (default 100)")
    ap.add_argument("--kills", type=int, default=None, help="SIGKILLs per configuration (default: as --cuts; 0: none)")
    ap.add_argument("--engines", default=",".join(SIX), help="comma list (default: the six engine configurations)")
    ap.add_argument("--settings", default=None, help="comma list of durability settings to run (default: all)")
    ap.add_argument("--loss", default="all,random,torn", help="loss models, comma list (default all,random,torn)")
    ap.add_argument("--names", default="posix", choices=("posix", "ext4"),
                    help="when entries are durable: their directory's fsync (posix) or any fsync (ext4)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=10, help="writes per transaction (default 10)")
    ap.add_argument("--num", type=int, default=10_000, help="key space (default 10,000)")
    ap.add_argument("--max-delay", type=float, default=0.8, help="cut at most this many seconds into a round")
    ap.add_argument("--fillseq", type=int, default=20_000, help="fillseq size for the speed comparison (0: none)")
    ap.add_argument("--json", default=None, help="write every report here")
    args = ap.parse_args()
    forgetfs.require()
    kills = args.cuts if args.kills is None else args.kills
    losses = args.loss.split(",")
    wanted = set(args.settings.split(",")) if args.settings else None
    t0 = time.time()
    lines, reports, speed = [], [], []
    for name in args.engines.split(","):
        try:
            native.require_built(name)   # compiled in, or a version loaded at run time (mdbx, redb)
        except errors.EngineNotBuilt as exc:
            print(f"{name}: not built, skipped ({exc})")
            continue
        for d in DURABILITY[name]:
            if wanted and d.name not in wanted:
                continue
            common = dict(seed=args.seed, batch=args.batch, num=args.num, max_s=args.max_delay, setting=d.name)
            sk = crashtest(name, kills, **common) if kills else None
            if sk:
                reports.append(sk)
            for loss in losses:
                r = crashtest(name, args.cuts, power_loss=True, loss=loss, names=args.names, **common)
                reports.append(r)
                lines.append(row(r, sk))
                print(lines[-1] + f"   ({time.time() - t0:.0f} s so far)", flush=True)
                for path in r.summary["kept"]:
                    print(f"    kept: {path}", flush=True)
        if args.fillseq:
            direct, mounted = fillseq_ops(name, args.fillseq, False), fillseq_ops(name, args.fillseq, True)
            speed.append((name, direct, mounted))
            print(f"{name}: fillseq {args.fillseq:,} keys: {direct:,.0f} ops/s on the backing directory, "
                  f"{mounted:,.0f} through forgetfs", flush=True)
    print()
    print(HEAD)
    print("-" * len(HEAD))
    print("\n".join(lines))
    if speed:
        print()
        print(f"fillseq, {args.fillseq:,} keys, engine defaults (sync off): ops/s")
        print(f"{'engine':<17} {'backing dir':>12} {'forgetfs':>12} {'ratio':>7}")
        for name, direct, mounted in speed:
            print(f"{name:<17} {direct:>12,.0f} {mounted:>12,.0f} {mounted / direct:>7.2f}")
    print(f"\n{time.time() - t0:.0f} s in all")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"reports": [r.to_dict() for r in reports],
                       "fillseq": [{"engine": n, "direct_ops_per_sec": a, "forgetfs_ops_per_sec": b}
                                   for n, a, b in speed]}, f, indent=1)
    return 1 if any(r.broken_promises for r in reports if r.power_loss) else 0


if __name__ == "__main__":
    raise SystemExit(main())
