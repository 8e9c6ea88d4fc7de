"""One memory budget (issue 34, item 1): `memory=` split across each engine's own knobs by its descriptor, the run
held to it in a memory cgroup where one can be made, and the engines' own defaults stated when none is given."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvlab import cli, engines, errors
from kvlab.engines.descriptor import Absent, memory_split
from kvlab.execution.host import cgroup
from kvlab.execution.run.runner import run
from kvlab.model.spec import make_spec

from .conftest import CONFORMANCE, require

GIB = 1 << 30


def _run(name, **params):
    require(name)
    return run(name, "fillseq,readrandom", num=2000, interval=0, **params)


@pytest.mark.parametrize("name", CONFORMANCE)
def test_a_budget_reaches_every_engines_knobs(name):
    cfg = engines.get(name)
    d = engines.descriptor(cfg)
    result = _run(name, memory="1GiB")
    split = memory_split(d, cfg, GIB)
    for b in result:
        budget = b.params["memory_budget"]
        assert budget["bytes"] == GIB and budget["split"] == split
        effective = b.provenance["engine_config_effective"]
        for setting, value in split.items():   # what the engine was opened with
            assert effective[setting] == value, (setting, effective)
        if isinstance(d.memory, Absent):   # LMDB: no knob, the page cache (bounded by the cgroup) is its cache
            assert split == {} and "page cache" in budget["engine"]


def test_wiredtiger_cache_size_comes_from_the_budget():
    result = _run("wiredtiger-btree", memory=GIB)
    cache = result.benchmarks[-1].provenance["engine_config_effective"]["cache_size"]
    assert cache == (GIB - (64 << 20)) * 3 // 4   # the budget less the process and a quarter for the page cache
    assert result.spec.memory == GIB


def test_lmdb_gets_no_cache_and_the_result_names_the_page_cache():
    b = _run("lmdb", memory="512MiB").benchmarks[-1]
    assert "cache_size" not in b.provenance["engine_config_effective"]
    assert b.params["memory_budget"]["split"] == {}
    assert "page cache" in b.params["memory_budget"]["engine"]


def test_a_setting_given_wins_over_the_budget_and_the_result_says_so():
    b = _run("wiredtiger-btree", memory=GIB, cache_size=200 << 20).benchmarks[-1]
    assert b.provenance["engine_config_effective"]["cache_size"] == 200 << 20
    assert b.params["memory_budget"]["given_wins"]["cache_size"]["given"] == 200 << 20
    assert any("given wins over the budget" in w for w in b.warnings)


def test_without_a_budget_the_result_states_the_engine_defaults():
    b = _run("wiredtiger-btree").benchmarks[-1]
    budget = b.params["memory_budget"]
    assert budget["bytes"] is None and budget["covers"] == "engine defaults"
    assert "WiredTiger cache 100 MiB" in budget["engine"]
    assert budget["defaults"].startswith("engine defaults: ") and "WiredTiger cache 100 MiB" in budget["defaults"]
    assert "LMDB unbounded" in budget["defaults"]


def test_the_run_header_states_the_defaults_or_the_budget(tmp_path, capsys):
    require("wiredtiger-btree")
    assert cli.main(["run", "--engine", "wiredtiger-btree", "--workload", "readrandom", "--num", "2000",
                     "--no-store"]) == 0
    assert "engine defaults: " in capsys.readouterr().out
    assert cli.main(["run", "--engine", "wiredtiger-btree", "--workload", "readrandom", "--num", "2000",
                     "--memory", "1GiB", "--no-store"]) == 0
    assert "memory budget: 1024 MiB each" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["lots", "1Q", "10MiB", "0"])
def test_a_bad_memory_value_is_refused_before_anything_is_written(tmp_path, capsys, bad):
    require("lmdb")
    db, out = tmp_path / "db", tmp_path / "r.json"
    code = cli.main(["run", "--engine", "lmdb", "--workload", "readrandom", "--num", "1000", "--memory", bad,
                     "--db", str(db), "--json", str(out), "--no-store"])
    assert code == 2
    err = capsys.readouterr().err
    assert "memory=" in err and "allowed" in err
    assert not db.exists() and not out.exists()
    with pytest.raises(errors.SpecError, match="allowed"):
        make_spec("lmdb", memory=bad)


def test_compare_refuses_a_bad_memory_value(capsys):
    assert cli.main(["compare", "--engines", "lmdb", "--num", "1000", "--memory", "nope", "--no-store"]) == 2


@pytest.mark.skipif(os.geteuid() != 0 or cgroup.unavailable() is not None,
                    reason="no memory cgroup can be made here (root and a memory controller needed)")
def test_the_run_is_in_a_memory_cgroup_of_the_budget():
    """From a Python session as from the `kvlab` command: the trial's worker held in the cgroup (the caller's own
    process never in it, so that going over ends the trial, not the session), each result back as it ends."""
    require("lmdb")
    seen = []
    before = Path("/proc/self/cgroup").read_text()

    def here(b):
        seen.append((b.workload, Path("/proc/self/cgroup").read_text()))
    from kvlab.execution.run.runner import run_spec
    result = run_spec(make_spec("lmdb", "fillseq,readrandom", num=2000, interval=0, memory="256MiB"),
                      on_result=here)
    budget = result.benchmarks[-1].params["memory_budget"]
    assert budget["covers"] == "engine and page cache (the trial's worker process in a memory cgroup)"
    assert budget["cgroup_limit_bytes"] == 256 << 20
    assert budget["cgroup_peak_bytes"] > 1 << 20                     # the child's pages were charged to it
    assert [w for w, _ in seen] == ["fillseq", "readrandom"] == [b.workload for b in result]
    assert all(text == before for _, text in seen)                   # this process never joined it
    assert not Path(budget["cgroup"]).exists()                       # removed after
    json.dumps(budget)


def _cmd(args, tmp_path, timeout=300):
    env = {**os.environ, "KVLAB_TMPDIR": str(tmp_path)}
    return subprocess.Popen([sys.executable, "-m", "kvlab.cli", *map(str, args)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def test_going_over_the_budget_ends_the_run_not_the_command(tmp_path):
    """WiredTiger told to cache 1 GiB within a 128 MiB budget: the OOM killer ends the trial's worker; the command
    records how it ended and why, removes the temporary database, and exits 3 (a trial's worker died)."""
    require("wiredtiger-btree")
    if cgroup.unavailable(128 << 20):
        pytest.skip(f"no memory cgroup here: {cgroup.unavailable(128 << 20)}")
    p = _cmd(["run", "--engine", "wiredtiger-btree", "--workload", "fillrandom", "--num", 400_000, "--value-size",
              1000, "--memory", "128MiB", "--cache-size", 1 << 30, "--interval", 0, "--no-store", "-q"], tmp_path)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 3, (p.returncode, err)
    assert "the trial's worker died: the kernel's OOM killer" in err and "of 128 MiB" in err
    assert "settings given win over the budget's split: cache_size 1073741824" in err
    assert not list(tmp_path.glob("kvlab-*")), "the killed run's temporary database was removed"


def test_a_stop_reaches_the_bounded_run_and_keeps_its_partial_result(tmp_path):
    require("lmdb")
    if cgroup.unavailable(256 << 20):
        pytest.skip(f"no memory cgroup here: {cgroup.unavailable(256 << 20)}")
    out = tmp_path / "r.json"
    p = _cmd(["run", "--engine", "lmdb", "--workload", "readrandom", "--num", 20_000, "--duration", 60, "--memory",
              "256MiB", "--no-store", "--json", out, "--progress", "off"], tmp_path)
    deadline = time.monotonic() + 120
    while "[load phase]" not in (line := p.stdout.readline()) and time.monotonic() < deadline:   # loaded
        assert line, p.stderr.read()
    time.sleep(1.0)   # into the measured readrandom
    p.send_signal(signal.SIGTERM)   # to the command alone: it forwards it to the run's process
    _, err = p.communicate(timeout=60)
    assert p.returncode == 128 + signal.SIGTERM, err
    records = json.loads(out.read_text())
    records = records["benchmarks"] if isinstance(records, dict) else records
    assert records[-1]["params"]["stopped_by"] == "SIGTERM"
    assert not list(tmp_path.glob("kvlab-*"))


def test_without_a_cgroup_the_budget_covers_the_engine_caches_only(monkeypatch):
    require("wiredtiger-btree")

    def refuse(limit):
        raise errors.KvlabError("memory_limit: no memory cgroup here (a test's)")
    monkeypatch.setattr(cgroup, "MemoryCgroup", refuse)
    b = _run("wiredtiger-btree", memory=GIB).benchmarks[-1]
    assert b.params["memory_budget"]["cgroup"] is None
    assert b.params["memory_budget"]["covers"].startswith("engine caches only (")
    assert any("covers the engine caches only" in w for w in b.warnings)


def test_compare_gives_every_engine_the_budget_and_says_so(tmp_path, capsys):
    require("lmdb")
    require("wiredtiger-btree")
    out = tmp_path / "c.json"
    assert cli.main(["compare", "--engines", "lmdb,wiredtiger-btree", "--num", "2000", "--threads", "1",
                     "--duration", "0.2", "--warmup", "0.05", "--repeat", "2",
                     "--memory", "512MiB", "--no-store", "--json", str(out)]) == 0
    header = capsys.readouterr().out
    assert "memory budget: 512 MiB each" in header and "lmdb none (the OS page cache)" in header
    records = json.loads(out.read_text())
    assert {r["params"]["memory_budget"]["bytes"] for r in records} == {512 << 20}
    wt = [r for r in records if r["engine"] == "wiredtiger-btree"][-1]
    assert wt["provenance"]["engine_config_effective"]["cache_size"] == ((512 - 64) << 20) * 3 // 4
    assert cli.main(["compare", "--engines", "lmdb", "--num", "2000", "--threads", "1", "--no-store",
                     "--duration", "0.2", "--warmup", "0.05", "--repeat", "2", "--memory", "none",
                     "--json", str(tmp_path / "d.json")]) == 0
    assert "engine defaults: " in capsys.readouterr().out


@pytest.mark.skipif(os.geteuid() != 0 or cgroup.unavailable() is not None,
                    reason="no memory cgroup can be made here (root and a memory controller needed)")
def test_a_python_session_is_never_held_in_a_cgroup_its_trials_are():
    """An overrun would kill the interpreter: the session never joins the cgroup, the trial's worker does, and the
    record says so as the command's does."""
    require("lmdb")
    before = Path("/proc/self/cgroup").read_text()
    b = _run("lmdb", memory=GIB).benchmarks[-1]
    assert b.params["memory_budget"]["cgroup_limit_bytes"] == GIB
    assert b.params["memory_budget"]["covers"].startswith("engine and page cache")
    assert Path("/proc/self/cgroup").read_text() == before


def test_a_seed_step_over_its_budget_skips_its_engines_later_steps_not_the_experiment(tmp_path):
    """`kvlab reproduce` (issue 36): a step the OOM killer ends is recorded with why, the engine's later steps in
    the same database are not run on what it left, and the other engines' steps run (kvlab.lab.seeds.plan)."""
    require("wiredtiger-btree")
    require("lmdb")
    if cgroup.unavailable(128 << 20):
        pytest.skip(f"no memory cgroup here: {cgroup.unavailable(128 << 20)}")
    from kvlab.lab.seeds.plan import Step, attempt, over_budget_recorded
    over_run = dict(workload="fillrandom", num=400_000, value_size=1000, memory="128MiB", cache_size=1 << 30,
                    interval=0)
    steps = [Step("wiredtiger-btree", "load", over_run, seed_db=True),
             Step("wiredtiger-btree", "readrandom", dict(workload="readrandom", num=400_000, reads=1000,
                                                         use_existing_db=True, interval=0), seed_db=True),
             Step("lmdb", "load", dict(workload="fillseq", num=1000, interval=0, memory="128MiB"), seed_db=True)]
    dbs = [tmp_path / "wt", tmp_path / "wt", tmp_path / "lmdb"]
    with over_budget_recorded() as over:
        got = [attempt(step, str(db)) for step, db in zip(steps, dbs)]
    assert got[0] is None and got[1] is None and got[2] is not None and got[2][0].ops == 1000
    assert list(over) == ["wiredtiger-btree"]
    assert over["wiredtiger-btree"].startswith("wiredtiger-btree load: the trial's worker died: the kernel's OOM "
                                               "killer")
