"""Faults beyond the power cut (issue 48): forgetfs fails an fsync (EIO, once; its pages then kept in the cache as
ext4 keeps them, or the file reverted as btrfs does), a write (EIO, once) or every write past a byte budget
(ENOSPC); `kvlab crashtest --fault` runs a real engine through them and cuts the power after.  All skip, with the
reason, where FUSE is not available."""
import errno
import os
import subprocess
import sys
import tempfile

import pytest

from kvlab import cli, errors
from kvlab.execution.crash import crashtest as ct
from kvlab.execution.crash import forgetfs, reboot

from .conftest import require
from .test_powerloss import write

REASON = forgetfs.unavailable_reason()
needs_fuse = pytest.mark.skipif(REASON is not None, reason=f"fault tests need FUSE: {REASON}")


def _mount(tmp_path, fault):
    backing = tmp_path / "backing"
    backing.mkdir()
    return forgetfs.Mount(backing, fault=fault, log=tmp_path / "fs.log")


@needs_fuse
def test_a_failed_write_reaches_the_writer_and_writes_nothing(tmp_path):
    m = _mount(tmp_path, forgetfs.Fault("write-eio", at=2))
    try:
        fd = os.open(m.path / "f", os.O_CREAT | os.O_WRONLY, 0o644)
        assert os.write(fd, b"a" * 100) == 100
        with pytest.raises(OSError) as got:
            os.write(fd, b"b" * 100)
        assert got.value.errno == errno.EIO
        assert os.write(fd, b"c" * 100) == 100   # once
        os.fsync(fd)
        os.close(fd)
        assert (m.path / "f").read_bytes() == b"a" * 100 + b"c" * 100
    finally:
        summary = m.cut()
    assert summary["fault"] == {"kind": "write-eio", "at": 2, "errors": 1, "file": "f", "after": "keep",
                                "enospc_left": -1}


@needs_fuse
def test_a_failed_fsync_keeps_its_pages_readable_until_the_cut(tmp_path):
    """ext4's behaviour after a failed fsync (Rebello et al.): the page cache still serves the new data, which never
    reaches the disk; a later fsync succeeds without it."""
    m = _mount(tmp_path, forgetfs.Fault("fsync-eio", at=2, on="^f$"))
    f = m.path / "f"
    try:
        write(f, b"durable.", sync=True)                 # fsync 1 of f: it holds
        fd = os.open(f, os.O_WRONLY)
        os.pwrite(fd, b"NEWDATA!", 0)
        with pytest.raises(OSError) as got:
            os.fsync(fd)                                   # fsync 2 of f: EIO
        assert got.value.errno == errno.EIO
        assert f.read_bytes() == b"NEWDATA!"               # still readable: the cache keeps it
        os.fsync(fd)                                       # and the next fsync says all is well
        write(m.path / "g", b"other", sync=True)          # another file's fsyncs are untouched (--fault-on)
        os.close(fd)
        os.fsync(fd2 := os.open(m.path, os.O_RDONLY))
        os.close(fd2)
    finally:
        summary = m.cut()
    assert summary["fault"]["errors"] == 1 and summary["fault"]["file"] == "f"
    assert (tmp_path / "backing" / "f").read_bytes() == b"durable."   # the cut: what was durable, not the cache
    assert (tmp_path / "backing" / "g").read_bytes() == b"other"


@needs_fuse
@pytest.mark.parametrize("after", ["keep", "evict", "late"])
def test_a_failed_fsyncs_pages_stay_cached_until_the_cut_or_the_close_and_late_reports_at_the_next_fsync(
        tmp_path, after):
    """keep: a process that opens the file after the writer closed it still reads the failed pages (the study's
    "page cache kept"); evict: it reads the durable ones; late (ext4 data=journal): the failing fsync says nothing,
    the next one says EIO."""
    m = _mount(tmp_path, forgetfs.Fault("fsync-eio", at=2, on="^f$", after=after))
    f = m.path / "f"
    try:
        write(f, b"durable.", sync=True)
        os.fsync(dfd := os.open(m.path, os.O_RDONLY))     # its entry durable too
        os.close(dfd)
        fd = os.open(f, os.O_WRONLY)
        os.pwrite(fd, b"NEWDATA!", 0)
        if after == "late":
            os.fsync(fd)                                   # fsync 2: fails, and says nothing
            with pytest.raises(OSError) as got:
                os.fsync(fd)                               # the next one says it
        else:
            with pytest.raises(OSError) as got:
                os.fsync(fd)
        assert got.value.errno == errno.EIO
        os.close(fd)
        for _ in range(100):   # evict: the kernel's cached page goes with the file's last close too
            if after != "evict" or f.read_bytes() == b"durable.":
                break
            os.sched_yield()
        assert f.read_bytes() == (b"durable." if after == "evict" else b"NEWDATA!")
    finally:
        summary = m.cut()
    assert summary["fault"]["after"] == after
    assert (tmp_path / "backing" / "f").read_bytes() == b"durable."


@needs_fuse
def test_a_page_rewritten_after_a_failed_fsync_is_one_page_not_the_failed_copy(tmp_path):
    """The cache holds one page per index: once a write lands on a failed fsync's page, that page is the new one.
    (forgetfs kept the failed copy and served it again after the rewrite was synced: SQLite's WAL then lost every
    transaction after a failed fsync at the cut, a loss of forgetfs' making, not SQLite's.)"""
    m = _mount(tmp_path, forgetfs.Fault("fsync-eio", at=2, on="^f$"))
    f = m.path / "f"
    try:
        write(f, b"A" * 8192, sync=True)
        os.fsync(dfd := os.open(m.path, os.O_RDONLY))
        os.close(dfd)
        fd = os.open(f, os.O_WRONLY)
        os.pwrite(fd, b"B" * 8192, 0)
        with pytest.raises(OSError):
            os.fsync(fd)                     # both pages failed: cached, never written
        os.pwrite(fd, b"C" * 100, 0)         # page 0 rewritten from the cached copy, then synced
        os.fsync(fd)
        os.pwrite(fd, b"D" * 100, 200)       # page 0 again: from the synced page
        os.fsync(fd)
        os.close(fd)
    finally:
        m.cut()
    page0 = b"C" * 100 + b"B" * 100 + b"D" * 100 + b"B" * (4096 - 300)
    assert (tmp_path / "backing" / "f").read_bytes() == page0 + b"A" * 4096   # page 1's failed copy never written


@needs_fuse
def test_a_truncate_drops_a_failed_fsyncs_pages_past_the_end(tmp_path):
    """As the kernel drops cached pages past a truncation: a file cut to 0 and grown again reads zeros, not the
    failed fsync's bytes (SQLite truncates its WAL)."""
    m = _mount(tmp_path, forgetfs.Fault("fsync-eio", at=1, on="^f$"))
    f = m.path / "f"
    try:
        fd = os.open(f, os.O_CREAT | os.O_RDWR, 0o644)
        os.pwrite(fd, b"X" * 8192, 0)
        with pytest.raises(OSError):
            os.fsync(fd)
        os.ftruncate(fd, 100)
        os.ftruncate(fd, 8192)
        # the page below the cut stays cached with its failed bytes up to 100; the rest was dropped: zeros
        assert os.pread(fd, 8192, 0) == b"X" * 100 + b"\0" * 8092
        os.close(fd)
    finally:
        m.cut()


@needs_fuse
def test_a_failed_fsync_with_drop_reverts_the_file_at_once(tmp_path):
    m = _mount(tmp_path, forgetfs.Fault("fsync-eio", at=2, after="drop"))
    f = m.path / "f"
    try:
        write(f, b"durable.", sync=True)
        fd = os.open(f, os.O_RDWR)
        os.pwrite(fd, b"NEWDATA!", 0)
        with pytest.raises(OSError):
            os.fsync(fd)
        for _ in range(100):   # the kernel's cached page is invalidated just after the reply
            if os.pread(fd, 8, 0) == b"durable.":
                break
            os.sched_yield()
        assert os.pread(fd, 8, 0) == b"durable."
        os.close(fd)
    finally:
        m.cut()


@needs_fuse
def test_a_full_disk_refuses_growth_past_its_budget_and_says_so_in_statfs(tmp_path):
    m = _mount(tmp_path, forgetfs.Fault("enospc", enospc_bytes=10_000))
    try:
        before = os.statvfs(m.path)
        assert before.f_bavail * before.f_frsize <= 10_000
        fd = os.open(m.path / "f", os.O_CREAT | os.O_WRONLY, 0o644)
        assert os.write(fd, b"x" * 8_000) == 8_000
        # the kernel sends a write to FUSE a page at a time: the part that fits is written (a short write, as
        # POSIX has it), the rest refused
        short = os.write(fd, b"y" * 4_000)
        assert short == 8_192 - 8_000
        with pytest.raises(OSError) as got:
            os.write(fd, b"y" * (4_000 - short))
        assert got.value.errno == errno.ENOSPC
        os.pwrite(fd, b"z" * 1_000, 0)   # rewriting what is there needs no space
        os.close(fd)
    finally:
        summary = m.cut()
    assert summary["fault"]["kind"] == "enospc" and summary["fault"]["errors"] >= 1


def test_a_fault_is_checked_before_anything_runs(capsys):
    with pytest.raises(errors.SpecError, match="allowed: fsync-eio, write-eio, enospc"):
        forgetfs.Fault("bitflip")
    with pytest.raises(errors.SpecError, match="not a POSIX extended regular expression.*Unmatched"):
        forgetfs.Fault("fsync-eio", on="(")
    with pytest.raises(errors.SpecError, match=r"Python's, not POSIX's: use \[0-9\]"):
        forgetfs.Fault("fsync-eio", on=r"^\d+\.log$")
    assert cli.main(["crashtest", "--engine", "lmdb", "--kills", "1", "--after-error", "drop", "--no-store"]) == 2
    assert "--after-error and --enospc-bytes need --fault NAME" in capsys.readouterr().err
    assert cli.main(["crashtest", "--engine", "lmdb", "--kills", "1", "--fault", "enospc", "--after-error", "drop",
                     "--no-store"]) == 2
    assert "--after-error applies to --fault fsync-eio" in capsys.readouterr().err
    assert cli.main(["crashtest", "--engine", "lmdb", "--kills", "1", "--fault-on", "log", "--no-store"]) == 2
    assert "--fault-at, --fault-on, --go-on and --restart need --fault NAME" in capsys.readouterr().err


@needs_fuse
@pytest.mark.parametrize("engine", ["lmdb", "leveldb", "sqlite"])
def test_a_failed_fsync_reaches_the_writer_which_reads_it_back_and_goes_on(engine):
    """The study's three engines: the writer sees the failed fsync, a get does not return the failed transaction,
    the writer tries more (LMDB and SQLite take them, LevelDB refuses every write after: its error is sticky), and
    the cut after loses nothing acknowledged, before or after the error."""
    require(engine)
    r = ct.crashtest(engine, 1, sync=True, fault=forgetfs.Fault("fsync-eio", at=3), min_s=0.3, max_s=0.5,
                     names="ext4", seed=11, go_on=5)
    s, k = r.summary, r.kills[0]
    assert s["faults_fired"] == 1 and s["writer_errors"] == ["EngineIOError"]
    assert k.readback is not None and k.readback["shown"] == 0 and k.readback["puts"] > 0
    assert (k.acked_after_error, k.later_error) == ((0, k.later_error) if engine == "leveldb" else (5, None))
    if engine == "leveldb":
        assert k.later_error["error"] == "EngineIOError"
    assert s["acked_writes_lost"] == 0 and s["reopen_failures"] == 0 and s["torn_txns"] == 0
    assert k.failed_txn is not None and k.failed_present is False
    row = ct.format_table([r]).splitlines()
    assert "read back" in row[0] and row[2].startswith(engine)


@needs_fuse
def test_rocksdb_on_a_full_disk_reports_it_and_reopens():
    """Debian's RocksDB 7.8.3 has its assertions compiled in: on a full disk it returns the error, or aborts in
    WritableFileWriter (docs/crashtest.md); either way the caller learns of it and the database reopens."""
    require("rocksdb")
    r = ct.crashtest("rocksdb", 1, sync=True, fault=forgetfs.Fault("enospc", enospc_bytes=200_000), min_s=1.0,
                     max_s=2.0, names="ext4", seed=5, go_on=0)
    k = r.kills[0]
    assert k.fault and k.fault["errors"] >= 1
    assert k.writer_error is not None and (k.writer_error["error"] == "EngineFull" or (
        k.writer_error["error"] == "died: SIGABRT" and "sync_without_flush_called_" in k.writer_error["message"]))
    assert k.reopen_error is None and r.summary["acked_writes_lost"] == 0


@needs_fuse
def test_sqlite_on_a_full_disk_says_so_and_reopens(tmp_path, capsys):
    require("sqlite")
    code = cli.main(["crashtest", "--engine", "sqlite", "--kills", "1", "--sync", "--fault", "enospc",
                     "--enospc-bytes", "100000", "--names", "ext4", "--max-delay", "2", "--seed", "3", "--no-store",
                     "--verbose"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "EngineFull" in out and "ENOSPC after 100,000 bytes" in out


@needs_fuse
def test_kvlab_on_a_full_disk_says_what_filled_keeps_the_database_and_the_store(tmp_path, capsys, monkeypatch):
    """A run whose database fills its file system ends with one error naming the file system and what is left; the
    database stays; a results store on a full file system keeps every earlier run and the new one is saved as JSON."""
    require("lmdb")
    store = tmp_path / "store" / "s.duckdb"
    store.parent.mkdir()
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "1000", "--store", str(store),
                     "-q"]) == 0
    # the database on a file system with 3 MB of room, more than the disk check's estimate of the data
    m = _mount(tmp_path, forgetfs.Fault("enospc", enospc_bytes=3_000_000))
    try:
        db = m.path / "db"
        code = cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "24000", "--value-size", "100",
                         "--db", str(db), "--store", str(store), "-q"])
        err = capsys.readouterr().err
        assert code != 0
        assert f"the file system holding {db} filled up during the run" in err and "bytes free there now" in err
        assert (db / "data.mdb").exists()   # left to the user
    finally:
        m.close()
    # the store on a full file system: the run is kept as JSON (in the temporary folder: the store's is full), the
    # earlier one still listed
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store_fs = tmp_path / "storefs"
    store_fs.mkdir()
    (store_fs / "s.duckdb").write_bytes(store.read_bytes())
    m = forgetfs.Mount(store_fs, fault=forgetfs.Fault("enospc", enospc_bytes=1000))
    try:
        code = cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "1000", "--store",
                         str(m.path / "s.duckdb"), "-q"])
        err = capsys.readouterr().err
        assert code != 0 and "could not be appended to the results store" in err and "is saved in" in err
        assert list(tmp_path.glob("unsaved-run-*.json"))
        assert cli.main(["results", "list", "--store", str(m.path / "s.duckdb")]) == 0
        assert "the one stored result" in capsys.readouterr().out
    finally:
        m.close()


def _said(report, text):
    return [ln for k in report.kills for ln in k.reopen_log if text in ln]


@needs_fuse
def test_a_power_cut_is_a_reboot_that_libmdbx_sees(tmp_path):
    """After a cut the reopen lives in a new boot (execution.crash.reboot): libmdbx, which keeps a weak meta page
    within one boot, rolls it back instead; its own log (the `log_notice` option) says which path it took."""
    require("mdbx")
    args = dict(setting="safe_nosync", settings={"options": "safe_nosync,log_notice"}, power_loss=True, loss="torn",
                min_s=0.1, max_s=0.3, seed=2)
    rebooted = ct.crashtest("mdbx", 3, **args)
    assert rebooted.reboot and len({k.boot_id for k in rebooted.kills}) == 3
    assert _said(rebooted, "doing automatic rollback") and not _said(rebooted, "is MATCH")
    same = ct.crashtest("mdbx", 3, reboot_on_cut=False, **args)
    assert not same.reboot and all(k.boot_id is None for k in same.kills)
    assert _said(same, "is MATCH: rollback NOT needed")


def test_the_boot_interposer_serves_its_id_as_procfs_would(tmp_path):
    """What libmdbx's reader checks (cython_ext/tools/bootid.c): the file's text, and that fstatfs says procfs."""
    code = ("import ctypes, os; fd = os.open('/proc/sys/kernel/random/boot_id', os.O_RDONLY); "
            "b = ctypes.create_string_buffer(128); assert ctypes.CDLL(None).fstatfs(fd, b) == 0; "
            "print(os.read(fd, 64).decode().strip(), hex(int.from_bytes(b.raw[:8], 'little')))")
    boot = reboot.boot_id(7, 1)
    out = subprocess.run([sys.executable, "-c", code], env=reboot.environ(dict(os.environ), boot), capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [boot, "0x9fa0"] and boot != reboot.boot_id(7, 2) == reboot.boot_id(7, 2)
    host = subprocess.run([sys.executable, "-c", code.replace("assert ctypes", "ctypes")], capture_output=True,
                          text=True, check=True).stdout.split()
    assert host[0] == open("/proc/sys/kernel/random/boot_id").read().strip() != boot


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_results_store_on_a_nearly_full_tmpfs_refuses_the_write_in_one_line_and_keeps_every_run(
        tmp_path, capsys, monkeypatch):
    require("lmdb")
    fs = tmp_path / "tmpfs"
    fs.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(fs)], check=True)
    try:
        store = fs / "s.duckdb"
        for _ in range(2):
            assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "500", "--store",
                             str(store), "-q"]) == 0
        capsys.readouterr()
        free = os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize
        (fs / "filler").write_bytes(b"\0" * max(0, free - 8192))   # nearly full: 8 KiB left
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))      # where an unsaved run goes
        code = cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "500", "--store", str(store),
                         "-q"])
        said = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        err = [ln for ln in said if ln.startswith("kvlab: error:")]
        assert code != 0 and len(err) == 1 and all(ln.startswith("warning:") for ln in said if ln not in err), said
        assert "results store" in err[0] and "saved in" in err[0]
        # a JSON file and a report on the full file system: one error each, no half-written file
        assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "500", "--no-store", "--json",
                         str(fs / "out.json"), "-q"]) != 0
        assert "could not be written (No space left on device)" in capsys.readouterr().err
        assert cli.main(["report", "engine=lmdb", "--store", str(store), "--out", str(fs / "r.html")]) != 0
        assert "cannot be written (No space left on device)" in capsys.readouterr().err
        assert not (fs / "out.json").exists() and not (fs / "r.html").exists()
        (fs / "filler").unlink()
        assert cli.main(["results", "list", "--store", str(store)]) == 0
        out = capsys.readouterr().out
        assert "2 stored results" in out or out.count("lmdb") >= 2, out
    finally:
        subprocess.run(["umount", "-l", str(fs)], check=False)
