"""Sweeps: expansion and ids, local runs into a real store, resumption after a real SIGKILL, the tidy
frame, the plot, the CLI.  Points are tiny LMDB/LevelDB runs (a few thousand keys)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import kvlab
from kvlab import errors
from kvlab.execution.orchestration.sweep import SweepControl, run_sweep
from kvlab.model.sweep import SweepSpec, allowed_axes, from_toml
from kvlab.results import sweeps as stored
from kvlab.results.store import Store

from .conftest import require

ROOT = Path(__file__).resolve().parent.parent
TINY = {"workload": "readrandom", "num": 2000, "reads": 2000, "interval": 0}


def grid(name="g", repeats=2, **axes):
    return SweepSpec(name, TINY, axes or {"engine": ["lmdb"], "threads": [1, 2]}, repeats)


# --- expansion and ids --------------------------------------------------------------------------

def test_expansion_is_the_product_with_repeats_innermost():
    s = SweepSpec("x", TINY, {"engine": ["lmdb", "leveldb"], "threads": [1, 2], "value_size": [100, 400, 1000]}, 2)
    pts = s.points()
    assert len(pts) == 24 and s.settings == 12
    assert [p.values for p in pts[:4]] == [{"engine": "lmdb", "threads": 1, "value_size": 100}] * 2 + \
        [{"engine": "lmdb", "threads": 1, "value_size": 400}] * 2
    assert [p.repeat for p in pts[:4]] == [0, 1, 0, 1]
    assert len({p.id for p in pts}) == 24
    p = pts[8]
    assert (p.spec.engine, p.spec.threads, p.spec.value_size, p.spec.num) == ("lmdb", 2, 400, 2000)
    # seeds: the sweep's seed (default 1) plus the repeat, the same on every engine
    assert {(q.repeat, q.spec.seed) for q in pts} == {(0, 1), (1, 2)}
    assert "24 points = engine (2) x threads (2) x value_size (3) x 2 repeats" in s.describe()


def test_ids_are_content_not_position():
    a = SweepSpec("x", TINY, {"engine": ["lmdb", "leveldb"], "threads": [1, 2]}, 2)
    # another order, an extra value, the base value written as an axis default: the shared points keep their ids
    b = SweepSpec("x", {**TINY, "key_size": 16}, {"threads": [1, 2, 4], "engine": ["leveldb", "lmdb"]}, 2)
    ids_a = {p.id: (p.spec.engine, p.spec.threads, p.repeat) for p in a.points()}
    ids_b = {p.id: (p.spec.engine, p.spec.threads, p.repeat) for p in b.points()}
    assert set(ids_a) < set(ids_b) and all(ids_b[i] == v for i, v in ids_a.items())
    assert [p.id for p in a.points()] == [p.id for p in SweepSpec("x", TINY, dict(a.axes), 2).points()]
    # a different run is a different id
    c = SweepSpec("x", {**TINY, "num": 3000}, {"engine": ["lmdb", "leveldb"], "threads": [1, 2]}, 2)
    assert not set(ids_a) & {p.id for p in c.points()}


def test_engine_settings_and_workload_model_fields_are_axes():
    s = SweepSpec("m", {"workload": "ycsb-c", "num": 1000}, {"cache_size": [1 << 20, 1 << 22],
                                                              "mix.distribution": ["uniform", "zipfian"],
                                                              "mix.value_size": [[8, 100], [100, 100]]})
    pts = s.points()
    assert len(pts) == 8
    mix = pts[-1].spec.mixes["ycsb-c"]
    assert (mix.distribution.name, mix.value_size) == ("zipfian", (100, 100))
    assert pts[-1].spec.engine_settings == {"cache_size": 1 << 22}
    assert "mix.distribution" in allowed_axes() and "cache_size" in allowed_axes()


@pytest.mark.parametrize("kw, message", [
    (dict(axes={"thread": [1, 2]}), "axis 'thread' is unknown; allowed: .*threads"),
    (dict(axes={"threads": []}), "non-empty list"),
    (dict(axes={"threads": 4}), "non-empty list"),
    (dict(axes={"threads": [1, 1]}), "repeats a value"),
    (dict(axes={"threads": [1, 0]}), r"point threads=0: threads=0 is out of range; allowed: 1 to"),
    (dict(axes={"engine": ["lmdb", "nosuch"]}), "engine=nosuch.*allowed"),
    (dict(base={"repeat": 3}), "give `repeats` to the sweep"),
    (dict(base={"db": "/tmp/x"}), "fresh temporary database"),
    (dict(base={"num": 5}, axes={"num": [1, 2]}), "both in the base and an axis"),
    (dict(axes={"mix.distribution": ["uniform"]}), "apply to workload mixes only"),
    (dict(repeats=0), "repeats=0 is out of range"),
])
def test_bad_sweeps_say_what_is_allowed(kw, message):
    with pytest.raises(errors.SpecError, match=message):
        SweepSpec(kw.pop("name", "bad"), **kw)


def test_toml_file():
    s = from_toml('name = "t"\nrepeats = 2\n[base]\nworkload = "readrandom"\nnum = 2000\n'
                  '[axes]\nengine = ["lmdb", "leveldb"]\nthreads = [1, 2]\n')
    assert (s.name, s.repeats, len(s.points())) == ("t", 2, 8)
    with pytest.raises(errors.SpecError, match="needs a name"):
        from_toml("[axes]\nthreads = [1]\n")
    with pytest.raises(errors.SpecError, match="unknown; allowed: name, repeats"):
        from_toml('name = "t"\n[axis]\nthreads = [1]\n')
    with pytest.raises(errors.SpecError, match="not valid TOML"):
        from_toml("name = ")
    with pytest.raises(errors.SpecError, match="sweep name"):
        from_toml('name = "a b"\n')


# --- local runs, the store, resumption ----------------------------------------------------------

def test_local_sweep_stores_every_point_and_skips_them_next_time(tmp_path):
    require("lmdb")
    require("leveldb")
    store = Store(tmp_path / "s.duckdb")
    spec = grid("local", engine=["lmdb", "leveldb"], threads=[1, 2])
    seen = []
    control = SweepControl([seen.append], on_point=[lambda p, r, e: None])
    out = run_sweep(spec, store, control)
    assert out.complete and len(out.done) == 8 and not out.failed and out.skipped == 0
    assert seen[-1].finished and seen[-1].done == 8 and seen[-1].total == 8
    assert any(p.current is not None for p in seen), "the point in flight's live progress reaches the sweep"
    assert stored.finished_points(store, "local") == {p.id for p in spec.points()}
    again = run_sweep(spec, store)
    assert (again.skipped, again.done) == (8, [])
    # extending an axis runs only the new points
    wider = grid("local", engine=["lmdb", "leveldb"], threads=[1, 2, 3])
    more = run_sweep(wider, store)
    assert (more.skipped, len(more.done)) == (8, 4)

    frame = stored.tidy(store, "local")
    assert list(frame.columns[:4]) == ["engine", "threads", "workload", "phase"]
    assert len(frame) == 6 and set(frame.repeats) == {2}
    row = frame[(frame.engine == "lmdb") & (frame.threads == 2)].iloc[0]
    vals = store.query("SELECT ops_per_sec FROM benchmarks WHERE sweep_id = 'local' AND engine = 'lmdb' "
                       "AND threads = 2 AND phase = 'run'").ops_per_sec
    assert row.ops_per_sec == pytest.approx(vals.median())
    # 2 repeats: no interval of the median can be given (tests/test_compare.py checks one from 3 repeats)
    assert pd.isna(row.ops_per_sec_ci95_lo) and pd.isna(row.ops_per_sec_ci95_hi) and pd.isna(row.ops_per_sec_ci_level)
    results = stored.results(store, "local", phases=("run",))
    assert len(results) == 12 and all(b.provenance["machine"]["hostname"] for b in results)


def test_failed_point_is_recorded_and_retried(tmp_path):
    require("lmdb")
    store = Store(tmp_path / "s.duckdb")
    # LMDB with a 2.4 MB map cannot hold 20000 keys of 116 bytes (2.32 MB, which the size check lets by) in its
    # pages: the engine's own error, per point
    spec = SweepSpec("fails", {**TINY, "num": 20000}, {"map_size": [2_400_000, 1 << 30]}, 1)
    out = run_sweep(spec, store)
    assert len(out.done) == 1 and len(out.failed) == 1 and "map_size=2400000" in out.failed[0][0]
    assert "EngineFull" in out.failed[0][2] or "full" in out.failed[0][2].lower()
    rows = stored.points_frame(store, "fails")
    assert sorted(rows.status) == ["done", "failed"]
    again = run_sweep(spec, store)
    assert again.skipped == 1 and len(again.failed) == 1, "a failed point is tried again by the next run"


def test_resumes_after_sigkill_mid_sweep(tmp_path):
    """A real kill in the middle of a point: the finished points stay, the one in flight is run again,
    nothing is stored twice."""
    require("lmdb")
    toml = tmp_path / "kill.toml"
    toml.write_text('name = "killed"\n[base]\nworkload = "readrandom"\nnum = 2000\nduration = 0.5\ninterval = 0\n'
                    '[axes]\nthreads = [1, 2]\nvalue_size = [100, 200, 300]\n')
    store_path = tmp_path / "s.duckdb"
    env = {**os.environ, "KVLAB_TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "kvlab.cli", "sweep", "run", str(toml), "--store", str(store_path),
                             "--progress", "off"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=env)
    done_lines = []
    try:
        for line in proc.stdout:
            if line.startswith("[point") and " done " in line:
                done_lines.append(line)
                if len(done_lines) == 2:
                    break
        time.sleep(0.2)   # into the third point (each runs 0.5 s)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert len(done_lines) == 2, proc.stderr.read()
    store = Store(store_path)
    finished = stored.finished_points(store, "killed")
    assert 2 <= len(finished) <= 3   # the kill may land while the third point is being stored
    spec = kvlab.sweep(file=toml, store=store)
    out = run_sweep(spec.spec, store)
    assert out.skipped == len(finished) and out.skipped + len(out.done) == 6 and out.complete
    counts = store.query("SELECT point_id, count(*) AS n FROM benchmarks WHERE sweep_id = 'killed' GROUP BY point_id")
    assert len(counts) == 6 and set(counts.n) == {2}, "each point stored once: its load and run phases"
    assert len(store.query("SELECT * FROM sweep_points WHERE sweep_id = 'killed' AND status = 'done'")) == 6


# --- faces --------------------------------------------------------------------------------------

def test_python_face_background_and_plot(tmp_path):
    require("lmdb")
    s = kvlab.sweep("face", axes={"engine": ["lmdb"], "threads": [1, 2], "value_size": [100, 400]}, repeats=2,
                    store=tmp_path / "s.duckdb", **TINY)
    assert "8 points" in repr(s) and "estimate about" in repr(s)
    handle = s.start()
    out = handle.result(timeout=120)
    assert out.complete and handle.done() and handle.progress.finished
    assert "already in" in s.describe() and "0 to run" in s.describe()
    frame = s.frame()
    assert {"engine", "threads", "value_size", "ops_per_sec_ci95_hi"} <= set(frame.columns)
    fig = s.plot("ops_per_sec", x="threads")
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 2   # value_size as hue
    with pytest.raises(errors.SpecError, match="allowed: .*ops_per_sec"):
        s.plot("nosuch")


def test_cli_show_run_and_results(tmp_path):
    require("lmdb")
    toml = tmp_path / "g.toml"
    toml.write_text('name = "cli"\nrepeats = 2\n[base]\nworkload = "readrandom"\nnum = 2000\ninterval = 0\n'
                    '[axes]\nthreads = [1, 2]\n')
    store = str(tmp_path / "s.duckdb")
    from kvlab.cli.main import main

    def run(*argv):
        out = subprocess.run([sys.executable, "-m", "kvlab.cli", *argv], capture_output=True, text=True,
                             cwd=tmp_path)
        return out.returncode, out.stdout + out.stderr

    rc, text = run("sweep", "show", str(toml), "--store", store)
    assert rc == 0 and "4 points" in text and text.count("pending") == 4
    rc, text = run("sweep", "run", str(toml), "--store", store, "--progress", "off")
    assert rc == 0 and text.count("[point") == 4 and "4/4 finished" in text
    rc, text = run("sweep", "run", str(toml), "--store", store, "--progress", "off")
    assert rc == 0 and "0 points run" in text and "4 already stored" in text
    assert main(["results", "export", "--sweep", "cli", "--store", store, "--out", str(tmp_path / "t.csv")]) == 0
    import pandas as pd
    assert len(pd.read_csv(tmp_path / "t.csv")) == 2
    rc, text = run("results", "sweeps", "--store", store)
    assert rc == 0 and "cli" in text
    rc, text = run("sweep", "run", str(tmp_path / "missing.toml"))
    assert rc == 2 and "cannot read sweep file" in text


def test_a_mix_axis_sets_the_points_record_count():
    """An axis over mix.record_count decides each point's key space (the mix's own count applies, as in
    kvlab.run), not the default num."""
    from kvlab.model.sweep import from_toml
    s = from_toml('name = "rc"\n[base]\nworkload = "ycsb-a"\n[axes]\n"mix.record_count" = [500, 2000]\n')
    assert [p.spec.num for p in s.points()] == [500, 2000]
    assert [p.spec.mixes["ycsb-a"].record_count for p in s.points()] == [500, 2000]
