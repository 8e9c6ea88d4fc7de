"""Pebble and Badger, the engines in Go (kvlab/engines/_goshim: one c-shared object for both): their measured loops
run inside Go on kvlab's own keys, they run db_bench, YCSB and scans like every engine, report what they were opened
with, and set-up without a new enough Go skips them with a reason.  The contract suite (engines check, crash tests,
transactions, power cuts, a full disk) runs on them through CONFORMANCE like every engine."""
import os
import subprocess
import sys

import pytest

import kvlab
from kvlab import engines, errors
from kvlab.execution.plugins import build as plugin_build

from .conftest import require

GO_ENGINES = [n for n, d in engines.DESCRIPTORS.items()
              if d.loaded and d.versions[d.loaded].source == "go"]


def test_the_go_engines_are_pebble_and_badger_from_one_shim():
    assert sorted(GO_ENGINES) == ["badger", "pebble"]
    recipes = [engines.DESCRIPTORS[n].versions[engines.DESCRIPTORS[n].loaded] for n in GO_ENGINES]
    assert {r.include for r in recipes} == {"../_goshim"} and {r.go for r in recipes} == {"1.24"}


@pytest.mark.parametrize("name", GO_ENGINES)
def test_measured_loops_run_inside_go_on_kvlabs_own_keys(name, tmp_path):
    """fillrandom and readrandom through the engine's own loop: the keys are the C generator's (the same seed finds
    exactly what LMDB finds), the record says which loop ran, and a YCSB mix and a scan go through the C loops."""
    require(name)
    require("lmdb")
    found = {}
    for engine in (name, "lmdb"):
        got = kvlab.run(engine, "fillrandom,readrandom", num=5000, reads=4000, threads=2, seed=11,
                        db=str(tmp_path / engine), interval=0)
        fill, read = got[-2], got[-1]
        found[engine] = read.found
        if engine == name:
            for b in (fill, read):
                assert b.params["engine_loop"].startswith("db_bench's write and read loops run inside Go"), b.params
            assert read.ops == 8000 and 0 < read.found < read.ops
            assert read.latency_us["p50"] > 0 and read.histograms
    assert found[name] == found["lmdb"], found
    mixed = kvlab.run(name, "fillseq,ycsb-a,seekrandom", num=3000, reads=500, seed=1, db=str(tmp_path / "mix"),
                      interval=0)
    for b in mixed:
        assert "engine_loop" not in b.params or b.workload == "fillseq", (b.workload, b.params)
        assert b.ops > 0
    assert mixed[-1].found == mixed[-1].ops


@pytest.mark.parametrize("name", GO_ENGINES)
def test_reports_what_it_was_opened_with(name, tmp_path):
    require(name)
    b = kvlab.run(name, "fillseq", num=2000, seed=1, db=str(tmp_path / "db"), interval=0, cache_size=24 << 20,
                  write_buffer_size=8 << 20)[-1]
    reported = b.provenance["engine_config_reported"]
    assert reported["cache_size"] == 24 << 20 and reported["write_buffer_size"] == 8 << 20, reported
    build = b.versions["engine_build"]["build"]
    assert build["source"]["kind"] == "go" and build["source"]["go"] and build["linkage"] == "shared"


def test_bad_engine_options_are_refused_with_what_is_allowed(tmp_path):
    require("pebble")
    with pytest.raises(errors.KvlabError) as e:
        kvlab.run("pebble", "fillseq", num=10, db=str(tmp_path / "db"), options="compression=lz9", interval=0)
    assert "compression" in str(e.value) and "none, snappy or zstd" in str(e.value)


def test_set_up_without_go_skips_the_go_engines_with_a_reason(tmp_path, monkeypatch):
    """scripts/setup.sh builds with --where-possible: where go is missing, or older than the shim's modules need
    (Debian 12's own is 1.19), each Go engine is one line saying why and how to get it, and set-up goes on."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("gcc", "cc"):
        real = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        if real:
            os.symlink(real, bare / tool)
    env = dict(os.environ, PATH=str(bare))
    out = subprocess.run([sys.executable, "-m", "kvlab.cli", "engines", "build", "--where-possible", *(
        f"{n}@{engines.DESCRIPTORS[n].loaded}" for n in GO_ENGINES)], capture_output=True, text=True, env=env,
        timeout=120)
    assert out.returncode == 0, out.stderr
    for n in GO_ENGINES:
        assert (f"{n}@{engines.DESCRIPTORS[n].loaded}: skipped: building it needs go (Go 1.24 or newer), which is "
                "not on PATH; install Go 1.24 or newer") in out.stdout, out.stdout
    old = bare / "go"   # Debian 12's golang
    old.write_text("#!/bin/sh\n[ \"$1 $2\" = 'env GOVERSION' ] && echo go1.19.8\n")
    old.chmod(0o755)
    monkeypatch.setenv("PATH", str(bare))
    why = plugin_build.cannot_build_here(f"pebble@{engines.DESCRIPTORS['pebble'].loaded}")
    assert why == "needs Go 1.24 or newer; go here is 1.19.8"


def test_badgers_finding_reduced_an_empty_memtable_file_is_refused():
    """docs/crashtest.md's finding 5 without FUSE or kvlab (kvlab/engines/_goshim/cmd/badger-empty-memtable): a crash
    leaves 00001.mem as written and the database reopens with its key; the power cut's empty 00001.mem makes Badger
    4.9.6 refuse it (openMemTables takes z.NewFile, "Create a new file", as an error).  Exit 1 is a fixed Badger:
    then this test fails, and the finding is looked at again."""
    why = plugin_build.cannot_build_here(f"badger@{engines.DESCRIPTORS['badger'].loaded}")
    if why:
        pytest.skip(f"badger: {why}")
    shim = os.path.join(os.path.dirname(engines.__file__), "_goshim")
    got = subprocess.run(["go", "run", "./cmd/badger-empty-memtable"], cwd=shim, capture_output=True, text=True,
                         env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"}, timeout=600)
    assert got.returncode == 0, (got.returncode, got.stdout, got.stderr[-2000:])
    crash, cut = got.stdout.splitlines()
    assert crash == "after a crash (00001.mem as written): opens true, key found true"
    assert cut == ("after a power cut (00001.mem empty): opens false: while opening memtables err: while opening "
                   "fid: 1 err: Create a new file")


def test_a_go_build_removes_the_shim_objects_no_built_engine_links(tmp_path, monkeypatch):
    """Each shim source and Go makes a folder of its own (go-shim/<digest>, 30 MB); once no built Go engine links
    one, the next Go build removes it, and nothing else in go-shim/."""
    import json

    from kvlab.execution.plugins import where
    monkeypatch.setenv("KVLAB_ENGINES_DIR", str(tmp_path))
    shims = tmp_path / plugin_build.GO_SHIM
    kept, stale, other = shims / ("a" * 16), shims / ("b" * 16), shims / "notes"
    for folder in (kept, stale, other):
        folder.mkdir(parents=True)
        (folder / "libkvgo.so").write_bytes(b"")
    engine = tmp_path / "pebble@2.1.7"
    engine.mkdir()
    (engine / where.library_name("pebble")).write_bytes(b"")
    (engine / where.FACTS).write_text(json.dumps({"source": {"kind": "go", "go_object": str(kept / "libkvgo.so")}}))
    said = []
    assert plugin_build.prune_go_shims(tmp_path, said.append) == ["b" * 16]
    assert kept.is_dir() and other.is_dir() and not stale.exists()
    assert said == [f"removed 1 Go shim object(s) no built engine links: {'b' * 16}"]
