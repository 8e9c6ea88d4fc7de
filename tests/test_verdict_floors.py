"""Issue 46 item 6: no verdict on a figure kvlab itself calls too short, and every figure with its unit.

Before a claim is judged, each measured row its test reads is checked against kvlab's own stability floor (the
phase behind the row, `phase_s` and `phase_ops`, against kvlab.results.sanity's MIN_SECONDS and MIN_OPS): a claim on
a phase below it is "cannot test here", with the smallest preset scale expected to pass (each phase scaled by its
size there).  Counts of events (context switches) are ordered only where they differ by more than their Poisson
noise (COUNT_Z x sqrt(a + b)).  Every published and measured cell carries its unit.  `kvlab reproduce 001 --scale
smoke` on LMDB and LevelDB (seconds) says so end to end; the rest is the judging logic on synthetic frames.
"""
import contextlib
import io
import math
import re

import pandas as pd
import pytest

from kvlab.cli.main import main
from kvlab.lab.seeds import claims
from kvlab.lab.seeds.common import SCALES
from kvlab.results import claims as logic
from kvlab.results.claims import Machine
from kvlab.results.sanity import MIN_OPS, MIN_SECONDS
from kvlab.results.store import Store

from .conftest import require

BIG = Machine(cores=1024, memory_bytes=2**50, engines=None)
PRESETS = [("smoke", 1.0), ("default", 50.0), ("full", 5000.0), ("large", 500.0)]   # SCALES' order, not size's


def claim(test, params, metric="wall_s", unit="s", engines=(), axis=None, by="engine", table="load"):
    m = logic.Measure(table=table, metric=metric, engines=tuple(engines), by=by, axis=axis, unit=unit)
    return logic.Claim(id="x", seed="001", statement="s", source=logic.Source("s", "1", "q"), measure=m, test=test,
                       params=params)


def load(rows, metric="wall_s"):
    return pd.DataFrame(rows, columns=["engine", metric, "phase_s", "phase_ops"])


FASTEST = claim("order", {"better": "lower", "best": "a"})


def row(c, frame, scales=None, published=None):
    return logic.verdict_row(c, frame, published, BIG, None, scales=scales)


# ---------------------------------------------------------------------------------------------------------------
# The stability floor.

def test_a_claim_on_stable_figures_gets_its_verdict():
    stable = load([("a", 5.0, 2.0, 1_000_000), ("b", 9.0, 3.0, 1_000_000)])
    got = row(FASTEST, stable)
    assert got["verdict"] == "reproduced" and got["measured"] == "wall_s (lower is better): a 5 s; best of the 1 " \
                                                                 "others: b 9 s"
    assert row(claim("order", {"better": "lower", "best": "b"}), stable)["verdict"] == "not reproduced"


def test_the_floor_is_sanitys_own():
    at = load([("a", 5.0, MIN_SECONDS, MIN_OPS), ("b", 9.0, MIN_SECONDS, MIN_OPS)])
    assert row(FASTEST, at)["verdict"] == "reproduced"
    for seconds, ops in ((MIN_SECONDS * 0.9, MIN_OPS), (MIN_SECONDS, MIN_OPS - 1)):
        got = row(FASTEST, load([("a", 5.0, seconds, ops), ("b", 9.0, 2.0, 10 * MIN_OPS)]))
        assert got["verdict"] == "cannot test here", got
        assert re.match(rf"too short to judge: a load ran [0-9.]+ s \({ops:,} ops\), under the {MIN_SECONDS:g} s "
                        rf"and {MIN_OPS:,} ops kvlab needs of a stable figure", got["reason"]), got["reason"]
        assert got["measured"].endswith("b 9 s")   # what was measured is still shown


def test_the_smallest_preset_scale_expected_to_pass_is_named():
    short = load([("a", 0.03, 0.03, 20_000), ("b", 0.05, 0.05, 20_000)])
    got = row(FASTEST, short, scales=lambda r: PRESETS)
    assert got["verdict"] == "cannot test here"
    assert "a load ran 0.03 s (20,000 ops), b load ran 0.05 s (20,000 ops)" in got["reason"]
    assert got["reason"].endswith("; --scale default would test it (scaled by its size, the shortest phase about "
                                  "1.5 s)")
    # the shortest phase decides: 4 ms needs 250x, which large (500x) gives and default (50x) does not
    got = row(FASTEST, load([("a", 0.004, 0.004, 20_000), ("b", 0.05, 0.05, 20_000)]), scales=lambda r: PRESETS)
    assert "; --scale large would test it (scaled by its size, the shortest phase about 2.0 s)" in got["reason"]
    tiny = row(FASTEST, load([("a", 1e-7, 1e-7, 20_000), ("b", 0.05, 0.05, 20_000)]), scales=lambda r: PRESETS)
    assert "; no preset scale would (at full, scaled by its size, the shortest phase about 0.0005 s)" \
        in tiny["reason"]
    assert row(FASTEST, short)["reason"].endswith("; a larger run would test it")   # no presets known


def test_only_the_rows_the_test_reads_are_checked():
    ranking = claim("order", {"better": "lower", "ranking": ["a", "b"]})
    frame = load([("a", 5.0, 2.0, 100_000), ("b", 9.0, 2.0, 100_000), ("c", 1.0, 0.01, 100)])
    assert row(ranking, frame)["verdict"] == "reproduced"
    assert row(FASTEST, frame)["verdict"] == "cannot test here"   # best of all: c is read too
    # a frame without the phases behind its rows (the published tables) is judged as it stands
    assert row(FASTEST, frame.drop(columns=["phase_s", "phase_ops"]))["verdict"] == "not reproduced"


# ---------------------------------------------------------------------------------------------------------------
# Counts of events: a difference within their Poisson noise is no difference.

CTX = claim("order", {"better": "lower", "best": "lmdb"}, metric="ctx_switches", unit="context switches")


def ctx(rows):
    return pd.DataFrame([(e, v, 0, 2.0, 1_000_000) for e, v in rows],
                        columns=["engine", "ctx_voluntary", "ctx_involuntary", "phase_s", "phase_ops"])


def test_counts_within_their_poisson_noise_are_not_ordered():
    got = row(CTX, ctx([("lmdb", 9), ("rocksdb", 8)]))
    assert got["verdict"] == "cannot test here"
    bound = logic.COUNT_Z * math.sqrt(17)
    assert got["reason"] == ("the order is not established: lmdb 9 vs rocksdb 8 context switches differ by no more "
                             f"than a count's Poisson noise ({logic.COUNT_Z:g} x sqrt(9 + 8) = {bound:.3g})")
    assert got["measured"] == ("ctx_switches (lower is better): lmdb 9 context switches; best of the 1 others: "
                               "rocksdb 8 context switches")
    # the seed's own figures are far apart
    assert row(CTX, ctx([("lmdb", 201), ("wiredtiger-btree", 7419)]))["verdict"] == "reproduced"
    # clearly out of order: a finding, whatever else is within the noise
    clear = row(CTX, ctx([("lmdb", 500), ("leveldb", 100), ("bdb", 490)]))
    assert clear["verdict"] == "not reproduced"
    assert "out of order: lmdb 500 context switches vs leveldb 100 context switches" in clear["reason"]
    assert "not ordered either way: lmdb 500 vs bdb 490 context switches" in clear["reason"]


def test_a_count_from_a_short_phase_is_not_judged_either():
    short = ctx([("lmdb", 10), ("rocksdb", 300)]).assign(phase_s=0.03, phase_ops=20_000)
    got = row(CTX, short)
    assert got["verdict"] == "cannot test here" and got["reason"].startswith("too short to judge: ")


# ---------------------------------------------------------------------------------------------------------------
# Units.

def test_every_shipped_claim_has_a_unit():
    for c in claims.load_claims():
        assert c.measure.unit or c.measure.unit_by, c.id


@pytest.mark.parametrize("claim_id, text", [
    ("001-lmdb-loads-fastest", "lmdb 65.7 s; best of the 6 others: wiredtiger-btree 456 s"),
    ("001-lmdb-fewest-context-switches", "lmdb 201 context switches; "),
    ("001-lmdb-load-cpu-100", "lmdb 99% (target 100%, off by 1.0%)"),
    ("001-bdb-system-cpu-grows", "bdb: 217 s at 1 reader, 530 s at 2 readers"),
    ("001-db-size-constant/lmdb", "lmdb 12.6M KB to 12.7M KB"),
    ("002-rocksdb-overwrite-p99", "(1,047 us / 10.6 us)"),
    ("003-reads-above-writes/foundationdb", "(305k reads/s / 46k writes/s)"),
    ("004-cached-get-links-list", "0.768 ms vs 1.46 ms"),
    ("000-wiredtiger-faster", "1 thread: 291k ops/s vs 140k ops/s (2.08x)"),
])
def test_published_figures_carry_their_units(claim_id, text):
    seed = claim_id[:3]
    table = claims.verdicts(seed, claims.published_tables(seed), machine=BIG).set_index("claim")
    assert text in table.loc[claim_id, "published"]


def test_the_published_and_measured_cells_of_a_claim_share_its_unit():
    rww = pd.DataFrame([("bdb", 1, 0.00536, 20.0, 2_000_000), ("bdb", 2, 0.009, 20.0, 2_000_000)],
                       columns=["engine", "readers", "sys_s", "phase_s", "phase_ops"])
    table = claims.verdicts("001", {"readwhilewriting": rww}, machine=BIG).set_index("claim")
    grows = table.loc["001-bdb-system-cpu-grows"]
    assert grows.published.startswith("bdb: 217 s at 1 reader") and grows.measured.startswith(
        "bdb: 0.00536 s at 1 reader, 0.009 s at 2 readers")
    assert grows.verdict == "reproduced"


# ---------------------------------------------------------------------------------------------------------------
# The seeds' sizes: which preset would make a phase long enough.

def test_each_seeds_phases_scale_with_their_own_size():
    smoke, default = SCALES["readwhilewriting"]["smoke"], SCALES["readwhilewriting"]["default"]
    factors = dict(claims.scales_of("001", "load", smoke)(pd.Series({"engine": "lmdb"})))
    assert factors["default"] == default["num"] / smoke["num"] and factors["smoke"] == 1
    factors = dict(claims.scales_of("001", "readwhilewriting", smoke)(pd.Series({"engine": "lmdb"})))
    assert factors["default"] == default["duration"] / smoke["duration"]
    assert claims.scales_of("001", "load", None) is None
    assert claims.scales_of("001", "load", {"readers": [1]})(pd.Series({"engine": "lmdb"})) is None
    for seed, table in (("000", "read_scalability"), ("002", "dbbench"), ("003", "transactions"), ("004", "qps"),
                        ("004", "io")):
        notebook = claims.RUNNERS[seed].notebook
        at = claims.scales_of(seed, table, SCALES[notebook]["smoke"])(pd.Series({"benchmark": "readrandom"}))
        assert dict(at)["smoke"] == 1 and dict(at)["full"] > 1, (seed, table)


def test_verdicts_name_the_scale_from_the_parameters_or_the_preset():
    loaded = pd.DataFrame([("lmdb", 0.03, 0.004, 20_000), ("leveldb", 0.03, 0.007, 20_000)],
                          columns=["engine", "wall_s", "phase_s", "phase_ops"])
    machine = Machine(cores=2, engines=frozenset(["lmdb", "leveldb"]))
    for kwargs in ({"p": claims.parameters("001", "smoke")}, {"scale": "smoke"}):
        table = claims.verdicts("001", {"load": loaded}, machine=machine, setup={}, **kwargs).set_index("claim")
        reason = table.loc["001-lmdb-loads-fastest", "reason"]
        assert reason.startswith("too short to judge: lmdb load ran 0.004 s (20,000 ops), leveldb load ran 0.007 s")
        assert "--scale large would test it" in reason, reason   # 50x (default) gives 0.2 s; 500x (large) 2 s


# ---------------------------------------------------------------------------------------------------------------
# `kvlab reproduce 001 --scale smoke`, end to end on real engines.

@pytest.fixture(scope="module")
def smoke001(tmp_path_factory):
    for name in ("lmdb", "leveldb"):
        require(name)
    store = tmp_path_factory.mktemp("floors") / "kvlab.duckdb"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["reproduce", "001", "--scale", "smoke", "--engines", "lmdb,leveldb", "--store", str(store)]) == 0
    return store, Store(store).verdicts("001").set_index("claim"), out.getvalue()


def _needed(phases) -> str | None:
    """The smallest preset (by size) at which every (seconds, ops, size factor by scale) phase passes the floor."""
    names = sorted(phases[0][2], key=lambda n: max(f[n] for _, _, f in phases))
    return next((n for n in names if all(logic.stable(s * f[n], o * f[n]) for s, o, f in phases)), None)


def test_reproduce_001_at_smoke_scale_does_not_judge_its_short_loads(smoke001):
    store, table, out = smoke001
    presets = SCALES["readwhilewriting"]
    loads = [(b.seconds, b.ops, {n: p["num"] / presets["smoke"]["num"] for n, p in presets.items()})
             for b in Store(store).load() if b.workload == "fillseq"]
    assert len(loads) == 2 and not any(logic.stable(s, o) for s, o, _ in loads)
    want = _needed(loads)
    for c in ("001-lmdb-loads-fastest", "001-lmdb-fewest-context-switches", "001-lmdb-load-cpu-100"):
        got = table.loc[c]
        assert got.verdict == "cannot test here", (c, got.reason)
        assert re.search(r"too short to judge: (lmdb|leveldb) load ran [0-9.e-]+ s \(20,000 ops\)", got.reason)
        assert f"under the {MIN_SECONDS:g} s and {MIN_OPS:,} ops kvlab needs of a stable figure" in got.reason
        assert (f"--scale {want} would" in got.reason) if want else ("no preset scale would" in got.reason)
        assert f"\n{c}: CANNOT TEST HERE\n" in out
    fastest = table.loc["001-lmdb-loads-fastest"]
    assert re.search(r"lmdb [0-9.]+ s; best of the 1 others: leveldb [0-9.]+ s$", fastest.measured)
    assert fastest.published.endswith("lmdb 65.7 s; best of the 6 others: wiredtiger-btree 456 s")
    assert re.search(r"lmdb [0-9.]+% \(target 100%", table.loc["001-lmdb-load-cpu-100"].measured)
    # readwhilewriting ran smoke's 0.5 s: too short as well, and default's 10 s would do
    sizes = table.loc["001-db-size-constant/lmdb"]
    # (the shortest phase is named first: either reader count, on a loaded machine)
    assert sizes.verdict == "cannot test here", sizes.reason
    assert re.search(r"lmdb readwhilewriting at (1 reader|2 readers) ran 0\.[0-9]+ s \(", sizes.reason), sizes.reason
    assert "--scale default would test it" in sizes.reason and " KB to " in sizes.measured
    assert "0 reproduced, 0 not reproduced" in out
