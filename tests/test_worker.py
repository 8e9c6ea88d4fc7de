"""One trial, one worker (kvlab.execution.worker): real engines in real worker processes.

A worker killed by a signal, an engine that aborts, the OOM killer: each is a record saying how the trial ended, the
session goes on; a worker starts clean (no thread of an earlier trial's engine); the caller opens no engine and
loads none at run time; a stop reaches the worker; impossible budgets are refused before a worker starts.
"""
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import kvlab
from kvlab import errors
from kvlab.execution.progress import RunControl

from .conftest import require

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "kvlab" / "engines" / "_template" / "engine_template.c"


def _when_running(control, then, after_s=0.3):
    def go():
        deadline = time.monotonic() + 60
        while (control.worker_pid is None or control.latest is None) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(after_s)
        then(control.worker_pid)
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


def test_a_killed_worker_is_a_record_and_the_session_goes_on():
    require("lmdb")
    control = RunControl()
    _when_running(control, lambda pid: os.kill(pid, signal.SIGKILL))
    r = kvlab.run_spec(kvlab.make_spec("lmdb", "fillrandom", num=100_000, duration=20, interval=0.1, seed=1),
                       control=control)
    b = r[-1]
    assert b.partial and b.params["ended"]["signal"] == "SIGKILL" and not b.params["ended"]["oom_kill"]
    assert b.ops > 0   # the figures its progress streamed until then
    assert any("the trial's worker died: signal SIGKILL" in w for w in b.warnings)
    assert kvlab.run("lmdb", "fillseq", num=1000, interval=0)[-1].ops == 1000   # the next trial runs


def test_an_engine_that_aborts_is_a_sigabrt_record_with_its_last_words(tmp_path):
    text = TEMPLATE.read_text()
    aborting = text.replace(
        "static int tpl_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {\n",
        "static int tpl_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {\n"
        "    static int puts;\n"
        "    if (++puts == 1000) { fprintf(stderr, \"template: giving up at put 1000\\n\"); abort(); }\n")
    assert aborting != text
    source = tmp_path / "engine_aborting.c"
    source.write_text("#include <stdio.h>\n#include <stdlib.h>\n" + aborting)
    lib = tmp_path / "libaborting.so"
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-I", str(ROOT / "cython_ext" / "include"), str(source), "-o",
                    str(lib), "-lpthread"], check=True)
    r = kvlab.run(str(lib), "fillrandom", num=5000, interval=0, seed=1)
    b = r[-1]
    assert b.partial and b.params["ended"]["signal"] == "SIGABRT"
    assert "template: giving up at put 1000" in b.params["ended"]["engine_log"]
    assert not list(Path(os.environ.get("KVLAB_TMPDIR", "/tmp")).glob(f"kvlab-*{lib.stem}*"))


def test_a_worker_starts_clean_of_an_earlier_engines_threads():
    require("rocksdb")
    require("lmdb")
    kvlab.run("rocksdb", "fillseq", num=2000, interval=0)   # RocksDB's thread pools start with its first open
    control = RunControl()
    seen = {}

    def look(pid):
        seen["comms"] = {(t / "comm").read_text().strip() for t in Path(f"/proc/{pid}/task").iterdir()}
    _when_running(control, look, after_s=0.2)
    kvlab.run_spec(kvlab.make_spec("lmdb", "readrandom", num=20_000, duration=1.0, interval=0.1), control=control)
    assert seen["comms"] and not any(c.startswith("rocksdb") for c in seen["comms"]), seen


CALLER = """
import kvlab
from pathlib import Path
kvlab.run("rocksdb", "fillseq", num=2000, interval=0)
kvlab.run("mdbx", "fillseq,readrandom", num=2000, interval=0)
threads = sorted((t / "comm").read_text().strip() for t in Path("/proc/self/task").iterdir())
maps = Path("/proc/self/maps").read_text()
print("threads", threads)
print("mdbx mapped", "libkvlab_mdbx" in maps or "libmdbx" in maps)
"""


def test_the_caller_opens_no_engine_and_loads_none_at_run_time():
    """A fresh session (this test process opens engines directly elsewhere): after a RocksDB and a libmdbx run,
    no RocksDB thread in it and no libmdbx mapped."""
    require("rocksdb")
    require("mdbx")
    got = subprocess.run([sys.executable, "-c", CALLER], capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert "rocksdb" not in got.stdout.split("threads", 1)[1].split("\n")[0], got.stdout
    assert "mdbx mapped False" in got.stdout, got.stdout


def test_a_stop_ends_the_measured_phase_within_half_a_second():
    require("lmdb")
    control = RunControl()
    asked = {}
    _when_running(control, lambda pid: (asked.setdefault("at", time.monotonic()), control.stop()), after_s=0.5)
    r = kvlab.run_spec(kvlab.make_spec("lmdb", "readrandom", num=20_000, duration=30, interval=0.1), control=control)
    took = time.monotonic() - asked["at"]
    assert r[-1].partial and r[-1].workload == "readrandom" and "ended" not in r[-1].params
    assert took < 5, took   # the phase ends within 0.5 s; closing the engine and the worker's exit follow


@pytest.mark.parametrize("memory,why", [("1TiB", "above this machine's memory"), ("256MiB", None)])
def test_an_impossible_budget_is_refused_before_a_worker_starts(memory, why):
    require("wiredtiger-lsm")
    if why is None:   # WiredTiger LSM's least cache: given below it, refused naming both sizes
        with pytest.raises(errors.SpecError, match=r"cache_size=16 MiB is below the least wiredtiger-lsm opens with, "
                                                   r"32 MiB"):
            kvlab.run("wiredtiger-lsm", "fillseq", num=100, memory=memory, cache_size=16 << 20)
        return
    with pytest.raises(errors.SpecError, match=re.escape(why) + r".*allowed: at most"):
        kvlab.run("wiredtiger-lsm", "fillseq", num=100, memory=memory)


def test_compare_prints_no_line_kvlab_did_not_write(tmp_path):
    """libmdbx's fork handler printed `rthc_afterfork ... drown` into compare's output when kvlab forked a process
    that had loaded it; a worker loads it after its fork, and its output goes to the worker's log."""
    require("mdbx")
    require("lmdb")
    got = subprocess.run([sys.executable, "-m", "kvlab.cli", "compare", "--engines", "lmdb,mdbx", "--num", "2000",
                          "--duration", "0.2", "--warmup", "0.05", "--repeat", "2", "--no-store",
                          "--progress", "off"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert got.returncode == 0, got.stderr
    text = got.stdout + got.stderr
    assert "rthc" not in text and "drown" not in text and "mdbx_" not in text.lower().replace("mdbx@", ""), text


def test_a_kernel_interrupt_stops_a_background_run_too():
    jupyter_client = pytest.importorskip("jupyter_client")
    from .test_progress import _execute
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        _execute(kc, "import kvlab\nhandle = kvlab.start('lmdb', 'fillrandom', num=100_000, duration=60)", 60)
        time.sleep(2.0)
        km.interrupt_kernel()   # between cells: ipykernel ignores SIGINT there, kvlab's handler stops the run
        deadline = time.monotonic() + 20
        while True:
            _, out = _execute(kc, "print(handle.done())", 30)
            if "True" in out or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert "True" in out
        _, out = _execute(kc, "r = handle.result(); print(r[-1].partial, r[-1].ops > 0)", 30)
        assert "True True" in out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_the_run_builder_compares_as_compare_does():
    """Notebook 00's run builder: one memory budget, rounds round-robin, the ranking with intervals and
    significance, and a figure that passes the figure check (its legend off the bars, no 1e6 offset)."""
    pytest.importorskip("ipywidgets")
    require("lmdb")
    require("leveldb")
    from kvlab.lab.plots.style import check
    from kvlab.lab.widgets import RunBuilder, _ops_figure
    b = RunBuilder(engine_names=("lmdb", "leveldb"), workload_names=("readrandom",), num=5_000, threads=1,
                   duration=0.3, repeat=3, memory="256MiB")
    assert [s.engine for s in b.rounds(b.specs())] == ["lmdb", "leveldb", "leveldb", "lmdb", "lmdb", "leveldb"]
    b.run()
    results = b.wait(timeout=300)
    runs = [r for r in results if r.phase == "run"]
    assert [r.engine for r in runs] == ["lmdb", "leveldb", "leveldb", "lmdb", "lmdb", "leveldb"]
    assert {r.params["memory_budget"]["bytes"] for r in results} == {256 << 20}
    table = b.table.value
    assert "ranking" in table and "one memory budget of 256MiB" in table and "x best" in table
    assert "readrandom 1 thr" in table and "indistinguishable from" in table and "Holm" in table
    assert check(_ops_figure(runs)) == []
