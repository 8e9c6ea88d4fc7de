"""Versions of an engine loaded at run time (issue "Several versions of one engine side by side"): two LMDB versions
in one process and in one compare, the facts each result carries, and the refusals (a version not built, one with
no recipe, an object that is no kvlab engine or was built against another contract)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kvlab
from kvlab import cli, engines, errors
from kvlab.execution import native
from kvlab.execution.plugins import build as plugin_build
from kvlab.execution.plugins import where

from .conftest import require

OLD, NEW = "lmdb@0.9.24", "lmdb@0.9.70"      # Debian's, and mdb.master's from the lmdb-master-sys crate
INCLUDE = Path(__file__).resolve().parents[1] / "cython_ext" / "include"


@pytest.fixture(scope="module")
def two_lmdbs():
    """Both versions built (scripts/setup.sh builds them; a checkout without them builds them here, in seconds)."""
    require("lmdb")
    for name in (OLD, NEW):
        if where.built(name) is None:
            plugin_build.build(name)
    return OLD, NEW


def test_two_versions_side_by_side_in_one_session(two_lmdbs, tmp_path):
    got = {}
    for name in ("lmdb", OLD, NEW):
        r = kvlab.run(name, "fillseq,readrandom", num=2000, db=str(tmp_path / name), seed=1, interval=0)
        got[name] = r[1]
    assert {n: got[n].versions["engine_library"] for n in got} == {"lmdb": "0.9.24", OLD: "0.9.24", NEW: "0.9.70"}
    assert all(got[n].engine == n and got[n].found == got[n].ops for n in got)
    assert NEW not in native.load().loaded_adapters()   # each ran in its trial's worker: the session loaded none
    build = got[NEW].versions["engine_build"]
    assert "lmdb-master-sys 0.2.6" in build["origin"] and build["build"]["source"]["sha256"].startswith("aaeb9bd2")
    assert build["build"]["reported_version"] == "0.9.70" and build["linkage"] == "static"
    # one file format: what 0.9.70 wrote, the compiled-in 0.9.24 reads, in the same process
    lib = native.load()
    old = lib.Engine("lmdb", str(tmp_path / NEW), {})
    try:
        assert old.version == "0.9.24" and old.get(b"0" * 16) is not None
    finally:
        old.close()


def test_two_versions_in_one_compare(two_lmdbs, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KVLAB_TMPDIR", str(tmp_path))
    out = tmp_path / "c.json"
    assert cli.main(["compare", "--engines", f"lmdb,{NEW}", "--num", "2000", "--repeat", "2", "--duration", "0.3",
                     "--warmup", "0.1", "--memory", "none", "--json", str(out), "--no-store"]) == 0
    records = json.loads(out.read_text())
    assert {(r["engine"], r["versions"]["engine_library"]) for r in records} == {("lmdb", "0.9.24"), (NEW, "0.9.70")}
    assert f"{NEW} " in capsys.readouterr().out


def test_a_version_not_built_names_the_command(monkeypatch, tmp_path):
    monkeypatch.setattr(where, "folders", lambda: [tmp_path])
    with pytest.raises(errors.EngineNotBuilt, match=r"kvlab engines build lmdb@0.9.70` builds it"):
        kvlab.run(NEW, "fillseq", num=100, db=str(tmp_path / "db"))
    assert not (tmp_path / "db").exists()                                  # refused before anything was made


def test_a_version_without_a_recipe_is_refused_with_the_known_ones():
    with pytest.raises(errors.SpecError, match=r"no recipe for lmdb version '9\.9'; allowed: lmdb@0\.9\.24, "):
        engines.get("lmdb@9.9")
    with pytest.raises(errors.SpecError, match="no recipe for 'lmdb@9.9'"):
        plugin_build.recipe_of("lmdb@9.9")
    cfg = engines.get("wiredtiger-lsm@3.2.1")
    assert (cfg.adapter, cfg.variant, cfg.native_name, cfg.colour) == ("wiredtiger", "lsm", "wiredtiger@3.2.1", "")


def _shared_object(tmp_path, body: str) -> Path:
    src, lib = tmp_path / "x.c", tmp_path / "libx.so"
    src.write_text('#include "kv_plugin.h"\n' + body)
    subprocess.run(["gcc", "-shared", "-fPIC", f"-I{INCLUDE}", str(src), "-o", str(lib)], check=True)
    return lib


def test_an_object_that_is_no_kvlab_engine_is_refused(tmp_path):
    lib = _shared_object(tmp_path, "int unrelated(void) { return 1; }\n")
    with pytest.raises(errors.EngineNotBuilt, match="exports no kvlab_engine"):
        native.load().load_adapter("x@1", str(lib))
    with pytest.raises(errors.EngineNotBuilt, match="cannot load"):
        native.load().load_adapter("y@1", str(tmp_path / "missing.so"))


def test_an_object_built_against_another_contract_is_refused(tmp_path):
    lib = _shared_object(tmp_path, "static const kv_engine_ops ops = {.name = \"old\"};\n"
                                   "const kv_engine_ops *kvlab_engine(int *abi, size_t *size) "
                                   "{ *abi = KV_ENGINE_ABI + 1; *size = 8; return &ops; }\n")
    with pytest.raises(errors.EngineNotBuilt, match=r"built against kv_engine.h version \d+ \(8-byte table\)"):
        native.load().load_adapter("old@1", str(lib))
    assert "old@1" not in native.load().loaded_adapters()


def test_engines_lists_what_is_built_and_what_can_be(two_lmdbs):
    got = subprocess.run([sys.executable, "-m", "kvlab.cli", "engines", "--json"], capture_output=True, text=True,
                         check=True)
    rows = {r["engine"]: r for r in json.loads(got.stdout)}
    assert rows[NEW]["built"] and rows[NEW]["version"] == "0.9.70"
    assert rows["rocksdb@7.8.3"]["build_command"] == "kvlab engines build rocksdb@7.8.3"


def test_versions_prints_the_small_datum_table(two_lmdbs, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KVLAB_TMPDIR", str(tmp_path))
    out = tmp_path / "v.json"
    assert cli.main(["versions", OLD, NEW, "--num", "2000", "--repeat", "3", "--duration", "0.3", "--warmup", "0.1",
                     "--memory", "none", "--workload", "readrandom", "--json", str(out), "--no-store",
                     "--progress", "off"]) == 0
    said = capsys.readouterr()
    stdout = said.out
    assert f"readrandom 1 thr, relative to {OLD} (1.00):" in stdout
    # each version's build named above the table; Debian's -O2 against the crate's -O3: the warning says so
    assert "each version's build" in stdout and "Debian's packaging defaults (dpkg-buildflags; -O2)" in stdout
    assert "-O3, NDEBUG, x86-64 baseline (the crate's build: -O3: cc at cargo's release opt-level)" in stdout
    assert "warning: the versions were not built alike" in said.err and "compiler flags:" in said.err
    base = next(ln for ln in stdout.splitlines() if ln.startswith(OLD + " "))
    other = next(ln for ln in stdout.splitlines() if ln.startswith(NEW + " "))
    assert " 1.00 " in base and "base" in base, stdout
    # 3 a side: all 9 ratios, at 1 - 2/C(6,3) = 90%
    assert re.search(r" \d+\.\d\d \.\. \d+\.\d\d \(90%\) ", other), stdout
    records = json.loads(out.read_text())
    assert [r["engine"] for r in records[:2]] == [OLD, NEW] and len(records) == 2 + 2 * 3


@pytest.mark.parametrize("argv, said", [
    (["versions", OLD], "needs at least two versions"),
    (["versions", OLD, OLD], "given twice"),
    (["versions", OLD, "rocksdb@7.8.3"], "versions of one engine configuration"),
    (["versions", OLD, "lmdb@1.0"], "no recipe for lmdb version '1.0'"),
    (["versions", OLD, NEW, "--workload", "readrandom,nosuch"], "nosuch is no db_bench workload"),
    (["versions", OLD, NEW, "--threads", "0"], "--threads '0'"),
])
def test_versions_refuses_bad_input_before_anything_runs(argv, said, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KVLAB_TMPDIR", str(tmp_path))
    assert cli.main([*argv, "--no-store"]) != 0
    assert said in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# --- engines never compiled into kvlab (BUILD's `loaded`): libmdbx, redb ---------------------------------------

LOADED = {name: d.loaded for name, d in engines.DESCRIPTORS.items() if d.loaded and not d.planned}


@pytest.mark.parametrize("adapter", LOADED)
def test_an_engine_never_compiled_in_runs_its_built_default_version_by_its_plain_name(adapter, tmp_path):
    version = LOADED[adapter]
    cfg = require(adapter)                                        # CI: scripts/setup.sh built it
    assert adapter not in native.built_adapters()                 # setup.py left it out of the extension
    assert (cfg.name, cfg.build, cfg.native_name) == (adapter, version, f"{adapter}@{version}")
    r = kvlab.run(adapter, "fillseq,readrandom", num=2000, db=str(tmp_path / "db"), seed=1, interval=0)[1]
    assert r.engine == adapter and r.found == r.ops and r.versions["engine_library"] == version
    assert r.versions["engine_build"]["build"]["source"]["kind"] in ("crate", "shim", "go")   # a -sys crate, a shim
    rows = {row["engine"]: row for row in native.describe()}
    assert rows[adapter]["built"] and rows[adapter]["version"] == version
    assert f"{adapter}@{version}" not in rows                     # its plain name's row is that version's


@pytest.mark.parametrize("adapter", LOADED)
def test_an_engine_never_compiled_in_and_not_built_names_its_build_command(adapter, monkeypatch, tmp_path):
    monkeypatch.setattr(where, "folders", lambda: [tmp_path])
    command = f"kvlab engines build {adapter}@{LOADED[adapter]}"
    with pytest.raises(errors.EngineNotBuilt, match=f"`{command}` builds it"):
        kvlab.run(adapter, "fillseq", num=100, db=str(tmp_path / "db"))
    assert not (tmp_path / "db").exists()
    row = next(r for r in native.describe() if r["engine"] == adapter)
    assert not row["built"] and row["build_command"] == command


# --- an engine in Rust behind a shim crate (the "shim" recipe): redb ----------------------------------------------

def test_a_shim_whose_lock_pins_another_crate_builds_nothing(monkeypatch, tmp_path):
    """The shim's committed Cargo.lock must pin the recipe's crate, version and checksum: else nothing is built
    (cargo never runs) and the error names both."""
    from kvlab.engines.descriptor import Recipe
    d = engines.DESCRIPTORS["redb"]
    good = d.versions["4.6.0"]
    bad = Recipe("shim", good.package, pin=good.pin, sha256="0" * 64, include=good.include, library=good.library)
    monkeypatch.setitem(d.versions, "4.6.0", bad)
    monkeypatch.setattr(where, "target", lambda: tmp_path)
    monkeypatch.setattr(plugin_build, "_run", lambda *a, **k: pytest.fail(f"ran {a[0][:3]}"))
    with pytest.raises(errors.KvlabError, match=f"pins redb 4.6.0 \\(sha256 {good.sha256}\\), the recipe 4.6.0 "
                                                f"\\({'0' * 64}\\); nothing was built"):
        plugin_build.build("redb@4.6.0")
    assert not (tmp_path / "redb@4.6.0").exists()
    with pytest.raises(ValueError, match="shim recipe 'redb' needs its include"):
        Recipe("shim", "redb", pin="4.6.0", sha256=good.sha256, library="kvlab_redb")


def test_redb_reads_see_every_commit_and_a_read_transaction_one_snapshot(tmp_path):
    """The shim keeps a thread's snapshot while nothing commits: a read after another thread's commit sees it, a read
    transaction does not; redb's file lock refuses a second open of the database as busy."""
    cfg = require("redb")
    lib = native.load()
    h = lib.Engine(native.adapter_name(cfg), str(tmp_path), cfg.config({"create": True}, max_threads=4))
    try:
        reader, writer, snap = h.session(), h.session(), h.session()
        writer.put(b"a", b"1")
        assert reader.get(b"a") == b"1"            # the reader keeps this snapshot ...
        writer.put(b"a", b"2")
        assert reader.get(b"a") == b"2"            # ... until a commit: then it reads the newest
        snap.txn_begin("read")
        writer.put(b"a", b"3")
        assert snap.get(b"a") == b"2" and reader.get(b"a") == b"3"
        snap.txn_commit()
        assert snap.get(b"a") == b"3"
        with pytest.raises(errors.EngineBusy, match="DatabaseAlreadyOpen"):
            lib.Engine(native.adapter_name(cfg), str(tmp_path), cfg.config({}, max_threads=1))
    finally:
        h.close()


def test_fjall_commits_atomically_reads_its_own_writes_and_keeps_its_keyspace_settings(tmp_path):
    """fjall through its shim: a write transaction reads its own writes and is invisible until commit, a read
    transaction keeps its snapshot, an abort drops everything, fjall's lock refuses a second open as busy, the
    options are checked, and the data and the journal's batches come back after a reopen."""
    cfg = require("fjall")
    lib = native.load()
    with pytest.raises(errors.EngineConfigError, match="fjall option 'bogus' is unknown"):
        lib.Engine(native.adapter_name(cfg), str(tmp_path), cfg.config({"create": True, "options": "bogus"}, max_threads=1))
    h = lib.Engine(native.adapter_name(cfg), str(tmp_path),
                   cfg.config({"create": True, "options": "compression=lz4,bloom_bits=10"}, max_threads=4))
    try:
        writer, reader, snap = h.session(), h.session(), h.session()
        writer.put(b"a", b"1")
        snap.txn_begin("read")
        writer.txn_begin("write")
        writer.put(b"a", b"2")
        writer.put(b"b", b"2")
        assert writer.get(b"a") == b"2" and reader.get(b"a") == b"1"   # its own writes; nobody else's view
        writer.txn_commit()
        assert reader.get(b"b") == b"2" and snap.get(b"a") == b"1" and snap.get(b"b") is None
        snap.txn_commit()
        writer.txn_begin("write")
        writer.put(b"c", b"3")
        writer.txn_abort()
        assert reader.get(b"c") is None
        with pytest.raises(errors.EngineBusy, match="Locked"):
            lib.Engine(native.adapter_name(cfg), str(tmp_path), cfg.config({}, max_threads=1))
    finally:
        h.close()
    h = lib.Engine(native.adapter_name(cfg), str(tmp_path), cfg.config({}, max_threads=1))
    try:
        assert h.session().get(b"a") == b"2" and h.session().get(b"b") == b"2"
    finally:
        h.close()


@pytest.mark.parametrize("adapter", LOADED)
def test_dbbench_names_an_engine_never_compiled_ins_own_library(adapter, tmp_path, capsys):
    require(adapter)
    assert cli.main(["dbbench", f"--engine={adapter}", "--benchmarks=fillseq", "--num=200", f"--db={tmp_path / 'db'}",
                     "--no-store"]) == 0
    assert f"kvlab dbbench: {adapter} (library {LOADED[adapter]})" in capsys.readouterr().out
