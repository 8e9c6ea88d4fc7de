"""Sweep points on Dask workers: Dask distributed does the scheduling, kvlab only submits.

    dask scheduler --host 10.0.0.1                       # one machine
    dask worker tcp://10.0.0.1:8786 --nworkers 1 --nthreads 1 --resources kvlab_benchmark=1   # each host
    kvlab sweep run grid.toml --scheduler tcp://10.0.0.1:8786

One benchmark per host at a time, held by Dask, not by convention:
- every point is submitted needing the worker resource `kvlab_benchmark` (1), so a worker runs at
  most one point (a worker started without the resource gets none);
- inside the task, before anything is measured, the point takes a Dask `Lock` named after the
  worker's host (`kvlab-host-<hostname>`), so two workers on one host (a LocalCluster, or a host
  started with two workers by mistake) take turns.  The Lock is Dask's leased semaphore: a worker
  that dies holding it loses the lease after `distributed.scheduler.locks.lease-timeout`.
Before submitting, the workers are asked for their kvlab version and git commit, which must be
the caller's, and at least one must offer the resource; otherwise nothing is submitted.

Each worker runs the point with its own kvlab (results carry its machine facts in provenance)
and returns the results as plain data; the caller appends them to its own store.  A worker that
dies mid-point is Dask's to handle: its task is run again on another worker, up to
`distributed.scheduler.allowed-failures` times, then it ends as KilledWorker and the point is
recorded failed (never dropped).  Live progress comes back as Dask events on a topic of the
sweep's own; stop() sets a Dask Event the running points watch, and cancels the rest.
"""
from __future__ import annotations

import os
import queue
import socket
import time
import uuid

from ... import errors
from ..host.accounting import kvlab_build
from ..progress import Progress, RunControl
from .sweep import Sink, run_point

RESOURCE = "kvlab_benchmark"
STOP_CHECK_S = 1.0


def _distributed():
    try:
        import distributed
    except ImportError as exc:
        raise errors.KvlabError("running a sweep on Dask needs dask and distributed (pip install dask distributed; "
                                "make setup installs them)") from exc
    return distributed


def connect(scheduler):
    """A dask.distributed Client for an address (tcp://host:8786) or the Client given."""
    distributed = _distributed()
    if isinstance(scheduler, distributed.Client):
        return scheduler
    if not isinstance(scheduler, str) or not scheduler:
        raise errors.SpecError(f"scheduler {scheduler!r}: give an address like tcp://10.0.0.1:8786 or a "
                               "dask.distributed.Client")
    try:
        return distributed.Client(scheduler, timeout=15)
    except (OSError, TimeoutError) as exc:
        raise errors.KvlabError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None


def _worker_facts():
    """Run on each worker by Client.run: what it would run points with."""
    return {"build": kvlab_build(), "host": socket.gethostname(), "pid": os.getpid()}


def check_workers(client) -> dict:
    """{worker address: facts} of the workers that will run points; raises if none can, or if any
    runs another kvlab than this one."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    able = {addr for addr, w in info.items() if (w.get("resources") or {}).get(RESOURCE, 0) >= 1}
    if not able:
        raise errors.SpecError(f"no Dask worker offers the {RESOURCE} resource (workers: {len(info)}); start one "
                               f"worker per host with: dask worker ADDRESS --nthreads 1 --resources {RESOURCE}=1")
    facts = client.run(_worker_facts, workers=sorted(able))
    mine = kvlab_build()
    other = {addr: f["build"] for addr, f in facts.items() if f["build"] != mine}
    if other:
        raise errors.SpecError("every worker must run the caller's kvlab "
                               f"({mine['kvlab']}, commit {mine['git_commit']}); these do not: " +
                               "; ".join(f"{a}: {b['kvlab']} commit {b['git_commit']}" for a, b in other.items()))
    return facts


def remote_point(point, topic: str, stop_name: str) -> dict:
    """The task: one point on a Dask worker, one benchmark per host (see the module's docstring)."""
    from distributed import Event, Lock, get_worker
    worker = get_worker()
    host = socket.gethostname()
    stop = Event(stop_name)
    with Lock(f"kvlab-host-{host}"):
        if stop.is_set():
            return {"partial": True, "results": [], "host": host, "worker": worker.address}
        base = {"point": point.id, "host": host, "worker": worker.address, "pid": os.getpid()}
        worker.log_event(topic, {**base, "kind": "started", "time": time.time()})
        last_check = [time.monotonic()]

        def report(p: Progress):
            worker.log_event(topic, {**base, "kind": "progress", "progress": _progress_dict(p)})
            if time.monotonic() - last_check[0] >= STOP_CHECK_S:
                last_check[0] = time.monotonic()
                if stop.is_set():
                    control.stop()

        control = RunControl([report], every=0.5)
        payload = run_point(point, control)
    payload["worker"] = worker.address
    return payload


def _progress_dict(p: Progress) -> dict:
    return {"engine": p.engine, "workload": p.workload, "phase": p.phase, "elapsed_s": p.elapsed_s,
            "ops": dict(p.ops), "ops_per_sec": dict(p.ops_per_sec), "writer_ops": dict(p.writer_ops),
            "writer_ops_per_sec": dict(p.writer_ops_per_sec), "total_ops": p.total_ops,
            "duration_s": p.duration_s, "finished": p.finished, "stopping": p.stopping}


class DaskExecutor:
    """Submit a sweep's points to a Dask cluster; store what comes back as it comes."""
    name = "dask"

    def __init__(self, scheduler):
        self.client = connect(scheduler)
        self.owns_client = not isinstance(scheduler, _distributed().Client)
        self.workers = check_workers(self.client)

    def close(self):
        if self.owns_client:
            self.client.close()

    def execute(self, points: list, sink: Sink):
        distributed = _distributed()
        client = self.client
        nonce = uuid.uuid4().hex[:8]
        topic, stop_name = f"kvlab-sweep-{nonce}", f"kvlab-sweep-{nonce}-stop"
        events: queue.Queue = queue.Queue()
        client.subscribe_topic(topic, lambda event: events.put(event[1]))
        stop = distributed.Event(stop_name, client=client)
        by_id = {p.id: p for p in points}
        futures = {}
        for p in points:
            fut = client.submit(remote_point, p, topic, stop_name, key=f"kvlab-point-{p.sweep}-{p.id}-{nonce}",
                                resources={RESOURCE: 1}, pure=False)
            futures[fut] = p
        pending = set(futures)
        stopping = False
        try:
            while pending:
                try:
                    done, _ = distributed.wait(list(pending), timeout=0.5, return_when="FIRST_COMPLETED")
                except (TimeoutError, distributed.TimeoutError):
                    done = set()
                self._drain(events, by_id, sink)
                for fut in done:
                    pending.discard(fut)
                    point = futures[fut]
                    if fut.status == "cancelled":
                        continue
                    try:
                        payload = fut.result()
                    except distributed.KilledWorker as exc:
                        sink.failed(point, f"the workers running it died ({exc}); Dask gave up after "
                                           "distributed.scheduler.allowed-failures tries")
                        continue
                    except Exception as exc:   # the point's own error, raised on the worker
                        sink.failed(point, f"{type(exc).__name__}: {exc}")
                        continue
                    sink.finished(point, payload)
                if sink.stop_requested and not stopping:
                    stopping = True
                    stop.set()
                    client.cancel([f for f in pending if f.status == "pending"])
        except BaseException:   # Ctrl-C or an error here: stop what runs, leave nothing queued
            stop.set()
            client.cancel(list(pending))
            raise
        finally:
            self._drain(events, by_id, sink)
            client.unsubscribe_topic(topic)
            self.close()

    @staticmethod
    def _drain(events, by_id, sink):
        while True:
            try:
                msg = events.get_nowait()
            except queue.Empty:
                return
            point = by_id.get(msg.get("point"))
            if point is None:
                continue
            if msg["kind"] == "started":
                sink.started(point, msg["host"])
            elif msg["kind"] == "progress" and point.id in sink.remaining:
                sink.progress(point, Progress(**msg["progress"]), msg["host"])
