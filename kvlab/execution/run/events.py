"""Engine events as the sampler reads them: the open engine's `stats` call, parsed by its adapter's row in
kvlab.results.events, at every interval sample (the native call releases the GIL; the engines answer it while the
run's threads work)."""
from __future__ import annotations

from ...results import events


class EventReader:
    """Reads one open engine's background-work fields; `read()` is what a sample carries under "engine_events"."""

    def __init__(self, engine, adapter: str):
        self.engine, self.adapter = engine, adapter

    def read(self) -> dict | None:
        got = self.engine.stats()
        if got is None:
            return None
        return {"adapter": self.adapter, "fields": events.parse(self.adapter, got[0], got[1])}


def reader_for(engine, adapter: str) -> EventReader | None:
    """A reader for an engine whose adapter reports background work, else None (nothing is sampled)."""
    return EventReader(engine, adapter) if adapter in events.ENGINES else None
