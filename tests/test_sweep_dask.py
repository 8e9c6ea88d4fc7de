"""Sweeps on a real Dask LocalCluster: two worker processes on 127.0.0.1, each offering the
kvlab_benchmark resource.  Both workers are on this one host, so the per-host Dask Lock must make them
take turns: the test records each point's start and end and checks no two overlap on a host.  A worker
killed with SIGKILL mid-point has its point run again on a worker (or reported failed), never dropped."""
import os
import signal
import time

import pytest

from kvlab import errors
from kvlab.execution.orchestration.dask_sweep import RESOURCE, DaskExecutor
from kvlab.execution.orchestration.sweep import SweepControl, run_sweep
from kvlab.lab.sweeps import Sweep
from kvlab.model.sweep import SweepSpec
from kvlab.results import sweeps as stored
from kvlab.results.store import Store

from .conftest import require

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

# short lock leases so a killed worker's lock is freed within seconds (Dask's default is 30 s); the
# workers get the same config from their nannies, and refresh their lease every timeout / 5
LOCKS = {"distributed.scheduler.locks.lease-timeout": "3s",
         "distributed.scheduler.locks.lease-validation-interval": "0.5s",
         "distributed.scheduler.allowed-failures": 3}


@pytest.fixture(scope="module")
def client():
    require("lmdb")
    require("leveldb")
    with dask.config.set(LOCKS):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                           dashboard_address=None, resources={RESOURCE: 1}, silence_logs=40)
        c = distributed.Client(cluster)
        try:
            c.wait_for_workers(2, timeout=60)
            yield c
        finally:
            c.close()
            cluster.close()


def no_overlap_per_host(points):
    for host, rows in points.groupby("host"):
        spans = sorted(zip(rows.started_at, rows.ended_at))
        for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
            assert s1 >= e0, f"two points ran at once on {host}: {s0}-{e0} and {s1}-{e1}"


def test_points_run_on_workers_one_per_host_and_merge_into_one_store(client, tmp_path):
    assert all(v["distributed.scheduler.locks.lease-timeout"] == "3s"
               for v in client.run(lambda: {"distributed.scheduler.locks.lease-timeout":
                                            __import__("dask").config.get("distributed.scheduler.locks.lease-timeout")})
               .values()), "the workers must hold the scheduler's lease settings"
    store = Store(tmp_path / "s.duckdb")
    spec = SweepSpec("dask", {"workload": "readrandom", "num": 2000, "duration": 0.3, "interval": 0},
                     {"engine": ["lmdb", "leveldb"], "threads": [1, 2]}, 2)
    seen = []
    out = run_sweep(spec, store, SweepControl([seen.append]), DaskExecutor(client))
    assert out.complete and len(out.done) == 8 and not out.failed and out.executor == "dask"
    assert any(p.current is not None for p in seen), "live progress from the workers reaches the caller"
    points = stored.points_frame(store, "dask")
    assert len(points) == 8 and set(points.status) == {"done"}
    workers = set(client.scheduler_info(n_workers=-1)["workers"])
    assert set(points.worker) <= workers and all(w.startswith("tcp://127.0.0.1:") for w in points.worker)
    no_overlap_per_host(points)
    # each result carries the machine facts of the worker that measured it, merged in the caller's store
    results = stored.results(store, "dask")
    assert len(results) == 16
    assert {b.provenance["machine"]["hostname"] for b in results} == set(points.host)
    assert len(stored.tidy(store, "dask")) == 4
    # the same sweep again: nothing is submitted
    again = run_sweep(spec, store, executor=DaskExecutor(client))
    assert again.skipped == 8 and not again.done


def test_a_worker_killed_mid_point_has_its_point_run_again(client, tmp_path):
    store = Store(tmp_path / "s.duckdb")
    spec = SweepSpec("dask-kill", {"engine": "lmdb", "workload": "readrandom", "num": 2000, "duration": 1.5,
                                   "interval": 0}, {"threads": [1, 2, 3]}, 1)
    pids = client.run(os.getpid)
    handle = Sweep(spec, store).start(client=client)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        p = handle.progress
        if p is not None and p.current is not None and p.current.phase == "run" and p.current.elapsed_s > 0.3:
            break
    else:
        pytest.fail("no point was seen running")
    # both workers hold a task (one measures, one waits on the host's lock): kill the one measuring
    victim = {pt.label(): pt.id for pt in spec.points()}[handle.progress.current_point]
    who = _worker_running(client)
    os.kill(pids[who], signal.SIGKILL)
    killed_at = time.time()
    out = handle.result(timeout=180)
    points = stored.points_frame(store, "dask-kill")
    assert out.skipped + len(out.done) + len(out.failed) == 3, "every point is stored or reported failed"
    assert set(out.done) | {pid for _, pid, _ in out.failed} == {p.id for p in spec.points()}
    done = points[points.status == "done"]
    assert len(done) == len(out.done) == 3 - len(out.failed)
    if victim not in {pid for _, pid, _ in out.failed}:
        again = done[done.point_id == victim]
        assert len(again) == 1 and again.started_at.iloc[0] > killed_at, "the killed point was run again"
    assert who not in set(done.worker), "nothing is credited to the dead worker"
    no_overlap_per_host(done)


def _worker_running(client):
    """The worker whose point is measuring now (the other waits on the host's lock)."""
    def measuring():   # its point's trial is in a worker process of its own (kvlab.execution.worker)
        from kvlab.execution.worker import spawn
        return bool(spawn.ACTIVE)
    states = client.run(measuring)
    running = [w for w, yes in states.items() if yes]
    assert running, f"no worker is measuring: {states}"
    return running[0]


def test_no_worker_with_the_resource_is_refused(tmp_path):
    with dask.config.set(LOCKS):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                      dashboard_address=":0", silence_logs=40) as cluster, \
                distributed.Client(cluster) as c:
            with pytest.raises(errors.SpecError, match="no Dask worker offers the kvlab_benchmark resource"):
                DaskExecutor(c)
