"""Facts written once (issue 35, "Facts once"): `kvlab run`'s flags are one table (kvlab.model.spec.RUN_FLAGS)
that the parser is built from and RunSpec.cli_command writes from, so a spec's command line parses back to the
spec; the key-size limit is the C core's, and the model's copy is held to it; the command table says which
commands run an engine."""
from __future__ import annotations

import dataclasses
import importlib
import shlex

import pytest

from kvlab import engines, errors
from kvlab.cli.run import spec_from_args
from kvlab.model import spec as spec_module
from kvlab.model.spec import CLI_FLAGLESS, MAX_KEY_SIZE, MIN_KEY_SIZE, RUN_FLAGS, RunSpec, make_spec

from .conftest import require

cli_main = importlib.import_module("kvlab.cli.main")   # the module (kvlab.cli.main is the function)
PARSER = cli_main.build_parser()


def parsed(line: str) -> RunSpec:
    words = shlex.split(line)
    assert words[:2] == ["kvlab", "run"], line
    return spec_from_args(PARSER.parse_args(words[1:]))


SPECS = [
    dict(),
    dict(engine="rocksdb", workload="fillrandom,readrandom,overwrite", num=5000, reads=700, threads=3,
         value_size=1, key_size=MAX_KEY_SIZE, batch=10, seek_nexts=4, interval=0.25, warmup="auto", repeat=3,
         seed=2**64 - 1, cache_size=1 << 20, sync=True, compression="none", bloom_bits=10,
         options="write_buffer_size=4194304; max_write_buffer_number=2"),
    dict(engine="leveldb", workload="readwhilewriting", num=300, key_size=MIN_KEY_SIZE + 2, duration=2.5,
         warmup=0.5, writes_per_second=1234.5, sync=False, block_size=4096, seed=0),
    dict(engine="lmdb", workload="fillseq", num=100, db="/tmp/kvlab db's folder", keep_db=True, overwrite=True,
         load="bulk", resume=True, map_size=1 << 30, cpus="0", interval=0),
    dict(engine="lmdb", workload="readrandom", db="/tmp/x", keep_db=True, use_existing_db=True, seed=7),
    dict(engine="wiredtiger-btree", workload="ycsb-b", num=2000, reads=50, threads=2, distribution="uniform",
         target_rate=500.0, table_options="leaf_page_max=16KB", seed=11),
    dict(engine="bdb", workload="txn:g9u1", num=1000, duration=1.0, threads=2, seed=5),
    dict(engine="lmdb", workload="mixgraph", num=500, duration=1.0, rate_schedule="sine:a=100,b=1,d=200", seed=4),
    dict(engine="lmdb", workload="ycsb-c", num=500, reads=50, threads=2, rate_schedule="steps:0=100,2=800,3=100,repeat=10", seed=6),
    dict(engine="rocksdb", workload="seekrandom", num=64, key_size=3, seek_nexts=2, seed=9, disable_wal=True),
]


@pytest.mark.parametrize("args", SPECS, ids=lambda a: ",".join(a) or "defaults")
def test_a_specs_command_line_parses_back_to_the_spec(args):
    args = dict(args)
    spec = make_spec(args.pop("engine", "lmdb"), args.pop("workload", None), **args)
    line = spec.cli_command()
    assert parsed(line) == spec, line


def test_a_mixs_own_counts_come_back_as_flags():
    """What a mix said for itself (ycsb-a's record count) is written as a flag: the same run, without the note
    that said where the value came from."""
    spec = make_spec("lmdb", "ycsb-a")
    back = parsed(spec.cli_command())
    assert (back.num, back.reads, back.workloads) == (spec.num, spec.reads, spec.workloads)
    assert dataclasses.replace(spec, mixes={}) == back


def test_every_field_has_a_flag_or_is_said_to_have_none():
    fields = {f.name for f in dataclasses.fields(RunSpec)}
    flagged = {f.target for f in RUN_FLAGS if not f.setting}
    assert flagged <= fields
    assert fields - flagged - {"engine_settings"} == set(CLI_FLAGLESS)
    assert {f.target for f in RUN_FLAGS if f.setting} <= set(engines.ENGINE_SETTINGS)
    assert len({f.name for f in RUN_FLAGS}) == len(RUN_FLAGS)
    for f in RUN_FLAGS:
        if f.kind in ("int", "number"):
            lo, hi = f.bounds
            assert lo is not None and hi is not None, f.name


def test_the_parser_is_the_tables():
    run_parser = PARSER._subparsers._group_actions[0].choices["run"]
    options = {s for a in run_parser._actions for s in a.option_strings}
    shared = {s for a in run_parser._actions if a.container.title == "common to every running command"
              for s in a.option_strings}
    assert options - shared == {f.flag for f in RUN_FLAGS if not f.shared} | {"--set", "-h", "--help"}
    assert {f.flag for f in RUN_FLAGS if f.shared} <= shared


def test_the_key_size_limit_is_the_c_cores():
    """The model keeps a copy of kv_gen.h's KV_KEY_MAX (it checks specs without a build): it is the extension's,
    and the extension's own key maker takes exactly MIN_KEY_SIZE to MAX_KEY_SIZE."""
    require("null")
    from kvlab.execution import native
    lib = native.load()
    assert MAX_KEY_SIZE == lib.KEY_MAX
    assert lib.make_key(42, MIN_KEY_SIZE) == b"2" and len(lib.make_key(42, MAX_KEY_SIZE)) == MAX_KEY_SIZE
    for bad in (MIN_KEY_SIZE - 1, MAX_KEY_SIZE + 1):
        with pytest.raises(errors.SpecError):
            lib.make_key(42, bad)
    assert spec_module.RANGES["key_size"] == (MIN_KEY_SIZE, MAX_KEY_SIZE)


@pytest.mark.parametrize("key_size", [MIN_KEY_SIZE - 1, MAX_KEY_SIZE + 1])
def test_a_key_size_out_of_range_is_refused_with_what_is_allowed(key_size, tmp_path, monkeypatch, capsys):
    allowed = f"{MIN_KEY_SIZE} to {MAX_KEY_SIZE}"
    with pytest.raises(errors.SpecError, match=f"key_size={key_size} is out of range; allowed: {allowed}"):
        make_spec("lmdb", "fillseq", key_size=key_size)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KVLAB_RESULTS", str(tmp_path / "store" / "kvlab.duckdb"))
    for argv, says in ((["run", "--key-size", str(key_size)], f"allowed in [{MIN_KEY_SIZE}, {MAX_KEY_SIZE}]"),
                       (["dbbench", "--engine", "null", f"--key_size={key_size}", "--num=10"], allowed)):
        assert cli_main.main(argv + ["--db", str(tmp_path / "db")]) == 2
        err = capsys.readouterr().err
        assert err.splitlines()[-1].startswith("kvlab: error:") and says in err, err
    assert list(tmp_path.iterdir()) == []     # nothing written: no database, no store


def test_keys_shorter_than_eight_bytes_run(tmp_path):
    """The C core makes keys of any size from one byte: a run of 4-byte keys writes and reads 4-digit keys."""
    require("lmdb")
    import kvlab
    r = kvlab.run("lmdb", "fillseq,readrandom", num=2000, key_size=4, seed=1, interval=0, db=str(tmp_path / "db"))
    assert r.by_workload("readrandom").found == r.by_workload("readrandom").ops == 2000
    with pytest.raises(errors.SpecError, match="does not fit 4-byte decimal keys"):
        make_spec("lmdb", "fillseq", num=6000, key_size=4)


@pytest.mark.parametrize("argv, runs", [
    (["run"], True), (["ycsb", "-P", "workloada"], True), (["engines"], False), (["workloads"], False),
    (["results", "list", "--run-id", "abc"], False), (["results", "compare", "--run", "--num 10", "--num 20"], True),
    (["sweep", "list"], True), (["clean"], False)])
def test_the_command_table_says_which_commands_run_an_engine(argv, runs):
    assert set(cli_main.RUNS_ENGINES) == {c.NAME for c in cli_main.COMMANDS} == set(cli_main.BY_NAME)
    assert cli_main.runs_engines(PARSER.parse_args(argv)) is runs
