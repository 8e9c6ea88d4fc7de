"""kvlab against an independent reference loop per engine, written from the engine's own documentation.

harness_overhead.py compares kvlab's driver with a bare loop calling kvlab's own adapters, so it cannot see what an
adapter costs.  Here each engine has a small C program of its own (benchmarks/reference/<adapter>.c: the engine's
documented read and write path, no kvlab header), compiled with gcc -O2 against the library kvlab's extension was
built with (kvlab/_build_config.json), opened with the same engine settings kvlab's configuration passes.

Per engine configuration, each side loads its own database (fillseq, 1 thread, batches of 1000) in a fresh folder
under $TMPDIR, then reads it at 1 and 2 threads in alternating rounds (ABBA: reference, kvlab, kvlab, reference,
...), each a fresh process reading uniform random keys for --duration seconds.  kvlab runs through its command,
`kvlab run --use-existing-db --duration S`, so both sides are a process that opens the database, reads, closes.
Before the rounds each side reads once, untimed (compactions the load left, the OS page cache).

Prints, per engine and thread count: the reference's ops/s (median and range), kvlab's, the ratio of the medians
and the ratio paired within each round (median and range).  Target: kvlab >= 0.97x of the reference.

    python benchmarks/vs_reference.py [--engines lmdb,rocksdb] [--num 1000000] [--duration 3] [--rounds 5]
                                      [--threads 1,2] [--cache-size 268435456] [--json FILE]
    python benchmarks/vs_reference.py --instructions 50000 --num 100000   # instructions per get, callgrind
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, engines, kvlab, median, native, rm

REFERENCE = ROOT / "benchmarks" / "reference"
BUILD = ROOT / "build" / "reference"
TARGET = 0.97
# What kvlab's side is given beyond the shared settings, by adapter: WiredTiger's statistics are an instrument
# (kvlab's adapter opened with statistics=(fast) until it made them opt-in); the reference runs without them, so
# kvlab is told so explicitly, whichever build it is.  The setting is appended to kvlab's connection config, where a
# later key wins.
KVLAB_EXTRA = {"wiredtiger": {"options": "statistics=(none)"}}


def build_reference(adapter: str) -> Path:
    """benchmarks/reference/<adapter>.c compiled with gcc -O2 against the engine library kvlab was built with: the one
    linked into kvlab's extension, or, for an engine never compiled in (its descriptor's `loaded` version), the static
    libraries `kvlab engines build` kept from that version's build."""
    where = native.build_config()["engines"].get(adapter)
    loaded = engines.DESCRIPTORS[adapter].loaded if adapter in engines.DESCRIPTORS else ""
    recipe = engines.DESCRIPTORS[adapter].versions.get(loaded) if loaded else None
    if recipe is not None and recipe.source == "go":
        return build_reference_go(adapter, recipe)
    if recipe is not None and recipe.source == "shim" and (ROOT / "kvlab" / "engines" / adapter / recipe.include
                                                           / "examples" / "reference.rs").is_file():
        return build_reference_shim(adapter, recipe)
    if where is None and loaded:
        return build_reference_loaded(adapter, f"{adapter}{engines.VERSION_MARK}{loaded}")
    if where is None:
        raise SystemExit(f"{adapter} is not built into kvlab: no library to compile its reference against")
    BUILD.mkdir(parents=True, exist_ok=True)
    out = BUILD / f"ref_{adapter}"
    src = REFERENCE / f"{adapter}.c"
    libs = [f"-L{where['libdir']}", f"-Wl,-rpath,{where['libdir']}"] if where["prefix"] != "/usr" else []
    libs += [f"-l{lib}" for lib in where["libraries"]]
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", f"-I{where['include']}", f"-I{REFERENCE}", str(src),
                    "-o", str(out), *libs, "-lpthread"], check=True)
    return out


def build_reference_loaded(adapter: str, version: str) -> Path:
    """The reference of an engine kvlab loads at run time, linked with the same static build of the engine."""
    from kvlab.execution.plugins import where as plugin_where
    folder = plugin_where.built(version)
    link = plugin_where.facts(version).get("source", {}).get("engine_link") if folder else None
    if link is None:
        raise SystemExit(f"{version} is not built (or was built before its engine's libraries were kept): "
                         f"`kvlab engines build {version}`")
    BUILD.mkdir(parents=True, exist_ok=True)
    out = BUILD / f"ref_{adapter}"
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", f"-I{link['include']}", f"-I{REFERENCE}",
                    str(REFERENCE / f"{adapter}.c"), "-o", str(out), "-Wl,--start-group",
                    *(str(folder / a) for a in link["archives"]), "-Wl,--end-group",
                    *(f"-l{lib}" for lib in link["libraries"]), "-lpthread"], check=True)
    return out


def build_reference_go(adapter: str, recipe) -> Path:
    """The reference of an engine in Go: the shim module's cmd/reference (the engine's documented path in plain Go,
    none of kvlab's code), built by the same Go from the same go.sum, named ref_<adapter> (its engine)."""
    shim = (ROOT / "kvlab" / "engines" / adapter / recipe.include).resolve()
    BUILD.mkdir(parents=True, exist_ok=True)
    out = BUILD / f"ref_{adapter}"
    subprocess.run(["go", "build", "-trimpath", "-o", str(out), "./cmd/reference"], cwd=shim, check=True,
                   env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"})
    return out


def build_reference_shim(adapter: str, recipe) -> Path:
    """The timed reference of an engine in Rust: its shim crate's examples/reference.rs (the engine's documented path
    in plain Rust, none of kvlab's code), built by cargo against the shim's Cargo.lock, named ref_<adapter>."""
    shim = ROOT / "kvlab" / "engines" / adapter / recipe.include
    target = BUILD / f"cargo-{adapter}"
    subprocess.run(["cargo", "build", "--release", "--locked", "--example", "reference", "--manifest-path",
                    str(shim / "Cargo.toml")], check=True, env={**os.environ, "CARGO_TARGET_DIR": str(target)})
    out = BUILD / f"ref_{adapter}"
    shutil.copy2(target / "release" / "examples" / "reference", out)
    return out


def reference_args(cfg, cache_size: int) -> list[str]:
    """The reference's options for a kvlab configuration: its variant, its default options string, the cache."""
    args = []
    if cfg.variant:
        args += ["--variant", cfg.variant]
    if cfg.defaults.get("options"):
        args += ["--options", str(cfg.defaults["options"])]
    if cache_size and "cache_size" in cfg.honours:
        args += ["--cache-size", str(cache_size)]
    return args


def kvlab_settings(cfg, cache_size: int) -> dict:
    """The engine settings kvlab's side is given (its configuration's defaults apply beneath them)."""
    settings = {"cache_size": cache_size} if cache_size and "cache_size" in cfg.honours else {}
    return {**settings, **KVLAB_EXTRA.get(cfg.adapter, {})}


def kvlab_args(cfg, cache_size: int) -> list[str]:
    return [a for k, v in kvlab_settings(cfg, cache_size).items() for a in ("--set", f"{k}={v}")]


def run_reference(binary, db, num, amount, threads, args, phase, seed):
    """One reference process: `amount` is reads per thread or "<seconds>s"; its JSON line for `phase`."""
    out = subprocess.run([str(binary), db, str(num), str(amount), str(threads), *args, "--phases", phase,
                          "--seed", str(seed)], check=True, capture_output=True, text=True)
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return next(d for d in lines if d["workload"] == phase)


def run_kvlab(name, db, num, threads, args, workload, seed, duration=0.0):
    """One `kvlab run` process; its record for `workload` (ops_per_sec, ops, found, seconds)."""
    with tempfile.TemporaryDirectory(prefix="kvlab-vsref-json-") as tmp:
        out = Path(tmp) / "r.json"
        cmd = [str(ROOT / ".venv/bin/kvlab") if (ROOT / ".venv/bin/kvlab").exists() else "kvlab", "run",
               "--engine", name, "--workload", workload, "--num", str(num), "--threads", str(threads), "--db", db,
               "--json", str(out), "--no-store", "--quiet", "--seed", str(seed), *args]
        if workload == "fillseq":
            cmd += ["--batch", "1000"]
        else:
            cmd += ["--use-existing-db", "--duration", str(duration)]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        records = json.loads(out.read_text())
    rec = next(r for r in records if r["workload"] == workload and r["phase"] == "run")
    return {"ops_per_sec": rec["ops_per_sec"], "ops": rec["ops"], "found": rec["found"], "seconds": rec["seconds"]}


def summary(xs):
    return {"median": median(xs), "min": min(xs), "max": max(xs), "values": xs}


def compare_engine(name, args, binary):
    """Load both sides, then the ABBA read rounds at each thread count; the rows for this configuration."""
    cfg = engines.get(name)
    ref_args = reference_args(cfg, args.cache_size)
    kv_args = kvlab_args(cfg, args.cache_size)
    ref_db = own_ref_db = tempfile.mkdtemp(prefix=f"vsref-ref-{name}-")
    kv_db = tempfile.mkdtemp(prefix=f"vsref-kvlab-{name}-")
    rows = []
    try:
        ref_fill = run_reference(binary, ref_db, args.num, 0, 1, ref_args, "fillseq", 1)
        config = ref_fill["config"]
        kv_fill = run_kvlab(name, kv_db, args.num, 1, kv_args, "fillseq", 1)
        if args.shared_db:   # the reference reads kvlab's database (its object or file named as kvlab names it)
            ref_db, ref_args = kv_db, ref_args + ["--object", "kvlab"]
        print(f"\n{name}: reference configuration: {config}")
        print(f"{name}: kvlab settings given: {' '.join(kv_args) or '(defaults)'}")
        print(f"{name}: fillseq (one load each, 1 thread): reference {ref_fill['ops_per_sec']:,.0f} ops/s, "
              f"kvlab {kv_fill['ops_per_sec']:,.0f} ops/s, {kv_fill['ops_per_sec'] / ref_fill['ops_per_sec']:.2f}x",
              flush=True)
        rows.append({"engine": name, "workload": "fillseq", "threads": 1, "config": config, "kvlab_args": kv_args,
                     "reference": summary([ref_fill["ops_per_sec"]]), "kvlab": summary([kv_fill["ops_per_sec"]]),
                     "ratio_of_medians": kv_fill["ops_per_sec"] / ref_fill["ops_per_sec"]})
        secs = f"{args.duration}s"
        if args.warmup:   # untimed: whatever the load left running settles, on both sides
            run_reference(binary, ref_db, args.num, f"{args.warmup}s", 1, ref_args, "readrandom", 7)
            run_kvlab(name, kv_db, args.num, 1, kv_args, "readrandom", 7, args.warmup)
        for threads in args.threads:
            ref, kv, paired = [], [], []
            for r in range(args.rounds):
                seed = 100 + r
                got = {}
                for side in (("reference", "kvlab") if r % 2 == 0 else ("kvlab", "reference")):
                    if side == "reference":
                        d = run_reference(binary, ref_db, args.num, secs, threads, ref_args, "readrandom", seed)
                    else:
                        d = run_kvlab(name, kv_db, args.num, threads, kv_args + shlex.split(args.kvlab_extra),
                                      "readrandom", seed, args.duration)
                    if d["found"] != d["ops"]:
                        raise SystemExit(f"{name} {side}: found {d['found']} of {d['ops']} reads")
                    got[side] = d["ops_per_sec"]
                ref.append(got["reference"])
                kv.append(got["kvlab"])
                paired.append(got["kvlab"] / got["reference"])
            row = {"engine": name, "workload": "readrandom", "threads": threads, "config": config,
                   "kvlab_args": kv_args, "reference": summary(ref), "kvlab": summary(kv),
                   "ratio_of_medians": median(kv) / median(ref), "paired": summary(paired)}
            rows.append(row)
            print_row(row, flush=True)
    finally:
        rm(own_ref_db)
        rm(kv_db)
    for row in rows:
        row["shared_db"] = args.shared_db
    return rows


def instructions(name, args, binary):
    """Instructions per get in the reading thread, under callgrind: the reference's thread (ref_read_thread) and
    kvlab's worker, each on the database its own side loaded, 1 thread, N and 2N gets: the difference over N,
    so what either side spends once cancels.  LMDB's map is 1 GiB on both sides (valgrind cannot map 64 GiB)."""
    from _common import callgrind_collected, under_callgrind
    cfg = engines.get(name)
    map_size = {"map_size": 1 << 30} if "map_size" in cfg.honours else {}
    ref_args = reference_args(cfg, args.cache_size) + (["--map-size", str(1 << 30)] if map_size else [])
    settings = {**kvlab_settings(cfg, args.cache_size), **map_size}
    ref_db = tempfile.mkdtemp(prefix=f"vsref-ir-ref-{name}-")
    kv_db = tempfile.mkdtemp(prefix=f"vsref-ir-kvlab-{name}-")
    env = dict(os.environ, PYTHONMALLOC="malloc")
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no"]
    n = args.instructions
    try:
        run_reference(binary, ref_db, args.num, 0, 1, ref_args, "fillseq", 1)
        kvlab.run(name, "fillseq", num=args.num, batch=1000, db=kv_db, seed=1, interval=0, **settings)
        # one read each first, outside valgrind: what the load left (an LSM's recovery flush, compactions) is done
        # before counting, since callgrind counts any thread's instructions while the toggle is on
        run_reference(binary, ref_db, args.num, "1s", 1, ref_args, "readrandom", 7)
        kvlab.run(name, "readrandom", num=args.num, duration=1, db=kv_db, use_existing_db=True, seed=7, **settings)

        def counted(done):
            if done.returncode != 0:
                raise SystemExit(f"{name}: the run under callgrind failed:\n{done.stderr[-2000:]}")
            return callgrind_collected(done.stderr)

        def ref_side(reads):
            return counted(subprocess.run(vg + ["--toggle-collect=ref_read_thread", str(binary), ref_db,
                                                str(args.num), str(reads), "1", *ref_args, "--phases", "readrandom"],
                                          capture_output=True, text=True, env=env))

        def kvlab_side(reads):
            code = (f"import kvlab; kvlab.run({name!r}, 'readrandom', num={args.num}, reads={reads}, db={kv_db!r}, "
                    f"use_existing_db=True, seed=1, **{settings!r})")
            return under_callgrind(code, "worker", native.with_static_tls_room(env))[0]   # the trial's worker

        r1, r2, k1, k2 = ref_side(n), ref_side(2 * n), kvlab_side(n), kvlab_side(2 * n)
    finally:
        rm(ref_db)
        rm(kv_db)
    ref, kv = (r2 - r1) / n, (k2 - k1) / n
    print(f"{name:<17} {ref:>12,.1f} {kv:>12,.1f} {(kv / ref - 1) * 100:>+8.2f}%", flush=True)
    return {"engine": name, "reference_per_get": ref, "kvlab_per_get": kv, "num": args.num, "gets": n}


HEADER = (f"{'engine':<17} {'thr':>3} {'reference ops/s (range)':>31} {'kvlab ops/s (range)':>31} "
          f"{'ratio':>6} {'paired (range)':>19}")


def print_row(row, flush=False):
    ref, kv, p = row["reference"], row["kvlab"], row["paired"]
    ok = "" if p["median"] >= TARGET else "  < target"
    print(f"{row['engine']:<17} {row['threads']:>3} "
          f"{ref['median']:>11,.0f} ({ref['min']:>8,.0f}-{ref['max']:>9,.0f}) "
          f"{kv['median']:>11,.0f} ({kv['min']:>8,.0f}-{kv['max']:>9,.0f}) "
          f"{row['ratio_of_medians']:>5.3f}x {p['median']:>6.3f}x ({p['min']:.3f}-{p['max']:.3f}){ok}", flush=flush)


def default_engines():
    """Every built configuration that stores data (the null engine has no reference)."""
    return [r["engine"] for r in kvlab.list_engines() if r["built"] and r["stores_data"]]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default=None, help="comma list of kvlab configurations (default: every built one)")
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--duration", type=float, default=3.0, help="seconds each side reads per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds of one untimed read per side (0: none)")
    ap.add_argument("--cache-size", type=int, default=256 << 20,
                    help="the cache both sides open with, where the engine has one (default 256 MiB)")
    ap.add_argument("--kvlab-extra", default="",
                    help="more `kvlab run` arguments for kvlab's read rounds, e.g. \"--interval 0\" (to find a cost)")
    ap.add_argument("--shared-db", action="store_true",
                    help="both sides read the one database kvlab loaded (the reference opens kvlab's object), so "
                         "what a load left behind (an LSM tree's merges and bloom filters) is the same on both")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    ap.add_argument("--instructions", type=int, default=0, metavar="N",
                    help="instead of timing: instructions per get of each side's reading thread under callgrind "
                         "(N and 2N gets, 1 thread; use a smaller --num, e.g. 100000)")
    args = ap.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",")]
    names = args.engines.split(",") if args.engines else default_engines()
    binaries = {}
    for name in names:
        adapter = engines.get(name).adapter
        if adapter not in binaries:
            binaries[adapter] = build_reference(adapter)
    if args.instructions:
        print(f"instructions per readrandom get in the reading thread (callgrind; num={args.num:,}, "
              f"{args.instructions:,} and {2 * args.instructions:,} gets, 1 thread)")
        print(f"{'engine':<17} {'reference':>12} {'kvlab':>12} {'kvlab +':>9}")
        rows = [instructions(name, args, binaries[engines.get(name).adapter]) for name in names]
        if args.json:
            Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))
        return rows
    print(f"kvlab vs reference loops: readrandom, num={args.num:,}, {args.duration:g} s a side a round, "
          f"{args.rounds} ABBA rounds, threads {args.threads}, cache {args.cache_size:,} bytes where the engine has "
          f"one; TMPDIR={os.environ.get('TMPDIR', tempfile.gettempdir())}"
          + (f"; kvlab's read rounds also get: {args.kvlab_extra}" if args.kvlab_extra else "")
          + ("; both sides read the database kvlab loaded" if args.shared_db else ""))
    rows = []
    for name in names:
        rows += compare_engine(name, args, binaries[engines.get(name).adapter])
    print(f"\nreadrandom, kvlab against the reference (target >= {TARGET:.2f}x)")
    print(HEADER)
    for row in rows:
        if row["workload"] == "readrandom":
            print_row(row)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
