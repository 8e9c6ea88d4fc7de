"""One front door (issue 24): the command line's grammar, and each finding of the issue as a command that now
gives a clean error (exit 2, one `kvlab: error:` line saying what was wrong and what is allowed, nothing
written) or the right result."""
import argparse
import importlib
import json
import os
import subprocess
import sys

import pytest

from kvlab import cli

from .conftest import require


def parsers():
    """(prog, parser) for kvlab and every subcommand and sub-subcommand."""
    out, todo = [], [cli.build_parser()]
    while todo:
        p = todo.pop()
        out.append((p.prog, p))
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                todo += list(a.choices.values())
    return out


def test_every_option_and_command_has_help():
    missing = []
    for prog, p in parsers():
        for a in p._actions:
            if isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if isinstance(a, argparse._SubParsersAction):
                missing += [f"{prog} {c.dest}" for c in a._choices_actions if not c.help]
                continue
            if not a.help:
                missing.append(f"{prog} {'/'.join(a.option_strings) or a.dest}")
    assert not missing, f"options without help text: {missing}"


def test_one_spelling_per_idea():
    """kvlab's own flags use '-' between words; db_bench's spellings stay on kvlab dbbench and YCSB's on
    kvlab ycsb, where their users type them."""
    for prog, p in parsers():
        if prog in ("kvlab dbbench", "kvlab ycsb"):
            continue
        for a in p._actions:
            for s in a.option_strings:
                assert "_" not in s, f"{prog} {s}: kvlab's flags are spelt with '-'"
    running = ("run", "ycsb", "compare", "linkbench")
    for name in running + ("dbbench",):
        p = dict(parsers())[f"kvlab {name}"]
        flags = {s for a in p._actions for s in a.option_strings}
        assert {"--json", "--store", "--no-store", "--tag", "--quiet"} <= flags, name
        if name not in ("dbbench", "compare"):   # db_bench has --db=DIR; compare: a temporary db per engine
            assert "--db" in flags, name


def run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


BAD = [
    # (argv, what the message must say)
    (["run", "--threads", "0"], "--threads: 0 is out of range"),
    (["run", "--threads", "-3"], "--threads"),
    (["run", "--reads", "0"], "--reads: 0 is out of range"),
    (["run", "--use-existing-db"], "--use-existing-db needs --db"),
    (["dbbench", "--use_existing_db=1", "--benchmarks=readrandom"], "--use_existing_db=1 needs --db"),
    (["run", "--txn", "g1", "--txn", "g2"], "--txn was given twice"),
    (["run", "--txn", "gr1:-50", "--num", "100"], "gr1:-50"),
    (["results", "list", "--out", "x", "--format", "parquet"], "unknown option --out"),
    (["results", "sweeps", "--engine", "lmdb"], "unknown option --engine"),
    (["compare", "--out", "c.json"], "use --json FILE"),
    (["run", "--value_size", "10"], "use --value-size"),
    (["run", "--benchmarks=fillseq"], "kvlab dbbench"),
    (["run", "--thread", "2"], "did you mean --threads"),
    (["rnu"], "did you mean run"),
    (["ycsb", "-load", "-P", "workloada"], "-load needs --db"),
    (["ycsb", "-load", "-t"], "not allowed with"),
    (["run", "--workload", "readrandon"], "did you mean"),
    (["dbbench", "--nmu=10"], "did you mean --num"),
    (["run", "--tag", "has space", "--no-store"], "--tag 'has space'"),
]


@pytest.mark.parametrize("argv,said", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_clean_line_and_touches_nothing(argv, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KVLAB_RESULTS", str(tmp_path / "store.duckdb"))
    code, out, err = run(argv, capsys)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("kvlab: error:") and said in lines[-1], err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == [], "nothing may be written for a refused command"


def test_unwritable_db_and_json_are_refused_before_anything_is_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    store = tmp_path / "s.duckdb"
    afile = tmp_path / "file"
    afile.write_text("x")
    for argv, said in ((["--db", str(afile)], "is not a directory"),
                       (["--db", str(afile / "sub")], "is a file, so nothing can be made below it"),
                       (["--json", str(afile / "x.json")], "is a file, so nothing can be made below it"),
                       (["--json", str(tmp_path)], "is a directory")):
        code, out, err = run(["run", "--engine", "null", "--num", "10", "--store", str(store), *argv], capsys)
        assert code == 2 and said in err, err
        assert not store.exists()


@pytest.fixture
def readonly_dir(tmp_path):
    """A read-only file system (tmpfs mounted ro), where this machine lets us mount; else skipped."""
    d = tmp_path / "ro"
    d.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro", "tmpfs", str(d)], capture_output=True).returncode:
        pytest.skip("cannot mount a read-only tmpfs here")
    yield d
    subprocess.run(["umount", str(d)], check=True)


def test_db_on_a_read_only_file_system(readonly_dir, tmp_path, capsys):
    for db in (readonly_dir, readonly_dir / "db"):
        code, out, err = run(["run", "--engine", "lmdb", "--num", "1000", "--db", str(db), "--no-store"], capsys)
        assert code == 2 and "read-only file system" in err and "Traceback" not in err, err


def test_export_format_follows_the_suffix(tmp_path, capsys):
    require("lmdb")
    store = str(tmp_path / "s.duckdb")
    assert cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "1000", "--store", store,
                     "--tag", "fig3", "--progress", "off", "-q"]) == 0
    assert cli.main(["results", "export", "--store", store, "--out", str(tmp_path / "y.parquet")]) == 0
    import duckdb
    n = duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{tmp_path / 'y.parquet'}')").fetchone()[0]
    assert n == 1
    code, out, err = run(["results", "export", "--store", store, "--out", str(tmp_path / "y.csv"),
                          "--format", "parquet"], capsys)
    assert code == 2 and "csv" in err and not (tmp_path / "y.csv").exists()
    code, out, err = run(["results", "export", "--store", store, "--out", str(tmp_path / "y.data")], capsys)
    assert code == 2 and "--format" in err
    code, out, err = run(["results", "list", "--store", store, "--tag", "fig3"], capsys)
    assert code == 0 and "fig3" in out and "e+" not in out and "1,000" in out
    code, out, err = run(["results", "list", "--store", store, "--tag", "other"], capsys)
    assert code == 0 and "no stored results match" in out


def test_compare_json_is_a_file(tmp_path, monkeypatch, capsys):
    require("lmdb")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "c.json"
    assert cli.main(["compare", "--engines", "lmdb", "--num", "2000", "--threads", "1", "--json", str(out),
                     "--duration", "0.2", "--warmup", "0.05", "--repeat", "2", "--no-store", "--progress", "off"]) == 0
    assert out.is_file() and {r["engine"] for r in json.loads(out.read_text())} == {"lmdb"}


def test_run_prints_percentiles_and_a_legend(capsys):
    require("lmdb")
    code, out, err = run(["run", "--engine", "lmdb", "--workload", "fillseq,readrandom", "--num", "2000",
                          "--no-store", "--progress", "off"], capsys)
    assert code == 0
    assert out.count("latency: p50") == 2 and "p99.9" in out and "max" in out
    assert "context switches" in out   # the table's legend
    assert "e+" not in out and "None" not in out


def test_ycsb_load_then_transactions_on_one_database(tmp_path, capsys):
    """YCSB's workflow: -load fills --db, -t runs on it as it is (no second load)."""
    require("lmdb")
    db = str(tmp_path / "db")
    code, out, err = run(["ycsb", "-load", "-P", "workloadc", "-p", "recordcount=3000", "--db", db, "--no-store",
                          "--progress", "off"], capsys)
    assert code == 0 and "[load phase]" in out and "3000 of" not in out
    code, out, err = run(["ycsb", "-t", "-P", "workloadc", "-p", "recordcount=3000", "-p", "operationcount=2000",
                          "--db", db, "--no-store", "--progress", "off", "-threads", "2"], capsys)
    assert code == 0 and "[load phase]" not in out and "2,000 transactions" in out
    assert "keys read" in out


def test_ycsb_file_threadcount_and_target_are_honoured(tmp_path, capsys):
    require("lmdb")
    f = tmp_path / "w"
    f.write_text("recordcount=2000\noperationcount=2000\nreadproportion=1\nthreadcount=2\ntarget=20000\n")
    js = tmp_path / "o.json"
    code, out, err = run(["ycsb", "-P", str(f), "--no-store", "--progress", "off", "--json", str(js)], capsys)
    assert code == 0, err
    rec = [r for r in json.loads(js.read_text()) if r["phase"] == "run"][0]
    assert rec["threads"] == 2 and rec["mix"]["pacing"]["target_rate"] == 20000
    assert "open loop: target 20,000 txn/s" in out


def test_the_installed_command_says_the_same(tmp_path):
    """The console script (a separate process) gives the same one-line error and exit code."""
    proc = subprocess.run([sys.executable, "-m", "kvlab.cli", "run", "--threads", "0"], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "KVLAB_RESULTS": str(tmp_path / "s.duckdb")})
    assert proc.returncode == 2 and proc.stderr.startswith("kvlab: error:") and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_main_module_is_the_command():
    cli_main = importlib.import_module("kvlab.cli.main")
    assert cli_main.BY_NAME.keys() == {c.NAME for c in cli_main.COMMANDS}
