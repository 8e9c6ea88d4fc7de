"""kvlab against Debian's db_bench on the same RocksDB library, the same flags, alternately.

Both get the same command lines; only the binary differs (`db_bench` vs `kvlab dbbench --engine rocksdb`):
fillseq on a fresh database, then readrandom on the database it left (see `phases` below for why two).
Prints the median ops/sec of each, kvlab/db_bench of the medians, and the ratio paired within each
round (median and range over rounds) (target on the release build: >= 1.00 for fillseq and readrandom).

    python benchmarks/vs_dbbench.py [--num 500000] [--rounds 3] [--threads 1] [--db-bench /usr/bin/db_bench]
                                    [--kvlab-build DIR]

The library must be the same on both sides: Debian's db_bench goes with a kvlab built against
Debian's librocksdb, and engines-build/prefix/rocksdb/bin/db_bench (`make engines`) with one built
against the release library.  `--kvlab-build` runs the kvlab copy in DIR; `--kvlab-build debian` (or `release`) first builds
(or reuses, while kvlab's source is unchanged) build/kvlab-variants/debian with benchmarks/builds.py.
By default the installed kvlab runs.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import median

LINE = re.compile(r"^(\w+)\s+:\s+([\d.]+) micros/op (\d+) ops/sec", re.M)


def ops_per_sec(text):
    return {m.group(1): float(m.group(3)) for m in LINE.finditer(text)}


def dbbench_library(path: str):
    """The shared librocksdb a db_bench binary loads, or None when RocksDB is linked in statically."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    m = re.search(r"librocksdb\S*\s+=>\s+(\S+)", out)
    return os.path.realpath(m.group(1)) if m else None  # /lib -> /usr/lib on merged-/usr Debian


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--db-bench", default=shutil.which("db_bench") or "/usr/bin/db_bench")
    ap.add_argument("--kvlab-build", default=None, metavar="DIR|debian|release")
    args = ap.parse_args()
    args.db_bench = str(Path(args.db_bench).resolve())  # the runs start in a temp dir
    env = None
    kvlab_cmd = [str(Path(sys.executable).with_name("kvlab"))]
    if args.kvlab_build in ("debian", "release"):
        from builds import build_variant
        args.kvlab_build = build_variant(args.kvlab_build, release=args.kvlab_build == "release")
    if args.kvlab_build:
        env = {**os.environ, "PYTHONPATH": os.path.abspath(args.kvlab_build)}
        kvlab_cmd = [sys.executable, "-m", "kvlab.cli"]
    flags = [f"--num={args.num}", f"--reads={args.num}",
             f"--threads={args.threads}", "--value_size=100", "--key_size=16", "--compression_type=none", "--seed=1"]
    # fillseq, then readrandom in a second invocation on the database it left: in one invocation the reads
    # begin while the flush of fillseq's last memtable is still running, and the share of them served from
    # that immutable memtable (much cheaper than a block read) depends on how soon each tool starts reading
    # (db_bench at once, kvlab after recording fillseq's result): a race, not the harness
    phases = (["--benchmarks=fillseq", "--use_existing_db=0"], ["--benchmarks=readrandom", "--use_existing_db=1"])
    print(f"RocksDB through kvlab vs {args.db_bench}, same flags: {' '.join(flags)}, "
          "fillseq then readrandom (a second invocation, on the database fillseq left)")
    facts = subprocess.run(kvlab_cmd + ["engines", "--json"], capture_output=True, text=True, env=env,
                           cwd=tempfile.gettempdir()).stdout
    rocks = next((e for e in json.loads(facts) if e["engine"] == "rocksdb"), {})
    print(f"  kvlab's RocksDB: {rocks.get('origin')}, assertions {'ON' if rocks.get('assertions') else 'off'}")
    linked = dbbench_library(args.db_bench)
    print(f"  db_bench's RocksDB: {linked or 'linked in statically'}")
    kvlab_shared = rocks.get("library_prefix") == "/usr"
    if kvlab_shared != bool(linked and linked.startswith("/usr/lib")):
        print("  WARNING: not the same RocksDB library on both sides, so the ratio is not like for like: use\n"
              "  --kvlab-build debian with Debian's db_bench, or --kvlab-build release with\n"
              "  --db-bench engines-build/prefix/rocksdb/bin/db_bench")
    results = {"db_bench": {}, "kvlab": {}}
    sides = (("db_bench", [args.db_bench]), ("kvlab", kvlab_cmd + ["dbbench", "--engine", "rocksdb"]))
    for r in range(args.rounds):
        # ABBA: odd rounds run kvlab first, so a drift in the VM's speed hits both sides alike
        for who, cmd in (sides if r % 2 == 0 else sides[::-1]):
            base = tempfile.mkdtemp(prefix="kvlab-vs-dbbench-")
            # run from the temp dir: `python -m` puts the working directory first on sys.path
            for phase in phases:
                out = subprocess.run(cmd + phase + flags + [f"--db={base}/db"], capture_output=True, text=True,
                                     check=True, env=env, cwd=base)
                for name, v in ops_per_sec(out.stdout).items():
                    results[who].setdefault(name, []).append(v)
            shutil.rmtree(base, ignore_errors=True)
    for name in ("fillseq", "readrandom"):
        d, k = results["db_bench"][name], results["kvlab"][name]
        paired = sorted(b / a for a, b in zip(d, k))  # kvlab / db_bench within each round
        print(f"  {name:<11} db_bench {median(d):>10,.0f} ops/s   kvlab {median(k):>10,.0f} ops/s   "
              f"kvlab/db_bench {median(k) / median(d):.2f}x; paired by round: median {median(paired):.2f}x, "
              f"range {paired[0]:.2f}-{paired[-1]:.2f} (target >= 1.00 on the release build)")


if __name__ == "__main__":
    main()
