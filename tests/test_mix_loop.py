"""The generic native loop runs a Mix (one loop for every workload written as data), on real engines.

The runner, results schema and CLI are not wired to it yet: these tests drive _native.Run directly
with a plan from kvlab.execution.run.mixplan."""
import math

import pytest

from kvlab import _native, errors
from kvlab.execution.run.mixplan import compile_mix
from kvlab.model.workloads.mako import from_mako
from kvlab.model.workloads.mix import Mix, Op, Template
from kvlab.model.workloads.presets import preset

from .conftest import require

BASE = dict(num=20_000, reads=0, threads=1, duration=0.0, key_size=16, value_size=100, batch=1, seed=5,
            compression_ratio=0.5, seek_nexts=0, writes_per_second=0.0)


def load(engine, num=20_000):
    _native.Run(engine, "fillseq", dict(BASE, num=num, reads=num, batch=1000)).execute()


def run_mix(engine, mix, txns, threads=1, num=20_000, value_size=100):
    plan = compile_mix(mix, value_size)
    params = dict(BASE, num=num, reads=txns, threads=threads, value_size=plan["value_max"])
    return _native.Run(engine, "mix", params, mix=plan).execute()


def total(threads, key, sub=None):
    return sum((t[key] if sub is None else t[key].get(sub, 0)) for t in threads)


def test_ycsb_mixes_on_every_engine(open_engine):
    engine = open_engine()
    load(engine)
    for name in ("ycsb-a", "ycsb-c", "ycsb-e", "ycsb-f"):
        threads = run_mix(engine, preset(name), 2000, threads=2)
        per_template = {n: sum(t["templates"][n]["count"] for t in threads) for n in threads[0]["templates"]}
        assert sum(per_template.values()) == total(threads, "ops", "txn") == 4000, name
        reads = total(threads, "ops", "read") + total(threads, "ops", "rmw")
        if name != "ycsb-e":
            assert total(threads, "found") == reads and total(threads, "not_found") == 0, name   # every key loaded
        else:
            scans = total(threads, "ops", "scan")
            assert scans > 0 and total(threads, "found") > scans * 10      # scans of up to 100 entries
        for t in threads:
            for n, rec in t["templates"].items():
                assert rec["hist"]["count"] == rec["count"]


def test_transactions_of_several_ops_and_ranges(open_engine, engine_name):
    engine = open_engine()
    load(engine)
    threads = run_mix(engine, from_mako("g9o1"), 500)
    assert threads[0]["ops"] == {"read": 4500, "write": 500, "txn": 500}
    assert threads[0]["found"] == 4500
    # a 10-key range read on a dense key space reads 10 keys unless it starts within 10 of the end
    rng = Mix("r", [Template("r", [Op("range", length=10)])], distribution="sequential")
    threads = run_mix(engine, rng, 100)
    assert threads[0]["found"] == 1000


def ycsb_key(record):
    """YCSB's hashed insert order: FNV-1a-64 of the record number's eight bytes, Math.abs, kept to 16 digits."""
    return _ycsb_fnvhash64(record) % 10**16


def on_both_loops(tmp_path, observe):
    """observe(engine, pipeline) on a fresh LMDB database, once with the one-op loop allowed (pipeline) and
    once forced onto the general loop: the two observations."""
    from kvlab import engines
    seen = []
    for pipeline in (True, False):
        (tmp_path / str(pipeline)).mkdir()
        engine = _native.Engine("lmdb", str(tmp_path / str(pipeline)), engines.get("lmdb").config({}, max_threads=4))
        try:
            seen.append(observe(engine, pipeline))
        finally:
            engine.close()
    return seen


@pytest.mark.parametrize("distribution,hashed", [("zipfian", False), ("zipfian", True), ("uniform", False),
                                                  ("hotspot", True), ("per-op", False)])
def test_drawing_ahead_keeps_the_key_stream(tmp_path, distribution, hashed):
    """Where every template is one op that draws nothing else, the loop draws the next template and key
    before running this op, in a loop instantiated per distribution kind (driver.c: loop_mix_simple); the
    stream must be the general loop's: the same keys deleted, the same values written and the same gets
    found, on a real engine."""
    require("lmdb")
    if distribution == "per-op":   # each op its own distribution: the general draw, from the op's own
        from kvlab.model.workloads.distributions import Distribution
        ops = [Op("get", distribution=Distribution("zipfian")), Op("put", distribution=Distribution("latest")),
               Op("delete", distribution=Distribution("uniform"))]
        distribution = "uniform"
    else:
        ops = [Op("get"), Op("put"), Op("delete")]
    mix = Mix("get-put-delete", [Template("get", [ops[0]], 0.5), Template("put", [ops[1]], 0.2),
                                 Template("del", [ops[2]], 0.3)], distribution=distribution)
    plan = compile_mix(mix, 100)
    ids = [ycsb_key(i) for i in range(2000)] if hashed else list(range(2000))
    def observe(engine, pipeline):
        for i in ids:
            engine.put(_native.make_key(i), b"loaded")
        threads = _native.Run(engine, "mix", dict(BASE, num=2000, reads=3000, pipeline=pipeline, key_hash=hashed),
                              mix=plan).execute()
        return [engine.get(_native.make_key(i)) for i in ids], threads[0]["found"], threads[0]["ops"]

    seen = on_both_loops(tmp_path, observe)
    assert seen[0] == seen[1]
    state = seen[0][0]
    assert None in state and b"loaded" in state and len(set(state)) > 2 and seen[0][1] > 0


@pytest.mark.parametrize("name", ["ycsb-d", "ycsb-e", "ycsb-f"])
def test_one_op_templates_keep_the_general_loops_results(tmp_path, name):
    """YCSB's presets run on the loop for one-op templates (inserts, scans and read-modify-writes included,
    each in the transaction it needs); the general loop must give the same keys inserted, entries found
    and ops, on a real engine."""
    require("lmdb")
    from kvlab import engines
    mix = preset(name)
    hashed = mix.insert_order == "hashed"
    plan = compile_mix(mix, 100)
    seen = []
    for pipeline in (True, False):
        (tmp_path / str(pipeline)).mkdir()
        engine = _native.Engine("lmdb", str(tmp_path / str(pipeline)), engines.get("lmdb").config({}, max_threads=4))
        try:
            for i in range(2000):
                engine.put(_native.make_key(ycsb_key(i) if hashed else i), b"loaded")
            threads = _native.Run(engine, "mix", dict(BASE, num=2000, reads=3000, pipeline=pipeline, key_hash=hashed,
                                                      value_size=plan["value_max"]), mix=plan).execute()
            keys = [k for k, _ in engine.scan(b"", 10_000)]
            seen.append((keys, threads[0]["found"], threads[0]["not_found"], threads[0]["ops"]))
        finally:
            engine.close()
    assert seen[0] == seen[1]
    assert seen[0][3]["txn"] == 3000 and seen[0][1] > 0


def test_inserts_extend_the_key_space():
    require("lmdb")
    import tempfile

    from kvlab import engines
    cfg = engines.get("lmdb")
    engine = _native.Engine("lmdb", tempfile.mkdtemp(), cfg.config({}, max_threads=4))
    try:
        load(engine, 1000)
        run_mix(engine, from_mako("i"), 50, threads=2, num=1000)
        # thread t of T inserts num + t, num + t + T, ...
        for idx in range(1000, 1100):
            assert engine.get(_native.make_key(idx)) is not None, idx
        assert engine.get(_native.make_key(1100)) is None
    finally:
        engine.close()


def test_mix_weights_hold_over_a_long_run():
    require("null")
    import tempfile

    from kvlab import engines
    engine = _native.Engine("null", tempfile.mkdtemp(), engines.get("null").config({}, max_threads=4))
    mix = Mix("w", [Template("a", [Op("get")], 7), Template("b", [Op("put")], 2),
                    Template("c", [Op("scan", length=3)], 1)])
    n = 200_000
    threads = run_mix(engine, mix, n)
    engine.close()
    for name, share in (("a", 0.7), ("b", 0.2), ("c", 0.1)):
        got = threads[0]["templates"][name]["count"] / n
        assert got == pytest.approx(share, abs=5 * math.sqrt(share * (1 - share) / n)), name


def test_plans_the_loop_cannot_run_are_refused():
    with pytest.raises(errors.SpecError, match="backwards range"):
        compile_mix(from_mako("gr1:-10"), 100)


# --- wired through the runner, results, store and CLI ----------------------------------------------

def test_kvlab_run_a_preset_mix_records_transactions(tmp_path):
    require("lmdb")
    import kvlab
    from kvlab.results.store import Store
    r = kvlab.run("lmdb", "ycsb-a,txn:g9o1", num=5000, reads=2000, threads=2, seed=3)
    load, a, g = r
    assert load.phase == "load" and a.mix["transactions"] == 4000 and g.mix["transactions"] == 4000
    assert set(a.mix["templates"]) == {"read", "update"} and a.latency_unit == "txn"
    assert a.mix["templates"]["read"]["share"] == pytest.approx(0.5, abs=0.05)
    assert g.ops == 40_000 and g.mix["reads_per_sec"] == pytest.approx(9 * g.mix["writes_per_sec"])
    assert a.mix["definition"]["templates"][0]["ops"] == [{"kind": "get", "count": 1}]
    assert a.params["value_size"] == 1000                       # YCSB's record: 10 fields of 100 bytes
    path = tmp_path / "r.json"
    r.write_json(path)
    back = kvlab.load_json(path)
    assert back[1].mix["transactions"] == 4000
    store = Store(tmp_path / "s.duckdb")
    store.append(r)
    assert store.load()[1].mix["templates"]["update"]["count"] == a.mix["templates"]["update"]["count"]


def test_old_records_upgrade_with_no_mix():
    from kvlab.results.result import upgrade
    assert upgrade({"schema": "kvlab.result/2", "engine": "lmdb"})["mix"] is None
    assert upgrade({"schema": "kvlab.result/1", "engine": "lmdb"})["schema"] == "kvlab.result/7"


def test_distribution_override_and_refusals():
    require("lmdb")
    import kvlab
    r = kvlab.run("lmdb", "ycsb-c", num=2000, reads=2000, distribution="sequential", seed=1)
    assert r[1].mix["definition"]["distribution"]["name"] == "zipfian"          # the mix as defined ...
    assert r[1].provenance["spec"]["distribution"] == "sequential"              # ... run with the override
    assert r[1].mix["distribution"] == {"name": "sequential"}                   # and the record says which
    assert r[1].found == 2000
    with pytest.raises(errors.SpecError, match="applies to mixes only"):
        kvlab.run("lmdb", "readrandom", num=100, distribution="zipfian")
    with pytest.raises(errors.SpecError, match="applies to mixes only"):
        kvlab.run("lmdb", "readrandom", num=100, target_rate=1000)
    with pytest.raises(errors.SpecError, match="reads ranges, which rocksdb-tuned cannot do"):
        kvlab.run("rocksdb-tuned", "ycsb-e", num=100)
    with pytest.raises(errors.SpecError, match="clients or threads, not both"):
        kvlab.run("lmdb", "ycsb-a", num=100, clients=2, threads=2)


def test_cli_workload_distribution_target_rate_and_cpus(tmp_path, capsys):
    """The issue's flags by their names: the run uses them, and its record says so beside the preset's own
    definition."""
    require("lmdb")
    import json

    from kvlab import cli
    js = tmp_path / "r.json"
    assert cli.main(["run", "--engine", "lmdb", "--workload", "ycsb-a", "--distribution", "uniform",
                     "--target-rate", "20000", "--cpus", "0", "--clients", "2", "--num", "2000", "--reads", "500",
                     "--no-store", "--progress", "off", "--json", str(js)]) == 0
    run = json.loads(js.read_text())[-1]
    mix = run["mix"]
    assert run["workload"] == "ycsb-a" and run["threads"] == 2 and mix["transactions"] == 1000
    assert mix["distribution"] == {"name": "uniform"}                       # as run, beside ...
    assert mix["definition"]["distribution"]["name"] == "zipfian"            # ... the preset as defined
    assert mix["pacing"]["mode"] == "open"
    assert mix["pacing"]["target_rate"] == 20000 and mix["pacing"]["per_client_rate"] == 10000
    assert run["provenance"]["spec"]["cpus"] == "0" and run["provenance"]["spec"]["distribution"] == "uniform"
    # the result fields: rates, the engine's isolation statement, start lag, per-template quantiles
    assert mix["keys_per_sec"] == mix["reads_per_sec"] > 0 and mix["writes_per_sec"] > 0
    assert "LMDB write txn" in mix["isolation"] and mix["retries"] == mix["aborts"] == 0
    assert mix["pacing"]["start_lag_us"]["count"] == 1000 and mix["pacing"]["achieved_rate"] > 0
    for t in mix["templates"].values():
        assert {"p50", "p99", "p999", "p9999", "max", "mean"} <= set(t["latency_us"]) <= set(t["response_latency_us"])


def test_cli_txn_clients_and_ycsb_file(tmp_path, capsys):
    require("lmdb")
    from kvlab import cli
    assert cli.main(["run", "--engine", "lmdb", "--txn", "g9u1", "--clients", "4", "--num", "5000",
                     "--reads", "500", "--no-store", "--progress", "off"]) == 0
    out = capsys.readouterr().out
    assert "2,000 transactions" in out and "g9u1" in out
    f = tmp_path / "workloadb"
    f.write_text("recordcount=3000\noperationcount=4000\nreadproportion=0.95\nupdateproportion=0.05\n"
                 "requestdistribution=zipfian\n")
    js = tmp_path / "y.json"
    assert cli.main(["ycsb", "-P", str(f), "-p", "recordcount=5000", "-threads", "2", "--engine", "lmdb",
                     "--no-store", "--progress", "off", "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "recordcount=5000, operationcount=4000, clients=2" in out and "4,000 transactions" in out
    assert cli.main(["run", "--engine", "lmdb", "--txn", "g1", "--workload", "ycsb-a", "--no-store"]) == 2
    assert "not both" in capsys.readouterr().err


# --- open loop: a schedule fixed in advance, service and response time --------------------------------

def test_open_loop_response_is_never_below_service_and_grows_past_saturation():
    require("lmdb")
    import kvlab
    r = kvlab.run("lmdb", "ycsb-a", num=5000, reads=2000, threads=2, target_rate=10_000, seed=2)
    b = r[1]
    pacing, templates = b.mix["pacing"], b.mix["templates"]
    assert pacing["mode"] == "open" and pacing["target_rate"] == 10_000
    # on schedule, not a speed claim (a busy 2-core VM stretches a 0.4 s run): the 1% figure is
    # benchmarks/open_loop.py's
    assert pacing["achieved_ratio"] == pytest.approx(1.0, abs=0.25)
    assert set(templates) == {"read", "update"} and sum(t["count"] for t in templates.values()) == 4000
    for name, t in templates.items():   # every template: a read, and an update in its write transaction
        svc, resp = t["latency_us"], t["response_latency_us"]
        assert resp["count"] == svc["count"] == t["count"] > 0
        for q in ("min", "p50", "p99", "max"):
            assert resp[q] >= svc[q] * 0.99, (name, q)                   # bucket rounding only
    assert "response" in b.latency_by_op and "lag" in b.latency_by_op
    # far past what the engine sustains: the schedule runs ahead, response time grows, service time does not
    light = kvlab.run("lmdb", "ycsb-c", num=5000, reads=2000, threads=1, target_rate=10_000, seed=2)[1]
    over = kvlab.run("lmdb", "ycsb-c", num=5000, reads=20_000, threads=1, target_rate=50_000_000, seed=2)[1]
    lo, o = light.mix["templates"]["read"], over.mix["templates"]["read"]
    assert over.mix["pacing"]["achieved_ratio"] < 0.5
    assert o["response_latency_us"]["p50"] > 50 * max(lo["response_latency_us"]["p50"], o["latency_us"]["p50"])
    assert o["latency_us"]["p50"] <= 2 * lo["latency_us"]["p50"] + 1   # service: as at light load, or less


@pytest.mark.parametrize("engine", ["lmdb", "rocksdb"])
def test_a_hundred_clients_are_a_hundred_threads(engine):
    """Seed 003's 100 clients on 2 cores: each client its own native thread, each doing its share."""
    require(engine)
    import kvlab
    b = kvlab.run(engine, "txn:g9u1", clients=100, num=2000, reads=20, seed=6, interval=0)[-1]
    assert b.threads == 100 and len(b.per_thread_ops) == 100 and min(b.per_thread_ops) >= 200   # retried ops count too
    assert b.mix["transactions"] == 2000
    assert len([t for t in b.accounting["threads"] if t["role"] == "worker"]) == 100


def test_poisson_arrivals_at_a_rate_per_client():
    """A mix's own pacing, run (not only parsed): a rate per client, Poisson arrivals.  Two clients at
    2,000/s each make 4,000/s in all."""
    require("lmdb")
    import kvlab
    from kvlab.model.workloads.mix import Pacing
    paced = Mix("paced", [Template("read", [Op("get")])], distribution="uniform",
                pacing=Pacing(target_rate=2000, per_client=True, arrivals="poisson"))
    b = kvlab.run("lmdb", "paced", mixes={"paced": paced}, num=2000, reads=2000, threads=2, seed=4)[1]
    pacing = b.mix["pacing"]
    assert (pacing["mode"], pacing["arrivals"], pacing["per_client_rate"], pacing["target_rate"]) == \
        ("open", "poisson", 2000, 4000)
    assert pacing["achieved_ratio"] == pytest.approx(1.0, abs=0.25)   # on schedule; the 1% figure is open_loop.py's
    assert b.mix["definition"]["pacing"] == {"target_rate": 2000, "per_client": True, "arrivals": "poisson"}
    assert b.mix["transactions"] == 4000


def test_open_loop_is_stopped_while_it_waits():
    require("lmdb")
    import time

    import kvlab
    from kvlab.execution.progress import RunControl
    control = RunControl()
    h = kvlab.start("lmdb", "ycsb-c", num=1000, reads=100, threads=1, target_rate=1, control=control)
    time.sleep(1.0)
    t0 = time.monotonic()
    r = h.stop(timeout=10)
    assert time.monotonic() - t0 < 1.0 and r[-1].partial


def test_cpus_pins_the_run_engine_threads_included():
    """Seed 003 ran its server on one core: cpus pins workers and the engine's own threads."""
    require("rocksdb")
    import os
    import time
    from pathlib import Path

    import kvlab
    before = os.sched_getaffinity(0)
    h = kvlab.start("rocksdb", "readrandom", num=50_000, threads=2, duration=3, cpus="0", seed=1)
    time.sleep(1.5)
    pinned = {}
    for task in Path(f"/proc/{h.control.worker_pid}/task").iterdir():   # the trial's worker
        try:
            comm = (task / "comm").read_text().strip()
            allowed = next(l for l in (task / "status").read_text().splitlines() if l.startswith("Cpus_allowed_list"))
        except (OSError, StopIteration):
            continue
        if comm.startswith("rocksdb:"):
            pinned[comm] = allowed.split()[-1]
    r = h.stop(timeout=20)
    assert pinned and set(pinned.values()) == {"0"}, pinned               # RocksDB's flush/compaction threads
    assert r[-1].accounting["cpu_pct"] < 130                               # two workers, one core
    assert os.sched_getaffinity(0) == before                               # the caller was never pinned
    with pytest.raises(errors.SpecError, match="not available; allowed"):
        kvlab.run("lmdb", "readrandom", num=100, cpus="4095")


def test_intervals_report_each_template():
    """Per interval: every template's transactions, rate and service latency (a simple template's
    from its op's histogram, a transaction template's from its own)."""
    require("lmdb")
    import kvlab
    for workload, names in (("ycsb-a", {"read", "update"}), ("txn:g9u1", {"g9u1"})):
        b = kvlab.run("lmdb", workload, num=5000, duration=0.8, threads=2, interval=0.2, seed=1)[-1]
        assert len(b.intervals) >= 2
        total = 0
        for iv in b.intervals:
            t = iv["workers"]["templates"]
            assert set(t) == names
            for rec in t.values():
                total += rec["count"]
                if rec["count"]:
                    assert rec["latency_us"]["p50"] > 0
        assert 0 < total <= b.mix["transactions"]


def _ycsb_fnvhash64(val):
    """YCSB 0.17.0 Utils.fnvhash64 (then Math.abs), as its CoreWorkload.buildKeyName uses it."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= val & 0xFF
        val >>= 8
        h = (h * 1099511628211) & (2**64 - 1)
    if h >= 2**63:
        h = 2**64 - h
    return h


@pytest.mark.parametrize("distribution,hashed", [("zipfian", True), ("zipfian", False), ("uniform", False),
                                                  ("latest", False)])
def test_a_mix_of_one_read_keeps_the_key_stream(tmp_path, distribution, hashed):
    """A mix of one read template (YCSB-C) has its own instantiation of the draw-ahead loop (no pick, no
    branch on the op); it must read the keys the general loop reads: on a database holding every third
    key, each with a value of its own length, the gets found, missed and the bytes they moved agree."""
    require("lmdb")
    plan = compile_mix(Mix("c", [Template("read", [Op("get")])], distribution=distribution), 100)
    ids = [ycsb_key(i) for i in range(2000)] if hashed else list(range(2000))
    def observe(engine, pipeline):
        for n, i in enumerate(ids):
            if n % 3 == 0:
                engine.put(_native.make_key(i), b"v" * (1 + n % 97))
        t = _native.Run(engine, "mix", dict(BASE, num=2000, reads=5000, pipeline=pipeline, key_hash=hashed),
                        mix=plan).execute()[0]
        return t["found"], t["not_found"], t["bytes"], t["ops"]["read"]

    seen = on_both_loops(tmp_path, observe)
    assert seen[0] == seen[1]
    assert seen[0][0] > 0 and seen[0][1] > 0 and seen[0][3] == 5000


def test_native_fnv_hashes_match_ycsbs_on_every_width():
    """The driver writes out only a value's low nonzero bytes of FNV (3 for record numbers below 2^24, 5
    below 2^40, else 8): each width, and the edges between them, against YCSB's byte-at-a-time hash."""
    import random
    rnd = random.Random(12)
    values = [0, 1, 255, 256, 2**24 - 1, 2**24, 2**32, 2**40 - 1, 2**40, 2**63, 2**64 - 1]
    values += [rnd.getrandbits(b) for b in (8, 20, 24, 30, 34, 40, 48, 56, 64) for _ in range(300)]
    for v in values:
        assert _native.fnv_abs(v) == _ycsb_fnvhash64(v) % 2**64, v
        assert _native.key_hash(v) == ycsb_key(v), v


def test_hashed_insert_order_stores_record_i_under_ycsbs_hash(tmp_path):
    """insertorder=hashed (YCSB's default, the ycsb-* presets): the load and the mix's inserts put
    record i under the key of fnvhash64(i), to 16 digits; every read finds its record."""
    cfg = require("lmdb")
    engine = _native.Engine(cfg.adapter, str(tmp_path), cfg.config({}, max_threads=4))
    _native.Run(engine, "fillseq", dict(BASE, num=500, reads=500, batch=100, key_hash=1)).execute()
    for i in (0, 1, 7, 499):
        assert engine.get(_native.make_key(_ycsb_fnvhash64(i) % 10**16, 16)) is not None
    assert engine.get(_native.make_key(3, 16)) is None
    plan = compile_mix(preset("ycsb-d"), 100)
    threads = _native.Run(engine, "mix", dict(BASE, num=500, reads=3000, key_hash=1), mix=plan).execute()
    assert total(threads, "not_found") == 0 and total(threads, "ops", "insert") > 0
    engine.close()
    import kvlab
    b = kvlab.run("lmdb", "ycsb-b", num=2000, reads=2000, seed=4)[-1]
    assert b.mix["definition"]["insert_order"] == "hashed" and b.not_found == 0


def test_warmup_is_excluded_from_every_mix_figure():
    """--warmup on a mix: transactions, ops per type, per-template counts and histograms all leave the
    warm-up out, and agree with each other (simple templates included)."""
    require("lmdb")
    import kvlab
    for workload in ("ycsb-a", "txn:g9u1"):
        b = kvlab.run("lmdb", workload, num=5000, duration=0.8, threads=2, warmup=0.3, seed=3)[-1]
        m = b.mix
        assert b.warmup["excluded"] and b.warmup["transactions_excluded"] > 0
        assert sum(t["count"] for t in m["templates"].values()) == m["transactions"] > 0
        assert b.latency_by_op["txn"]["count"] == m["transactions"]
        for t in m["templates"].values():
            assert t["latency_us"]["count"] == t["count"]
        assert b.ops == sum(m["ops_by_type"].values())
        for op, n in m["ops_by_type"].items():
            assert b.latency_by_op[op]["count"] == n
