"""The null engine: no storage (YCSB's BasicDB), for measuring the harness alone."""
import kvlab
from kvlab import engines
from kvlab.execution import native


def test_every_get_finds_and_nothing_is_stored(tmp_path):
    r = kvlab.run("null", "fillseq,readrandom,readmissing,seekrandom", num=20_000, seed=1, db=str(tmp_path / "db"))
    for b in r:
        assert b.ops == 20_000 and b.accounting["db_size_bytes"] <= 4096   # the .kvlab-db marker only
        if b.workload != "fillseq":
            assert b.found == 20_000 and b.not_found == 0      # even keys never written: nothing is stored
    facts = r[0].versions["engine_build"]
    assert facts["origin"] == "compiled into kvlab (no library)" and facts["library"] is None


def test_listed_as_not_a_storage_engine_and_left_out_of_compare():
    assert not engines.get("null").stores_data
    row = next(r for r in native.describe() if r["engine"] == "null")
    assert row["built"] and not row["stores_data"] and row["version"] == "1.0"
    assert all(engines.get(n).stores_data for n in ("lmdb", "rocksdb", "wiredtiger-btree", "bdb"))
