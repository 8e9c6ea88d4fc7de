"""Each result keeps the configuration the engine reports about itself (provenance's `engine_config_reported`,
read by the descriptor's `own_config`), and `kvlab results diff` names the settings two runs differ in."""
import json

import pytest

import kvlab
from kvlab import cli, engines
from kvlab.engines.descriptor import Absent, config_pairs
from kvlab.results import diff
from kvlab.results.store import Store

from .conftest import require


def reported(engine: str, workloads: str = "fillrandom", num: int = 5_000, **settings) -> dict:
    require(engine)
    p = kvlab.run(engine, workloads, num=num, seed=3, **settings)[-1].provenance
    assert p["engine_config_reported"] is not None, p.get("engine_config_reported_note")
    return p["engine_config_reported"]


def test_every_storing_engine_reads_its_own_config_and_the_null_engine_says_why():
    for name, d in engines.DESCRIPTORS.items():
        if d.planned or not any(c.stores_data for c in d.configs):
            assert isinstance(d.own_config, Absent) and d.own_config.reason, name
        else:
            assert callable(d.own_config), f"{name}: no own_config (kvlab/engines/{name}/own_config.py)"
    require("null")
    p = kvlab.run("null", "fillrandom", num=1_000, seed=1)[0].provenance
    assert p["engine_config_reported"] is None and "stores nothing" in p["engine_config_reported_note"]


def test_rocksdb_reports_its_options_file():
    got = reported("rocksdb", cache_size=1 << 20, write_buffer_size=8 << 20)
    assert got["CFOptions.write_buffer_size"] == str(8 << 20)   # as RocksDB prints it in OPTIONS-NNNNNN
    assert got["block_cache.capacity"] == str(1 << 20)          # its LOG's block cache options
    assert got["Version.rocksdb_version"] == kvlab.execution.native.load().adapters()["rocksdb"]
    assert "DBOptions.max_background_jobs" in got and "TableOptions.block_size" in got


def test_wiredtiger_reports_its_cache_and_table():
    got = reported("wiredtiger-btree", cache_size=64 << 20)
    assert got["connection.cache_size"] == 64 << 20        # its statistic "cache: maximum bytes configured"
    assert got["connection.statistics"] == "(none)"        # WiredTiger.basecfg: its costly counters off by default
    assert got["table.key_format"] == "u" and got["table.format"] == "btree"
    assert "table.leaf_page_max" in got and "table.checkpoint" not in got
    lsm = reported("wiredtiger-lsm")
    assert lsm["connection.cache_size"] == 100 << 20        # WiredTiger's own default
    assert "chunk_size=" in lsm["table.lsm"]


def test_leveldb_reports_what_it_recorded():
    got = reported("leveldb", num=20_000, write_buffer_size=64 << 10, bloom_bits=10)
    assert got["comparator"] == "leveldb.BytewiseComparator"   # its MANIFEST
    assert got["filter_policy"] == "leveldb.BuiltinBloomFilter2"   # its table files' metaindex
    # LevelDB 1.23's LOG has no Options.* lines; where a build writes them they are kept
    assert all(k.startswith("Options.") for k in got if k not in ("comparator", "filter_policy"))


def test_leveldb_log_options_lines_are_read(tmp_path):
    from kvlab.engines.leveldb.own_config import own_config
    (tmp_path / "LOG").write_text("2026/11/27-04:39:13.777101 7f Options.write_buffer_size: 65536\n"
                                  "2026/11/27-04:39:13.777102 7f Options.comparator: leveldb.BytewiseComparator\n")
    assert own_config(tmp_path, None) == {"Options.write_buffer_size": "65536",
                                          "Options.comparator": "leveldb.BytewiseComparator"}


def test_lmdb_reports_its_map_size():
    got = reported("lmdb", map_size=256 << 20)
    assert got["map_size"] == 256 << 20 and got["page_size"] >= 4096 and got["max_readers"] >= 1


def test_bdb_reports_its_page_size():
    assert reported("bdb")["page_size"] >= 512


def test_sqlite_reports_its_pragmas_and_splits_its_cache_over_the_connections():
    """sync is synchronous=FULL (on) or NORMAL (off), block_size the page size the file is made with, options
    reach SQLite as PRAGMAs, and cache_size is divided over the max_threads connections (kvlab.run: threads + 2)."""
    got = reported("sqlite", sync=True, block_size=8192, cache_size=12 << 20, options="wal_autocheckpoint=500")
    assert got["synchronous"] == "FULL" and got["journal_mode"] == "wal" and got["page_size"] == 8192
    assert got["wal_autocheckpoint"] == 500 and got["cache_size_kib_per_thread"] == (12 << 20) // 3 // 1024
    assert reported("sqlite", sync=False)["synchronous"] == "NORMAL"
    assert reported("sqlite", options="synchronous=off")["synchronous"] == "OFF"


def test_sqlite_refuses_an_unknown_option_naming_those_it_takes():
    require("sqlite")
    with pytest.raises(kvlab.errors.EngineConfigError, match=r"journal_mode.* is unknown; allowed: synchronous"):
        kvlab.run("sqlite", "fillseq", num=100, options="journal_mode=delete")
    with pytest.raises(kvlab.errors.EngineConfigError, match=r"must be a word or a number"):
        kvlab.run("sqlite", "fillseq", num=100, options="mmap_size=1 OR 1")
    with pytest.raises(kvlab.errors.EngineConfigError, match=r"block_size 1000: .* power of two from 512 to 65536"):
        kvlab.run("sqlite", "fillseq", num=100, block_size=1000)


def test_config_pairs_splits_at_the_top_level():
    assert config_pairs('a=1,b=(c=2,d=3),e=[x,y],f="g,h",i=') == {"a": "1", "b": "(c=2,d=3)", "e": "[x,y]",
                                                                  "f": '"g,h"', "i": ""}


def test_results_diff_names_the_cache_and_nothing_equal(tmp_path, capsys):
    require("wiredtiger-btree")
    store = Store(tmp_path / "s.duckdb")
    small = store.append(kvlab.run("wiredtiger-btree", "fillrandom", num=5_000, seed=5))
    big = store.append(kvlab.run("wiredtiger-btree", "fillrandom", num=5_000, seed=5, cache_size=256 << 20))
    frame = diff.diff(small, big, store=store)
    rows = {r["setting"]: (r["a"], r["b"]) for r in frame.to_dict("records")}
    assert rows == {"config.given.cache_size": ("(none)", str(256 << 20)),
                    "config.passed.cache_size": ("(none)", str(256 << 20)),
                    "config.reported.connection.cache_size": (str(100 << 20), str(256 << 20))}
    assert diff.diff(small, small, store=store).empty
    out = tmp_path / "d.json"
    assert cli.main(["results", "diff", small, big, "--store", str(store.path), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "config.reported.connection.cache_size" in text and "spec.num" not in text
    assert {r["setting"] for r in json.loads(out.read_text())} == set(rows)


def test_results_diff_refuses_an_empty_side(tmp_path):
    require("lmdb")
    store = Store(tmp_path / "s.duckdb")
    run = store.append(kvlab.run("lmdb", "fillrandom", num=1_000, seed=5))
    with pytest.raises(kvlab.errors.ResultsError, match="selects no benchmark"):
        diff.diff(run, "tag:nothing", store=store)
