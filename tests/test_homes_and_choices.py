"""Issue 33, items 7 and 8: one home for results, shared files that follow the umask, only engines that exist.

- The default results store is $KVLAB_RESULTS, else the per-user $XDG_DATA_HOME/kvlab/kvlab.duckdb (else
  ~/.local/share/kvlab/kvlab.duckdb): never relative to the current directory, never a folder there; the run
  that creates it says where, once, on stderr.
- A --json file, a report, an export is given the mode the umask gives a new file (0644 under 022, 0600 under
  077), though each is written through a temporary file and renamed.
- A configuration whose adapter is not written (fdb) is offered by no command's help or choices; --engine fdb is
  an unknown engine, with a note that FoundationDB is not obtainable here; `kvlab engines` lists it and says why.
"""
from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import kvlab
from kvlab import _files, engines, errors
from kvlab.cli.main import build_parser
from kvlab.execution import native
from kvlab.results import store as stored
from kvlab.results.result import write_json_atomic

from .conftest import require

CREATED = "kvlab: created the results store at"
PLANNED_NAMES = sorted(engines.PLANNED)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def kvlab_cmd(args, *, cwd, env, umask=0o022, timeout=120):
    """The command itself, as a user runs it (python -m kvlab.cli is the console script's entry)."""
    return subprocess.run([sys.executable, "-m", "kvlab.cli", *map(str, args)], cwd=cwd, env=env, umask=umask,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture
def user(tmp_path):
    """A user of their own: a home, a data directory, and no KVLAB_RESULTS (the environment for kvlab_cmd)."""
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("KVLAB_RESULTS", "XDG_DATA_HOME")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(data), KVLAB_TMPDIR=str(tmp_path), COLUMNS="120")
    return {"home": home, "data": data, "store": data / "kvlab" / "kvlab.duckdb", "env": env}


# --- A. one home for results ---------------------------------------------------------------------------------

def test_the_default_store_is_per_user_and_never_relative_to_the_cwd(tmp_path, monkeypatch):
    monkeypatch.delenv("KVLAB_RESULTS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    assert stored.default_path() == tmp_path / "data" / "kvlab" / "kvlab.duckdb"
    assert stored.Store().path == stored.default_path()
    monkeypatch.chdir("/")
    assert stored.default_path() == tmp_path / "data" / "kvlab" / "kvlab.duckdb"   # the same from any folder
    # no XDG_DATA_HOME, or one that is not absolute (the XDG specification says to ignore it): ~/.local/share
    for xdg in (None, "", "relative/data"):
        if xdg is None:
            monkeypatch.delenv("XDG_DATA_HOME")
        else:
            monkeypatch.setenv("XDG_DATA_HOME", xdg)
        assert stored.default_path() == tmp_path / "home" / ".local" / "share" / "kvlab" / "kvlab.duckdb"
    # $KVLAB_RESULTS, where set, is the store
    monkeypatch.setenv("KVLAB_RESULTS", str(tmp_path / "mine.duckdb"))
    assert stored.default_path() == tmp_path / "mine.duckdb"
    assert stored.Store("given.duckdb").path == Path("given.duckdb")


def test_creating_the_per_user_store_says_where_once(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("KVLAB_RESULTS", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    path = stored.Store().check()
    err = capsys.readouterr().err
    assert err.count(CREATED) == 1 and f"{CREATED} {path} (set KVLAB_RESULTS or --store" in err
    assert path == tmp_path / "data" / "kvlab" / "kvlab.duckdb" and path.is_file()
    # the folders it made are the user's alone (the XDG base directory specification's 0700)
    assert mode(tmp_path / "data") == 0o700 and mode(tmp_path / "data" / "kvlab") == 0o700
    stored.Store().check()                 # there already: nothing said
    assert CREATED not in capsys.readouterr().err
    # a store the user named (--store, Store(path), $KVLAB_RESULTS) is made without a word
    stored.Store(tmp_path / "named" / "s.duckdb").check()
    monkeypatch.setenv("KVLAB_RESULTS", str(tmp_path / "env" / "s.duckdb"))
    stored.Store().check()
    assert CREATED not in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "env", "named"]   # no results/ here


def test_runs_from_any_folder_land_in_the_one_store_and_json_follows_the_umask(tmp_path, user):
    require("lmdb")
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    argv = ["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "1000", "--json", "out.json",
            "--tag", "homes", "--progress", "off"]
    p = kvlab_cmd(argv, cwd=first, env=user["env"], umask=0o022)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(CREATED) == 1 and f"{CREATED} {user['store']} " in p.stderr, p.stderr
    assert "stored as run" in p.stdout and str(user["store"]) in p.stdout
    assert user["store"].is_file()
    assert [c.name for c in first.iterdir()] == ["out.json"], "nothing but the --json file in the folder"
    assert mode(first / "out.json") == 0o644

    p = kvlab_cmd(argv, cwd=second, env=user["env"], umask=0o077)
    assert p.returncode == 0, p.stderr
    assert CREATED not in p.stderr                    # made once, said once
    assert [c.name for c in second.iterdir()] == ["out.json"]
    assert mode(second / "out.json") == 0o600
    assert not (user["home"] / ".local").exists()     # XDG_DATA_HOME is set: the home is not used
    assert len(set(stored.Store(user["store"]).frame(tag="homes").run_id)) == 2   # both runs, one store

    # the report of those runs, written through a temporary file like the JSON: the umask's mode too
    for folder, umask, want in ((first, 0o022, 0o644), (second, 0o077, 0o600)):
        p = kvlab_cmd(["report", "--tag", "homes", "--out", "report.html"], cwd=folder, env=user["env"], umask=umask)
        assert p.returncode == 0, p.stderr
        assert mode(folder / "report.html") == want, (oct(umask), oct(mode(folder / "report.html")))
        assert not [c.name for c in folder.iterdir() if c.name.endswith(".tmp")]
        assert not (folder / "results").exists()


# --- B. files for sharing follow the umask --------------------------------------------------------------------

@pytest.fixture
def umask_set():
    old = os.umask(0o022)
    os.umask(old)

    def set_(value):
        os.umask(value)
    yield set_
    os.umask(old)


@pytest.mark.parametrize("umask,want", [(0o022, 0o644), (0o077, 0o600), (0o027, 0o640), (0o002, 0o664)])
def test_every_atomic_writer_gives_the_umasks_mode(tmp_path, umask_set, umask, want):
    import importlib

    import pandas as pd
    report_write = importlib.import_module("kvlab.lab.report.write")   # the package's `write` is a function
    umask_set(umask)
    assert _files.umask() == umask and _files.new_file_mode() == want
    json_file = tmp_path / "r.json"
    json_file.write_text("old")
    os.chmod(json_file, 0o444)
    write_json_atomic(json_file, [{"a": 1}])           # replacing a file: the new one's mode, not the old
    assert json.loads(json_file.read_text()) == [{"a": 1}] and mode(json_file) == want
    assert mode(report_write.write(tmp_path / "sub" / "r.html", "<html></html>")) == want
    assert mode(stored.rescue_json([{"a": 1}], "unsaved-run-x.json", tmp_path)) == want
    assert mode(stored.write_frame(pd.DataFrame({"a": [1]}), tmp_path / "f.csv")) == want   # exports (DuckDB)
    assert sorted(p.name for p in tmp_path.rglob("*") if ".tmp" in p.name) == []


def test_the_umask_is_read_without_proc_too(tmp_path, monkeypatch, umask_set):
    def no_proc(*a, **k):
        raise OSError("no /proc here")
    monkeypatch.setattr(_files, "open", no_proc, raising=False)
    monkeypatch.setattr(_files, "_SET_AND_READ", [])
    umask_set(0o027)
    assert _files.umask() == 0o027
    assert os.umask(0o027) == 0o027              # read by setting it back: left as it was
    assert mode(_files.write_atomic(tmp_path / "x.txt", "x")) == 0o640


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "r.json"
    write_json_atomic(target, [1])

    def broken(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(_files.os, "fsync", broken)
    with pytest.raises(OSError):
        write_json_atomic(target, [2])
    assert json.loads(target.read_text()) == [1] and [p.name for p in tmp_path.iterdir()] == ["r.json"]


# --- C. only engines that exist are offered -------------------------------------------------------------------

def test_a_planned_adapter_is_listed_never_offered():
    assert PLANNED_NAMES == ["fdb"]
    for name, cfg in engines.PLANNED.items():
        assert name not in engines.REGISTRY and engines.unobtainable(cfg)
        assert cfg.adapter not in native.built_adapters()
    assert all(engines.unobtainable(c) is None for c in engines.REGISTRY.values())
    assert list(engines.listed()) == [*engines.REGISTRY, *engines.PLANNED]


def _engine_options(parser, path=()):
    """(command, option, its help and choices) for every option of every (sub)command that names engines."""
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _engine_options(sub, path + (name,))
        elif any(o in ("--engine", "--engines") for o in action.option_strings):
            yield " ".join(path), action.option_strings[0], f"{action.help} {list(action.choices or ())}"


def _names_planned(text: str) -> list:
    return [n for n in PLANNED_NAMES if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)]


def test_no_command_offers_an_engine_without_an_adapter():
    found = list(_engine_options(build_parser()))
    assert {c for c, _, _ in found} >= {"run", "crashtest", "dbbench", "ycsb", "linkbench", "compare"}
    assert not [(c, o) for c, o, text in found if _names_planned(text)]
    listing = [(c, o) for c, o, text in found if "lmdb, leveldb" in text]   # the options that list engines
    assert {c for c, _ in listing} >= {"run", "crashtest", "dbbench", "ycsb", "linkbench"}


@pytest.mark.parametrize("command", ["run", "crashtest"])
def test_help_lists_only_built_adapters(command, tmp_path, user):
    p = kvlab_cmd([command, "--help"], cwd=tmp_path, env=user["env"])
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())
    assert not _names_planned(text), text
    offered = [n for n, c in engines.REGISTRY.items() if command != "crashtest" or c.stores_data]
    assert all(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text) for n in offered)


@pytest.mark.parametrize("argv", [
    ["run", "--engine", "fdb", "--workload", "fillseq", "--num", "1000"],
    ["crashtest", "--engine", "fdb", "--kills", "1"],
], ids=["run", "crashtest"])
def test_engine_fdb_is_an_unknown_engine_with_a_note(argv, tmp_path, user):
    p = kvlab_cmd(argv, cwd=tmp_path, env=user["env"])
    assert p.returncode == 2, (p.stdout, p.stderr)
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith(f"kvlab: error: engine 'fdb' is unknown; allowed: {', '.join(engines.REGISTRY)}"), line
    assert "fdb is not obtainable here: " in line and "FoundationDB" in line
    assert "install" not in line and "rebuild" not in line and "Traceback" not in p.stderr
    assert list(tmp_path.iterdir()) == [user["home"]] and not user["data"].exists()   # nothing made


def test_python_names_fdb_the_same_way():
    for call in (lambda: kvlab.run("fdb", "fillseq", num=1000), lambda: native.require_built("fdb"),
                 lambda: engines.get("fdb")):
        with pytest.raises(errors.SpecError, match=r"engine 'fdb' is unknown; allowed: lmdb.*; fdb is not "
                                                   r"obtainable here: .*FoundationDB") as got:
            call()
        assert not isinstance(got.value, errors.EngineNotBuilt)
    with pytest.raises(errors.SpecError) as plain:   # an engine kvlab never heard of: no note
        engines.get("nosuch")
    assert "not obtainable" not in str(plain.value)


def test_kvlab_engines_says_fdb_is_not_obtainable(tmp_path, user):
    p = kvlab_cmd(["engines"], cwd=tmp_path, env=user["env"])
    assert p.returncode == 0, p.stderr
    line = next(l for l in p.stdout.splitlines() if l.startswith("fdb "))
    assert "not obtainable here: " + engines.ADAPTERS["fdb"]["planned"] in line
    rows = {r["engine"]: r for r in native.describe()}
    assert rows["fdb"]["built"] is False and rows["fdb"]["unobtainable"] == engines.ADAPTERS["fdb"]["planned"]
    assert all(rows[n]["unobtainable"] is None for n in engines.REGISTRY)


def test_the_run_builder_offers_only_built_engines():
    pytest.importorskip("ipywidgets")
    from kvlab.widgets import RunBuilder
    b = RunBuilder()
    options = list(b.engines.options)
    assert options and not set(options) & set(engines.PLANNED)
    offered = set(engines.REGISTRY) | {v for n in engines.REGISTRY for v in engines.versions_of(n)}
    assert set(options) <= offered, "a compiled-in configuration or a version of one its recipes give"
    assert all(engines.get(o) for o in options)
