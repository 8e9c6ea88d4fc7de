"""Figures that are right (issue 34, item 5): the database's size is its live files (what `du` says after close),
with preallocation apart; seed 001's total size is the DB after close plus the process's own memory; a write
figure whose bytes are still in the page cache is None with that reason, not 'amplification 0'."""
import ctypes
import mmap
import os

import pytest

import kvlab
from kvlab.execution.dbfiles import dbdir
from kvlab.execution.host import accounting
from kvlab.lab.seeds import readwhilewriting
from kvlab.results import amplification

from .conftest import require


def _allocated(path) -> int:
    """What `du` counts: st_blocks x 512 of every file under path."""
    return sum(os.lstat(os.path.join(root, f)).st_blocks * 512 for root, _, files in os.walk(path) for f in files)


def test_rocksdb_size_is_its_live_files_within_10pct_of_du_after_close(tmp_path):
    require("rocksdb")
    db = tmp_path / "db"
    b = kvlab.run("rocksdb", "fillseq", num=20_000, value_size=100, keep_db=True, db=str(db), interval=0)[0]
    a = b.accounting
    du = _allocated(db)   # after close
    # before the fix: 78,053,376 bytes (74.4 MiB, its WAL's preallocation) against 2.8 MB, space_amp 33.6
    assert a["db_size_bytes"] == pytest.approx(du, rel=0.10), (a["db_size_bytes"], du)
    assert a["db_size_after_close_bytes"] == pytest.approx(du, rel=0.10)
    assert a["db_preallocated_bytes"] >= 0
    assert b.amplification["space_amp"] < 1.5, b.amplification


def test_disk_usage_splits_a_preallocated_file_and_a_sparse_one(tmp_path):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    wal = tmp_path / "000004.log"
    with open(wal, "wb") as f:   # as RocksDB's WAL: 1 MiB preallocated past its end, 10,000 bytes written
        if libc.fallocate(f.fileno(), 1, 0, 1 << 20) != 0:   # FALLOC_FL_KEEP_SIZE
            pytest.skip(f"no fallocate(KEEP_SIZE) here: {os.strerror(ctypes.get_errno())}")
        f.write(b"x" * 10_000)
    sparse = tmp_path / "data.mdb"
    with open(sparse, "wb") as f:   # as LMDB's map: 64 MiB long, 8 KiB written
        f.truncate(64 << 20)
        f.write(b"y" * 8192)
    live, preallocated = dbdir.disk_usage(tmp_path)
    blk = os.stat(wal).st_blksize
    assert live == -(-10_000 // blk) * blk + os.stat(sparse).st_blocks * 512
    assert live + preallocated == _allocated(tmp_path) and preallocated >= (1 << 20) - 3 * blk
    assert dbdir.size_on_disk(tmp_path) == live


def test_mapped_resident_counts_the_pages_of_mapped_files_under_a_path(tmp_path):
    f = tmp_path / "data.mdb"
    f.write_bytes(b"\0" * (1 << 20))
    with open(f, "r+b") as fh, mmap.mmap(fh.fileno(), 1 << 20) as m:
        for i in range(0, 1 << 20, 4096):
            m[i] = 1
        assert accounting.mapped_resident(tmp_path) >= 1 << 20
    assert accounting.mapped_resident(tmp_path / "elsewhere") == 0


@pytest.mark.parametrize("engine", ["leveldb", "lmdb"])
def test_seed001_total_is_the_db_after_close_plus_the_process(engine):
    require(engine)
    b = kvlab.run(engine, "fillseq", num=20_000, value_size=100, interval=0)[0]
    a = b.accounting
    row = readwhilewriting._row(engine, b)
    assert row["total_size_kb"] * 1024 == a["db_size_after_close_bytes"] + a["process_size_bytes"]
    # before the fix LevelDB's total was under the process's peak alone (every file-backed page subtracted)
    assert row["total_size_kb"] >= row["process_size_kb"], row
    if engine == "lmdb":   # its data is the process's map: the seed's total is about the process's size
        assert row["total_size_kb"] == pytest.approx(row["process_size_kb"], rel=0.05), row


def test_lmdb_writes_still_in_the_page_cache_are_none_not_zero(tmp_path):
    """An overwrite right after a fillrandom rewrites pages the fill left dirty: /proc/self/io counts none of them
    (before the fix: write_amp 0.0, or 0.00003, for the same trial that read 6.53 on clean pages)."""
    require("lmdb")
    r = kvlab.run("lmdb", "fillrandom,overwrite", num=50_000, value_size=100, sync=False, db=str(tmp_path / "db"),
                  interval=0)
    fill, over = r.by_workload("fillrandom"), r.by_workload("overwrite")
    for b in (fill, over):
        a = b.amplification
        for fig in ("write_amp", "write_amp_device"):
            if a[fig] is None and fig in a["notes"] and "saw" in a["notes"][fig]:
                assert "page cache" in a["notes"][fig] and "not 'amplification 0'" in a["notes"][fig]
            else:
                assert a[fig] is None or a[fig] >= amplification.RESOLUTION_FRACTION, (fig, a)
    a = over.amplification
    if a["written_bytes"] < amplification.RESOLUTION_FRACTION * a["user_write_bytes"]:
        assert a["write_amp"] is None and "page cache" in a["notes"]["write_amp"], a


def test_a_write_figure_below_the_resolution_is_none_with_its_reason():
    why = amplification.storage_notes({"fstype": "ext4"}, "sda", "")
    live = amplification.live_start(True)
    delta = {"io_write_bytes": 70, "disk_write_bytes": 0, "disk_reads": 0, "disk_read_bytes": 0}
    a = amplification.figures(user_bytes=2_320_000, reads=0, delta=delta, allocated=None, live=live,
                              storage_why=why)
    for fig in ("write_amp", "write_amp_device"):
        assert a[fig] is None and "page cache" in a["notes"][fig], a
    # at the resolution it is a figure; below 1 it is none, with the ratio seen and why (issue 46: bytes not yet
    # written back are not amplification)
    delta = {"io_write_bytes": 232_000, "disk_write_bytes": 4_640_000, "disk_reads": 0, "disk_read_bytes": 0}
    a = amplification.figures(user_bytes=2_320_000, reads=0, delta=delta, allocated=None, live=live,
                              storage_why=why)
    assert a["write_amp"] is None and "below 1 (0.1)" in a["notes"]["write_amp"]
    assert a["write_amp_device"] == pytest.approx(2.0)
    iv = amplification.interval_figures(user_bytes=2_320_000, reads=0, delta={"io_write_bytes": 0,
                                        "disk_write_bytes": 8192}, allocated=None, live_bytes=None,
                                        storage_why=why)
    assert iv["write_amp"] is None and iv["write_amp_device"] is None


def test_a_warmup_longer_than_a_count_bounded_phase_is_said():
    """Issue 46: the sampler's warm-up mark never came in a phase shorter than it, and the phase was counted whole
    without a word."""
    import kvlab
    r = kvlab.run("lmdb", "fillseq,readrandom", num=20_000, warmup=5, interval=0.1, seed=1)
    b = r.by_workload("readrandom")
    assert b.warmup is None and b.seconds < 5
    assert any("the warm-up of 5 s is longer than readrandom" in w and "nothing was cut" in w for w in b.warnings)
