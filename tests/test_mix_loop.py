"""The generic native loop runs a Mix (one loop for every workload written as data), on real engines.

The runner, results schema and CLI are not wired to it yet: these tests drive _native.Run directly
with a plan from kvlab.execution.mixplan."""
import math

import pytest

from kvlab import _native, errors
from kvlab.execution.mixplan import compile_mix
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


def test_inserts_extend_the_key_space():
    require("lmdb")
    import tempfile
    from kvlab.model import engines
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
    from kvlab.model import engines
    engine = _native.Engine("null", tempfile.mkdtemp(), engines.get("null").config({}, max_threads=4))
    mix = Mix("w", [Template("a", [Op("get")], 7), Template("b", [Op("put")], 2), Template("c", [Op("scan", length=3)], 1)])
    n = 200_000
    threads = run_mix(engine, mix, n)
    engine.close()
    for name, share in (("a", 0.7), ("b", 0.2), ("c", 0.1)):
        got = threads[0]["templates"][name]["count"] / n
        assert got == pytest.approx(share, abs=5 * math.sqrt(share * (1 - share) / n)), name


def test_plans_the_loop_cannot_run_are_refused():
    with pytest.raises(errors.SpecError, match="backwards range"):
        compile_mix(from_mako("gr1:-10"), 100)
