"""The crash tests' helpers in C (cython_ext/tools): each compiled on first use into a cache folder keyed by its
source's hash, so a changed source is a new build and two processes never see a half-written one."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[3] / "cython_ext" / "tools"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kvlab"


def compiled(source: Path, name: str, args: list, unavailable: type[Exception]) -> Path:
    """`source` compiled with gcc (or $CC) and `args` into the cache as `name`; `unavailable(message)` is raised
    when the source or a compiler is missing or it does not compile."""
    if not source.exists():
        raise unavailable(f"the {name} source {source} is missing (it comes with kvlab's checkout)")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir() / f"{source.stem}-{digest}" / name
    if target.exists():
        return target
    cc = shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")
    if not cc:
        raise unavailable(f"no C compiler to build {name}: install build-essential")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{name}-{os.getpid()}")
    out = subprocess.run([cc, "-O2", "-Wall", "-o", str(tmp), str(source), *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise unavailable(f"{name} did not compile: {out.stderr.strip()[-800:]}")
    os.replace(tmp, target)
    return target
