"""kvlab against Debian's db_bench on the same RocksDB library, the same flags, alternately.

Both get the same command lines; only the binary differs (`db_bench` vs `kvlab dbbench --engine rocksdb`):
fillseq on a fresh database, then readrandom on the database it left (see `phases` below for why two).
Prints the median ops/sec of each, kvlab/db_bench of the medians, and the ratio paired within each
round (median and range over rounds) (target on the release build: >= 1.00 for fillseq and readrandom).

    python benchmarks/vs_dbbench.py [--num 500000] [--rounds 3] [--threads 1] [--db-bench /usr/bin/db_bench]
                                    [--kvlab-build DIR] [--instructions] [--mixgraph]

`--mixgraph`: Meta's mixgraph instead (issue "Workloads from the field"), with the paper's fitted parameters
(MIXGRAPH below, db_bench's own example): fillrandom on a fresh database, then mixgraph on it, `--reads` queries
per thread; both tools print the queries each kind got (Gets, Puts, Seek), shown beside the rates.

`--instructions` counts instead of timing (valgrind's callgrind, which repeats where wall time on this VM
moves +-10% between identical runs): each tool fills its own database with fillseq, then reads it twice
under callgrind, R and 2R gets, collecting only the reading loop (db_bench's Benchmark::ReadRandom, kvlab's
worker thread), then only RocksDB's DBImpl::GetImpl; the difference over R is each tool's instructions per
get, everything either does once cancelled out.  What it cannot see: the kernel's side of each block read,
and cache misses.

The library must be the same on both sides: Debian's db_bench goes with a kvlab built against
Debian's librocksdb, and engines-build/prefix/rocksdb/bin/db_bench (`make engines`) with one built
against the release library.  `--kvlab-build` runs the kvlab copy in DIR; `--kvlab-build debian`
(or `release`) first builds (or reuses, while kvlab's source is unchanged) build/kvlab-variants/debian
with benchmarks/builds.py.  By default the installed kvlab runs.
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

from _common import callgrind_collected, median, under_callgrind

LINE = re.compile(r"^(\w+)\s+:\s+([\d.]+) micros/op (\d+) ops/sec", re.M)
KINDS = re.compile(r"^mixgraph\s+:.*\( Gets:(\d+) Puts:(\d+) Seek:(\d+)", re.M)
# the FAST 2020 paper's fitted "all_dist" parameters, as db_bench's mixgraph example passes them
MIXGRAPH = ["--key_size=48", "--keyrange_dist_a=14.18", "--keyrange_dist_b=-2.917", "--keyrange_dist_c=0.0164",
            "--keyrange_dist_d=-0.08082", "--keyrange_num=30", "--key_dist_a=0.002312", "--key_dist_b=0.3467",
            "--value_k=0.2615", "--value_sigma=25.45", "--iter_k=2.517", "--iter_sigma=14.236",
            "--mix_get_ratio=0.83", "--mix_put_ratio=0.14", "--mix_seek_ratio=0.03"]


def ops_per_sec(text):
    return {m.group(1): float(m.group(3)) for m in LINE.finditer(text)}


def dbbench_library(path: str):
    """The shared librocksdb a db_bench binary loads, or None when RocksDB is linked in statically."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    m = re.search(r"librocksdb\S*\s+=>\s+(\S+)", out)
    return os.path.realpath(m.group(1)) if m else None  # /lib -> /usr/lib on merged-/usr Debian


def callgrind_per_get(cmd, toggle, reads, env, cwd, in_workers=False):
    """Instructions per get in `toggle` (a function callgrind matches by name), from a run of `reads` and one
    of 2 * `reads` gets.  `in_workers`: a kvlab command, whose trials run in worker processes (callgrind goes
    around them through KVLAB_WORKER_PREFIX: _common.under_callgrind)."""
    counts = []
    for n in (reads, 2 * reads):
        if in_workers:
            counts.append(under_callgrind([*cmd, f"--reads={n}"], toggle, env, cwd=cwd)[0])
            continue
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no",
                              f"--toggle-collect={toggle}", *cmd, f"--reads={n}"],
                             capture_output=True, text=True, env=env, cwd=cwd)
        counts.append(callgrind_collected(out.stderr))
        if out.returncode or not counts[-1]:
            raise SystemExit(f"callgrind collected nothing in {toggle}:\n{out.stderr[-2000:]}")
    return (counts[1] - counts[0]) / reads


GET_IMPL = ("rocksdb::DBImpl::GetImpl(rocksdb::ReadOptions const&, rocksdb::Slice const&, "
            "rocksdb::DBImpl::GetImplOptions&)")


def instructions(args, sides, flags, env):
    """Instructions per readrandom get, each tool on the database its own fillseq left: in the whole reading loop,
    and in RocksDB's DBImpl::GetImpl (what the engine does for the get); the rest is the tool's own."""
    if not shutil.which("valgrind"):
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    from kvlab.execution import native
    # kvlab's trials run in workers, which the fork server starts with room in glibc's static TLS
    kvlab_env = native.with_static_tls_room(env or os.environ)
    reads = max(1, args.num // 10)
    loops = {"db_bench": "*Benchmark::ReadRandom(*", "kvlab": "worker"}
    per_get = {}
    for who, cmd in sides:
        base = tempfile.mkdtemp(prefix="kvlab-vs-dbbench-ir-")
        try:
            common = [f for f in flags if not f.startswith("--reads=")] + [f"--db={base}/db"]
            subprocess.run(cmd + ["--benchmarks=fillseq", "--use_existing_db=0"] + common,
                           capture_output=True, text=True, check=True, env=env, cwd=base)
            read = cmd + ["--benchmarks=readrandom", "--use_existing_db=1"] + common
            side_env = kvlab_env if who == "kvlab" else env
            per_get[who] = [callgrind_per_get(read, toggle, reads, side_env, base, in_workers=who == "kvlab")
                            for toggle in (loops[who], GET_IMPL)]
        finally:
            shutil.rmtree(base, ignore_errors=True)
    (d, d_engine), (k, k_engine) = per_get["db_bench"], per_get["kvlab"]
    print(f"  readrandom, instructions per get ({reads:,} and {2 * reads:,} gets, 1 thread; the difference over "
          f"{reads:,}; the databases differ in their keys' encoding, db_bench's binary and kvlab's decimal):")
    print(f"    {'':<34}{'db_bench':>10}{'kvlab':>10}")
    print(f"    {'the reading loop, all of it':<34}{d:>10,.1f}{k:>10,.1f}   kvlab/db_bench {k / d:.3f} "
          f"({(k / d - 1) * 100:+.2f}%; fewer is faster)")
    print(f"    {'in RocksDB (DBImpl::GetImpl)':<34}{d_engine:>10,.1f}{k_engine:>10,.1f}")
    print(f"    {'the rest: the tool, the C API':<34}{d - d_engine:>10,.1f}{k - k_engine:>10,.1f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--db-bench", default=shutil.which("db_bench") or "/usr/bin/db_bench")
    ap.add_argument("--kvlab-build", default=None, metavar="DIR|debian|release")
    ap.add_argument("--mixgraph", action="store_true",
                    help="fillrandom, then Meta's mixgraph with the paper's parameters, instead of fillseq/readrandom")
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions per readrandom get under callgrind instead of timing rounds")
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
    names = ("fillseq", "readrandom")
    if args.mixgraph:
        flags = [f.replace("--key_size=16", MIXGRAPH[0]) for f in flags] + MIXGRAPH[1:]
        flags = [f"--reads={max(1, args.num // 5)}" if f.startswith("--reads=") else f for f in flags]
        phases = (["--benchmarks=fillrandom", "--use_existing_db=0"], ["--benchmarks=mixgraph", "--use_existing_db=1"])
        names = ("fillrandom", "mixgraph")
    kinds = {"db_bench": [], "kvlab": []}
    print(f"RocksDB through kvlab vs {args.db_bench}, same flags: {' '.join(flags)}, "
          f"{names[0]} then {names[1]} (a second invocation, on the database {names[0]} left)")
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
    if args.instructions:
        if args.threads != 1:
            raise SystemExit("--instructions counts one reading thread: leave --threads at 1")
        return instructions(args, sides, flags, env)
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
                kinds[who] += [tuple(map(int, m.groups())) for m in KINDS.finditer(out.stdout)]
            shutil.rmtree(base, ignore_errors=True)
    for name in names:
        d, k = results["db_bench"][name], results["kvlab"][name]
        paired = sorted(b / a for a, b in zip(d, k))  # kvlab / db_bench within each round
        print(f"  {name:<11} db_bench {median(d):>10,.0f} ops/s   kvlab {median(k):>10,.0f} ops/s   "
              f"kvlab/db_bench {median(k) / median(d):.2f}x; paired by round: median {median(paired):.2f}x, "
              f"range {paired[0]:.2f}-{paired[-1]:.2f} (target >= 1.00 on the release build)")
    for who, got in kinds.items():
        if got:
            total = [sum(x) for x in zip(*got)]
            n = sum(total) or 1
            print(f"  mixgraph's queries, {who}: gets {total[0] / n:.1%}, puts {total[1] / n:.1%}, "
                  f"seeks {total[2] / n:.1%} of {n:,} over {len(got)} rounds")


if __name__ == "__main__":
    main()
