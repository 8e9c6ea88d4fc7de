"""`kvlab results diff` and `kvlab results list` stay readable however much the store holds: two engines' diff
lists the settings both hold and counts the ones only one has (--all lists them), every line within 120 columns
and --json whole; the listing shows the latest 20 (--limit, --since) under a line naming the store read."""
import csv
import json
import re

import duckdb
import pandas as pd
import pytest

import kvlab
from kvlab import cli
from kvlab.cli.results import diff as diff_cli
from kvlab.results import diff
from kvlab.results.store import Store

from .conftest import require

WIDTH = 120


@pytest.fixture(scope="module")
def two_engines(tmp_path_factory):
    """A store holding one tiny LMDB run and one tiny RocksDB run: (store, lmdb run id, rocksdb run id)."""
    require("lmdb")
    require("rocksdb")
    store = Store(tmp_path_factory.mktemp("readable") / "s.duckdb")
    a = store.append(kvlab.run("lmdb", "fillrandom", num=300, seed=7))
    b = store.append(kvlab.run("rocksdb", "fillrandom", num=300, seed=7))
    return store, a, b


def _diff(store, *argv, capsys):
    assert cli.main(["results", "diff", *argv, "--store", str(store.path)]) == 0
    return capsys.readouterr().out.splitlines()


def test_two_engines_diff_lists_the_shared_settings_and_counts_the_rest(two_engines, capsys):
    store, a, b = two_engines
    frame = diff.diff(a, b, store=store)
    held = frame.held.value_counts().to_dict()
    assert held.get("both", 0) >= 2 and held.get("A", 0) >= 1 and held.get("B", 0) > 50   # RocksDB's own options
    lines = _diff(store, a, b, capsys=capsys)
    assert all(len(line) <= WIDTH for line in lines), max(lines, key=len)
    assert lines[0].split() == ["setting", "A:", a, "B:", b]
    shared = frame[frame.held == "both"]
    table = lines[1:1 + len(shared)]
    assert [line.split()[0] for line in table] == list(shared.setting)
    assert "spec.engine" in shared.setting.values and "DBOptions" not in "\n".join(lines)
    assert lines[-1] == (f"and {held['A']} settings only A (lmdb) has, {held['B']} only B (rocksdb) has: "
                         "--all lists them")
    assert len(lines) == 1 + len(shared) + 1   # header, shared rows, the count (no value here is cut)


def test_all_lists_every_setting_within_120_columns_and_json_keeps_them_whole(two_engines, capsys, tmp_path):
    store, a, b = two_engines
    frame = diff.diff(a, b, store=store)
    out = tmp_path / "d.json"
    lines = _diff(store, a, b, "--all", "--json", str(out), capsys=capsys)
    assert all(len(line) <= WIDTH for line in lines), max(lines, key=len)
    assert lines[-1] == f"differences written to {out}"
    rows = [line for line in lines[1:] if line.startswith(("spec.", "config.", "machine.", "build."))]
    assert len(rows) == len(frame)                      # every differing setting, one line each
    assert any(re.search(r"config\.reported\.\S*\s+\(none\)\s+\S", line) for line in rows)   # RocksDB's alone
    longest = max(frame.a.str.len().max(), frame.b.str.len().max())
    assert longest > WIDTH                              # RocksDB's nested options: cut on screen ...
    assert any(line.startswith(("  …: cut to fit 120", "  ...: cut to fit 120")) for line in lines)
    assert "--all lists them" not in "\n".join(lines)
    records = json.loads(out.read_text())               # ... and whole in the JSON, every row
    assert records == diff.records(frame) and len(records) == len(frame)
    assert max(len(str(r[k])) for r in records for k in ("a", "b")) == longest


def test_diff_lines_fit_whatever_the_values_and_name_one_side(capsys):
    """lines() alone: long names and values are cut to fit, the count says 'setting' for one."""
    frame = pd.DataFrame([
        {"setting": "spec.num", "a": "1000", "b": "2000", "held": "both"},
        {"setting": "config.reported." + "x" * 150, "a": "y" * 300, "b": "z | " * 80, "held": "both"},
        {"setting": "config.passed.map_size", "a": "68719476736", "b": "(none)", "held": "A"},
    ], columns=["setting", "a", "b", "held"])
    frame.attrs["engines"] = ("lmdb", "rocksdb")
    lines = diff_cli.lines(frame, "tag:" + "a" * 200, "b")
    assert all(len(line) <= WIDTH for line in lines), max(lines, key=len)
    assert lines[-1] == "and 1 setting only A (lmdb) has: --all lists them"
    assert lines[2].startswith("config.rep") and lines[2].split()[0].endswith("x" * 10)   # its middle cut
    assert len(diff_cli.lines(frame, "a", "b", everything=True)) == 1 + 3 + 1   # + the note on what was cut
    only = diff_cli.lines(frame[frame.held == "A"], "a", "b")
    assert only == ["no setting both A (a) and B (b) hold differs; 1 setting only A (lmdb) has: --all lists them"]


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    """A store of 23 stored results: one tiny LMDB run (2 benchmarks) stored 11 times, one RocksDB run last."""
    require("lmdb")
    require("rocksdb")
    store = Store(tmp_path_factory.mktemp("listing") / "many.duckdb")
    run = kvlab.run("lmdb", "fillseq,readrandom", num=200, seed=3)
    ids = [store.append(run) for _ in range(11)]
    ids.append(store.append(kvlab.run("rocksdb", "fillseq", num=200, seed=3)))
    return store, ids


def _list(store, *argv, capsys):
    assert cli.main(["results", "list", *argv, "--store", str(store.path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines[2:] if re.match(r"[0-9a-f]{12}  ", line)]
    return lines[0], rows


def test_list_shows_the_latest_20_under_a_line_naming_the_store(many, capsys):
    store, ids = many
    header, rows = _list(store, capsys=capsys)
    assert header == (f"the latest 20 of 23 stored results in {store.path}, oldest first; "
                      "--limit N or --limit 0 for all")
    assert len(rows) == 20 and rows[-1].startswith(ids[-1]) and " rocksdb " in rows[-1]   # the newest last
    assert [r[:12] for r in rows[:2]] == [ids[1], ids[2]]   # the oldest three left out (run 0's two, run 1's first)
    header, rows = _list(store, "--limit", "5", capsys=capsys)
    assert header.startswith("the latest 5 of 23 stored results in ") and len(rows) == 5
    header, rows = _list(store, "--limit", "0", capsys=capsys)
    assert header == f"all 23 stored results in {store.path}, oldest first" and len(rows) == 23
    header, rows = _list(store, "--engine", "rocksdb", capsys=capsys)
    assert header == f"the one stored result matching engine rocksdb in {store.path}" and len(rows) == 1


def test_list_since_an_age_or_a_date(many, capsys, tmp_path):
    store, ids = many
    con = duckdb.connect(str(store.path))   # the first four runs stored three days ago
    con.execute("UPDATE benchmarks SET stored_at = stored_at - INTERVAL 3 DAY WHERE run_id IN (?, ?, ?, ?)", ids[:4])
    con.close()
    header, rows = _list(store, "--since", "1d", capsys=capsys)
    assert header.startswith("all 15 stored results since ") and str(store.path) in header and len(rows) == 15
    assert {r[:12] for r in rows} == set(ids[4:])
    day = (pd.Timestamp.now() - pd.Timedelta(days=2)).strftime("%Y-%m-%d")
    header, rows = _list(store, "--since", day, "--limit", "3", capsys=capsys)
    assert header.startswith(f"the latest 3 of 15 stored results since {day} 00:00:00 in {store.path}")
    header, rows = _list(store, "--since", "4d", "--engine", "lmdb", "--limit", "0", capsys=capsys)
    assert header.startswith("all 22 stored results matching engine lmdb since ") and len(rows) == 22
    assert cli.main(["results", "list", "--since", "2999-01-01", "--store", str(store.path)]) == 0
    assert capsys.readouterr().out.startswith("no stored results since 2999-01-01 00:00:00 in ")
    # export shares the filters, not --limit: every stored result
    out = tmp_path / "all.csv"
    assert cli.main(["results", "export", "--out", str(out), "--store", str(store.path)]) == 0
    assert len(list(csv.DictReader(out.open()))) == 23


@pytest.mark.parametrize("argv, says", [
    (["--since", "yesterday"], "argument --since: 'yesterday' is not a time; allowed: an ISO date"),
    (["--since", "2026-13-01"], "argument --since: '2026-13-01' is not a time; allowed:"),
    (["--since", "3y"], "'3y' is not a time; allowed: an ISO date or date-time"),
    (["--limit", "-1"], "argument --limit: -1 is out of range"),
    (["--sweep", "s", "--limit", "3"], "--limit picks stored results; --sweep prints the sweep's frame whole"),
])
def test_list_refuses_a_bad_since_or_limit(argv, says, tmp_path, capsys):
    assert cli.main(["results", "list", *argv, "--store", str(tmp_path / "none.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kvlab: error: results list: ") and says in err, err
