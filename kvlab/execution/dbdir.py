"""Database directories: kvlab writes into, clears and removes only what it made.

A directory kvlab creates or adopts (an empty one) gets a marker file,
`.kvlab-db`, recording the engine and key encoding.  A non-empty directory
without the marker is refused; a marked directory may be cleared for a fresh
run (its contents only: the directory itself stays, and nothing outside it is
touched).  A temporary directory kvlab creates for a run is removed afterwards.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .. import errors

MARKER = ".kvlab-db"


@dataclass
class DbDir:
    path: Path
    temporary: bool      # created by kvlab for this run only; removed by cleanup()
    existed: bool        # held a database of this engine before the run

    def cleanup(self):
        if self.temporary and (self.path / MARKER).exists():
            shutil.rmtree(self.path, ignore_errors=True)


def read_marker(path: Path) -> dict | None:
    m = Path(path) / MARKER
    if not m.exists():
        return None
    try:
        return json.loads(m.read_text())
    except (OSError, ValueError) as exc:
        raise errors.UnsafeDirectory(f"{path}: the kvlab marker {MARKER} is unreadable ({exc}); "
                                     "kvlab will not touch this directory") from None


def _write_marker(path: Path, engine: str, key_encoding: str):
    tmp = path / (MARKER + ".tmp")
    tmp.write_text(json.dumps({"engine": engine, "key_encoding": key_encoding,
                               "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}) + "\n")
    os.replace(tmp, path / MARKER)


def _clear_contents(path: Path):
    for child in path.iterdir():
        if child.name == MARKER:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def prepare(db: str | None, engine: str, key_encoding: str, use_existing: bool) -> DbDir:
    """Return the directory to open the engine in, creating or clearing it as allowed."""
    if db is None:
        base = os.environ.get("KVLAB_TMPDIR") or None
        path = Path(tempfile.mkdtemp(prefix=f"kvlab-{engine}-", dir=base))
        _write_marker(path, engine, key_encoding)
        return DbDir(path, temporary=True, existed=False)
    path = Path(db).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise errors.UnsafeDirectory(f"--db {path} exists and is not a directory")
    if not path.exists():
        path.mkdir(parents=True)
        _write_marker(path, engine, key_encoding)
        return DbDir(path, temporary=False, existed=False)
    marker = read_marker(path)
    if marker is None:
        if any(path.iterdir()):
            raise errors.UnsafeDirectory(
                f"--db {path} is not empty and was not created by kvlab (no {MARKER} marker); "
                "kvlab will not write into it. Give a new or empty directory.")
        _write_marker(path, engine, key_encoding)
        return DbDir(path, temporary=False, existed=False)
    if marker.get("engine") != engine:
        if use_existing:
            raise errors.UnsafeDirectory(
                f"--db {path} holds a {marker.get('engine')} database, not {engine}; "
                "use_existing_db needs the same engine")
    if marker.get("key_encoding") not in (None, key_encoding):
        raise errors.UnsafeDirectory(f"--db {path} was written with key encoding "
                                     f"{marker.get('key_encoding')}, kvlab now uses {key_encoding}")
    has_data = any(c.name != MARKER for c in path.iterdir())
    if use_existing:
        return DbDir(path, temporary=False, existed=has_data)
    _clear_contents(path)
    _write_marker(path, engine, key_encoding)
    return DbDir(path, temporary=False, existed=False)


def size_on_disk(path: Path) -> int:
    """Allocated bytes under path (st_blocks), so sparse LMDB maps count what they use."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total
