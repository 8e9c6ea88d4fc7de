"""Where the engines `kvlab engines build` makes live, and the facts each records.

A built version is a folder ADAPTER@VERSION holding the adapter as a shared object (libkvlab_<adapter>.so, the engine
linked in) and build.json (the recipe, its checksum, the compiler's flags, the version the library reports, how long
the build took).  The folders are looked for in $KVLAB_ENGINES_DIR where set, then kvlab's own engine folder
(kvlab/engines/_built, in a checkout; git ignores it), then the per-user folder ($XDG_DATA_HOME/kvlab/engines); a build
goes to the first of them that can be written."""
from __future__ import annotations

import json
import os
from pathlib import Path

from ... import engines
from ...results import store

FACTS = "build.json"


def folders() -> list[Path]:
    """The folders searched for built versions, in order."""
    given = os.environ.get("KVLAB_ENGINES_DIR")
    return ([Path(given)] if given else []) + [Path(engines.__file__).resolve().parent / "_built",
                                               store.kvlab_home() / "engines"]


def target() -> Path:
    """The folder a build goes to: the first of folders() that exists and can be written or can be made."""
    for folder in folders():
        probe = folder if folder.exists() else folder.parent
        if os.access(probe, os.W_OK):
            return folder
    return folders()[-1]


def library_name(adapter: str) -> str:
    return f"libkvlab_{adapter}.so"


def built(native_name: str) -> Path | None:
    """The folder of built version ADAPTER@VERSION, or None."""
    adapter = native_name.partition(engines.VERSION_MARK)[0]
    for folder in folders():
        found = folder / native_name
        if (found / library_name(adapter)).is_file() and (found / FACTS).is_file():
            return found
    return None


def library(native_name: str) -> Path | None:
    folder = built(native_name)
    return folder / library_name(native_name.partition(engines.VERSION_MARK)[0]) if folder else None


def facts(native_name: str) -> dict:
    """What the build of ADAPTER@VERSION recorded ({} where it is not built)."""
    folder = built(native_name)
    return json.loads((folder / FACTS).read_text()) if folder else {}


def every_built() -> dict[str, Path]:
    """{ADAPTER@VERSION: its folder} for every built version found, the first found for a name."""
    out: dict[str, Path] = {}
    for folder in folders():
        if folder.is_dir():
            for sub in sorted(folder.iterdir()):
                if engines.VERSION_MARK in sub.name and sub.name not in out and built(sub.name) == sub:
                    out[sub.name] = sub
    return out
