"""Bad input gets a clear error; kvlab only touches directories it made."""
import os

import pytest

import kvlab
from kvlab import _native, cli, errors

from .conftest import require


def test_refuses_non_empty_foreign_directory(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(errors.UnsafeDirectory, match="not created by kvlab"):
        kvlab.run("lmdb", "fillseq", num=100, db=str(tmp_path))
    assert (tmp_path / "precious.txt").read_text() == "keep me"
    assert sorted(os.listdir(tmp_path)) == ["precious.txt"]


def test_empty_directory_is_adopted_and_kept(tmp_path):
    require("lmdb")
    d = tmp_path / "mine"
    d.mkdir()
    kvlab.run("lmdb", "fillseq", num=100, db=str(d))
    assert d.is_dir() and (d / ".kvlab-db").exists()
    # a second fresh run clears its own database, keeps the directory
    kvlab.run("lmdb", "fillseq,readrandom", num=50, db=str(d))
    assert d.is_dir()


def test_use_existing_db_keeps_data(tmp_path):
    require("rocksdb")
    d = tmp_path / "db"
    kvlab.run("rocksdb", "fillseq", num=1000, db=str(d))
    r = kvlab.run("rocksdb", "readrandom", num=1000, reads=500, db=str(d), use_existing_db=True)
    assert r[0].phase == "run" and r[0].found == 500


def test_use_existing_db_engine_mismatch(tmp_path):
    require("lmdb")
    d = tmp_path / "db"
    kvlab.run("lmdb", "fillseq", num=100, db=str(d))
    with pytest.raises(errors.UnsafeDirectory, match="holds a lmdb database"):
        kvlab.run("rocksdb", "readrandom", num=100, db=str(d), use_existing_db=True)


def test_temporary_directory_removed(tmp_path, monkeypatch):
    require("lmdb")
    monkeypatch.setenv("KVLAB_TMPDIR", str(tmp_path))
    kvlab.run("lmdb", "fillseq", num=100)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kwargs, message", [
    ({"engine": "nosuchdb"}, "allowed: lmdb, leveldb"),
    ({"workload": "readfast"}, "allowed: a name \\(db_bench.s fillseq"),
    ({"threads": 0}, "threads=0 is out of range"),
    ({"value_size": -1}, "value_size=-1 is out of range"),
    ({"num": "many"}, "num must be an integer"),
    ({"colour": "blue"}, "parameter 'colour' is unknown"),
    ({"engine": "leveldb", "compression": "zstd"}, "allowed: none, snappy"),
    ({"key_size": 8, "num": 10**8}, "does not fit"),
])
def test_bad_input_errors_list_allowed(kwargs, message):
    args = {"engine": "lmdb", "workload": "fillseq", "num": 100, **kwargs}
    with pytest.raises(errors.SpecError, match=message):
        kvlab.run(args.pop("engine"), args.pop("workload"), **args)


def test_lmdb_map_full_is_an_exception(tmp_path):
    require("lmdb")
    with pytest.raises(errors.EngineFull, match="MDB_MAP_FULL"):
        # just under the map in keys and values (the size check lets it by), over it with LMDB's pages
        kvlab.run("lmdb", "fillseq", num=2_400, value_size=400, map_size=1 << 20, db=str(tmp_path / "db"))
    # the database is still consistent and opens
    with _native.Engine("lmdb", str(tmp_path / "db"), {"map_size": 1 << 20}) as e:
        e.scan(limit=1)


def test_engine_rejects_bad_options_with_its_message(tmp_path):
    require("rocksdb")
    with pytest.raises(errors.EngineConfigError, match="Could not find option"):
        kvlab.run("rocksdb", "fillseq", num=10, options="no_such_option=3")
    require("lmdb")
    with pytest.raises(errors.EngineConfigError, match="allowed: nosync"):
        kvlab.run("lmdb", "fillseq", num=10, options="fast")
    require("wiredtiger-btree")
    with pytest.raises(errors.EngineError, match="WiredTiger"):
        kvlab.run("wiredtiger-btree", "fillseq", num=10, options="cache_size=-5")


def test_cli_errors_exit_2(capsys):
    assert cli.main(["run", "--engine", "nosuchdb", "--num", "10"]) == 2
    assert "allowed:" in capsys.readouterr().err
    assert cli.main(["dbbench", "--engine", "lmdb", "--frobnicate=1"]) == 2
    assert "not a db_bench flag" in capsys.readouterr().err
    assert cli.main(["dbbench", "--engine", "lmdb", "--num=ten"]) == 2


def test_engine_not_built_names_package(monkeypatch):
    from kvlab.execution import native
    monkeypatch.setattr(native, "built_adapters", lambda: {})
    with pytest.raises(errors.EngineNotBuilt, match="install liblmdb-dev"):
        kvlab.run("lmdb", "fillseq", num=10)
