"""Seed 000 (WiredTiger's "Read scalability") at its own scale, 10M keys x 100 B, with a memory budget that holds
the data and one that does not: the campaign behind issue 34's finding that WiredTiger's default 100 MB cache
reversed the seed's conclusion.

    python scripts/seed000_budget.py [--num 10000000] [--budgets 4GiB,512MiB] [--threads 1,2,4]
                                     [--duration 20] [--repeat 3] [--dir /var/tmp/kvlab-seed000]

Each engine's database is loaded once (fillseq, as the seed loaded it), then readrandom runs on it at each
thread count under each budget, through the `kvlab` command (only the command holds a run to its budget in a
memory cgroup, page cache included).  Before each run under a budget below 1.5x the data the page cache is
dropped (as root), so pages cached outside the cgroup do not serve its reads; under a budget that holds the data,
a readseq phase first, in the same process, brings it into the engine's own cache (the seed read a cached
database), so the figure is not a cold cache warming.  Prints, per budget and thread count, each engine's median
ops/s with its interval, WiredTiger's ratio to LevelDB, and where the results are stored (tag seed000-10M).
Takes about 25 minutes on a 2-core VM at the defaults; the databases (about 2.5 GB) are removed at the end
unless --keep.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kvlab.model.spec import memory_bytes

ENGINES = ("wiredtiger-btree", "leveldb")


def kvlab(*args) -> list[dict]:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [sys.executable, "-m", "kvlab.cli", *args, "--json", out.name, "--quiet"]
        print("$ kvlab " + " ".join(args), flush=True)
        subprocess.run(cmd, check=True)
        return json.loads(Path(out.name).read_text())


def drop_caches() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num", type=int, default=10_000_000)
    ap.add_argument("--budgets", default="4GiB,512MiB")
    ap.add_argument("--threads", default="1,2,4")
    ap.add_argument("--duration", type=float, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default="/var/tmp/kvlab-seed000")
    ap.add_argument("--store", default="results/seed000.duckdb")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    root = Path(a.dir)
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    common = ["--store", a.store, "--tag", "seed000-10M"]
    rows = []
    try:
        for engine in ENGINES:
            db = root / engine
            load = kvlab("run", "--engine", engine, "--workload", "fillseq", "--num", str(a.num), "--db", str(db),
                         "--overwrite", "--interval", "0", *common)
            size = load[-1]["accounting"]["db_size_bytes"]
            print(f"{engine}: loaded {a.num:,} keys in {load[-1]['seconds']:.0f} s, {size / 2**20:,.0f} MiB",
                  flush=True)
            for budget in a.budgets.split(","):
                holds = memory_bytes(budget) >= 1.5 * size
                for threads in a.threads.split(","):
                    dropped = False if holds else drop_caches()
                    # a budget that holds the data reads it warm: a readseq phase first, in the same process, brings
                    # it into the engine's own cache (WiredTiger's, LevelDB's block cache), as the seed's reads ran
                    got = kvlab("run", "--engine", engine, "--workload", "readseq,readrandom" if holds else
                                "readrandom", "--num", str(a.num),
                                "--db", str(db), "--use-existing-db", "--threads", threads, "--duration",
                                str(a.duration), "--repeat", str(a.repeat), "--memory", budget,
                                "--warmup", str(min(2.0, a.duration / 4)),
                                *common, "--tag", f"budget-{budget}")
                    got = [r for r in got if r.get("workload") == "readrandom"]
                    ops = sorted(r["ops_per_sec"] for r in got if r.get("phase") != "summary")
                    rows.append({"engine": engine, "budget": budget, "threads": int(threads), "db_mib": size / 2**20,
                                 "ops": ops, "dropped": dropped,
                                 "cache": got[0]["params"].get("memory_budget", {}),
                                 "warnings": sorted({w for r in got for w in r.get("warnings", [])})})
                    print(f"  {budget} {threads} thr: {[round(x) for x in ops]}", flush=True)
    finally:
        if created and not a.keep:
            shutil.rmtree(root, ignore_errors=True)
    Path("results").mkdir(exist_ok=True)
    Path("results/seed000_budget.json").write_text(json.dumps(rows, indent=1, default=str))
    print(f"\n{'budget':>8} {'thr':>4} {'WiredTiger ops/s (min-max)':>32} {'LevelDB ops/s (min-max)':>32} {'WT/LDB':>7}")
    for budget in a.budgets.split(","):
        for threads in a.threads.split(","):
            cell = {r["engine"]: r["ops"] for r in rows if r["budget"] == budget and r["threads"] == int(threads)}
            med = {e: v[len(v) // 2] for e, v in cell.items()}
            text = [f"{med[e]:>12,.0f} ({v[0]:,.0f}-{v[-1]:,.0f})" for e, v in cell.items()]
            print(f"{budget:>8} {threads:>4} " + " ".join(f"{t:>32}" for t in text)
                  + f" {med[ENGINES[0]] / med[ENGINES[1]]:>6.2f}x")
    for r in rows:
        for w in r["warnings"]:
            print(f"note ({r['engine']}, {r['budget']}, {r['threads']} thr): {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
