"""kvlab.compare's noise_floor hook over the floors `kvlab noise` stored (`kvlab results compare` uses them
unless --no-noise-floor)."""
from __future__ import annotations

from ...results import store as stored


class StoredFloors:
    """kvlab.compare's noise_floor hook over the floors `kvlab noise` stored: for a matched benchmark, the
    largest stored spread of the metric among its hosts and engines (the latest floor of each), or None."""

    def __init__(self, store):
        self.store, self.found = store, {}

    def __call__(self, metric: str, key: dict):
        if key.get("workload") is None or key.get("threads") is None:
            return None   # matched without them (--match): no floor is about such a pair
        best = None
        for host in key.get("hosts") or ():
            for engine in key.get("engines") or ():
                got = self._floor(host, engine, key["workload"], int(key["threads"]), key.get("phase"))
                if got is not None and got.get(metric) is not None:
                    best = got[metric] if best is None else max(best, got[metric])
        return best

    def _floor(self, *k):
        if k not in self.found:
            self.found[k] = self.store.noise_floor(*k)
        return self.found[k]

    def notes(self, frame) -> list:
        """One line per stored floor the comparison used."""
        used = frame[frame.floor_source == "measured"] if "floor_source" in frame else frame.iloc[0:0]
        out = []
        for (host, engine, workload, threads, phase), got in self.found.items():
            if got is None or used[(used.workload == workload) & (used.threads == threads)].empty:
                continue
            spread = ", ".join(f"{m} {got[m]:.1f}%" for m in stored.NOISE_METRICS
                               if got.get(m) is not None and m in set(frame.metric))
            out.append(f"noise floor from `kvlab noise` ({got.get('n')} runs, {str(got.get('measured_at'))[:16]}) "
                       f"for {engine} {workload} {phase or ''} {threads} thr on {host}: {spread}; where it is "
                       "above --threshold it decides '~'")
        return out
