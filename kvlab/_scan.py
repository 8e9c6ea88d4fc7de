"""Whether a (possibly large) file holds some byte strings, read in chunks: a build with debug information makes an
engine's library hundreds of megabytes (RocksDB's static library with -g: over a gigabyte), which a whole read would
hold in memory, inside a trial's memory budget."""
from __future__ import annotations

CHUNK = 8 << 20


def holds(path, *needles: bytes) -> set | None:
    """The needles found in the file at `path`, or None where it cannot be read."""
    found: set = set()
    overlap = max((len(n) for n in needles), default=1) - 1
    tail = b""
    try:
        with open(path, "rb") as f:
            while len(found) < len(needles):
                chunk = f.read(CHUNK)
                if not chunk:
                    break
                data = tail + chunk
                found.update(n for n in needles if n not in found and n in data)
                tail = data[-overlap:] if overlap else b""
    except OSError:
        return None
    return found
