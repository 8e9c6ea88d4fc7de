"""Working set against cache: when the data a phase reads is larger than the engine's own cache (its descriptor's
`cache`, at the size the run gave it or the engine's default), reads past the cache go to the OS page cache and,
past memory, to the device.  A comparison of engines at that size measures their caches as much as the engines,
so the phase says so, once per trial, with both sizes."""
from __future__ import annotations

from ... import engines


def _mib(n: float) -> str:
    return f"{n / 1048576:,.0f} MiB" if n >= 1048576 else f"{n / 1024:,.0f} KiB"


def warning(engine: str, settings: dict, data_bytes: int | None, memory_bytes: int | None) -> str | None:
    """The warning for a reading phase of configuration `engine` with effective `settings` over `data_bytes` of
    database on a machine (or memory budget) of `memory_bytes`; None where the data fits what caches it."""
    if not data_bytes:
        return None
    cfg = engines.get(engine)
    cache = engines.descriptor(cfg).cache
    if not cfg.stores_data:
        return None
    beyond_memory = memory_bytes is not None and data_bytes > memory_bytes
    device = (f"past memory ({_mib(memory_bytes)}) to the device" if beyond_memory and memory_bytes is not None
              else "the OS page cache, which holds it here")
    if not cache:
        if not beyond_memory or memory_bytes is None:
            return None
        return (f"{engine} reads through the OS page cache (it has no cache of its own), and its data "
                f"({_mib(data_bytes)}) is larger than memory ({_mib(memory_bytes)}): reads go to the device")
    given = settings.get(cache.setting)
    size = int(given) if given else cache.default_bytes
    if data_bytes <= size:
        return None
    whose = f"{cache.setting}={_mib(size)}" if given else f"its default cache, {_mib(size)} ({cache.source})"
    return (f"{engine}'s cache ({whose}) is smaller than its data ({_mib(data_bytes)}): reads past the cache go "
            f"to {device}, so a comparison at this size measures caches as much as engines; give cache_size that "
            "holds the data (or a memory budget) to compare the engines at equal memory")
