"""The files kvlab's commands read at run time: the notebooks and the published reference tables.

In git they live at the top of the checkout (notebooks/, data/reference/).  setup.py's build copies
each into the package as kvlab/_data/<name> (SHIPPED below is the list it reads), so an installed
wheel carries them.  `folder(name)` finds one through importlib.resources: the package's own copy
first, else (the editable install, where the package is the checkout's kvlab/) the checkout's folder.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from . import errors

# name inside the package (kvlab/_data/<name>) -> its folder in the checkout.  setup.py reads this
# literal (ast), so it stays a plain dict of strings.
SHIPPED = {
    "notebooks": "notebooks",
    "reference": "data/reference",
}


def folder(name: str) -> Path:
    """The directory holding the shipped folder `name` ("notebooks", "reference")."""
    if name not in SHIPPED:
        raise KeyError(f"{name!r} is not a folder kvlab ships; known: {', '.join(SHIPPED)}")
    package = resources.files("kvlab")
    packaged = package / "_data" / name
    # an installed package is a plain folder (its compiled extension rules out a zip import)
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    checkout = Path(str(package)).parent
    if (checkout / "pyproject.toml").is_file() and (checkout / SHIPPED[name]).is_dir():
        return checkout / SHIPPED[name]
    raise errors.KvlabError(f"kvlab's {name} are missing: neither {packaged} (an installed kvlab) nor "
                            f"{checkout / SHIPPED[name]} (a checkout) exists; reinstall kvlab")


def origin(name: str) -> str:
    """"package" where `folder(name)` is the installed package data, "checkout" where it is the
    checkout's own folder (the editable install)."""
    return "package" if folder(name) == resources.files("kvlab") / "_data" / name else "checkout"
