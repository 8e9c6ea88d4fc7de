"""Helpers shared by kvlab's own benchmarks: build the bare C loop, run kvlab, medians."""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# kvlab and engines are re-exported: the benchmark scripts import them from here
import kvlab  # noqa: E402,F401
from kvlab import engines  # noqa: E402,F401
from kvlab.execution import native  # noqa: E402

BARE = ROOT / "build" / "bare_loop"


def build_bare(initial_exec: bool = False) -> Path:
    """Compile benchmarks/bare_loop.c against the same adapters and libraries as the extension;
    `initial_exec`: against the initial-exec library (RocksDB) kvlab/_native_ie links (the module a process with
    room in glibc's static TLS loads), so both sides run the same library code."""
    config = native.build_config()
    built = config["engines"]
    ie = config.get("initial_exec") if initial_exec else None
    src = [ROOT / "benchmarks/bare_loop.c", ROOT / "cython_ext/src/registry.c"]
    flags = ["-O2", "-Wno-unused-function", f"-I{config['generated_include']}", f"-I{ROOT / 'cython_ext/include'}"]
    libs = []
    for name, where in built.items():
        src.append(ROOT / f"kvlab/engines/{name}/engine_{name}.c")
        src += [ROOT / f"kvlab/engines/{name}/{x}" for x in engines.ADAPTERS[name].get("extra_sources", [])]
        flags += [f"-DKV_HAVE_{name.upper()}=1", f"-I{where['include']}"]
        flags += [f'-D{macro}="{value}"' for macro, value in where.get("defines", {}).items()]
        libdir = ie["libdir"] if ie and name == ie.get("adapter") else where["libdir"]
        if where["prefix"] != "/usr":
            libs += [f"-L{libdir}", f"-Wl,-rpath,{libdir}"]
        libs += [f"-l{lib}" for lib in where["libraries"]]
    out = BARE.with_name(BARE.name + "_ie") if ie else BARE
    out.parent.mkdir(exist_ok=True)
    cmd = ["cc", *flags, *map(str, src), "-o", str(out), *libs, "-lpthread", "-lm"]
    subprocess.run(cmd, check=True)
    return out


def callgrind_collected(stderr: str) -> int:
    """The instruction count a callgrind run printed (`Collected : N`)."""
    m = re.search(r"Collected : (\d+)", stderr)
    if not m:
        raise SystemExit(f"callgrind collected nothing:\n{stderr[-2000:]}")
    return int(m.group(1))


def under_callgrind(code, toggle: str, env: dict, extra=(), cwd=None) -> tuple:
    """`python -c code` (or the command `code`, a list: a `kvlab` command) whose trial workers run under callgrind
    (kvlab's trials run in worker processes forked by a fork server: KVLAB_WORKER_PREFIX puts the server, and so
    each worker, under valgrind; the calling process is not, so the count is the worker's alone): (the
    instructions collected with `toggle` on, summed over the processes' logs, and the completed process)."""
    import glob
    import shlex
    import tempfile
    logs = tempfile.mkdtemp(prefix="kvlab-vg-")
    vg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--collect-atstart=no",
          f"--toggle-collect={toggle}", f"--log-file={logs}/vg.%p", *extra]
    argv = list(code) if isinstance(code, (list, tuple)) else [sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd,
                          env={**(env or os.environ), "KVLAB_WORKER_PREFIX": shlex.join(vg)})
    try:
        if done.returncode != 0:
            raise SystemExit(f"the run under callgrind failed:\n{done.stderr[-2000:]}")
        total = 0
        for path in glob.glob(f"{logs}/vg.*"):
            m = re.search(r"Collected : (\d+)", Path(path).read_text(errors="replace"))
            total += int(m.group(1)) if m else 0
        if not total:
            raise SystemExit(f"callgrind collected nothing in {toggle}")
        return total, done
    finally:
        rm(logs)


def fresh_dir(tag):
    return tempfile.mkdtemp(prefix=f"kvlab-bench-{tag}-", dir=os.environ.get("KVLAB_TMPDIR"))


def bare(adapter, variant, db, workload, num, reads, threads, seed):
    out = subprocess.run([str(BARE), adapter, variant or "-", db, workload, str(num), str(reads), str(threads),
                          str(seed)], check=True, capture_output=True, text=True)
    return {d["workload"]: d for d in map(json.loads, out.stdout.strip().splitlines())}


def median(xs):
    return statistics.median(xs)


def rm(path):
    shutil.rmtree(path, ignore_errors=True)
