"""kvlab's own C compiles warning-free at -Wall -Wextra (issue 35, item 5), as setup.py builds it: the driver
(cython_ext/src), every header on its own (cython_ext/include: each includes what it uses), each adapter built
into this kvlab (kvlab/engines/<name>/engine_<name>.c) with the include folders and the KV_HAVE_* and other
macros the build recorded, and the FUSE helper (cython_ext/tools/forgetfs.c).  Any warning fails, named with its
file and line.  -fsyntax-only: the front end's warnings, in seconds (the -O2 build adds the optimiser's, such as
-Wformat-truncation, in its own output).  Cython's output (cython_ext/_native.c, made by the build) is held to
the same flags apart, so a Cython upgrade that adds warnings shows as that, not as kvlab's."""
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

from kvlab import _native
from kvlab.execution import native

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["-Wall", "-Wextra", "-fsyntax-only"]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _build_flags() -> list[str]:
    """The include folders and macros of the extension's build (kvlab/_build_config.json), for the adapters
    compiled into it."""
    config = native.build_config()
    flags = [f"-I{config['generated_include']}"] if config.get("generated_include") else []
    flags.append(f"-I{ROOT / 'cython_ext/include'}")
    for name in _native.adapters():   # the built-in ones (null) have no library, so no entry in the config
        flags.append(f"-DKV_HAVE_{name.upper()}=1")
        where = config["engines"].get(name, {})
        if where.get("include"):
            flags.append(f"-I{where['include']}")
        flags += [f'-D{macro}="{value}"' for macro, value in where.get("defines", {}).items()]
    return flags


def _own_sources() -> list[Path]:
    built = set(_native.adapters())
    adapters = [p for p in sorted(ROOT.glob("kvlab/engines/*/engine_*.c")) if p.parent.name in built]
    return sorted(ROOT.glob("cython_ext/src/*.c")) + adapters


def _warnings(paths: list[Path], flags: list[str]) -> str:
    """What gcc says of `paths` (each compiled on its own; headers as C), in one run."""
    headers = [str(p) for p in paths if p.suffix == ".h"]
    sources = [str(p) for p in paths if p.suffix != ".h"] + (["-x", "c", *headers] if headers else [])
    done = subprocess.run(["gcc", *FLAGS, *flags, *sources], capture_output=True, text=True, cwd=ROOT, timeout=300)
    return (done.stderr + ("" if done.returncode == 0 else f"\n(gcc exited {done.returncode})")).strip()


def test_kvlabs_own_c_compiles_without_a_warning():
    headers = sorted(ROOT.glob("cython_ext/include/*.h")) + [ROOT / "cython_ext/src/loop.h"]
    files = _own_sources() + headers
    assert any(p.parent.name == "lmdb" for p in files), "no adapter found: is the extension built?"
    out = _warnings(files, _build_flags())
    assert not out, f"gcc -Wall -Wextra:\n{out}"


def test_forgetfs_compiles_without_a_warning():
    """cython_ext/tools/forgetfs.c, the FUSE helper kvlab.execution.crash.forgetfs builds on first use."""
    fuse = subprocess.run(["pkg-config", "--cflags", "fuse3"], capture_output=True, text=True) \
        if shutil.which("pkg-config") else None
    if fuse is None or fuse.returncode:
        pytest.skip("needs libfuse3-dev (scripts/setup.sh installs it) and pkg-config")
    out = _warnings([ROOT / "cython_ext/tools/forgetfs.c"], fuse.stdout.split())
    assert not out, f"gcc -Wall -Wextra:\n{out}"


def test_cythons_output_compiles_without_a_warning():
    generated = ROOT / "cython_ext/_native.c"
    if not generated.exists():
        pytest.skip("cython_ext/_native.c is made by the build (pip install -e .)")
    flags = _build_flags() + [f"-I{sysconfig.get_paths()['include']}"]
    out = _warnings([generated], flags)
    assert not out, f"Cython's _native.c under gcc -Wall -Wextra (setup.py builds it so):\n{out[-4000:]}"
