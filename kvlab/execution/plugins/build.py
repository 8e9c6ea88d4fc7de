"""`kvlab engines build ADAPTER@VERSION`: a version of an engine, from its pinned recipe (the engine folder's
`versions`, kvlab.engines.descriptor.Recipe), as a shared object kvlab loads at run time.

The adapter is the engine folder's own C file, compiled as the extension compiles it, with the one line of
cython_ext/include/kv_plugin.h that exports its table.  The engine comes from:
  - "debian": the system's -dev package; the object links its shared library (the version Debian has).
  - "crate":  a crates.io -sys crate, as the one dependency of a throw-away Cargo package: cargo checks the crate's
    checksum against the one the recipe pins (before any build), its build script compiles the engine into static
    libraries, and the object links those in, every symbol but `kvlab_engine` kept inside (--exclude-libs and a
    version script), so that its calls bind to its own copy and two versions coexist in one process.
  - "shim":   a crate in the engine's folder (an engine written in Rust, behind a few `extern "C"` calls the adapter
    makes), whose committed Cargo.lock pins the engine's crate: the lock must hold the recipe's version and checksum,
    and cargo builds with --locked (checking what it downloads against the lock) into a static library, linked in
    as a crate's are.
  - "go":     a Go module (Pebble, Badger) pinned in the go.sum of kvlab's Go shim (kvlab/engines/_goshim: both Go
    engines behind the C calls of kvgo.h), whose hash there must be the recipe's; `go build -buildmode=c-shared`
    (-mod=readonly: the toolchain checks what it downloads against go.sum) makes one object, libkvgo.so, kept once
    per shim source and Go (GO_SHIM/<digest>/), which each Go engine's adapter links by its path: a process can host
    one Go runtime, so every Go engine in it must share that one object.
  - "debian-source": a Debian source package's upstream tarball, from Debian's archive (its .dsc names the tarball
    and its sha256, which must be the recipe's), built with CMake as a PyPI sdist is: the same version as a Debian
    package, built with the flags of the versions beside it (a version key "7.8.3+release": the label after "+"
    names the build; the library reports the part before it).
  - "pypi":   a PyPI sdist of the engine's source (WiredTiger publishes its whole source so), fetched from the URL
    PyPI's JSON API gives and checked against the recipe's sha256 before it is unpacked; a CMake Release build of
    the recipe's targets makes the static library, linked in as a crate's is, and any modules the engine loads by
    path (WiredTiger's snappy compressor), kept beside the object (engine/) with the adapter's `libdir` pointing there.
    A source that predates CMake (WiredTiger 3.x; the recipe's `configure`) is built with autotools instead, with
    the flags a CMake Release build gets (RELEASE_CFLAGS: -O3, NDEBUG, no -march), so that versions built either
    way are built alike.
What was built, from what and how, goes to build.json beside the object (kvlab.execution.plugins.where); every
result of a run on it carries those facts.  A crate's static libraries are kept beside the object too (engine/), with
its headers' folder in build.json (`engine_link`), so that a program of the engine's own (benchmarks/reference/) links
the same build of the engine."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import urllib.request
from pathlib import Path

from ... import engines, errors
from ..._version import __version__
from . import where

# the extension's (setup.py: -O2 last), with -g: debug information, which changes no generated code (GCC's rule),
# so that a profile (--profile, kvlab.execution.run.profiler) names the adapter's and the engine's functions and lines
CFLAGS = ["-DNDEBUG", "-O2", "-g", "-fPIC", "-fwrapv", "-Wall", "-Wextra"]
DEBUG_INFO = "-g"   # into the engine's own build too: a crate's (cargo's profile.release.debug) and CMake's
LIBDIR = Path("/usr/lib/x86_64-linux-gnu")
ROOT = Path(__file__).resolve().parents[3]                                # the checkout: cython_ext/include
ENGINE_DIR = "engine"   # beside a crate build's object: the engine's static libraries (build.json's source names them)
PYPI_JSON = "https://pypi.org/pypi/{package}/json"   # PyPI's JSON API: a project's releases, their files and sha256
TOOLS = {"debian": (), "crate": ("cargo",), "shim": ("cargo",), "pypi": ("cmake",), "go": ("go",),
         "debian-source": ("cmake",)}   # what each source needs beside gcc
AUTOTOOLS = ("autoreconf", "libtoolize", "make")   # what a recipe with `configure` needs instead of cmake
RELEASE_CFLAGS = "-O3 -DNDEBUG -g"   # an autotools build's CFLAGS: CMake's Release flags, with the -g every build has
GO_SHIM = "go-shim"   # beside the built versions: the Go shim's objects, one folder per shim source and Go


def recipe_of(native_name: str):
    """(adapter, version, its Recipe) for ADAPTER@VERSION, or a SpecError naming what can be built."""
    adapter, mark, version = native_name.partition(engines.VERSION_MARK)
    d = engines.DESCRIPTORS.get(adapter)
    recipes = d.versions if d is not None else {}
    if not mark or version not in recipes:
        can = [f"{a}{engines.VERSION_MARK}{v}" for a, dd in engines.DESCRIPTORS.items() for v in dd.versions]
        raise errors.SpecError(f"no recipe for {native_name!r}; kvlab can build: {', '.join(can) or 'nothing'}")
    return adapter, version, recipes[version]


def cannot_build_here(native_name: str) -> str | None:
    """Why this machine's toolchain cannot build ADAPTER@VERSION ("needs cargo, which is not on PATH", "needs Rust
    1.90 or newer; rustc here is 1.63.0"), or None.  Set-up skips such a version with this line (--where-possible)."""
    _, _, recipe = recipe_of(native_name)
    for tool in ("gcc",) + _tools(recipe):
        if shutil.which(tool) is None:
            return f"needs {tool}{_rust_words(recipe)}, which is not on PATH"
    if recipe.go:
        have = _go_version()
        if have is None or have[:2] < tuple(int(p) for p in recipe.go.split(".")):
            shown = ".".join(map(str, have)) if have else "unknown (go env GOVERSION failed)"
            return f"needs Go {recipe.go} or newer; go here is {shown}"
    if recipe.rust:
        have = _rustc_version()
        if have is None or have[:2] < tuple(int(p) for p in recipe.rust.split(".")):
            shown = ".".join(map(str, have)) if have else "unknown (rustc --version failed)"
            return f"needs Rust {recipe.rust} or newer; rustc here is {shown}"
    return None


def how_to_get(native_name: str) -> str:
    """The one line that says how to get a version set-up skipped."""
    _, _, recipe = recipe_of(native_name)
    tools = _tools(recipe)
    get = ("Rust from rustup (https://rustup.rs; Debian 12's own is 1.63)" if "cargo" in tools
           else f"Go {recipe.go} or newer (https://go.dev/dl; Debian 12's own golang is 1.19)" if "go" in tools
           else "cmake (apt-get install cmake)" if "cmake" in tools
           else "autotools (apt-get install autoconf automake libtool make)" if "autoreconf" in tools
           else "gcc (apt-get install build-essential)")
    return f"install {get}, then `kvlab engines build {native_name}`"


def _tools(recipe) -> tuple:
    """What building the recipe needs beside gcc: its source's tools, autotools' for a recipe with `configure`."""
    return AUTOTOOLS if recipe.configure else TOOLS[recipe.source]


def _rust_words(recipe) -> str:
    return (f" (Rust {recipe.rust} or newer)" if recipe.rust else f" (Go {recipe.go} or newer)" if recipe.go
            else "")


def _go_version() -> tuple | None:
    try:
        out = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "GOTOOLCHAIN": "local"}).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        return tuple(int(p) for p in out.removeprefix("go").split("rc")[0].split("."))
    except ValueError:
        return None


def _rustc_version() -> tuple | None:
    try:
        out = subprocess.run(["rustc", "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = out.split()
    try:
        return tuple(int(p) for p in parts[1].split("-")[0].split("."))
    except (IndexError, ValueError):
        return None


def build(native_name: str, *, log=lambda line: print(line, file=sys.stderr)) -> dict:
    """Build ADAPTER@VERSION into where.target() and return its facts (build.json).  A version already built is
    built again (its folder replaced only once the new one loads and reports the right version)."""
    adapter, version, recipe = recipe_of(native_name)
    source = Path(engines.__file__).resolve().parent / adapter / f"engine_{adapter}.c"
    include = ROOT / "cython_ext" / "include"
    if not source.is_file() or not (include / "kv_plugin.h").is_file():
        raise errors.KvlabError(f"building {native_name} needs kvlab's C sources ({source}, {include}): "
                                "build from a checkout of kvlab")
    why = cannot_build_here(native_name)
    if why:
        raise errors.KvlabError(f"building {native_name} {why}")
    home = where.target()
    work = home / ".work" / native_name
    shutil.rmtree(work, ignore_errors=True)   # kvlab's own scratch folder, made below
    work.mkdir(parents=True)
    log(f"kvlab engines build {native_name}: {recipe.source} {recipe.package}"
        f"{' ' + recipe.pin if recipe.pin else ''} (about {recipe.minutes:g} min here)")
    started = time.monotonic()
    headers, link, origin = SOURCES[recipe.source](adapter, recipe, work, log)
    home_of = home / native_name   # where the object goes: the folder its kept modules are loaded from
    libdir = home_of / ENGINE_DIR if origin.get("module_paths") else LIBDIR
    defines = {macro: value.format(version=version.split("+")[0], libdir=str(libdir))   # a label names the build
               for macro, value in engines.ADAPTERS[adapter].get("defines", {}).items()}
    staged = work / "out"
    staged.mkdir()
    library = staged / where.library_name(adapter)
    entry = work / "kvlab_entry.c"
    entry.write_text(f'#include "kv_plugin.h"\nextern const kv_engine_ops kv_engine_{adapter};\n'
                     f"KV_PLUGIN(kv_engine_{adapter})\n")
    script = work / "exports.map"
    script.write_text("{ global: kvlab_engine; local: *; };\n")
    command = (["gcc", "-shared", *CFLAGS, f"-I{include}", f"-I{headers}"]
               + [f'-D{m}="{v}"' for m, v in defines.items()]
               + [str(source), *(str(source.parent / x) for x in engines.ADAPTERS[adapter].get("extra_sources", [])),
                  str(entry), "-o", str(library), "-Wl,--no-undefined", "-Wl,--exclude-libs,ALL",
                  f"-Wl,--version-script={script}", *link, "-lpthread", "-lm"])
    _run(command, cwd=work, log=log)
    name, reported = _load_check(native_name, library, version)
    if "archive_paths" in origin:   # the engine's own static libraries, kept for a program of its own to link
        kept = staged / ENGINE_DIR   # (benchmarks/vs_reference.py's independent loop): origin's `engine_link`
        kept.mkdir()
        for archive in origin.pop("archive_paths") + origin.pop("module_paths", []):
            shutil.copy2(archive, kept / Path(archive).name)
        if "header_dir" in origin:   # a build folder's headers, gone with the work folder: kept too
            shutil.copytree(origin.pop("header_dir"), kept / "include")
            origin["engine_link"]["include"] = str(home_of / ENGINE_DIR / "include")
    facts = {
        "engine": native_name, "adapter": adapter, "version": version, "reported_version": reported,
        "table": name, "source": origin, "compiler": _first_line(["gcc", "--version"]), "cflags": CFLAGS,
        "defines": defines, "link": link, "adapter_source": str(source),
        "adapter_sha256": hashlib.sha256(source.read_bytes()).hexdigest(), "kvlab_version": __version__,
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(time.monotonic() - started, 1),
        "linkage": "shared" if recipe.source in ("debian", "go") else "static",
    }
    if recipe.source != "debian":   # found once here, so that no trial scans a library of hundreds of megabytes
        facts["assertions"] = _assertions(adapter, staged / where.library_name(adapter))
    (staged / where.FACTS).write_text(json.dumps(facts, indent=1) + "\n")
    final = home_of
    old = home / ".work" / f"{native_name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    staged.rename(final)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    log(f"built {native_name} in {facts['seconds']:.0f} s: {final / where.library_name(adapter)} "
        f"(reports {reported})")
    if recipe.source == "go":
        prune_go_shims(home, log)
    return facts


def prune_go_shims(home: Path, log=lambda line: None) -> list:
    """Remove the Go shim's objects in home/GO_SHIM that no built Go engine links any more (a shim built from
    another source or Go, once every Go engine is built again from this one): 30 MB each.  Only folders named as
    _go builds them (16 hex digits) are touched; returns those removed."""
    shims = home / GO_SHIM
    if not shims.is_dir():
        return []
    linked = {Path(where.facts(name).get("source", {}).get("go_object", "")).parent for name in where.every_built()}
    removed = []
    for folder in sorted(shims.iterdir()):
        if folder.is_dir() and re.fullmatch(r"[0-9a-f]{16}", folder.name) and folder not in linked:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    if removed:
        log(f"removed {len(removed)} Go shim object(s) no built engine links: {', '.join(removed)}")
    return removed


def _assertions(adapter: str, library: Path) -> bool | None:
    """Whether the built object's engine has assertions compiled in: the engine's own probe where it has one
    (descriptor.BuildFacts.assertions_of_library), else an import of glibc's __assert_fail."""
    from ..host.buildfacts import _has_assertions
    probe = engines.DESCRIPTORS[adapter].facts.assertions_of_library
    return probe(str(library)) if probe is not None else _has_assertions(str(library))


def _debian(adapter: str, recipe, work: Path, log) -> tuple[Path, list[str], dict]:
    row = engines.ADAPTERS[adapter]
    header = Path("/usr/include") / row["header"]
    if not header.is_file():
        raise errors.KvlabError(f"{header} is missing: install {recipe.package} (apt-get install {recipe.package})")
    package_version = _first_line(["dpkg-query", "-W", "-f=${Version}", recipe.package])
    shared = (LIBDIR / f"lib{row['library']}.so").resolve()
    return (header.parent, [f"-l{row['library']}", *(f"-l{x}" for x in row.get("extra_libraries", []))],
            {"kind": "debian", "package": recipe.package, "package_version": package_version,
             "engine_library": str(shared)})


def _crate(adapter: str, recipe, work: Path, log) -> tuple[Path, list[str], dict]:
    """Fetch and build the crate with cargo; (its headers, what to link, the source's facts)."""
    features = f", features = {json.dumps(list(recipe.features))}" if recipe.features else ""
    (work / "Cargo.toml").write_text(
        '[package]\nname = "kvlab-engine-source"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        '[lib]\npath = "lib.rs"\n\n[workspace]\n\n'
        f'[dependencies]\n{recipe.package} = {{ version = "={recipe.pin}"{features} }}\n')
    (work / "lib.rs").write_text(f"// only to have cargo build {recipe.package}\n")
    # debug information in the engine's objects (the cc crate adds -g when cargo's profile asks for it): its
    # symbols and inlined frames in a profile; the code is the same
    env = {**os.environ, "CARGO_TARGET_DIR": str(work / "target"), "CARGO_PROFILE_RELEASE_DEBUG": "true"}
    _run(["cargo", "generate-lockfile", "-q"], cwd=work, log=log, env=env)
    lock = tomllib.loads((work / "Cargo.lock").read_text())
    got = next((p.get("checksum") for p in lock.get("package", []) if p["name"] == recipe.package), None)
    if got != recipe.sha256:
        raise errors.KvlabError(f"{recipe.package} {recipe.pin}: crates.io's checksum is {got}, the recipe pins "
                                f"{recipe.sha256}; nothing was built")
    out = _run(["cargo", "build", "--release", "--message-format=json-render-diagnostics"], cwd=work, log=log,
               env=env, keep=True)
    out_dirs = [Path(m["out_dir"]) for m in map(json.loads, filter(None, out.splitlines()))
                if m.get("reason") == "build-script-executed"]
    archives = sorted(str(a) for d in out_dirs for a in d.rglob("*.a"))
    if not any(Path(a).name == f"lib{recipe.library}.a" for a in archives):
        raise errors.KvlabError(f"{recipe.package}'s build made no lib{recipe.library}.a (found: {archives})")
    meta = json.loads(_run(["cargo", "metadata", "--format-version", "1"], cwd=work, log=log, env=env, keep=True))
    manifest = next(Path(p["manifest_path"]) for p in meta["packages"] if p["name"] == recipe.package)
    headers = manifest.parent / recipe.include
    return (headers, ["-Wl,--start-group", *archives, "-Wl,--end-group", *(f"-l{x}" for x in recipe.link)],
            {"kind": "crate", "crate": recipe.package, "crate_version": recipe.pin, "sha256": recipe.sha256,
             "cargo_profile": {"release.debug": True},
             "features": list(recipe.features), "archives": [Path(a).name for a in archives],
             "engine_link": {"include": str(headers), "archives": [f"{ENGINE_DIR}/{Path(a).name}" for a in archives],
                             "libraries": list(recipe.link)},
             "archive_paths": archives})


def _shim(adapter: str, recipe, work: Path, log) -> tuple[Path, list[str], dict]:
    """Build the shim crate in the engine's folder (recipe.include) with cargo, its Cargo.lock as committed; (the
    shim's folder, for its header; what to link; the source's facts)."""
    shim = Path(engines.__file__).resolve().parent / adapter / recipe.include
    lock = tomllib.loads((shim / "Cargo.lock").read_text())
    locked = next((p for p in lock.get("package", []) if p["name"] == recipe.package), {})
    if (locked.get("version"), locked.get("checksum")) != (recipe.pin, recipe.sha256):
        raise errors.KvlabError(f"{shim / 'Cargo.lock'} pins {recipe.package} {locked.get('version')} (sha256 "
                                f"{locked.get('checksum')}), the recipe {recipe.pin} ({recipe.sha256}); nothing was built")
    env = {**os.environ, "CARGO_TARGET_DIR": str(work / "target"),   # nothing is written into the shim's folder
           "CARGO_PROFILE_RELEASE_DEBUG": "true"}
    _run(["cargo", "build", "--release", "--locked", "--manifest-path", str(shim / "Cargo.toml")], cwd=work, log=log,
         env=env)
    archive = work / "target" / "release" / f"lib{recipe.library}.a"
    if not archive.is_file():
        raise errors.KvlabError(f"the shim's build made no {archive.name}")
    files = sorted(p for p in shim.rglob("*") if p.is_file() and "target" not in p.relative_to(shim).parts)
    digest = hashlib.sha256(b"".join(p.relative_to(shim).as_posix().encode() + b"\0" + p.read_bytes() for p in files))
    return (shim, ["-Wl,--start-group", str(archive), "-Wl,--end-group", *(f"-l{x}" for x in recipe.link)],
            {"kind": "shim", "shim": str(shim.relative_to(ROOT)) if shim.is_relative_to(ROOT) else str(shim),
             "shim_sha256": digest.hexdigest(), "crate": recipe.package, "crate_version": recipe.pin,
             "sha256": recipe.sha256, "archives": [archive.name]})


def _go_digest(shim: Path) -> tuple[str, str]:
    """(the Go here, the digest of the shim's files and that Go): a built Go engine made from another is stale."""
    go = ".".join(map(str, _go_version() or ("unknown",)))
    files = sorted(p for p in shim.rglob("*") if p.is_file() and "cmd" not in p.relative_to(shim).parts
                   and (p.suffix in (".go", ".s", ".mod", ".sum") or p.name == "kvgo.h"))   # what go build reads
    return go, hashlib.sha256(go.encode() + b"\0" + b"".join(
        p.relative_to(shim).as_posix().encode() + b"\0" + p.read_bytes() for p in files)).hexdigest()


def stale(native_name: str) -> str | None:
    """Why a built version must be built again although it is there, or None: a Go engine built against another
    build of the Go shim than this checkout's (its source or the Go here changed), since every Go engine in a process
    must link the same one object."""
    adapter, _, recipe = recipe_of(native_name)
    if recipe.source != "go":
        return None
    made = where.facts(native_name).get("source", {})
    _, digest = _go_digest((Path(engines.__file__).resolve().parent / adapter / recipe.include).resolve())
    if made.get("shim_sha256") != digest or not Path(made.get("go_object", "")).is_file():
        return "built against another build of the Go shim"
    return None


def _go(adapter: str, recipe, work: Path, log) -> tuple[Path, list[str], dict]:
    """Build the Go shim (recipe.include, from the engine's folder) into its one shared object, or find it built
    from the same source by the same Go; (the shim's folder, for kvgo.h; what to link; the source's facts)."""
    shim = (Path(engines.__file__).resolve().parent / adapter / recipe.include).resolve()
    line = f"{recipe.package} v{recipe.pin} h1:"
    held = [x.split()[2][3:] for x in (shim / "go.sum").read_text().splitlines() if x.startswith(line)]
    got = base64.b64decode(held[0]).hex() if held else None
    if got != recipe.sha256:
        raise errors.KvlabError(f"{shim / 'go.sum'} pins {recipe.package} v{recipe.pin} as {got}, not the recipe's "
                                f"{recipe.sha256}")
    go, digest = _go_digest(shim)
    home = where.target() / GO_SHIM / digest[:16]
    library = home / f"lib{recipe.library}.so"
    if not library.is_file():   # built once for both Go engines: their adapters must share one Go runtime
        log(f"building the Go shim ({shim.name}, Go {go}) into {home}")
        staged = work / "go-out"
        staged.mkdir()
        env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local", "CGO_ENABLED": "1"}
        _run(["go", "build", "-buildmode=c-shared", "-trimpath", "-o", str(staged / library.name), "."], cwd=shim,
             log=log, env=env)
        (staged / library.with_suffix(".h").name).unlink(missing_ok=True)   # cgo's header: kvgo.h is the one used
        home.parent.mkdir(parents=True, exist_ok=True)
        try:
            staged.rename(home)
        except OSError:   # built meanwhile by another build (the other Go engine's)
            if not library.is_file():
                raise
    return (shim, [f"-L{home}", f"-l{recipe.library}", f"-Wl,-rpath,{home}"],
            {"kind": "go", "shim": str(shim.relative_to(ROOT)) if shim.is_relative_to(ROOT) else str(shim),
             "shim_sha256": digest, "module": recipe.package, "module_version": recipe.pin, "go": go,
             "go_object": str(library), "go_flags": ["-buildmode=c-shared", "-trimpath", "-mod=readonly"]})


def _pypi(adapter: str, recipe, work: Path, log) -> tuple[Path, list[str], dict]:
    """Fetch the sdist, check its sha256, build it with CMake; (its headers, what to link, the source's facts)."""
    index = json.loads(_fetch(PYPI_JSON.format(package=recipe.package), recipe))
    sdists = {v: [f for f in fs if f.get("packagetype") == "sdist"] for v, fs in index.get("releases", {}).items()}
    if not sdists.get(recipe.pin):
        raise errors.KvlabError(f"PyPI has no sdist of {recipe.package} {recipe.pin} (releases with one: "
                                f"{', '.join(v for v, fs in sdists.items() if fs) or 'none'})")
    url, name = sdists[recipe.pin][0]["url"], sdists[recipe.pin][0]["filename"]
    data = _fetch(url, recipe)
    got = hashlib.sha256(data).hexdigest()
    if got != recipe.sha256:
        raise errors.KvlabError(f"{recipe.package} {recipe.pin}: the sdist {name} has sha256 {got}, the recipe pins "
                                f"{recipe.sha256}; nothing was built")
    archive = work / name
    archive.write_bytes(data)
    with tarfile.open(archive) as tar:
        tar.extractall(work / "src", filter="data")
    headers, link, facts = _release_build(work / "src", name, recipe, work, log, got)
    return (headers, link, {"kind": "pypi", "project": recipe.package, "version": recipe.pin, "sha256": recipe.sha256,
                            "sdist": name, "url": url, **facts})


def _release_build(src: Path, name: str, recipe, work: Path, log, got: str) -> tuple[Path, list[str], dict]:
    """The unpacked source's release build: autotools where the recipe gives `configure`, else CMake."""
    if recipe.configure:
        return _autotools(_top(src, name, ("configure.ac", "autogen.sh", "build_posix/reconf")), recipe, work, log, got)
    return _cmake(_top(src, name, ("CMakeLists.txt",)), recipe, work, log, got)


def _top(src: Path, name: str, marks: tuple) -> Path:
    tops = [p for p in src.iterdir() if any((p / m).is_file() for m in marks)]
    if len(tops) != 1:
        raise errors.KvlabError(f"{name} has no single top folder with a {' or '.join(marks)} (found {tops})")
    return tops[0]


def _autotools(top: Path, recipe, work: Path, log, got: str) -> tuple[Path, list[str], dict]:
    """An autotools build of the recipe's make targets in `top` (its own autogen.sh, else autoreconf; then
    ./configure with the recipe's options in a build folder), CFLAGS RELEASE_CFLAGS; (its headers, what to link, the
    build's facts, as _cmake's)."""
    log(f"sha256 checked ({got}); autotools build of {', '.join(recipe.targets)} ({RELEASE_CFLAGS})")
    _run(["sh", "autogen.sh"] if (top / "autogen.sh").is_file() else ["autoreconf", "-fi"], cwd=top, log=log)
    built = work / "autotools-build"
    built.mkdir()
    env = {**os.environ, "CFLAGS": RELEASE_CFLAGS, "CXXFLAGS": RELEASE_CFLAGS}
    _run([str(top / "configure"), *recipe.configure], cwd=built, log=log, env=env)
    jobs = _jobs()
    for target in recipe.targets:   # "dir/name": a recursive make's subdirectory's target, made there
        folder, _, name = target.rpartition("/")
        _run(["make", "-j", jobs, name], cwd=built / folder, log=log, env=env)
    archives = sorted(str(a) for a in built.rglob(f"lib{recipe.library}.a"))
    if not archives:
        raise errors.KvlabError(f"{recipe.package}'s autotools build made no lib{recipe.library}.a")
    modules = sorted(str(m) for m in built.rglob("lib*.so") if m.is_file() and m.parent.name == ".libs"
                     and m.name != f"lib{recipe.library}.so")
    return _made(built / recipe.include if (built / recipe.include).is_dir() else top / recipe.include, recipe,
                 archives, modules, {"build_system": "autotools", "configure": list(recipe.configure),
                                     "compile_flags": _make_flags(built)})


def _jobs() -> str:
    """A source build's parallel jobs: CMAKE_BUILD_PARALLEL_LEVEL, else CARGO_BUILD_JOBS, else every CPU."""
    return os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or os.environ.get("CARGO_BUILD_JOBS") or str(os.cpu_count())


def _make_flags(built: Path) -> str:
    """The flags an autotools build's compiler saw, as its Makefile gives them: CPPFLAGS, AM_CFLAGS and CFLAGS."""
    try:
        text = (built / "Makefile").read_text()
    except OSError:
        return ""
    values = {}
    for line in text.splitlines():
        name, eq, value = line.partition(" = ")
        if eq and name in ("CPPFLAGS", "AM_CFLAGS", "CFLAGS"):
            values[name] = value.strip()
    return " ".join(values.get(n, "") for n in ("CPPFLAGS", "AM_CFLAGS", "CFLAGS")).strip()


def _cmake(top: Path, recipe, work: Path, log, got: str) -> tuple[Path, list[str], dict]:
    """A CMake Release build of the recipe's targets in `top`; (its headers, what to link, the build's facts)."""
    built = work / "cmake-build"
    log(f"sha256 checked ({got}); CMake Release build of {', '.join(recipe.targets)}")
    debug = [f"-DCMAKE_C_FLAGS={DEBUG_INFO}", f"-DCMAKE_CXX_FLAGS={DEBUG_INFO}"]   # Release's -O and NDEBUG kept
    _run(["cmake", "-S", str(top), "-B", str(built), "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
          *debug, *recipe.cmake], cwd=work, log=log)
    jobs = _jobs()
    _run(["cmake", "--build", str(built), "-j", jobs, "--target", *recipe.targets], cwd=work, log=log)
    archives = sorted(str(a) for a in built.rglob(f"lib{recipe.library}.a"))
    if not archives:
        raise errors.KvlabError(f"{recipe.package}'s CMake build made no lib{recipe.library}.a")
    modules = sorted(str(m) for m in built.rglob("lib*.so") if m.is_file() and "CMakeFiles" not in m.parts)
    headers = built / recipe.include if (built / recipe.include).is_dir() else top / recipe.include   # made, or source
    return _made(headers, recipe, archives, modules,
                 {"build_system": "CMake Release", "cmake": ["-DCMAKE_BUILD_TYPE=Release", *debug, *recipe.cmake],
                  "compile_flags": _compile_flags(built)})


def _made(headers: Path, recipe, archives: list, modules: list, how: dict) -> tuple[Path, list[str], dict]:
    """What a source build made, as _pypi and _debian_source return it: its headers, what to link (the static
    libraries as one group, then the recipe's libraries) and the build's facts (`how` first)."""
    return (headers, ["-Wl,--start-group", *archives, "-Wl,--end-group", *(f"-l{x}" for x in recipe.link)],
            {**how, "targets": list(recipe.targets), "archives": [Path(a).name for a in archives],
             "modules": [Path(m).name for m in modules],
             "engine_link": {"include": str(headers), "archives": [f"{ENGINE_DIR}/{Path(a).name}" for a in archives],
                             "libraries": list(recipe.link)},
             "archive_paths": archives, "module_paths": modules, "header_dir": str(headers)})


def _compile_flags(built: Path) -> str:
    """The flags one C++ file of the build was compiled with (compile_commands.json), or one C file's in a C engine
    (WiredTiger): what the build's -O level, NDEBUG and -march were, as the compiler saw them."""
    try:
        commands = json.loads((built / "compile_commands.json").read_text())
    except (OSError, ValueError):
        return ""
    for c in sorted(commands, key=lambda c: not c.get("file", "").endswith(".cc")):   # C++ first, then C
        if c.get("file", "").endswith((".cc", ".c")):
            words = c.get("command", "").split()
            return " ".join(w for w in words[1:] if w.startswith(("-O", "-D", "-m", "-f", "-g", "-std")))
    return ""


DEBIAN_POOL = "http://deb.debian.org/debian/pool/main/{initial}/{source}/"   # Debian's archive: its source packages


def _debian_source(adapter: str, recipe, work: Path, log) -> tuple[Path, list[str], dict]:
    """Fetch a Debian source package's upstream tarball (its .dsc from Debian's archive names it and its sha256,
    which must be the recipe's), build it with CMake as a PyPI sdist is; (its headers, what to link, the facts)."""
    source = recipe.package
    pool = DEBIAN_POOL.format(initial=source[:4] if source.startswith("lib") else source[0], source=source)
    dsc_name = f"{source}_{recipe.pin}.dsc"
    dsc = _fetch(pool + dsc_name, recipe).decode(errors="replace")
    listed = dsc.split("Checksums-Sha256:", 1)[-1].split("\n")
    origs = [line.split() for line in listed[1:] if line.startswith(" ") and ".orig.tar." in line]
    if not origs:
        raise errors.KvlabError(f"{pool}{dsc_name} names no upstream tarball (.orig.tar.*) under Checksums-Sha256")
    said, _, name = origs[0][:3]
    if said != recipe.sha256:
        raise errors.KvlabError(f"{dsc_name} gives {name} sha256 {said}, the recipe pins {recipe.sha256}; nothing was "
                                "built")
    data = _fetch(pool + name, recipe)
    got = hashlib.sha256(data).hexdigest()
    if got != recipe.sha256:
        raise errors.KvlabError(f"{name} has sha256 {got}, the recipe and {dsc_name} pin {recipe.sha256}; nothing was "
                                "built")
    (work / name).write_bytes(data)
    with tarfile.open(work / name) as tar:
        tar.extractall(work / "src", filter="data")
    headers, link, facts = _release_build(work / "src", name, recipe, work, log, got)
    return (headers, link, {"kind": "debian-source", "source_package": source, "debian_version": recipe.pin,
                            "upstream": name, "sha256": recipe.sha256, "url": pool + name, **facts})


def _fetch(url: str, recipe) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as got:
            return got.read()
    except OSError as e:
        raise errors.KvlabError(f"fetching {recipe.package} {recipe.pin} from {url} failed: {e}") from e


SOURCES = {"debian": _debian, "crate": _crate, "shim": _shim, "pypi": _pypi, "go": _go,
           "debian-source": _debian_source}   # a Recipe's source: how its engine is got


def _load_check(native_name: str, library: Path, version: str) -> tuple[str, str]:
    """Load the new object in a child process (this one may hold another build of it) and read what it reports."""
    code = ("import sys, kvlab.execution.native as n; lib = n.load(); "
            "print(*lib.load_adapter(sys.argv[1], sys.argv[2]), sep='\\n')")
    got = subprocess.run([sys.executable, "-c", code, f"{native_name}.check", str(library)], capture_output=True,
                         text=True)
    if got.returncode != 0:
        raise errors.KvlabError(f"the built {native_name} does not load: {got.stderr.strip().splitlines()[-1:]}")
    name, reported = got.stdout.split()
    if reported != version.split("+")[0]:   # "7.8.3+release": a build of 7.8.3 made another way (a label after +)
        raise errors.KvlabError(f"the built {native_name} reports version {reported}, not {version}: the recipe's "
                                f"source is not that version; nothing was installed")
    return name, reported


def _run(command: list[str], *, cwd: Path, log, env=None, keep=False) -> str:
    got = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if got.returncode != 0:
        tail = "\n".join((got.stderr or got.stdout).strip().splitlines()[-15:])
        raise errors.KvlabError(f"`{' '.join(command[:3])} ...` failed ({got.returncode}):\n{tail}")
    return got.stdout if keep else ""


def _first_line(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return ""
