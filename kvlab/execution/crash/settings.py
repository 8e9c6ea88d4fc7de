"""The durability settings a crash test knows, per engine, and what each one's documentation promises for a
crash: `durable` (no acknowledged write lost, nothing torn, every reopen works), `prefix` (recent writes may be
lost, never a torn transaction or a failed reopen) or `none` (the engine says a crash may corrupt: only
measured), written in each engine's descriptor.  execution.crash.crashtest holds each setting's promise against what it saw."""
from __future__ import annotations

from ... import engines, errors
from ...engines.descriptor import Durability

CLAIMS = ("durable", "prefix", "none")
# configuration -> its durability settings, as its descriptor lists them (kvlab/engines/<adapter>/); a configuration
# without any is crash-tested with sync on or off alone
DURABILITY: dict[str, tuple] = {name: cfg.durability for name, cfg in engines.REGISTRY.items() if cfg.durability}


def durability(engine: str, name: str | None = None, sync: bool = False) -> Durability:
    """The named durability setting of `engine`; without a name, plain sync on (durable) or off (prefix)."""
    if name is None:
        return Durability("", {"sync": sync}, "durable" if sync else "prefix",
                          "sync on: no acknowledged write lost" if sync else "sync off: recent writes may be lost")
    # a built version (lmdb@0.9.70, redb@4.6.0) has its configuration's settings
    known = DURABILITY.get(engine) or (engines.get(engine).durability if engines.VERSION_MARK in engine else ())
    for d in known:
        if d.name == name:
            return d
    raise errors.SpecError(f"crashtest: {engine} has no durability setting {name!r}; allowed: "
                           f"{', '.join(d.name for d in known) or 'none (use --sync or not)'}")

