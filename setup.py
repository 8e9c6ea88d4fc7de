"""Build kvlab's native extension against whichever engine libraries are present.

Each engine's headers and library are looked up under a prefix, /usr by default,
overridable per engine at build time:

    KVLAB_LMDB_PREFIX, KVLAB_LEVELDB_PREFIX, KVLAB_ROCKSDB_PREFIX,
    KVLAB_WIREDTIGER_PREFIX, KVLAB_BDB_PREFIX, KVLAB_FDB_PREFIX

(a prefix holds include/ and lib/ or lib/x86_64-linux-gnu/).  KVLAB_ENGINES=lmdb,rocksdb
limits the build to those engines.  KVLAB_ROCKSDB_IE_PREFIX: a second static RocksDB of the same
source built with the initial-exec TLS model (`make engines`); the same module is then linked a
second time against it, as kvlab/_native_ie (kvlab.execution.native loads it where it can).  An engine
whose header or library is missing is left out; `kvlab engines` then names the Debian package that provides it.

The build also writes the package's own files: kvlab/_build_config.json (what was linked, for
`kvlab engines` and every result) into the build, and the checkout's folders that commands read
(notebooks/, data/reference/: kvlab._resources.SHIPPED) into the build as kvlab/_data/<name>.
Neither touches the checkout, except an in-place or editable build's _build_config.json.
"""
import ast
import json
import os
import re
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def literal(path, name):
    """A module-level literal assignment in one of kvlab's files, read without importing kvlab."""
    for node in ast.parse((ROOT / path).read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    raise RuntimeError(f"{path} defines no {name}")


# The adapters come from the engine registry (kvlab/model/engines.py's ADAPTERS), planned ones left out.
ADAPTERS = {name: row for name, row in literal("kvlab/model/engines.py", "ADAPTERS").items() if not row.get("planned")}
# name -> (header, library, extra libraries, adapter source), for each adapter built against a library
ENGINES = {name: (row["header"], row["library"], row.get("extra_libraries", []), f"engine_{name}.c")
           for name, row in ADAPTERS.items() if row.get("library")}
# adapters without a library, compiled into every build (the null engine: it measures the harness alone)
BUILT_IN = [name for name, row in ADAPTERS.items() if not row.get("library")]
LIB_SUBDIRS = ("lib/x86_64-linux-gnu", "lib64", "lib")
# What a static library (a local release build) needs linked beside it.
STATIC_DEPS = {name: row["static_deps"] for name, row in ADAPTERS.items() if row.get("static_deps")}


def find_engine(name, header, lib):
    prefix = Path(os.environ.get(f"KVLAB_{name.upper()}_PREFIX", "/usr"))
    inc = prefix / "include"
    if not (inc / header).exists():
        return None
    for sub in LIB_SUBDIRS:
        libdir = prefix / sub
        shared = (libdir / f"lib{lib}.so").exists()
        if shared or (libdir / f"lib{lib}.a").exists():
            return {"prefix": str(prefix), "include": str(inc), "libdir": str(libdir),
                    "linkage": "shared" if shared else "static"}
    return None


def rocksdb_version(inc):
    text = (Path(inc) / "rocksdb/version.h").read_text()
    parts = [re.search(rf"#define ROCKSDB_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def configure():
    wanted = os.environ.get("KVLAB_ENGINES")
    wanted = set(wanted.split(",")) if wanted else None
    sources = ["cython_ext/_native.pyx", "cython_ext/src/driver.c", "cython_ext/src/loops_dbbench.c",
               "cython_ext/src/loop_mix.c", "cython_ext/src/loop_crash.c", "cython_ext/src/names.c",
               "cython_ext/src/graph.c", "cython_ext/src/registry.c"]
    include_dirs, library_dirs, runtime_dirs, libraries, macros = ["cython_ext/include"], [], [], ["pthread", "m"], []
    found = {}
    for name in BUILT_IN:
        sources.append(f"kvlab/engines/{name}/engine_{name}.c")
        macros.append((f"KV_HAVE_{name.upper()}", "1"))
    for name, (header, lib, extra, src) in ENGINES.items():
        if wanted is not None and name not in wanted:
            continue
        if not (ROOT / "kvlab/engines" / name / src).exists():
            continue
        where = find_engine(name, header, lib)
        if where is None:
            print(f"kvlab build: {name} not found ({header}, lib{lib}); leaving it out", file=sys.stderr)
            continue
        found[name] = where
        macros.append((f"KV_HAVE_{name.upper()}", "1"))
        sources.append(f"kvlab/engines/{name}/{src}")
        if where["include"] != "/usr/include":
            include_dirs.append(where["include"])
        if where["prefix"] != "/usr":
            library_dirs.append(where["libdir"])
            runtime_dirs.append(where["libdir"])
        # what this engine links against, recorded for kvlab's build facts and the bare C benchmark
        where["libraries"] = [lib] + extra + (STATIC_DEPS.get(name, []) if where["linkage"] == "static" else [])
        libraries += where["libraries"]
        if name == "rocksdb":
            macros.append(("KV_ROCKSDB_VERSION", f'"{rocksdb_version(where["include"])}"'))
        if name == "wiredtiger":
            macros.append(("KV_WT_EXTDIR", f'"{where["libdir"]}"'))
    ie = initial_exec_rocksdb(found.get("rocksdb"))
    # Build facts the package reports in `kvlab engines` and in every result (written by BuildExt).
    BUILD_FACTS.update(engines=found, rocksdb_initial_exec=ie)
    module = dict(include_dirs=include_dirs, runtime_library_dirs=runtime_dirs, libraries=libraries,
                  define_macros=macros,
                  # a header edit rebuilds
                  depends=sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cython_ext/include").glob("*.h")),
                  extra_compile_args=["-O2", "-Wno-unused-function"],
                  # A static engine library's symbols stay inside the module: calls between its functions are then
                  # direct, not through the PLT, as in an executable such as db_bench (only PyInit__native is needed).
                  extra_link_args=["-Wl,--exclude-libs,ALL"])
    second = None
    if ie:   # the same module (the C Cython made of _native.pyx: its init is PyInit__native), linked against it
        dirs = [ie["libdir"] if d == found["rocksdb"]["libdir"] else d for d in library_dirs]
        second = Extension("kvlab._native_ie", sources=["cython_ext/_native.c"] + sources[1:], library_dirs=dirs,
                           **module)
    return Extension("kvlab._native", sources=sources, library_dirs=library_dirs, **module), second


def initial_exec_rocksdb(rocksdb):
    """KVLAB_ROCKSDB_IE_PREFIX's library, where the RocksDB found is a static one of the same version."""
    prefix = os.environ.get("KVLAB_ROCKSDB_IE_PREFIX")
    if not prefix or not rocksdb or rocksdb["linkage"] != "static":
        return None
    libdir = Path(prefix) / "lib"
    inc = Path(prefix) / "include"
    if not (libdir / "librocksdb.a").exists() or not (inc / "rocksdb/version.h").exists():
        print(f"kvlab build: no initial-exec RocksDB in {prefix}; leaving kvlab._native_ie out", file=sys.stderr)
        return None
    if rocksdb_version(inc) != rocksdb_version(rocksdb["include"]):
        print(f"kvlab build: the initial-exec RocksDB in {prefix} is not {rocksdb_version(rocksdb['include'])}; "
              "leaving kvlab._native_ie out", file=sys.stderr)
        return None
    return {"prefix": str(Path(prefix)), "libdir": str(libdir), "tls_model": "initial-exec"}


BUILD_FACTS: dict = {}


class BuildExt(build_ext):
    """The extension, then kvlab/_build_config.json beside it: in the build, and in the source
    where the extension goes there too (an editable install, `build_ext --inplace`)."""

    def run(self):
        super().run()
        text = json.dumps(BUILD_FACTS, indent=1) + "\n"
        for folder in [Path(self.build_lib, "kvlab")] + ([ROOT / "kvlab"] if self.inplace else []):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "_build_config.json").write_text(text)

    def get_outputs(self):
        return super().get_outputs() + [str(Path(self.build_lib, "kvlab", "_build_config.json"))]


def shipped_folders() -> dict:
    """kvlab._resources.SHIPPED (package-data name -> checkout folder), read without importing kvlab."""
    for node in ast.parse((ROOT / "kvlab/_resources.py").read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SHIPPED"]:
            return ast.literal_eval(node.value)
    raise RuntimeError("kvlab/_resources.py defines no SHIPPED")


class BuildPy(build_py):
    """The Python package, plus the checkout's folders that commands read, copied in as
    kvlab/_data/<name>.  An editable install builds nothing here: kvlab._resources reads the
    checkout's folders themselves."""

    def run(self):
        super().run()
        self.shipped = []
        if self.editable_mode:
            return
        for name, source in shipped_folders().items():
            files = [f for f in sorted((ROOT / source).rglob("*")) if f.is_file()
                     and not any(part.startswith(".") or part == "__pycache__" for part in f.relative_to(ROOT).parts)]
            if not files:
                raise RuntimeError(f"{ROOT / source} is missing or empty: kvlab's {name} cannot be packaged")
            for f in files:
                target = Path(self.build_lib, "kvlab", "_data", name, f.relative_to(ROOT / source))
                self.mkpath(str(target.parent))
                self.copy_file(str(f), str(target))
                self.shipped.append(str(target))

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + getattr(self, "shipped", [])


def extensions():
    from Cython.Build import cythonize
    main, second = configure()
    built = cythonize([main], language_level=3, compiler_directives={"embedsignature": True},
                      include_path=["cython_ext/include"])   # the .pxd files beside the headers
    return built + ([second] if second else [])


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt, "build_py": BuildPy})
