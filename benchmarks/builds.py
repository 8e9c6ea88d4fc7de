"""Debian's engine builds against the release builds of `make engines`, through kvlab, alternately.

Builds two copies of kvlab's extension into build/kvlab-variants/ (again whenever kvlab's
source changes): one against
Debian's libraries, one against engines-build/prefix/<engine>.  Each round then runs the same
`kvlab run` command line (fillseq then readrandom, same seed) in both, alternately, and the
script prints median ops/sec per build and release/Debian.

    python benchmarks/builds.py [--num 1000000] [--rounds 3] [--threads 1]
                                [--engines rocksdb,leveldb,wiredtiger-btree]
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from _common import ROOT, median

VARIANTS = ROOT / "build" / "kvlab-variants"
PREFIX = ROOT / "engines-build" / "prefix"
ADAPTER = {"rocksdb": "rocksdb", "rocksdb-tuned": "rocksdb", "leveldb": "leveldb",
           "wiredtiger-btree": "wiredtiger", "wiredtiger-lsm": "wiredtiger"}


def source_digest() -> str:
    """A hash of everything a variant is built from, so a stale copy is rebuilt, never measured."""
    h = hashlib.sha256()
    parts = [ROOT / "setup.py", ROOT / "pyproject.toml"]
    parts += sorted(p for d in ("kvlab", "cython_ext") for p in (ROOT / d).rglob("*")
                    if p.is_file() and p.suffix in (".py", ".pyx", ".pxd", ".c", ".h", ".json")
                    and not p.name.startswith("_build") and p.name != "_native.c")
    for p in parts:
        h.update(str(p.relative_to(ROOT)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build_variant(name: str, release: bool) -> str:
    """A copy of kvlab built against Debian's libraries or the release prefixes; returns its dir."""
    where = VARIANTS / name
    stamp, digest = where / "source-digest", source_digest()
    if not (where / "kvlab" / "_build_config.json").exists() or \
            not stamp.exists() or stamp.read_text() != digest:
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        for part in ("kvlab", "cython_ext", "setup.py", "pyproject.toml"):
            src = ROOT / part
            (shutil.copytree if src.is_dir() else shutil.copy)(src, where / part)
        for so in (where / "kvlab").glob("_native*.so"):
            so.unlink()
        env = {k: v for k, v in os.environ.items() if not (k.startswith("KVLAB_") and k.endswith("_PREFIX"))}
        if release:
            for engine in ("rocksdb", "leveldb", "wiredtiger"):
                if (PREFIX / engine / "build-info.json").exists():
                    env[f"KVLAB_{engine.upper()}_PREFIX"] = str(PREFIX / engine)
        print(f"building kvlab against {'release' if release else 'Debian'} libraries in {where}", flush=True)
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=where, env=env,
                       check=True, capture_output=True)
        stamp.write_text(digest)
    return str(where)


def run(variant_dir, engine, num, threads, seed):
    with tempfile.TemporaryDirectory(prefix="kvlab-builds-") as tmp:
        out = os.path.join(tmp, "r.json")
        env = {**os.environ, "PYTHONPATH": variant_dir}
        subprocess.run([sys.executable, "-m", "kvlab.cli", "run", "--engine", engine, "--workload",
                        "fillseq,readrandom", "--num", str(num), "--threads", str(threads), "--seed", str(seed),
                        "--interval", "0", "--json", out, "--no-store", "--progress", "off"],
                       env=env, check=True, capture_output=True, cwd=tmp)
        with open(out) as f:
            return [b for b in json.load(f) if b["phase"] == "run"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--num", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--engines", default="rocksdb,leveldb,wiredtiger-btree")
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if (PREFIX / ADAPTER.get(e, e) / "build-info.json").exists()]
    skipped = sorted(set(args.engines.split(",")) - set(engines))
    if skipped:
        print(f"no release build for {', '.join(skipped)} (run `make engines`); skipped")
    variants = {"Debian": build_variant("debian", False), "release": build_variant("release", True)}
    ops = {}     # (engine, variant, workload) -> [ops/s]
    facts = {}   # (engine, variant) -> build facts of the library measured
    for r in range(args.rounds):
        for engine in engines:
            order = list(variants.items()) if r % 2 == 0 else list(reversed(variants.items()))
            for vname, vdir in order:
                for b in run(vdir, engine, args.num, args.threads, seed=r + 1):
                    ops.setdefault((engine, vname, b["workload"]), []).append(b["ops_per_sec"])
                    facts[(engine, vname)] = {**b["versions"]["engine_build"],
                                              "version": b["versions"]["engine_library"]}
    print(f"\nkvlab run --workload fillseq,readrandom --num {args.num} --threads {args.threads}, "
          f"median of {args.rounds} alternated rounds")
    for engine in engines:
        for vname in variants:
            f = facts[(engine, vname)]
            print(f"  {engine} {vname}: {f.get('version')} from {f.get('origin')}, assertions "
                  f"{'ON' if f.get('assertions') else 'off'}, crc32 {f.get('crc32') or '-'}")
    print(f"\n{'engine':<18} {'workload':<11} {'Debian ops/s':>14} {'release ops/s':>14} {'release/Debian':>15}")
    for engine in engines:
        for wl in ("fillseq", "readrandom"):
            d, rel = median(ops[(engine, "Debian", wl)]), median(ops[(engine, "release", wl)])
            print(f"{engine:<18} {wl:<11} {d:>14,.0f} {rel:>14,.0f} {rel / d:>14.2f}x")


if __name__ == "__main__":
    main()
