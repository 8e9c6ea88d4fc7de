"""What crossing from kvlab's C into an engine's Rust costs per get (redb or fjall, each behind its shim crate), in
instructions (callgrind, repeatable where wall time on a shared 2-core VM is not).  kvlab's readrandom on the engine
(`kvlab engines build redb@VERSION` / `fjall@VERSION`) runs under callgrind twice, N and 2N gets on the same
database, and each function's inclusive count is read from the profile: the difference over N is its cost per get,
so what either run spends once (opening, the first reads of each page into the engine's cache) cancels out.  The Rust
side is a Rust program of the engine's own API on the same database (kvlab/engines/ENGINE/shim/examples/
reference_gets.rs, built here by cargo, about a minute): redb's ReadOnlyTable::get, fjall's Keyspace::get, and the
value read in place, counted the same way in its one function.

    python benchmarks/shim_crossing.py [--num 20000] [--engine redb|fjall]

Per get, from the outside in (redb's names; fjall's are fj_get, kvfjall_get, Keyspace::get):
  kvlab's loop       the driver's read loop (key, latency clock, histogram) and everything below it
  rd_get             the C adapter (engine_redb.c), called through kvlab's table of functions
  kvredb_get         the shim's extern "C" entry (shim/src/lib.rs): the panic guard, the snapshot check, the copy
                     of the value into the thread's buffer, the drop of the engine's guard, and below it
  Btree::get         the engine's own lookup inside it (redb's B-tree descent; fjall's Keyspace::get)
  a Rust program     the engine's get and the value read in place (reference_gets.rs's one_get)
The crossing is the adapter's get less the Rust program's get: the C adapter's own work, the call into Rust, and the
shim's.  Calls to malloc per get (the shim must make none) are counted from the same profiles.
"""
import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import kvlab
from kvlab import engines

ENGINES = Path(engines.__file__).resolve().parent

# per engine: (label, a regex matching the function's name as callgrind writes it) from the outside in, and the path
# its Rust program opens, from the database directory
SHIMS = {
    "redb": ((("kvlab's loop", r"^kv_loop_read$"),
              ("rd_get (C adapter)", r"^rd_get$"),
              ("kvredb_get (Rust entry)", r"^kvredb_get$"),
              ("Btree::get (redb)", r"^redb::tree_store::btree::Btree<K,V>::get$")),
             lambda db: Path(db) / "data.redb"),
    "fjall": ((("kvlab's loop", r"^kv_loop_read$"),
               ("fj_get (C adapter)", r"^fj_get$"),
               ("kvfjall_get (Rust entry)", r"^kvfjall_get$"),
               ("Keyspace::get (fjall)", r"^fjall::keyspace::Keyspace::get")),
              lambda db: Path(db)),
}
MALLOC = r"^(malloc|realloc|calloc)$"


def profile(path: Path) -> tuple[dict, int]:
    """{function: inclusive Ir} over the whole profile, and the calls to malloc, from a callgrind output file
    (its name compression undone; an inclusive cost is the function's own plus its calls', recursion counted once
    by taking only calls from other functions)."""
    names: dict[str, str] = {}
    own: dict[str, int] = defaultdict(int)
    called: dict[str, int] = defaultdict(int)
    mallocs = 0
    fn = cfn = None
    pending_call = None

    def name(ref: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", ref)
        if not m:
            return ref
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names[m.group(1)]

    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("fn="):
            fn = name(line[3:])
        elif line.startswith("cfn="):
            cfn = name(line[4:])
        elif line.startswith("calls="):
            pending_call = int(line[6:].split()[0])
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            cost = int(line.split()[1]) if len(line.split()) > 1 else 0
            if pending_call is not None:   # the line after calls=: the inclusive cost of that call
                if cfn != fn:
                    called[fn] += cost
                if re.match(MALLOC, cfn or ""):
                    mallocs += pending_call
                pending_call = None
            else:
                own[fn] += cost
    return {f: own[f] + called[f] for f in set(own) | set(called)}, mallocs


def run(engine: str, db: str, reads: int, num: int, out: Path) -> tuple[dict, int]:
    code = (f"import kvlab; kvlab.run({engine!r}, 'readrandom', num={num}, reads={reads}, db={db!r}, "
            f"use_existing_db=True, seed=1, interval=0, engine_stats=False)")
    # the trial runs in a worker process: the fork server, and so the worker, under callgrind (one out file each)
    vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p", "--collect-atstart=no",
          "--toggle-collect=worker", "--compress-strings=yes"]
    env = {**__import__("os").environ, "PYTHONMALLOC": "malloc", "KVLAB_WORKER_PREFIX": shlex.join(vg)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    outs = sorted(out.parent.glob(out.name + ".*"), key=lambda p: p.stat().st_size)
    if done.returncode != 0 or not outs:
        raise SystemExit(f"callgrind run failed:\n{done.stderr[-2000:]}")
    outs[-1].rename(out)   # the worker's (the server's counted nothing)
    for other in outs[:-1]:
        other.unlink()
    return profile(out)


def rust_side(adapter: str, db: str, num: int, work: Path) -> tuple[float, str]:
    """Instructions per get of the Rust program (N and 2N gets, the difference over N), and what it printed."""
    env = {**__import__("os").environ, "CARGO_TARGET_DIR": str(work / "target")}
    subprocess.run(["cargo", "build", "-q", "--release", "--locked", "--example", "reference_gets", "--manifest-path",
                    str(ENGINES / adapter / "shim" / "Cargo.toml")], check=True, env=env)
    binary = work / "target" / "release" / "examples" / "reference_gets"
    counts, said = [], ""
    for gets in (num, 2 * num):
        done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no",
                               "--toggle-collect=*one_get*", str(binary), str(SHIMS[adapter][1](db)), str(num),
                               str(gets)], capture_output=True, text=True)
        m = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or not m:
            raise SystemExit(f"the Rust side failed:\n{done.stderr[-2000:]}")
        counts.append(int(m.group(1)))
        said = done.stdout.strip()
    return (counts[1] - counts[0]) / num, said


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="redb", help="redb or fjall, or a version of one (redb@4.6.0)")
    ap.add_argument("--num", type=int, default=20_000, help="keys loaded, and gets in the first run (default 20,000)")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("needs valgrind (apt-get install valgrind)")
    adapter = engines.get(args.engine).adapter
    if adapter not in SHIMS:
        raise SystemExit(f"--engine {args.engine}: allowed: an engine behind a shim crate ({', '.join(SHIMS)})")
    functions = SHIMS[adapter][0]
    base = Path(tempfile.mkdtemp(prefix=f"kvlab-{adapter}-ir-"))
    try:
        db = str(base / "db")
        kvlab.run(args.engine, "fillseq", num=args.num, db=db, seed=1, interval=0)
        one, m1 = run(args.engine, db, args.num, args.num, base / "one.out")
        two, m2 = run(args.engine, db, 2 * args.num, args.num, base / "two.out")
        rust, said = rust_side(adapter, db, args.num, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    per = {}
    for label, pattern in functions:
        match = [f for f in two if re.match(pattern, f)]
        if not match:
            raise SystemExit(f"no function matching {pattern} in the profile (inlined, or a version that renamed it)")
        per[label] = (sum(two[f] for f in match) - sum(one.get(f, 0) for f in match)) / args.num
    loop, entry_c, entry, inner = (per[label] for label, _ in functions)
    print(f"{args.engine} readrandom, instructions per get in the measuring thread ({args.num:,} and "
          f"{2 * args.num:,} gets on {args.num:,} keys, 1 thread; the difference over {args.num:,}):")
    for label, value in per.items():
        print(f"  {label:<26}{value:>9,.1f}")
    print(f"  {'a Rust program (one_get)':<26}{rust:>9,.1f}   ({said})")
    c_get = functions[1][0].split()[0]
    print(f"  the crossing ({c_get} - the Rust program's get): {entry_c - rust:,.1f} "
          f"({(entry_c - rust) / entry_c * 100:.1f}% of {c_get}); the C adapter's own {entry_c - entry:,.1f}, the "
          f"shim's beside the engine's lookup {entry - inner:,.1f}, the Rust program's beside it {rust - inner:,.1f}")
    print(f"  kvlab's loop around the engine call: {loop - entry_c:,.1f}")
    print(f"  calls to malloc: {m1:,} in the {args.num:,}-get run, {m2:,} in the {2 * args.num:,}-get run: "
          f"{max(m2 - m1, 0) / args.num:.3f} per get")


if __name__ == "__main__":
    main()
