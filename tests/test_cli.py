"""The command line as users run it: engines, run --json, and the seeds' db_bench lines."""
import json
import re
import shlex
from pathlib import Path

import pytest

from kvlab import cli, errors, load_json
from kvlab.cli import dbbench
from kvlab.engines.rocksdb import ROCKSDB_PFX_FLAGS

from .conftest import require

SEED_LINES = [l for l in (Path(__file__).with_name("seed_command_lines.txt")).read_text().splitlines()
              if l.strip() and not l.startswith("#")]


def test_engines_json(capsys):
    assert cli.main(["engines", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {r["engine"] for r in rows}
    assert {"lmdb", "leveldb", "rocksdb", "rocksdb-tuned", "wiredtiger-btree", "wiredtiger-lsm", "fdb"} <= names
    for r in rows:
        assert set(r) >= {"engine", "built", "version", "package"}
        if r["built"]:
            assert re.match(r"\d+\.\d+", r["version"])


def test_run_json_schema(tmp_path, capsys):
    require("lmdb")
    out = tmp_path / "f.json"
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq,readrandom", "--num", "5000",
                     "--threads", "2", "--seed", "11", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"readrandom\s+:\s+[\d.]+ micros/op \d+ ops/sec; .*\(10000 of 10000 found\)", text)
    data = json.loads(out.read_text())
    assert isinstance(data, list) and [d["workload"] for d in data] == ["fillseq", "readrandom"]
    for d in data:
        for key in ("engine", "workload", "threads", "ops", "seconds", "ops_per_sec", "micros_per_op",
                    "found", "latency_us", "seed", "params", "versions"):
            assert key in d
        assert set(d["latency_us"]) >= {"p50", "p99", "p999", "p9999", "max"}
        assert d["seed"] == 11 and d["versions"]["kvlab"] and d["versions"]["engine_library"]
    assert data[1]["found"] == 10000
    assert load_json(out)[1].found == 10000


def test_load_json_refuses_broken_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"schema": "kvlab.result/1", "engine": "lmdb"')
    with pytest.raises(errors.ResultsError):
        load_json(bad)
    bad.write_text('[{"schema": "other/9"}]')
    with pytest.raises(errors.ResultsError, match="schema"):
        load_json(bad)


@pytest.fixture(scope="module")
def seed_cwd(tmp_path_factory):
    """One working directory for all seed lines, so a line's relative --db=DB... is
    the database an earlier line of the same seed wrote (as in the seeds' scripts)."""
    return tmp_path_factory.mktemp("seedlines")


@pytest.mark.parametrize("line", SEED_LINES, ids=[f"seed-line-{i}" for i in range(len(SEED_LINES))])
def test_seed_dbbench_lines_run(line, seed_cwd, tmp_path, capsys, monkeypatch):
    engine, flags = (part.strip() for part in line.split("|", 1))
    require({"wiredtiger": "wiredtiger-lsm"}.get(engine, engine))
    monkeypatch.chdir(seed_cwd)
    argv = shlex.split(flags)
    assert cli.main(["dbbench", "--engine", engine, "--json", str(tmp_path / "o.json"), *argv]) == 0
    out = capsys.readouterr()
    names = dbbench.parse_argv(argv)["benchmarks"].split(",")
    for name in names:
        assert re.search(rf"^{name}\s+: +[\d.]+ micros/op \d+ ops/sec;", out.out, re.M), out.out
    if engine != "rocksdb":
        assert "num_levels" not in out.out
    if any(f.startswith("--max_grandparent_overlap_factor") for f in argv):
        assert "--max_grandparent_overlap_factor (removed" in out.err or "RocksDB only" in out.err
    records = json.loads((tmp_path / "o.json").read_text())
    assert len(records) == len(names)
    for r in records:
        if r["workload"] == "readrandom":   # the seeds read a database an earlier line loaded
            # seed 000 reads after fillseq: everything; seed 002 after fillrandom + overwrite: most
            assert r["found"] == r["ops"] if "DB000" in flags else r["found"] > r["ops"] // 2


def test_rocksdb_tuned_translation():
    t = dbbench.translate_rocksdb_flags(ROCKSDB_PFX_FLAGS.split())
    assert "table_factory=PlainTable" in t.options
    assert "prefix_extractor=rocksdb.FixedPrefix.16" in t.options
    assert "hard_rate_limit" not in t.options


def test_dbbench_warns_once_for_unhonoured_flags():
    plan = dbbench.plan("lmdb", ["--num=10", "--num_levels=6", "--cache_size=100", "--hard_rate_limit=2"])
    assert len(plan.warnings) == 1
    w = plan.warnings[0]
    assert "--num_levels (RocksDB only)" in w and "--cache_size" in w and "--hard_rate_limit" in w


def test_the_kvlab_command_starts_with_room_for_rocksdbs_thread_locals(tmp_path):
    """A RocksDB linked into the module reaches its thread-locals through glibc's dynamic TLS path unless the
    process started with room in glibc's static TLS (kvlab.execution.native): every trial's worker has it (the
    fork server starts with it, keeping the user's other tunables), and a run records which way its process
    started."""
    import os
    import subprocess
    import sys

    from kvlab.execution import native
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    env["GLIBC_TUNABLES"] = "glibc.malloc.check=0"
    out = tmp_path / "r.json"
    subprocess.run([sys.executable, "-m", "kvlab.cli", "run", "--engine", "null", "--workload", "readrandom",
                    "--num", "100", "--json", str(out), "--no-store"], env=env, check=True, cwd=tmp_path,
                   capture_output=True)
    # the trial ran in a worker, which the fork server starts with the room whatever the command started with
    assert load_json(out)[-1].provenance["process"] == {"glibc_static_tls_room": True}
    probe = [sys.executable, "-c", "from kvlab.execution import native; print(native.started_with_static_tls_room())"]
    assert subprocess.run(probe, env=env, capture_output=True, text=True).stdout.strip() == "False"
    merged = native.with_static_tls_room(env)
    assert merged["GLIBC_TUNABLES"] == "glibc.rtld.optional_static_tls=16384:glibc.malloc.check=0"
    assert subprocess.run(probe, env=merged, capture_output=True, text=True).stdout.strip() == "True"
    assert native.with_static_tls_room(merged)["GLIBC_TUNABLES"] == merged["GLIBC_TUNABLES"]   # not doubled
    # a user's own list with the room second: glibc shows only the first tunable in /proc/self/environ
    second = dict(env, GLIBC_TUNABLES="glibc.malloc.check=0:glibc.rtld.optional_static_tls=16384")
    assert subprocess.run(probe, env=second, capture_output=True, text=True).stdout.strip() == "True"


def _env_started_without_the_room() -> dict:
    """This environment without the static TLS room and without the opt-out, for the module-choice probes."""
    import os
    return {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "KVLAB_NO_INITIAL_EXEC")}


def test_a_process_with_static_tls_room_loads_the_initial_exec_module_where_there_is_one(tmp_path):
    """Where the build has kvlab/_native_ie (the module linked against a RocksDB built with the initial-exec
    TLS model), a process that started with room in glibc's static TLS loads it as kvlab._native; one
    without the room, or with KVLAB_NO_INITIAL_EXEC, loads kvlab/_native.  The selection is checked here on
    a copy of this build's own module standing in for kvlab/_native_ie (a real module, loaded from another
    file under kvlab._native's name, running a real run)."""
    import shutil
    import subprocess
    import sys

    from kvlab import _native
    from kvlab.execution import native
    stand_in = tmp_path / Path(native._IE_MODULE).name
    shutil.copy(_native.__file__, stand_in)
    probe = [sys.executable, "-c", f"""
from pathlib import Path
import kvlab
from kvlab.execution import native
native._IE_MODULE = Path({str(stand_in)!r})
r = kvlab.run('null', 'readrandom', num=100, reads=100, interval=0)
import kvlab._native as m
print(Path(m.__file__) == native._IE_MODULE, r[-1].ops)
"""]
    env = _env_started_without_the_room()
    run = lambda e: subprocess.run(probe, env=e, capture_output=True, text=True, check=True).stdout.split()  # noqa: E731
    assert run(native.with_static_tls_room(env)) == ["True", "100"]
    assert run(env) == ["False", "100"]
    assert run(dict(native.with_static_tls_room(env), KVLAB_NO_INITIAL_EXEC="1")) == ["False", "100"]
    assert native.tls_model("rocksdb") in (None, "descriptors")   # this process started without the room


def test_the_results_store_maps_the_initial_exec_module_before_duckdb_takes_the_room(tmp_path):
    """A DuckDB connection takes the static TLS room kvlab/_native_ie needs, so in a process with the room the
    store maps the module before it connects (a notebook may read its results before its first run).  The
    stand-in is a copy of this build's module, as above."""
    import shutil
    import subprocess
    import sys

    from kvlab import _native
    from kvlab.execution import native
    stand_in = tmp_path / Path(native._IE_MODULE).name
    shutil.copy(_native.__file__, stand_in)
    probe = [sys.executable, "-c", f"""
import sys
from pathlib import Path
import kvlab
from kvlab.execution import native
from kvlab.results.store import Store
native._IE_MODULE = Path({str(stand_in)!r})
assert "kvlab._native" not in sys.modules
Store({str(tmp_path / "r.duckdb")!r}).check()
print(Path(sys.modules["kvlab._native"].__file__) == native._IE_MODULE if "kvlab._native" in sys.modules else None)
"""]
    env = _env_started_without_the_room()
    out = subprocess.run(probe, env=native.with_static_tls_room(env), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True"]
    out = subprocess.run(probe, env=env, capture_output=True, text=True)   # without the room: nothing mapped
    assert out.returncode == 0 and out.stdout.split() == ["None"], out.stderr[-2000:]


def test_an_initial_exec_module_that_finds_no_static_tls_room_falls_back_to_the_usual_module(tmp_path):
    """A process can start with the room and still find it gone when kvlab maps kvlab/_native_ie (a DuckDB
    connection made first takes it): glibc's dlopen then fails, and kvlab must go on with kvlab/_native.  The
    stand-in here is a real shared object whose initial-exec thread-locals (1 MiB) can never fit the room."""
    import subprocess
    import sys

    from kvlab.execution import native
    src = tmp_path / "big_tls.c"
    src.write_text('__thread char big[1 << 20] __attribute__((tls_model("initial-exec")));\n'
                   "char *touch(void) { return big; }\n")
    stand_in = tmp_path / Path(native._IE_MODULE).name
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(stand_in), str(src)], check=True)
    probe = [sys.executable, "-c", f"""
import ctypes
from pathlib import Path
try:
    ctypes.CDLL({str(stand_in)!r})
except OSError as exc:
    print("static TLS" in str(exc))
import kvlab
from kvlab.execution import native
native._IE_MODULE = Path({str(stand_in)!r})
r = kvlab.run('null', 'readrandom', num=100, reads=100, interval=0)
import kvlab._native as m
print(Path(m.__file__) == native._IE_MODULE, r[-1].ops)
"""]
    env = _env_started_without_the_room()
    out = subprocess.run(probe, env=native.with_static_tls_room(env), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "False", "100"]   # the map fails for want of room; the run goes on
