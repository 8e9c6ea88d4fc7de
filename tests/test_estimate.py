"""The estimate before a run (kvlab/lab/estimate.py): `kvlab notebooks run --dry-run` prints every notebook's
cost from the notebooks' own parameters and writes nothing; a run that cannot fit on the disk is refused before
it starts; `kvlab sweep show` prints the same estimate for a sweep's points."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from kvlab.lab import estimate, notebooks
from kvlab.lab.seeds import common
from kvlab.results.store import Store

from .conftest import mounted_tmpfs, require


def kvlab(*argv, cwd, **env):
    out = subprocess.run([sys.executable, "-m", "kvlab.cli", *argv], capture_output=True, text=True, cwd=cwd,
                         env={**os.environ, **env})
    return out.returncode, out.stdout, out.stderr


def tree(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.mark.parametrize("scale", notebooks.SCALES)
def test_dry_run_prints_every_notebook_and_writes_nothing(tmp_path, scale):
    rc, out, err = kvlab("notebooks", "run", "--scale", scale, "--dry-run", cwd=tmp_path,
                         KVLAB_RESULTS=str(tmp_path / "results" / "kvlab.duckdb"))
    assert rc == 0, err
    for name in notebooks.available():
        block = out.split(f"== {name} ({scale})")[1].split("==")[0]
        for word in ("runs", "keys a database", "time     about", "disk", "output", "memory"):
            assert word in block, (name, word, block)
    assert "no results store at" in out and "(a thread) loads 100,000 ops/s, writes 40,000" in out   # says which rates
    assert "x2.0 (stated default)" in out
    assert "free: fits" in out or "free: DOES NOT FIT" in out
    assert tree(tmp_path) == []          # no output folder made, no store written


def test_the_estimate_reads_the_notebooks_own_numbers():
    """default is the parameters cell; smoke and full are the seed's SCALES rows, through the notebook's resolve;
    the durability notebook's table is read from its own cell."""
    p = estimate.parameters("01_read_scalability", "default")
    assert (p["num"], p["threads"], p["repeats"]) == (1_000_000, [1, 2, 4], 3)
    full = estimate.parameters("01_read_scalability", "full")
    assert full["num"] == common.SCALES["read_scalability"]["full"]["num"] == 10_000_000
    _, works = estimate.notebook_works("01_read_scalability", "full")
    assert len(works) == len(common.built(full["engines"])) * len(full["threads"]) * full["repeats"]
    assert {w.keys for w in works} == {10_000_000}
    assert estimate.parameters("07_durability", "full")["cuts"] == 100
    assert estimate.parameters("03_dbbench_suite", "full")["value_size"] == 800


def test_costs_grow_with_the_scale_and_say_their_basis(tmp_path):
    nothing = Store(tmp_path / "none.duckdb")
    smoke, full = (estimate.notebooks_cost(["03_dbbench_suite"], s, nothing)[0] for s in ("smoke", "full"))
    assert full.seconds > smoke.seconds and full.keys == 50_000_000
    # the largest is readrandom's, uncompressed as the seed's: 50M keys x (16 B + 800 B) x 2.0 (the seed's own were
    # 40 GB for RocksDB, 44 GB for WiredTiger)
    assert 81e9 < max(full.db_bytes.values()) < 83e9
    assert set(full.amp.values()) == {(2.0, "default")} and "x2.0 default for" in estimate.amp_basis(full)
    assert full.memory_bytes == 1_000_000_000   # the seed's 1 GB caches, not its database (read from disk)


@pytest.fixture
def small_tmpfs(tmp_path):
    with mounted_tmpfs(tmp_path / "tmpfs", "size=1m") as where:
        yield where


def test_a_run_that_does_not_fit_is_refused_before_it_starts(tmp_path, small_tmpfs):
    costs = estimate.notebooks_cost(notebooks.available(), "smoke", Store(tmp_path / "none.duckdb"))
    assert sum(c.output_bytes for c in costs) > 1 << 20          # the estimate exceeds the 1 MB tmpfs
    rc, out, err = kvlab("notebooks", "run", "--scale", "smoke", "--out", str(small_tmpfs), cwd=tmp_path,
                         KVLAB_RESULTS=str(tmp_path / "none.duckdb"))
    assert rc == 2 and "kvlab: error: the run does not fit on the disk" in err, err
    assert str(small_tmpfs) in err and "free" in err and "needs" in err
    assert "==" not in out                       # no notebook started
    assert tree(small_tmpfs) == [] and not (tmp_path / "none.duckdb").exists()
    # the dry run says the same, and exits 0
    rc, out, _ = kvlab("notebooks", "run", "--scale", "smoke", "--out", str(small_tmpfs), "--dry-run", cwd=tmp_path)
    assert rc == 0 and "DOES NOT FIT" in out


def test_a_sweep_that_does_not_fit_is_refused(tmp_path, small_tmpfs):
    toml = tmp_path / "g.toml"
    toml.write_text('name = "big"\n[base]\nworkload = "fillseq"\nnum = 100000\ninterval = 0\n'
                    '[axes]\nengine = ["lmdb"]\n')
    rc, out, err = kvlab("sweep", "run", str(toml), "--store", str(tmp_path / "s.duckdb"), "--progress", "off",
                         cwd=tmp_path, KVLAB_TMPDIR=str(small_tmpfs))
    assert rc == 2 and "does not fit on the disk" in err and str(small_tmpfs) in err, err
    assert "[point" not in out and tree(small_tmpfs) == []


def test_sweep_show_prints_the_estimate_by_file_and_by_name(tmp_path):
    require("lmdb")
    toml = tmp_path / "g.toml"
    name = f"est-{uuid.uuid4().hex[:6]}"
    toml.write_text(f'name = "{name}"\nrepeats = 2\n[base]\nworkload = "readrandom"\nnum = 2000\ninterval = 0\n'
                    '[axes]\nthreads = [1, 2]\n')
    store = str(tmp_path / "s.duckdb")
    rc, out, err = kvlab("sweep", "show", str(toml), "--store", store, cwd=tmp_path)
    assert rc == 0, err
    assert "estimate for the 4 point(s) not yet stored" in out and "runs     4, up to 2,000 keys" in out
    for word in ("time     about", "disk", "memory", "free: fits"):
        assert word in out
    assert not os.path.exists(store)
    rc, out, err = kvlab("sweep", "run", str(toml), "--store", store, "--progress", "off", cwd=tmp_path)
    assert rc == 0, err
    rc, out, err = kvlab("sweep", "show", name, "--store", store, cwd=tmp_path)   # by its stored name
    assert rc == 0 and "estimate for the 0 point(s) not yet stored" in out and out.count("done") == 4, out + err
    rc, _, err = kvlab("sweep", "show", "nosuch", "--store", store, cwd=tmp_path)
    assert rc == 2 and "no sweep of that name" in err
