"""`kvlab rerun` and `kvlab.run(**spec_dict)` (issue 28, item 7): a stored run runs again exactly, drawing
the same key stream (the same ops, found and not-found counts); --set changes what it says."""
import json

import pytest

import kvlab
from kvlab import cli
from kvlab.model.spec import RunSpec, make_spec
from kvlab.store import Store

from .conftest import require

QUIET = ["--quiet", "--progress", "off"]


def _stored(store, capsys, argv):
    """Run a kvlab command into `store`; the run id it stored and its records."""
    before = set(Store(store).frame().run_id) if store.exists() else set()
    assert cli.main([*argv, "--store", str(store), *QUIET]) == 0
    capsys.readouterr()
    (run_id,) = set(Store(store).frame().run_id) - before
    return run_id, Store(store).load(run_id=run_id)


def _counts(result):
    return [(b.workload, b.phase, b.ops, b.found, b.not_found) for b in result]


def _rerun(store, capsys, run_id, *more):
    code = cli.main(["rerun", run_id, "--store", str(store), *more, "--progress", "off"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out, Store(store).load(tag=f"rerun-of:{run_id}")


def test_a_rerun_draws_the_same_key_stream(tmp_path, capsys):
    """fillrandom leaves ~63% of the key space written, so readrandom's found count depends on both key
    streams: the rerun finds exactly as many, and another seed does not."""
    require("lmdb")
    store = tmp_path / "s.duckdb"
    run_id, original = _stored(store, capsys, ["run", "--engine", "lmdb", "--workload",
                                               "fillrandom,readrandom,readmissing", "--num", "20000", "--seed", "7"])
    found = original.by_workload("readrandom").found
    assert 0.55 * 20000 < found < 0.7 * 20000
    out, again = _rerun(store, capsys, run_id)
    assert _counts(again) == _counts(original)
    assert [b.seed for b in again] == [7, 7, 7] and all(f"rerun-of:{run_id}" in b.tags for b in again)
    assert again[0].provenance["spec"] == original[0].provenance["spec"]
    rows = _key_table(out)
    assert len(rows) == 3 and all(ln.rstrip().endswith("yes") for ln in rows)
    assert f"{found:,}/{20000 - found:,}" in out
    # then the comparison, as kvlab results compare prints it (A: the original)
    assert f"A: {run_id}" in out and "ops/s, higher is better" in out and "p99 latency (us)" in out
    # a unique prefix of the id does; another seed draws other keys
    out, _ = _rerun(store, capsys, run_id[:6], "--set", "seed=8", "--no-store")
    other = [ln for ln in _key_table(out) if ln.startswith("readrandom")]
    assert len(other) == 1 and other[0].rstrip().endswith("no")


def _key_table(out):
    """The rows of the rerun's table of keys against the original's."""
    lines = out[out.index("the rerun's keys against the original's"):].splitlines()[2:]
    return lines[:next(i for i, ln in enumerate(lines) if ln.startswith("  found:"))]


def test_a_rerun_of_a_ycsb_file_needs_no_file(tmp_path, capsys):
    """The mix is stored as data: the file may be gone; the same transactions of each kind, the same keys."""
    require("lmdb")
    props = tmp_path / "mine.properties"
    props.write_text("recordcount=3000\noperationcount=6000\nreadproportion=0.7\nupdateproportion=0.2\n"
                     "insertproportion=0.1\nrequestdistribution=zipfian\ninsertorder=hashed\n")
    store = tmp_path / "s.duckdb"
    run_id, original = _stored(store, capsys, ["ycsb", "-P", str(props), "--engine", "lmdb", "--seed", "11"])
    props.unlink()
    _, again = _rerun(store, capsys, run_id)
    assert _counts(again) == _counts(original)
    a, b = original[-1].mix, again[-1].mix
    assert a["ops_by_type"] == b["ops_by_type"] and a["transactions"] == b["transactions"] == 6000
    assert {t: v["count"] for t, v in a["templates"].items()} == {t: v["count"] for t, v in b["templates"].items()}


def test_a_rerun_of_a_ycsb_load_loads_only(tmp_path, capsys):
    require("lmdb")
    store = tmp_path / "s.duckdb"
    run_id, original = _stored(store, capsys, ["ycsb", "-P", "workloadc", "-p", "recordcount=2000", "-load",
                                               "--db", str(tmp_path / "db"), "--engine", "lmdb", "--seed", "3"])
    assert [b.phase for b in original] == ["load"]
    _, again = _rerun(store, capsys, run_id, "--db", str(tmp_path / "db2"))
    assert _counts(again) == _counts(original)


def test_set_changes_the_rerun_and_is_checked(tmp_path, capsys):
    require("lmdb")
    store = tmp_path / "s.duckdb"
    run_id, original = _stored(store, capsys, ["run", "--engine", "lmdb", "--workload", "fillseq,readrandom",
                                               "--num", "5000", "--seed", "5"])
    out, again = _rerun(store, capsys, run_id, "--set", "value_size=400", "--tag", "bigger")
    assert [b.params["value_size"] for b in again] == [400, 400]
    assert again[0].provenance["spec"]["value_size"] == 400 and original[0].params["value_size"] == 100
    assert (original[0].bytes, again[0].bytes) == (5000 * (16 + 100), 5000 * (16 + 400))   # keys and values written
    assert set(again[0].tags) == {"bigger", f"rerun-of:{run_id}"}
    assert "changed: value_size=400" in out
    # an engine setting, validated as in any spec
    _, _ = _rerun(store, capsys, run_id, "--set", "map_size=1073741824", "--no-store")
    for argv, said in ((["--set", "nmu=5"], "'nmu' is no run field or engine setting (did you mean num?)"),
                       (["--set", "num=many"], "num takes an integer, got 'many'"),
                       (["--set", "threads=0"], "threads=0 is out of range"),
                       (["--set", "db=/tmp/x"], "use --db DIR"),
                       (["--set", "num=10", "--set", "num=20"], "num was given twice"),
                       (["--set", "compression=zstd"], "compression 'zstd' is not available for lmdb")):
        assert cli.main(["rerun", run_id, "--store", str(store), *argv, *QUIET]) == 2
        err = capsys.readouterr().err
        # the first thing said is the error (a note on what killed runs elsewhere left may come before it)
        said_first = [line for line in err.splitlines() if not line.startswith("kvlab: note:")][0]
        assert said_first.startswith("kvlab: error:") and said in err, (argv, err)
    assert cli.main(["rerun", "nosuchrun", "--store", str(store), *QUIET]) == 2
    assert "no run 'nosuchrun'" in capsys.readouterr().err
    assert len(Store(store).load(tag=f"rerun-of:{run_id}")) == 2   # the failed ones stored nothing


def _as_stored(spec_dict):
    return json.loads(json.dumps(spec_dict))   # as the store and --json give it back


def test_kvlab_run_round_trips_a_stored_db_bench_spec():
    require("lmdb")
    r = kvlab.run("lmdb", "fillrandom,readrandom", num=5000, seed=3, interval=0, cache_size=1 << 20)
    d = _as_stored(r[-1].provenance["spec"])
    assert RunSpec.from_dict(d).to_dict() == d and make_spec(**d).to_dict() == d
    again = kvlab.run(**d)
    assert _counts(again) == _counts(r)
    with pytest.raises(kvlab.SpecError, match="not both"):
        kvlab.run(workload="readrandom", **d)
    with pytest.raises(kvlab.SpecError, match="spec field.* unknown"):
        RunSpec.from_dict({**d, "speed": 1})


def test_kvlab_run_round_trips_a_stored_mix_spec(tmp_path):
    require("lmdb")
    toml = tmp_path / "mix.toml"
    # the counts YCSB's core workloads say (1,000 records, 1,000 operations), so the two mixes agree
    toml.write_text('name = "mine"\ndistribution = "zipfian"\nrecord_count = 1000\noperation_count = 1000\n'
                    '[[template]]\nname = "read"\nweight = 3\ntxn = "g2"\n'
                    '[[template]]\nname = "scan"\nweight = 1\nops = [{ kind = "scan", length = 20 }]\n')
    r = kvlab.run("lmdb", f"ycsb-a,{toml}", seed=9, interval=0)
    d = _as_stored(r[-1].provenance["spec"])
    assert set(d["mixes"]) == {"ycsb-a", "mine"} and all(isinstance(m, dict) for m in d["mixes"].values())
    spec = RunSpec.from_dict(d)
    assert spec.to_dict() == d and make_spec(**d).to_dict() == d
    toml.unlink()
    again = kvlab.run(**d)
    assert _counts(again) == _counts(r)
    assert [b.mix["ops_by_type"] for b in again if b.mix] == [b.mix["ops_by_type"] for b in r if b.mix]
    # an open-loop mix keeps its own pacing (target_rate 0 in a stored spec: the mix's own)
    paced = make_spec("lmdb", "txn:g1", target_rate=0, num=1000).to_dict()
    open_loop = {**d, "workloads": ["ycsb-a"],
                 "mixes": {"ycsb-a": {**d["mixes"]["ycsb-a"],
                                      "pacing": {"target_rate": 500.0, "per_client": False, "arrivals": "uniform"}}}}
    assert make_spec(**open_loop).mixes["ycsb-a"].pacing.target_rate == 500.0
    assert RunSpec.from_dict(_as_stored(paced)).to_dict() == paced
