"""One door for a run's workload (issue 24): make_spec (so kvlab.run) takes a name or comma list, txn:/mako:
strings, a TOML mix file, a YCSB properties file (or YCSB's core names) and Mix objects; every one is parsed
and checked before anything runs; a mix's own record_count, operation_count, threads, duration and target rate
are used where the run does not give them, and given ones win."""
from pathlib import Path

import pytest

import kvlab
from kvlab import errors
from kvlab.model.spec import make_spec
from kvlab.model.workloads.mako import from_mako
from kvlab.model.workloads.ycsb import from_ycsb

from .conftest import require

TOML = """
name = "shop"
record_count = 2000
operation_count = 600
[[template]]
name = "browse"
weight = 3
txn = "g2"
[[template]]
name = "buy"
txn = "u1"
"""

YCSB = """
recordcount=1500
operationcount=800
readproportion=0.5
updateproportion=0.5
requestdistribution=uniform
"""


@pytest.fixture
def files(tmp_path):
    (tmp_path / "shop.toml").write_text(TOML)
    (tmp_path / "mine.properties").write_text(YCSB)
    return tmp_path


# --- each form of workload string --------------------------------------------------------------------

def test_every_form_resolves(files, monkeypatch):
    monkeypatch.chdir(files)
    assert make_spec("lmdb", "fillseq,readrandom").workloads == ("fillseq", "readrandom")
    assert make_spec("lmdb", "ycsb-b").workloads == ("ycsb-b",)
    assert make_spec("lmdb", "txn:g9u1").workloads == ("txn:g9u1",)
    assert make_spec("lmdb", "mako:g9u1").workloads == ("txn:g9u1",)         # one spelling in the records
    toml = make_spec("lmdb", str(files / "shop.toml"))
    assert toml.workloads == ("shop",) and toml.mixes["shop"].source.startswith("toml:")
    assert make_spec("lmdb", files / "shop.toml").workloads == ("shop",)      # a Path too
    ycsb = make_spec("lmdb", "mine.properties")                               # any other existing file: YCSB
    assert ycsb.workloads == ("ycsb-mine.properties",) and ycsb.mixes["ycsb-mine.properties"].record_count == 1500
    core = make_spec("lmdb", "workloada")                                     # YCSB's core name, no such file
    assert core.workloads == ("ycsb-workloada",) and core.num == 1000
    mix = from_mako("g3", name="three-gets")
    assert make_spec("lmdb", mix).workloads == ("three-gets",)                # a Mix object
    both = make_spec("lmdb", f"fillseq,{files / 'shop.toml'},txn:g1")
    assert both.workloads == ("fillseq", "shop", "txn:g1")


def test_unknown_workload_says_what_is_allowed_and_the_closest_name():
    with pytest.raises(errors.SpecError) as info:
        make_spec("lmdb", "readrandm")
    msg = str(info.value)
    assert "did you mean readrandom?" in msg
    for form in ("fillseq", "ycsb-a", "txn:<mako spec>", "mako:<mako spec>", "TOML mix file", "YCSB properties"):
        assert form in msg
    with pytest.raises(errors.SpecError, match=r"did you mean ycsb-c\?"):
        make_spec("lmdb", "ycsbc")
    with pytest.raises(errors.SpecError, match=r"did you mean txn:g9u1\?"):
        make_spec("lmdb", "tx:g9u1")
    with pytest.raises(errors.SpecError, match="no such file"):
        make_spec("lmdb", "no/such/workload")
    with pytest.raises(errors.SpecError, match="a directory, not a workload file"):
        make_spec("lmdb", str(Path(__file__).parent))


# --- everything checked at spec time, nothing touched -----------------------------------------------

def test_bad_mako_spec_refused_before_any_database(tmp_path):
    db = tmp_path / "db"
    with pytest.raises(errors.SpecError, match="backwards range.*allowed: a positive length"):
        kvlab.run("lmdb", "txn:gr1:-50", db=str(db), num=100)
    with pytest.raises(errors.SpecError, match="backwards range"):
        make_spec("lmdb", "fillseq", txn="gr1:-50")                 # kvlab run --txn gr1:-50
    with pytest.raises(errors.SpecError, match="mako spec 'g9x'"):
        make_spec("lmdb", "mako:g9x")
    assert not db.exists()


@pytest.mark.parametrize("text, message", [
    ("[[template]]\ntxn = 'g'\ncolour = 1", "colour unknown; allowed"),
    ("name = ", "is not valid TOML"),
    ("[[template]]\ntxn = 'g'\n[run]\nnum = 5", "num is record_count"),
    ("[[template]]\ntxn = 'g'\n[run]\nthreads = 0", "threads=0 is out of range"),
    ("[[template]]\ntxn = 'g'\n[run]\nduration = -1", "duration=-1 is out of range"),
    ("name = 'fillseq'\n[[template]]\ntxn = 'g'", "taken by a built-in workload"),
])
def test_bad_toml_file_refused_by_make_spec(tmp_path, text, message):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(errors.SpecError, match=message):
        make_spec("lmdb", str(f))


def test_missing_toml_file(tmp_path):
    with pytest.raises(errors.SpecError, match="cannot be read.*expected: a readable TOML mix file"):
        make_spec("lmdb", str(tmp_path / "gone.toml"))


@pytest.mark.parametrize("prop, message", [
    ("threadcount=x", "threadcount='x' is not a number"),
    ("threadcount=0", "threads=0 is out of range.*threadcount"),
    ("target=-5", "target='-5' is out of range"),
    ("maxexecutiontime=-1", "maxexecutiontime='-1' is out of range"),
    ("readproportion=lots", "readproportion='lots' is not a number"),
    ("threadcont=2", "did you mean threadcount"),
])
def test_bad_ycsb_values_refused_by_make_spec(tmp_path, prop, message):
    f = tmp_path / "w.properties"
    f.write_text(YCSB + prop + "\n")
    with pytest.raises(errors.SpecError, match=message):
        make_spec("lmdb", str(f))


def test_mixes_that_disagree_need_the_value_given(files):
    with pytest.raises(errors.SpecError, match="different record_count.*give num="):
        make_spec("lmdb", f"ycsb-a,{files / 'shop.toml'}")
    assert make_spec("lmdb", f"ycsb-a,{files / 'shop.toml'}", num=4000, reads=100).num == 4000


# --- a mix's own counts, and explicit values winning -------------------------------------------------

def test_toml_record_and_operation_counts_run(files):
    require("lmdb")
    r = kvlab.run("lmdb", str(files / "shop.toml"), threads=2, seed=1, interval=0)
    load, shop = r
    assert load.phase == "load" and load.ops == 2000                 # the mix's record_count, not 1,000,000
    assert shop.workload == "shop" and shop.threads == 2
    assert shop.mix["transactions"] == 600                            # operation_count in total: 300 per client
    notes = shop.mix["definition"]["notes"]
    assert any("num=2000 from the mix's record_count" in n for n in notes)
    assert any("reads=300 per thread from the mix's operation_count=600 over 2 thread(s)" in n for n in notes)


def test_ycsb_preset_loads_its_record_count():
    require("lmdb")
    load, a = kvlab.run("lmdb", "ycsb-a", seed=2, interval=0)
    assert load.ops == 1000 and a.mix["transactions"] == 1000       # YCSB's core file: 1000 and 1000
    spec = make_spec("lmdb", "ycsb-a", threads=4)
    assert (spec.num, spec.reads, spec.threads) == (1000, 250, 4)    # operationcount split over the clients


def test_explicit_values_win():
    require("lmdb")
    load, a = kvlab.run("lmdb", "ycsb-a", num=3000, reads=200, threads=2, seed=2, interval=0)
    assert load.ops == 3000 and a.mix["transactions"] == 400
    assert make_spec("lmdb", "ycsb-a", num=None, reads=None).num == 1000   # None: not given
    assert make_spec("lmdb", "ycsb-a", duration=2.0).reads is None          # by time: no count from the mix
    # db_bench's workloads are as they were
    spec = make_spec("lmdb", "fillseq,readrandom")
    assert (spec.num, spec.reads, spec.threads, spec.duration) == (1_000_000, None, 1, 0.0)


def test_ycsb_threadcount_target_and_maxexecutiontime(tmp_path):
    require("lmdb")
    f = tmp_path / "paced"
    f.write_text(YCSB + "threadcount=2\ntarget=2000\nmaxexecutiontime=1\n")
    mix = from_ycsb([f])
    assert (mix.threads, mix.duration, mix.pacing.target_rate) == (2, 1, 2000)
    assert not any("not used" in n for n in mix.notes)               # used now, no longer "not used"
    spec = make_spec("lmdb", str(f))
    assert (spec.num, spec.threads, spec.duration, spec.reads) == (1500, 2, 1, None)   # by time, not by count
    given = make_spec("lmdb", str(f), threads=1, duration=0.5, target_rate=500)
    assert (given.threads, given.duration, given.target_rate) == (1, 0.5, 500)
    by_count = make_spec("lmdb", str(f), duration=0)                         # explicit 0: by count, from the mix
    assert (by_count.duration, by_count.reads) == (0, 400)
    closed = make_spec("lmdb", str(f), target_rate=0)                        # explicit 0: closed loop
    assert not closed.mixes[closed.workloads[0]].pacing.open_loop
    load, b = kvlab.run("lmdb", str(f), seed=3, interval=0)
    assert load.ops == 1500 and b.threads == 2
    assert b.mix["pacing"]["mode"] == "open" and b.mix["pacing"]["target_rate"] == 2000
    assert b.seconds == pytest.approx(1.0, abs=0.5)
    assert b.mix["transactions"] == pytest.approx(2000, rel=0.3)      # 2000 txn/s for one second
    # the CLI's mapping of `kvlab ycsb -P FILE -p k=v -threads N`: the Mix with overrides, explicit threads
    over = from_ycsb([f], ["recordcount=700", "threadcount=4"])
    spec = make_spec("lmdb", over.name, mixes={over.name: over}, threads=3)
    assert (spec.num, spec.threads, spec.duration) == (700, 3, 1)
