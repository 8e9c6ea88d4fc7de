"""kvlab's harness cost in instructions, which are repeatable where wall time on a shared
2-core VM is not: callgrind counts the instructions of kvlab's worker thread (driver loop,
latency clock, histogram, progress counter, plus the engine calls) and of the bare C loop's
thread making the same engine calls with the same keys, on the same database.  Each side runs
twice, N and 2N gets: the difference over N is the per-get cost, so what either side spends
once (thread start, histograms set up and summarised) cancels out.  kvlab's side starts with
room in glibc's static TLS, as the `kvlab` command and kvlab's kernel do (kvlab.execution.native).

    python benchmarks/harness_instructions.py [--engine lmdb] [--num 100000] [--loaded lmdb@0.9.24]

--loaded NAME@VERSION adds a third side: kvlab on the adapter loaded at run time (`kvlab engines build`), linked to
the same library as the compiled-in one (each engine's Debian version): the difference is the dispatch's cost
(issue "Several versions of one engine side by side": at most 0.5%).

LMDB readrandom is the worst case: its gets are the cheapest, so the harness's fixed
per-op cost is the largest fraction.  Targets (issue "Workloads as data"): LMDB within 1.5% of
the bare loop, RocksDB within 0.5%.
"""
import argparse
import os
import shutil
import subprocess
import tempfile

from _common import build_bare, under_callgrind
from _common import callgrind_collected as collected

import kvlab
from kvlab import engines
from kvlab.execution import native


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="lmdb")
    ap.add_argument("--num", type=int, default=100_000)
    ap.add_argument("--loaded", metavar="NAME@VERSION",
                    help="also count kvlab on this version loaded at run time (built with `kvlab engines build`)")
    ap.add_argument("--descriptors", action="store_true",
                    help="a release RocksDB through TLS descriptors (kvlab/_native), "
                         "not initial-exec (kvlab/_native_ie)")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    cfg = engines.get(args.engine)
    # with room in glibc's static TLS, kvlab loads the module linked against the initial-exec RocksDB where the
    # build has one (kvlab.execution.native): the bare loop then links that library too
    ie = ((native.build_config().get("initial_exec") or {}).get("adapter") == cfg.adapter and not args.descriptors)
    bare = build_bare(initial_exec=bool(ie))
    tls = {}
    base = tempfile.mkdtemp(prefix="kvlab-ir-")
    db = os.path.join(base, "db")
    env = dict(os.environ, KV_MAP_SIZE=str(1 << 30), PYTHONMALLOC="malloc")
    try:
        # valgrind cannot map LMDB's default 64 GiB: both sides use a 1 GiB map
        kvlab.run(args.engine, "fillseq", num=args.num, db=db, map_size=1 << 30, seed=1, interval=0)
        vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no"]

        def bare_side(reads):
            return collected(subprocess.run(vg + ["--toggle-collect=run", str(bare), cfg.adapter, cfg.variant or "-",
                                                  db, "readrandom", str(args.num), str(reads), "1", "1"],
                                            capture_output=True, text=True, env=env).stderr)

        if args.loaded:   # its own database (a database is its engine's: dbdir's marker), loaded the same way
            kvlab.run(args.loaded, "fillseq", num=args.num, db=db + "-loaded", map_size=1 << 30, seed=1, interval=0)

        def kvlab_side(reads, engine=args.engine):
            where = db + "-loaded" if engine != args.engine else db
            code = (f"import kvlab; kvlab.run({engine!r}, 'readrandom', num={args.num}, reads={reads}, "
                    f"db={where!r}, use_existing_db=True, map_size=1 << 30, seed=1, interval=0, engine_stats=False); "
                    f"from kvlab.execution import native; print(native.tls_model({cfg.adapter!r}))")
            side_env = native.with_static_tls_room(env)
            if args.descriptors:
                side_env["KVLAB_NO_INITIAL_EXEC"] = "1"
            count, done = under_callgrind(code, "worker", side_env)   # the trial's worker, under callgrind
            tls["kvlab"] = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "?"
            return count

        ib1, ib2 = bare_side(args.num), bare_side(2 * args.num)
        ik1, ik2 = kvlab_side(args.num), kvlab_side(2 * args.num)
        if args.loaded:
            il1, il2 = kvlab_side(args.num, args.loaded), kvlab_side(2 * args.num, args.loaded)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ib, ik = (ib2 - ib1) / args.num, (ik2 - ik1) / args.num
    target = {"lmdb": 1.5, "rocksdb": 0.5}.get(args.engine)
    print(f"{args.engine} readrandom, instructions per get in the measuring thread ({args.num:,} and "
          f"{2 * args.num:,} gets, 1 thread; the difference over {args.num:,}):")
    print(f"  bare C loop : {ib:>10,.1f}   (all of the {args.num:,}-get run: {ib1:,})")
    print(f"  kvlab       : {ik:>10,.1f}   (all of the {args.num:,}-get run: {ik1:,})")
    print(f"  harness cost: {(ik / ib - 1) * 100:.2f}%" + (f" (target < {target}%)" if target else ""))
    if args.loaded:
        il = (il2 - il1) / args.num
        print(f"  kvlab, {args.loaded} loaded at run time: {il:>10,.1f}   (all of the {args.num:,}-get run: {il1:,})")
        print(f"  dispatch cost (loaded vs compiled in): {(il / ik - 1) * 100:+.2f}% (target <= 0.5%)")
    if args.engine == "rocksdb" and tls.get("kvlab") not in (None, "None"):
        print(f"  RocksDB's thread-locals in kvlab's module: {tls['kvlab']}; the bare loop links the "
              f"{'initial-exec' if ie else 'TLS-descriptor'} build")


if __name__ == "__main__":
    main()
