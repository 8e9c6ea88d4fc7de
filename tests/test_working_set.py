"""Working set against cache (issue 34, item 3): a reading phase over data larger than the engine's cache warns
once, with both sizes and where the reads then go."""
import kvlab
from kvlab.execution.run import workingset

from .conftest import require


def _cache_warnings(result):
    return [w for b in result for w in b.warnings if "is smaller than its data" in w or "larger than memory" in w]


def test_wiredtiger_over_its_default_cache_warns_with_both_sizes(tmp_path):
    require("wiredtiger-btree")
    # 130k x 1000 B: about 130 MiB of data against WiredTiger's default 100 MB cache
    r = kvlab.run("wiredtiger-btree", "fillseq,readrandom", num=130_000, value_size=1000, reads=20_000,
                  db=str(tmp_path / "db"))
    said = _cache_warnings(r)
    assert len(said) == 1, said
    assert "its default cache, 100 MiB (wiredtiger_open's cache_size default, 100MB)" in said[0]
    assert "MiB)" in said[0].split("smaller than its data")[1] and "OS page cache" in said[0]
    # a cache that holds the data: nothing to say
    r = kvlab.run("wiredtiger-btree", "fillseq,readrandom", num=130_000, value_size=1000, reads=20_000,
                  cache_size=512 << 20, db=str(tmp_path / "db2"))
    assert _cache_warnings(r) == []


def test_small_data_and_lmdb_within_memory_say_nothing():
    require("lmdb")
    assert _cache_warnings(kvlab.run("lmdb", "fillseq,readrandom", num=20_000)) == []
    assert workingset.warning("lmdb", {}, 10 << 30, 64 << 30) is None


def test_lmdb_past_memory_and_a_given_cache_are_named():
    text = workingset.warning("lmdb", {}, 10 << 30, 4 << 30)
    assert "no cache of its own" in text and "10,240 MiB" in text and "4,096 MiB" in text and "device" in text
    text = workingset.warning("rocksdb", {"cache_size": 8 << 20}, 1 << 30, 64 << 30)
    assert "cache_size=8 MiB" in text and "1,024 MiB" in text
    assert workingset.warning("null", {}, 1 << 40, 1 << 30) is None
