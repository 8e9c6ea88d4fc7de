"""Facts about the engine builds a result was measured on.

A comparison made on a library built with assertions (Debian's RocksDB 7.8.3 and
LevelDB keep theirs) or without hardware CRC32 misleads, so every result says,
for its engine: the library file, where it came from (a Debian package and its
version, or a local build under a prefix), whether assertions are compiled in
(the library imports __assert_fail), the CRC32 implementation where the engine
reports it, and the compiler flags where known.

Everything here starts from a library file's path (kvlab.execution.native finds the file a
configuration uses); nothing here knows the engine registry.
"""
from __future__ import annotations

import json
import re
import subprocess
from functools import lru_cache
from pathlib import Path

from ... import engines
from ..._scan import holds


def mapped_library(lib: str) -> str | None:
    """The file this process has mapped for library `lib` (liblmdb.so.0, libdb-5.3.so, ...),
    not its look-alikes (libdbus-1, libwiredtiger_snappy)."""
    try:
        for line in Path("/proc/self/maps").read_text().splitlines():
            fields = line.split()
            name = Path(fields[-1]).name if len(fields) >= 6 else ""
            if name.startswith((f"lib{lib}.so", f"lib{lib}-")) and ".so" in name:
                return fields[-1]
    except OSError:
        pass
    return None


@lru_cache(maxsize=None)   # dpkg-query reads dpkg's whole database: a second or more on a busy machine
def _debian_package(path: str) -> tuple[str, str] | None:
    try:
        out = subprocess.run(["dpkg-query", "-S", path], capture_output=True, text=True, timeout=10)
        if out.returncode != 0:
            real = str(Path(path).resolve())
            out = subprocess.run(["dpkg-query", "-S", real], capture_output=True, text=True, timeout=10)
        if out.returncode != 0:
            return None
        pkg = out.stdout.split(":")[0].strip()
        ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        return pkg, ver
    except (OSError, subprocess.SubprocessError):
        return None


def _has_assertions(path: str) -> bool | None:
    """True if the library imports __assert_fail, i.e. was built without NDEBUG."""
    got = holds(path, b"__assert_fail")
    return None if got is None else bool(got)


def _local_build_info(path: str) -> dict | None:
    """`make engines` leaves build-info.json in its prefix."""
    for parent in Path(path).resolve().parents:
        info = parent / "build-info.json"
        if info.exists():
            try:
                return json.loads(info.read_text())
            except ValueError:
                return None
    return None


def library_name(path: str) -> str:
    """librocksdb.so.7.8 -> rocksdb, libdb-5.3.so -> db, libleveldb.a -> leveldb."""
    m = re.match(r"lib([A-Za-z0-9_]+?)(?:[-.]|$)", Path(path).name)
    return m.group(1) if m else Path(path).name


def library_facts(path: str | None, linkage: str = "shared", packaged: bool = True, assertions=None) -> dict:
    """Facts about one library file: origin, assertions, CRC32 where the library shows it,
    compiler flags where known.  `packaged` False: a file no Debian package ships (an engine kvlab built), whose
    package is not looked up."""
    if path is None:
        return {"library": None, "origin": "unknown", "assertions": None, "crc32": None, "compiler_flags": None,
                "linkage": None}
    # `assertions`: already known (a version kvlab built says in its build.json): the library is not scanned
    facts = {"library": path, "assertions": _has_assertions(path) if assertions is None else assertions,
             "crc32": None, "compiler_flags": None,
             "linkage": linkage}
    deb = _debian_package(path) if packaged else None
    if deb:
        facts["origin"] = f"Debian package {deb[0]} {deb[1]}"
        facts["compiler_flags"] = "Debian's packaging defaults (dpkg-buildflags; -O2)"
    else:
        local = _local_build_info(path)
        facts["origin"] = f"local build at {Path(path).parent}"
        if local:
            facts["compiler_flags"] = local.get("compiler_flags")
            facts["origin"] = f"local release build ({local.get('source', 'unknown source')})"
    probe = _probe(library_name(path), "crc32_of_library")
    if probe:
        facts["crc32"] = probe(path)
    return facts


def _adapter_of_library(lib: str):
    """The descriptor whose build links library `lib` (rocksdb, db, leveldb), or None."""
    return next((d for d in engines.DESCRIPTORS.values() if d.build.get("library") == lib), None)


def _probe(lib: str, which: str):
    d = _adapter_of_library(lib)
    return getattr(d.facts, which) if d is not None else None


def with_db_facts(facts: dict, db_path) -> dict:
    """`facts` (from library_facts) plus what the database directory says about the build."""
    facts = dict(facts)
    probe = _probe(library_name(facts["library"]), "crc32_in_db") if facts.get("library") else None
    if probe:
        facts["crc32"] = probe(db_path)
    return facts


# glibc's tunable for room in its static TLS, and the room kvlab starts its processes with (native.py)
STATIC_TLS_TUNABLE = "glibc.rtld.optional_static_tls"
STATIC_TLS_BYTES = 16384


def warning_for(engine: str, facts: dict) -> str | None:
    if facts.get("assertions"):
        return (f"{engine}: the library ({facts.get('origin')}) has assertions compiled in; "
                "its numbers understate a release build")
    if facts.get("static_tls_room") is False and _probe(library_name(facts.get("library") or ""), "thread_locals"):
        return (f"{engine}: this process started without room in glibc's static TLS, so the library linked into "
                "kvlab reaches its thread-locals through glibc's dynamic path (~7% more instructions per get); "
                "the `kvlab` command and kvlab's Jupyter kernel start with it, a Python of your own needs "
                f"GLIBC_TUNABLES={STATIC_TLS_TUNABLE}={STATIC_TLS_BYTES} in its environment at start")
    return None
