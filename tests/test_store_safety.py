"""The results store and result files never lose a run (issue 14, part 3): SIGKILL mid-append (the
campaign script, small), a full disk (a real tmpfs), a store that cannot be opened (found before the
benchmark runs)."""
import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

import kvlab
from kvlab import cli, errors
from kvlab.results.result import load_json
from kvlab.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
KILLS = int(os.environ.get("KVLAB_STORE_KILLS", "6"))


def _campaign_module():
    spec = importlib.util.spec_from_file_location("store_kill_campaign", ROOT / "benchmarks/store_kill_campaign.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sigkill_mid_append_loses_no_finished_run(tmp_path):
    # kills up to 1.5 s after the child is ready: on a busy machine an append can take longer than 0.5 s, and a
    # campaign whose every kill lands before the first append has checked nothing
    res = _campaign_module().campaign(KILLS, seed=14, folder=tmp_path, max_delay=1.5, out=print)
    assert res["kills"] == KILLS and res["runs_finished"] > 0
    assert res["runs_lost"] == 0, res
    assert res["unopenable_stores"] == 0, res


def _small_run():
    return kvlab.run("null", "fillseq", num=1000, interval=0, seed=3)


@pytest.fixture
def full_disk(tmp_path):
    """A 4 MiB tmpfs, mounted for the test (we run as root), unmounted afterwards."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount permission): {done.stderr.strip()}")

    def fill():
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for size in (65536, 512, 1):
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError:
                    pass
        finally:
            os.close(fd)

    try:
        yield mnt, fill
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_disk_append_saves_the_run_elsewhere(full_disk):
    mnt, fill = full_disk
    store = Store(mnt / "kvlab.duckdb")
    first = _small_run()
    store.append(first, run_id="before")
    fill()
    run = _small_run()
    with pytest.raises(errors.ResultsError) as err:
        store.append(run, run_id="onfull")
    msg = str(err.value)
    assert "run onfull could not be appended" in msg and "No space left on device" in msg and "saved in " in msg
    saved = Path(msg.split("saved in ")[1].split(" (")[0])
    assert saved.exists() and not str(saved).startswith(str(mnt))
    try:
        back = load_json(saved)
        assert [b.to_dict() for b in back] == [json.loads(json.dumps(b.to_dict(), default=str)) for b in run] or \
            len(back) == len(run) and back[0].ops == run[0].ops
        os.unlink(mnt / "filler")
        # the store survived the full disk; the rescued run goes in once there is room
        store.append_json(saved, run_id="rescued")
        assert {"before", "rescued"} <= set(store.frame()["run_id"])
    finally:
        saved.unlink(missing_ok=True)


def test_full_disk_json_file_saved_elsewhere(full_disk, capsys):
    mnt, fill = full_disk
    fill()
    out = mnt / "out.json"
    code = cli.main(["run", "--engine", "null", "--workload", "fillseq", "--num", "1000", "--interval", "0",
                     "--progress", "off", "--no-store", "--json", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and f"--json {out} could not be written" in err and "saved in " in err
    saved = Path(err.split("saved in ")[1].split()[0].rstrip(";"))
    try:
        assert load_json(saved)[0].workload == "fillseq"
    finally:
        saved.unlink(missing_ok=True)


def test_full_disk_store_found_before_the_run(full_disk, capsys):
    mnt, fill = full_disk
    Store(mnt / "kvlab.duckdb").append(_small_run(), run_id="before")
    fill()
    code = cli.main(["run", "--engine", "null", "--workload", "fillseq", "--num", "1000", "--interval", "0",
                     "--progress", "off", "--store", str(mnt / "kvlab.duckdb")])
    out = capsys.readouterr()
    if code == 0:   # DuckDB had room left in its file for the check and the run: then it is stored
        assert "stored as run" in out.out
    else:
        assert code == 2 and "results store" in out.err and "fillseq  " not in out.out


@pytest.mark.parametrize("kind", ["garbage", "directory", "locked"])
def test_unopenable_store_found_before_the_run(tmp_path, capsys, kind, monkeypatch):
    monkeypatch.setattr("kvlab.results.store.LOCK_WAIT_S", 0.5)   # a store held this long is an error
    path = tmp_path / "kvlab.duckdb"
    holder = None
    if kind == "garbage":
        path.write_bytes(b"this is not a duckdb file\n" * 100)
    elif kind == "directory":
        path.mkdir()
    else:   # another process has the store open for writing
        import sys
        Store(path).append(_small_run(), run_id="x")
        holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                                   "print('open', flush=True); time.sleep(60)", str(path)],
                                  stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "open"
    try:
        code = cli.main(["run", "--engine", "null", "--workload", "fillseq", "--num", "1000", "--interval", "0",
                         "--progress", "off", "--store", str(path)])
    finally:
        if holder is not None:
            holder.kill()
            holder.wait()
    out = capsys.readouterr()
    assert code == 2 and "results store" in out.err and str(path) in out.err
    assert "micros/op" not in out.out      # nothing was measured
