"""What a new user tripped over (issue 46), each on a real engine: set-up without cargo, tables a paper takes
(--format), warnings before results, an unknown setting named, an unusable $KVLAB_TMPDIR named, a fresh run saying
what it removed, the defaults line naming the run's engines, an A/A labelled as a noise check, and an engine's own
advice for data larger than its memory budget."""
import csv
import io
import json
import subprocess
import sys

import pytest

import kvlab
from kvlab import cli
from kvlab.cli import output
from kvlab.execution import native
from kvlab.results.store import Store
from kvlab.services import maincompare

from .conftest import require

KVLAB = [sys.executable, "-m", "kvlab.cli"]


# --- set-up on a machine without cargo ---------------------------------------------------------------------------

def _bin(tmp_path, **scripts):
    """A PATH of gcc alone, plus the fake tools given ({name: shell body})."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "gcc").symlink_to(subprocess.run(["which", "gcc"], capture_output=True, text=True).stdout.strip())
    for name, body in scripts.items():
        (folder / name).write_text(f"#!/bin/sh\n{body}\n")
        (folder / name).chmod(0o755)
    return str(folder)


def test_set_up_skips_the_crate_builds_without_cargo(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", _bin(tmp_path))
    monkeypatch.setenv("KVLAB_ENGINES_DIR", str(tmp_path / "engines"))
    assert cli.main(["engines", "build", "--where-possible", "lmdb@0.9.70", "mdbx@0.14.4", "redb@4.6.0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    for line, name in zip(lines, ("lmdb@0.9.70", "mdbx@0.14.4", "redb@4.6.0")):
        assert line.startswith(f"{name}: skipped: building it needs cargo") and "rustup" in line
        assert f"kvlab engines build {name}" in line
    assert "(Rust 1.90 or newer)" in lines[2]
    assert not (tmp_path / "engines").exists() or not any((tmp_path / "engines").iterdir())
    # without --where-possible the missing tool is an error, before anything is made
    assert cli.main(["engines", "build", "redb@4.6.0"]) == 2
    assert "needs cargo" in capsys.readouterr().err


def test_set_up_skips_what_needs_a_newer_rust(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", _bin(tmp_path, rustc='echo "rustc 1.63.0 (4b91a6ea7 2022-08-08)"', cargo="exit 1"))
    monkeypatch.setenv("KVLAB_ENGINES_DIR", str(tmp_path / "engines"))
    assert cli.main(["engines", "build", "--where-possible", "redb@4.6.0"]) == 0
    assert "needs Rust 1.90 or newer; rustc here is 1.63.0" in capsys.readouterr().out


# --- tables a paper takes ----------------------------------------------------------------------------------------

ROWS = [{"engine": "lmdb_x & y", "ops": 1234567.0}, {"engine": "a|b", "ops": 0.000123}]
COLUMNS = [("engine", "engine", "<"), ("ops", "ops/s", ">")]


def test_table_formats(capsys):
    with output.tables_as("markdown"):
        output.table(ROWS, COLUMNS, legend="  a legend")
    md = capsys.readouterr().out.splitlines()
    assert md[:2] == ["| engine | ops/s |", "|:---|---:|"] and md[3] == "| a\\|b | 0.00012 |"
    with output.tables_as("latex"):
        output.table(ROWS, COLUMNS, legend="  a legend")
    tex = capsys.readouterr().out
    assert "\\begin{tabular}{lr}" in tex and "lmdb\\_x \\& y & 1,234,567 \\\\" in tex and "% a legend" in tex
    with output.tables_as("csv"):
        output.table(ROWS, COLUMNS, legend="  a legend")
        output.table(ROWS[:1], COLUMNS)
        print("prose")
    got = capsys.readouterr()
    assert got.out == "engine,ops/s\nlmdb_x & y,1234567.0\na|b,0.000123\n\nengine,ops/s\nlmdb_x & y,1234567.0\n"
    assert "prose" in got.err and "a legend" in got.err


@pytest.fixture(scope="module")
def two_sides(tmp_path_factory):
    require("lmdb")
    path = tmp_path_factory.mktemp("fmt") / "s.duckdb"
    for tag in ("a", "b"):
        assert cli.main(["run", "--engine", "lmdb", "--workload", "fillrandom", "--num", "500", "--repeat", "3",
                         "--seed", "5", "--store", str(path), "--tag", tag, "--quiet"]) == 0
    return path


@pytest.mark.parametrize("fmt", ["markdown", "latex", "csv"])
def test_results_compare_takes_a_format(two_sides, fmt, capsys):
    assert cli.main(["results", "compare", "tag:a", "tag:b", "--store", str(two_sides), "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(out.split("\n\n")[0])))
        assert rows[0][:2] == ["benchmark", "A median"] and rows[1][0].startswith("fillrandom")
        assert "verdict" in rows[0]
    elif fmt == "markdown":
        assert "| benchmark | A median |" in out
    else:
        assert "\\begin{tabular}" in out and "\\end{tabular}" in out


def test_versions_verdict_column_is_labelled():
    from kvlab.cli import versions
    assert all(head for _, head, _ in versions.COLUMNS)


# --- frictions ---------------------------------------------------------------------------------------------------

def test_an_unknown_setting_is_named(capsys):
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillrandom", "--num", "10", "--set", "nosuch=1"]) == 2
    err = capsys.readouterr().err
    assert "'nosuch' is no engine setting" in err and "cache_size" in err


def test_an_unusable_kvlab_tmpdir_is_called_by_its_name(tmp_path, monkeypatch, capsys):
    require("lmdb")
    afile = tmp_path / "file"
    afile.write_text("")
    monkeypatch.setenv("KVLAB_TMPDIR", str(afile))
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillrandom", "--num", "10", "--no-store"]) == 2
    err = capsys.readouterr().err
    assert f"$KVLAB_TMPDIR ({afile}) is not a directory" in err and "--db" not in err


def test_warnings_before_results_and_a_fresh_run_says_what_it_removed(tmp_path):
    require("lmdb")
    db = tmp_path / "db"
    argv = KVLAB + ["run", "--engine", "lmdb", "--workload", "fillrandom", "--num", "200", "--db", str(db),
                    "--no-store", "--set", "block_size=4096"]
    assert subprocess.run(argv, capture_output=True).returncode == 0
    (db / "notes.txt").write_text("mine")
    got = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = got.stdout.splitlines()
    ignored = next(i for i, x in enumerate(lines) if "lmdb ignores block_size" in x)
    result = next(i for i, x in enumerate(lines) if x.startswith("fillrandom "))
    assert ignored < result and sum("ignores block_size" in x for x in lines) == 1
    removed = next(x for x in lines if "a fresh run removed what it held" in x)
    assert "notes.txt" in removed and "data.mdb" in removed


def test_the_defaults_line_names_the_run_s_engines():
    assert output.memory_line(None, ["lmdb"]) == "engine defaults: LMDB unbounded (the OS page cache)"


# --- the main job's A/A ------------------------------------------------------------------------------------------

def test_the_same_library_twice_is_found():
    require("lmdb")
    described = native.describe()
    pairs = maincompare.same_library(described)
    if any(r["engine"] == "lmdb@0.9.24" and r["built"] for r in described):
        assert pairs.get("lmdb@0.9.24") == "lmdb"
    assert "lmdb@0.9.70" not in pairs   # another version is no A/A


def test_compare_labels_an_a_a_and_reports_it_apart(tmp_path):
    require("lmdb")
    require("lmdb@0.9.24")
    got = subprocess.run(KVLAB + ["compare", "--engines", "lmdb,lmdb@0.9.24", "--num", "3000", "--duration", "0.3",
                                  "--warmup", "0.1", "--repeat", "3", "--no-store"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert got.returncode == 0, got.stdout[-2000:]
    out = got.stdout
    assert "A/A noise check: lmdb@0.9.24 is the very library lmdb links" in out
    checks = [x for x in out.splitlines() if x.startswith("A/A noise check, lmdb over lmdb@0.9.24")]
    assert len(checks) == 2 and all("over 3 repeats" in x for x in checks)
    assert "under the 1 s a stable rate needs" in out   # a 3,000-key load


# --- larger than memory: the engine's own advice -----------------------------------------------------------------

@pytest.fixture(scope="module")
def small_lmdb(tmp_path_factory):
    require("lmdb")
    db = tmp_path_factory.mktemp("ltm") / "db"
    kvlab.run("lmdb", "fillseq", num=1000, db=str(db), keep_db=True)
    return db


def _advised(db, tmp_path, *extra):
    """A readrandom whose key space (300,000 values of 500 bytes, 148 MiB) exceeds a 128 MiB budget: the record."""
    out = tmp_path / f"r{len(extra)}.json"
    assert cli.main(["run", "--engine", "lmdb", "--workload", "readrandom", "--num", "300000", "--value-size", "500",
                     "--reads", "1000", "--db", str(db), "--use-existing-db", "--memory", "128MiB", "--no-store",
                     "--json", str(out), "--quiet", *extra]) == 0
    return json.loads(out.read_text())[0]


def test_lmdb_larger_than_its_budget_runs_with_nordahead(small_lmdb, tmp_path):
    b = _advised(small_lmdb, tmp_path)
    assert b["params"]["engine_config"]["options"] == "nordahead"
    assert b["params"]["memory_budget"]["advice"] == {"options": "nordahead"}
    assert any("exceeds the 128 MiB budget: lmdb runs with nordahead" in w for w in b["warnings"])


def test_the_advice_joins_the_options_given_and_can_be_turned_off(small_lmdb, tmp_path):
    b = _advised(small_lmdb, tmp_path, "--options", "nomeminit")
    assert b["params"]["engine_config"]["options"] == "nomeminit,nordahead"
    b = _advised(small_lmdb, tmp_path, "--advice", "off", "--options", "nomeminit")
    assert b["params"]["engine_config"]["options"] == "nomeminit"
    assert "advice" not in b["params"]["memory_budget"]
    assert not any("nordahead" in w for w in b["warnings"])


def test_the_advice_is_none_where_the_data_fits(small_lmdb, tmp_path):
    out = tmp_path / "fits.json"
    assert cli.main(["run", "--engine", "lmdb", "--workload", "readrandom", "--num", "1000", "--reads", "1000",
                     "--db", str(small_lmdb), "--use-existing-db", "--memory", "128MiB", "--no-store", "--json",
                     str(out), "--quiet"]) == 0
    b = json.loads(out.read_text())[0]
    assert "options" not in b["params"]["engine_config"] and "advice" not in b["params"]["memory_budget"]


def test_spec_refuses_an_unknown_advice():
    with pytest.raises(kvlab.errors.SpecError, match="allowed: auto, off"):
        kvlab.make_spec(engine="lmdb", advice="sometimes")




# --- a compare run's rerun, from anywhere ------------------------------------------------------------------------

def test_a_compare_run_reruns_from_another_folder(tmp_path, monkeypatch, capsys):
    """The points reopen the database the job loaded in its folder, gone with the job: the rerun loads it again
    in a folder of its own, removed after."""
    require("lmdb")
    store = tmp_path / "s.duckdb"
    monkeypatch.setenv("KVLAB_TMPDIR", str(tmp_path))
    assert cli.main(["compare", "--engines", "lmdb", "--num", "3000", "--duration", "0.3", "--warmup", "0.1",
                     "--repeat", "3", "--store", str(store), "--quiet"]) == 0
    run_id = Store(store).frame().run_id.iloc[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    assert cli.main(["rerun", run_id, "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "this rerun loads them again in a folder of its own" in out
    assert "readrandom run 1 thr" in out and "readrandom run 2 thr" in out
    assert not list(tmp_path.glob("kvlab-rerun-*")) and not list(tmp_path.glob("kvlab-compare-*"))


def test_latex_output_pastes_into_a_tex_file(two_sides, capsys):
    """Every line that is not a table's is a % comment."""
    assert cli.main(["results", "compare", "tag:a", "tag:b", "--store", str(two_sides), "--format", "latex"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.strip()]
    inside = False
    for x in lines:
        if x.startswith("\\begin{tabular}"):
            inside = True
        if not inside:
            assert x.startswith("% "), x
        if x.startswith("\\end{tabular}"):
            inside = False


def test_a_size_setting_takes_units():
    from kvlab.engines.settings import parse_setting
    assert parse_setting("cache_size=1GiB", "--set") == ("cache_size", 1 << 30)
    assert parse_setting("map_size=64M", "--set") == ("map_size", 64 << 20)


def test_the_ranking_order_agrees_with_the_ratios():
    """Ranked by the geometric mean over the repeats: no engine below the best has a ratio above 1."""
    rows = [{"engine": e, "point": maincompare.Point("readrandom", 1), "median": m, "n": 5, "blocks": b}
            for e, m, b in (("a", 100.0, {0: 100.0, 1: 100.0, 2: 100.0, 3: 100.0, 4: 100.0}),
                            ("b", 101.0, {0: 60.0, 1: 101.0, 2: 101.0, 3: 102.0, 4: 70.0}))]
    (_, entries), = maincompare.rank(rows)
    assert [e["row"]["engine"] for e in entries] == ["a", "b"]   # b's median is higher, its geometric mean lower
    assert all(e["vs_best"]["ratio"] <= 1.0 for e in entries)


def test_too_short_says_which_floor_a_run_missed():
    from kvlab.results import sanity

    class B:
        phase, params, engine, workload, threads = "run", {}, "lmdb", "readrandom", 1
    b = B()
    b.seconds, b.ops = 0.079, 50_000
    text = sanity.too_short(b)
    assert "under 1 s, where a stable figure needs at least 1 s and 10,000 ops" in text and "under 10,000" not in text


def test_the_run_says_what_held_its_budget(capsys):
    require("lmdb")
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "1000", "--memory", "128MiB",
                     "--no-store"]) == 0
    out = capsys.readouterr().out
    assert "memory budget: held by a memory cgroup (v" in out or "memory budget: 128 MiB covers the" in out


def test_a_python_session_and_the_command_give_a_run_the_same_conditions(tmp_path):
    """The same run from a notebook's Python and from `kvlab run`: the same budget, cgroup and pinning."""
    require("lmdb")
    r = kvlab.run("lmdb", "fillseq", num=2000, memory="128MiB", cpus="0")[-1]
    out = tmp_path / "cli.json"
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "2000", "--memory", "128MiB",
                     "--cpus", "0", "--no-store", "--json", str(out), "--quiet"]) == 0
    c = json.loads(out.read_text())[-1]

    def conditions(params):
        m = {k: v for k, v in params["memory_budget"].items() if k not in ("cgroup", "cgroup_peak_bytes")}
        return m, params["cpus_allowed"], bool(params["memory_budget"].get("cgroup"))
    assert conditions(r.params) == conditions(c["params"])
    assert r.params["cpus_allowed"] == [0]
