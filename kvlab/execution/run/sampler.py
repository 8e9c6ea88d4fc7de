"""The sampler: runs a native Run on a helper thread and, from the calling thread, samples its counters every
`interval` seconds without pausing it (the time series), takes the warm-up snapshot, publishes progress and turns
Ctrl-C into a clean stop; then what the samples say about the warm-up (MSER-5) and the steady state."""
from __future__ import annotations

import threading
import time

from ... import _signals as signals
from ...results import steady
from ..host import accounting


class Sampler:
    """Runs the native Run on a helper thread and samples it from this one."""

    def __init__(self, run, interval, warmup, device, control=None, tracker=None, db_path=None, events=None):
        self.run, self.interval, self.warmup, self.device = run, interval, warmup, device
        self.db_path = db_path   # each sample's allocated size of the database (space amplification per interval)
        self.events = events     # an execution.run.events.EventReader: the engine's background work at each sample
        self.control, self.tracker = control, tracker
        self.samples = []        # (monotonic ns, native snapshot, accounting snapshot)
        self.warm = None         # the sample at the end of the warm-up
        self.stopped_by = None   # the signal that stopped the run part-way (SIGINT, SIGTERM, SIGHUP)

    def _sample(self):
        t, snap = time.monotonic_ns(), self.run.snapshot()
        # each thread's progress counter (its ops; a mix's transactions): a warm-up's cut of each thread's ops
        snap["progress"] = self.run.progress()
        if self.events is not None:   # carried in the native snapshot, so a sample stays (time, native, accounting)
            snap["engine_events"] = self.events.read()
        return t, snap, accounting.snapshot(self.device, self.db_path)

    def execute(self):
        box = {}
        # completion is signalled by an Event, not Thread.is_alive(): a KeyboardInterrupt that
        # lands inside Thread.join() can leave is_alive() False while the thread still runs
        finished = threading.Event()

        def target():
            try:
                box["threads"] = self.run.execute()
            except BaseException as exc:  # re-raised on the caller's thread
                box["error"] = exc
            finally:
                finished.set()

        t = threading.Thread(target=target, name="kvlab-native-run", daemon=True)
        try:
            t0 = time.monotonic_ns()
            t.start()
            partial = self._watch(finished, t0)
        except BaseException:
            # whatever escapes the watch (a failing sample or observer, a second signal) must not leave
            # native threads running on an engine the caller is about to close
            self.run.request_stop()
            while not finished.is_set():
                try:
                    finished.wait(0.1)
                except KeyboardInterrupt:
                    pass
            t.join()
            raise
        t.join()
        if "error" in box:
            raise box["error"]
        try:
            if self.interval:
                self.samples.append(self._sample())
            if self.tracker is not None:
                self.control.publish(self.tracker.read(finished=True, stopping=partial))
        except KeyboardInterrupt as exc:  # it came as the run ended: keep the result, marked as interrupted
            partial = True
            self.stopped_by = signals.name_of(exc)
        return box["threads"], partial

    def _watch(self, finished, t0) -> bool:
        """Sample, publish progress and honour stop requests until the run ends; True if stopped early.
        A KeyboardInterrupt anywhere in here (not only in the wait) becomes a stop request."""
        partial = False
        control = self.control
        next_sample = t0 + int(self.interval * 1e9) if self.interval else None
        warm_at = t0 + int(self.warmup * 1e9) if self.warmup else None
        next_progress = t0 + int(control.every * 1e9) if self.tracker else None
        first = bool(self.interval)
        while first or not finished.is_set():
            try:
                if first:
                    self.samples.append(self._sample())
                    first = False
                if control is not None and control.stop_requested and not partial:
                    self.run.request_stop()
                    partial = True
                now = time.monotonic_ns()
                due = [x for x in (next_sample, warm_at, next_progress) if x is not None]
                finished.wait(min([0.1] + [max(0.0, (x - now) / 1e9) for x in due]))
                now = time.monotonic_ns()
                if finished.is_set():
                    break
                if next_progress is not None and now >= next_progress:
                    control.publish(self.tracker.read(stopping=partial))
                    next_progress = now + int(control.every * 1e9)
                if warm_at is not None and now >= warm_at:
                    self.warm = self._sample()
                    warm_at = None
                if next_sample is not None and now >= next_sample:
                    self.samples.append(self._sample())
                    next_sample += int(self.interval * 1e9)
            except KeyboardInterrupt as exc:
                self.run.request_stop()
                partial = True
                self.stopped_by = self.stopped_by or signals.name_of(exc)
                if control is not None:
                    control.stop()
        return partial


def throughput_series(samples) -> tuple:
    """(ops/s, mid-time s, index of the sample it starts at) of each interval between samples, workers only (a
    mix's transactions), the last interval (the run's end, threads finishing) left out."""
    xs, ts, idx = [], [], []
    if not samples:
        return xs, ts, idx
    t0 = samples[0][0]
    for i, ((ta, na, _), (tb, nb, _)) in enumerate(zip(samples, samples[1:])):
        secs = (tb - ta) / 1e9
        if secs <= 0:
            continue
        done = sum(nb["workers"]["ops"].values()) - sum(na["workers"]["ops"].values())
        xs.append(done / secs)
        ts.append(((ta + tb) / 2 - t0) / 1e9)
        idx.append(i)
    return xs[:-1], ts[:-1], idx[:-1]


def auto_warmup(sampler) -> dict:
    """warmup="auto": MSER-5 over the interval throughput; the cut becomes the sampler's warm-up snapshot (an
    interval boundary, where every counter and histogram was read), so the summary leaves it out exactly as a
    fixed warm-up ending there would."""
    xs, ts, idx = throughput_series(sampler.samples)
    cut = steady.mser5(xs)
    cut["intervals"] = len(xs)
    if cut["cut"]:
        sampler.warm = sampler.samples[idx[cut["cut"]]]
    return cut


def steady_state(b, samples, cut):
    """After the warm-up (fixed or auto): does throughput still trend over the last half?  A warning if so; with
    warmup="auto", the method, the cut and the test go into b.warmup."""
    xs, ts, _ = throughput_series(samples)
    if cut is not None:
        k = cut["cut"]
    else:
        k = sum(1 for t in ts if b.warmup and t < b.warmup.get("seconds", 0))
    tr = steady.trend(xs[k:], ts[k:])
    warning = steady.not_steady_warning(tr)
    if warning and warning not in b.warnings:
        b.warnings.append(warning)
    if cut is not None:
        base = b.warmup or {"seconds": 0.0, "ops_excluded": 0, "excluded": False}
        b.warmup = {**base, "method": "MSER-5", "cut_intervals": k, "intervals": cut["intervals"],
                    "batch": cut["batch"], "batches": cut["batches"], "note": cut["note"], "steady_state": tr}

