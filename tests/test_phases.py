"""A run as a plan of immutable phases: what a spec compiles into, what each phase counts (fields of the phase, not
its name), one warm-up cut that cuts every counter (found, min/max, the writer, each thread's ops), and a record
built from a phase, a measurement and the trial's facts, with no session."""
import dataclasses

import numpy as np
import pytest

import kvlab
from kvlab import engines, errors
from kvlab.execution import native
from kvlab.execution.run import loads, phases, record
from kvlab.execution.run.sampler import Sampler
from kvlab.model.spec import make_spec
from kvlab.results.histogram import Histogram, bucket_bounds

from .conftest import require

BUCKETS = 4864


def _by_name(plan):
    return {(p.kind, p.name): p for p in plan}


def test_a_spec_compiles_into_its_phases():
    spec = make_spec("lmdb", "readrandom,readwhilewriting,compact,deleterandom,fillsync,ycsb-a", num=20_000,
                     threads=2, warmup=0.5, duration=2)
    plan = phases.plan(spec)
    assert [(p.kind, p.name) for p in plan] == [
        ("load", "fillseq"), ("run", "readrandom"), ("run", "readwhilewriting"), ("run", "compact"),
        ("run", "deleterandom"), ("run", "fillsync"), ("run", "ycsb-a")]
    p = _by_name(plan)
    load = p["load", "fillseq"]
    assert (load.loop, load.threads, load.batch, load.duration, load.warmup) == ("fillseq", 1, loads.LOAD_BATCH,
                                                                                 0.0, 0.0)
    assert load.fills == "records" and load.load == "batched" and load.live_pattern == "sequential"
    rr = p["run", "readrandom"]
    assert rr.counts_found and rr.uniform_reads and not rr.has_writer and rr.live_pattern == "none"
    assert (rr.threads, rr.duration, rr.warmup) == (2, 2.0, 0.5)
    rww = p["run", "readwhilewriting"]
    assert rww.has_writer and rww.counts_found and rww.live_pattern == "random"
    compact = p["run", "compact"]
    assert compact.one_thread_only and not compact.counts_found
    assert p["run", "deleterandom"].live_pattern == "delete" and p["run", "deleterandom"].counts_found
    sync = p["run", "fillsync"]   # what the db_bench alias implies
    assert sync.settings["sync"] is True and sync.num == 20 and sync.fills == "writes"
    mix = p["run", "ycsb-a"]
    assert mix.loop == "mix" and mix.batch == 1 and mix.live_pattern == "mix" and mix.mix is not None
    # immutable: a phase is a value
    with pytest.raises(dataclasses.FrozenInstanceError):
        rr.threads = 4
    assert rr.params() == rr.params() and rr.params() is not rr.params()


def test_the_plan_follows_the_database_and_the_load():
    spec = make_spec("lmdb", "readrandom,readseq", num=5000)
    assert [p.kind for p in phases.plan(spec, loaded=True)] == ["run", "run"]      # a database that holds data
    assert [(p.kind, p.name) for p in phases.plan(spec, load_only=True)] == [("load", "fillseq")]
    # a write phase first: nothing to load after it
    assert [p.name for p in phases.plan(make_spec("lmdb", "fillrandom,readrandom", num=5000))] == [
        "fillrandom", "readrandom"]
    bulk = phases.plan(make_spec("lmdb", "readrandom", num=5000, load="bulk"))[0]
    assert (bulk.loop, bulk.threads, bulk.load) == ("bulkload", 1, "bulk")
    assert bulk.params()["native_loop"] == "bulkload"
    with pytest.raises(errors.SpecError, match="LinkBench graph"):
        phases.plan(make_spec("lmdb", "linkbench-load", num=5000))


def _hist(values, hi=None):
    counts = np.zeros(BUCKETS, dtype=np.uint64)
    low, high = bucket_bounds(BUCKETS)
    for v in values:
        counts[int(np.searchsorted(high, v, side="right"))] += 1
    return {"counts": counts, "count": len(values), "min": min(values), "max": hi or max(values), "ns_per_tick": 1.0}


def test_after_the_cut_min_and_max_are_the_ops_after_it():
    """A warm-up op of 5 ms: the whole phase's max; after the cut the max is the highest after-cut bucket's."""
    warm = [100, 120, 5_000_000]
    after = [150, 200, 900, 1000]
    whole = Histogram.from_native(_hist(warm + after))
    cut = phases.after_cut(whole, _hist(warm)["counts"])
    assert cut.count == 4 and whole.max == 5_000_000
    low, high = bucket_bounds(BUCKETS)
    top = int(np.flatnonzero(cut.counts)[-1])
    assert low[top] <= 1000 <= cut.max < high[top] and cut.max < 1010   # within the 0.4% of a bucket
    assert 150 >= cut.min >= low[int(np.flatnonzero(cut.counts)[0])]
    assert cut.summary_us()["max"] < 1.1


def _thread(index, role, ops, found=0, not_found=0, hist=None, start=0, end=10**9):
    return {"index": index, "role": role, "ops": ops, "found": found, "not_found": not_found, "bytes": 116 * found,
            "t_start_ns": start, "t_end_ns": end, "hist": hist or {}, "cpu_user_s": 0.5, "cpu_sys_s": 0.1,
            "nvcsw": 1, "nivcsw": 2}


def test_the_cut_cuts_found_the_writer_and_each_thread():
    """A read loop keeps found in the thread until it ends, so the snapshot at the cut reads 0 there: found after
    the cut is pro-rated (never above the ops after it); the writer's ops, time and histogram are cut."""
    phase = _by_name(phases.plan(make_spec("lmdb", "readwhilewriting", num=1000, duration=1)))["run",
                                                                                                   "readwhilewriting"]
    reads = _hist([200] * 700 + [300] * 300)
    writes = _hist([5000] * 90 + [9000] * 10, hi=9000)
    threads = [_thread(0, "worker", {"read": 1000}, found=1000, hist={"read": reads}),
               _thread(1, "writer", {"write": 100}, hist={"write": writes})]
    at_reads = _hist([200] * 400)["counts"]
    at_writes = _hist([5000] * 30 + [9000] * 10)["counts"]
    snap = {"workers": {"ops": {"read": 400}, "found": 0, "hist": {"read": at_reads}},
            "writer": {"ops": {"write": 40}, "found": 0, "hist": {"write": at_writes}}, "progress": [400, 40]}
    whole = phases.count(phase, threads)
    assert whole.found == 1000 and whole.warmup is None
    c = phases.count(phase, threads, warm=(4 * 10**8, snap, None))
    assert c.ops == 600 and c.found == 600 and c.not_found == 0 and c.per_thread_ops == (600,)
    assert c.by_op["read"].count == 600 and c.t0 == 4 * 10**8 and c.seconds == pytest.approx(0.6)
    assert c.writer.ops == 60 and c.writer.hist.count == 60 and c.writer.seconds == pytest.approx(0.6)
    assert c.writer.hist.max < 9000     # the 9 ms writes were all in the warm-up
    assert c.warmup["ops_excluded"] == 400 and c.warmup["writer_ops_excluded"] == 40
    assert c.warmup["found_excluded"] == 400 and "found" in c.warmup["pro_rated"]


def test_a_warm_up_leaves_found_within_ops_and_the_max_after_the_cut():
    """LMDB readrandom and readwhilewriting with a warm-up: found <= ops, the max and min are those of the
    after-cut histogram the result keeps, the writer's figures are after the cut."""
    require("lmdb")
    r = kvlab.run("lmdb", "readrandom,readwhilewriting", num=200_000, duration=1.0, warmup=0.3, seed=1,
                  interval=0)
    low, high = bucket_bounds(BUCKETS)
    for b in r[1:]:
        w = b.warmup
        assert w["excluded"] and w["ops_excluded"] > 0
        assert 0 <= b.found <= b.ops and b.found + b.not_found == b.ops
        assert b.latency_us["count"] == pytest.approx(b.ops, rel=1e-3)
        # the progress counters are read just after the others: some ops apart at a million a second
        assert abs(sum(b.per_thread_ops) - b.ops) <= max(100, b.ops * 1e-3) and b.accounting["ops"] == b.ops
        h = Histogram.from_record(b.histograms["by_op"]["read"])
        nz = np.flatnonzero(h.counts)
        assert low[nz[-1]] <= h.max < high[nz[-1]], "the max is in the highest bucket after the cut"
        assert b.latency_us["max"] == pytest.approx(h.max * h.ns_per_tick / 1000)
        assert h.min == low[nz[0]]
        assert 0.6 < b.seconds < 0.8 + 0.2
    wr = r[2].writer
    assert r[2].warmup["writer_ops_excluded"] > 0
    assert wr["latency_us"]["count"] == pytest.approx(wr["ops"], abs=5)
    assert wr["seconds"] < 0.9
    h = Histogram.from_record(r[2].histograms["writer"])
    assert low[np.flatnonzero(h.counts)[-1]] <= h.max


def test_a_record_builds_from_a_phase_and_a_measurement_alone(tmp_path):
    """No session: a phase of the plan, a native Run on an engine opened here, the sampler's warm-up cut,
    phases.count and record.build with the spec as the only trial fact."""
    cfg = require("lmdb")
    db = tmp_path / "db"
    kvlab.run("lmdb", "fillseq", num=50_000, db=str(db), keep_db=True, interval=0)
    spec = make_spec("lmdb", "readrandom", num=50_000, duration=0.6, warmup=0.2, seed=2)
    (phase,) = phases.plan(spec, loaded=True)
    lib = native.load()
    engine = lib.Engine(cfg.adapter, str(db), engines.get("lmdb").config({}, max_threads=4))
    try:
        params = phase.params()
        run = lib.Run(engine, phase.loop, params)
        sampler = Sampler(run, 0.0, phase.warmup, None)
        threads, partial = sampler.execute()
        params["latency_clock"], params["ns_per_tick"] = run.latency_clock
    finally:
        engine.close()
    assert sampler.warm is not None and not partial
    m = record.Measurement(params=params, threads=threads, counted=phases.count(phase, threads, sampler.warm))
    b = record.build(phase, m, record.TrialFacts(spec=spec))
    assert b.workload == "readrandom" and b.phase == "run" and b.ops == m.counted.ops > 0
    assert b.found <= b.ops and b.warmup["excluded"] and b.accounting is None
    assert b.params["native_loop"] == "readrandom" and 0.3 < b.seconds < 0.6
