"""A notebook's runs are one plan (kvlab/lab/seeds/plan.py): the seed's experiments walk it when the notebook
runs, and the estimate (kvlab/lab/estimate.py) costs the same steps, reading the notebook's parameters cell
without running any of it.  The notebooks are the source (no generator writes them)."""
from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import pytest

from kvlab.lab import estimate, notebooks, reproduce
from kvlab.lab import seeds as seeds_package
from kvlab.lab.seeds import plan as plan_module

from .conftest import require

ROOT = Path(__file__).resolve().parent.parent
NB = ROOT / "notebooks"


def cells(name) -> str:
    nb = json.loads((NB / f"{name}.ipynb").read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def seed_module(name):
    return importlib.import_module(f"kvlab.lab.seeds.{name.split('_', 1)[1]}")


def test_the_estimate_evaluates_nothing():
    tree = ast.parse(inspect.getsource(estimate))
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not called & {"eval", "exec", "compile"}
    assert not (ROOT / "scripts" / "make_notebooks.py").exists()   # the notebooks are the source


@pytest.mark.parametrize("scale", notebooks.SCALES)
@pytest.mark.parametrize("name", notebooks.available())
def test_every_notebook_has_a_plan_the_estimate_costs(name, scale):
    p, steps = estimate.notebook_plan(name, scale)
    assert steps and all(isinstance(s, plan_module.Step) for s in steps)
    works = [estimate.step_work(s) for s in steps]
    assert [w.label for w in works] == [s.label for s in steps]
    for s in steps:
        if s.run is not None:
            assert s.spec().engine == s.engine


def test_seed_000_at_large_cuts_the_cold_start_of_each_read():
    """10M keys read right after their load start cold in the engine's cache: at large each point's read leaves
    out the transient MSER-5 finds in its 1-s intervals; smaller scales cut nothing."""
    _, steps = estimate.notebook_plan("01_read_scalability", "large")
    specs = [s.spec() for s in steps]
    assert specs and all(sp.warmup == "auto" and sp.interval == 1.0 for sp in specs)
    _, steps = estimate.notebook_plan("01_read_scalability", "default")
    assert all(not s.spec().warmup for s in steps)


def test_seed_001_loads_every_engine_in_commits_of_a_thousand_puts():
    _, steps = estimate.notebook_plan("02_readwhilewriting", "default")
    loads = [s.spec() for s in steps if s.label.endswith(" load")]
    assert loads and all(sp.batch == 1000 for sp in loads)


def test_the_durability_notebooks_scales_are_the_seeds():
    full = estimate.parameters("07_durability", "full")
    assert (full["cuts"], full["num"]) == (100, 10_000)
    assert estimate.parameters("07_durability", "smoke")["engines"] == ["lmdb", "leveldb"]
    assert estimate.parameters("07_durability", "default")["engines"] == json.loads(
        re.search(r"^engines = (\[.*\])$", cells("07_durability"), re.M).group(1))


@pytest.mark.parametrize("name", notebooks.available())
def test_a_notebook_runs_only_through_its_seeds_plans(name):
    """Every run a notebook makes is an experiment of its seed module, whose plan notebook_plan lists: the
    experiments its cells call are exactly those whose `<experiment>_plan` its notebook_plan calls (the
    quickstart's kvlab.start cell, which shows the API, is written into its plan as it is)."""
    source = cells(name)
    direct = re.findall(r"\b(kvlab\.run|kvlab\.linkbench|crashtest|kvlab\.start)\(", source)
    assert direct == (["kvlab.start"] if name == "00_quickstart" else []), direct
    module = seed_module(name)
    body = inspect.getsource(module.notebook_plan).split("\n", 1)[1]   # after its def line
    planned = set(re.findall(r"\b(\w+)_plan\(", body))
    seeds = [importlib.import_module(f"kvlab.lab.seeds.{m.name}") for m in pkgutil.iter_modules(seeds_package.__path__)]
    experiments = {n for n in re.findall(r"\breproduce\.(\w+)\(", source)
                   if any(hasattr(m, f"{n}_plan") for m in seeds)}
    assert experiments == planned, (experiments, planned)
    if name == "00_quickstart":
        assert re.search(r'kvlab\.start\("lmdb", "fillseq,readrandom", num=p\["num"\], threads=2, '
                         r'memory=p\["memory"\]', source)
        assert inspect.getsource(module.notebook_plan).count('dict(workload="fillseq,readrandom", num=p["num"], '
                                                            'threads=2, memory=p["memory"])') == 1


def test_an_experiment_runs_its_plans_steps_in_order(monkeypatch):
    require("lmdb")
    from kvlab.lab.seeds import dbbench_suite, readwhilewriting
    ran = []
    real = plan_module.execute

    def recording(step, db=None):
        ran.append((step, db is not None))
        return real(step, db)
    monkeypatch.setattr(plan_module, "execute", recording)   # what plan.attempt calls
    args = (["lmdb"], 500, 100, 2)
    frame, _ = dbbench_suite.dbbench_suite(*args, value_size=50)
    steps = dbbench_suite.dbbench_suite_plan(*args, value_size=50)
    assert ran == [(s, s.seed_db) for s in steps]   # readrandom in a database of its own (the seed's own load)
    assert [s.run["workload"] for s in steps][-1] == "fillseq,readrandom" and steps[-1].run["compression"] == "none"
    assert "bloom_bits" not in steps[0].run   # LMDB has no bloom filters; RocksDB and WiredTiger's LSM get the seed's 10
    seed = dbbench_suite.dbbench_suite_plan(["rocksdb", "wiredtiger-lsm"], *args[1:])
    assert {s.run["bloom_bits"] for s in seed} == {10} and all(s.run["disable_wal"] for s in seed)
    rocks = {s.name: s.run for s in seed if s.engine == "rocksdb"}   # the seed's scripts' tuning, per test
    assert "disable_auto_compactions=true" in rocks["fillrandom"]["options"] and rocks["fillrandom"]["write_buffer_size"] == 256 << 20
    assert "level0_slowdown_writes_trigger=8" in rocks["overwrite"]["options"] and rocks["overwrite"]["write_buffer_size"] == 128 << 20
    assert all(s.run["options"] == "mmap=false" for s in seed if s.engine == "wiredtiger-lsm")
    # the scripts' block sizes (RocksDB 64 KB, its readrandom load 4 KB; WiredTiger 4 KB where its script gave one)
    # and values: RocksDB's script's --compression_ratio=50 (incompressible), WiredTiger's db_bench's 0.5
    assert {n: r["block_size"] for n, r in rocks.items()} == {"fillseq": 65536, "fillrandom": 65536, "compact": 65536,
                                                              "overwrite": 65536, "readrandom": 4096}
    lsm = {s.name: s.run for s in seed if s.engine == "wiredtiger-lsm"}
    assert [lsm[t].get("block_size") for t in ("fillseq", "fillrandom", "overwrite", "readrandom")] == [4096, None,
                                                                                                          None, 4096]
    assert {r["compression_ratio"] for r in rocks.values()} == {50.0} and \
        {r["compression_ratio"] for r in lsm.values()} == {0.5}
    for version in ("rocksdb@10.4.2", "wiredtiger-lsm@11.3.1"):   # a version runs as its configuration's script ran
        base = version.split("@")[0]
        assert dbbench_suite.seed_settings(version, "fillrandom", "snappy") == \
            dbbench_suite.seed_settings(base, "fillrandom", "snappy")
    assert list(frame.benchmark) == ["fillseq", "fillrandom", "compact", "overwrite", "readrandom"]
    ran.clear()
    readwhilewriting.load_and_readwhilewriting(["lmdb"], 500, [1, 2], 0.1, 1000)
    assert ran == [(s, True) for s in readwhilewriting.load_and_readwhilewriting_plan(["lmdb"], 500, [1, 2], 0.1,
                                                                                       1000)]


def test_seed_004_runs_each_engine_as_the_seeds_mongodb_configured_it(tmp_path):
    """Snappy for both engines, WiredTiger's journal (its log, no sync per commit) and 60-s checkpoints, RocksDB's
    configString with its 16 MB memtables; cached within the budget, bounded by the memory limit alone."""
    require("wiredtiger-btree")
    from kvlab.execution.orchestration.linkbench import run_linkbench
    from kvlab.lab.seeds import linkbench
    steps = linkbench.seed004_plan(["wiredtiger-btree", "rocksdb", "lmdb"], 1_001, 2, 1, 0.1, memory="256MiB")
    s = {st.engine: dict(st.work.settings) for st in steps}
    assert s["wiredtiger-btree"] == {"memory": "256MiB", "compression": "snappy",
                                     "options": "log=(enabled=true),checkpoint=(wait=60)"}
    rocks = s["rocksdb"]
    assert rocks["compression"] == "snappy" and rocks["write_buffer_size"] == 16 << 20
    assert "level0_stop_writes_trigger=20" in rocks["options"] and "max_bytes_for_level_base=134217728" in rocks["options"]
    assert "rate_limit" not in rocks["options"]   # gone from RocksDB 7: dropped by the flags' translation
    assert s["lmdb"] == {"memory": "256MiB"}
    assert linkbench.seed_settings("rocksdb@10.4.2") == linkbench.seed_settings("rocksdb")
    bounded = linkbench.seed004_plan(["rocksdb"], 1_001, 2, 1, 0.1, memory_limit="256M", memory="256MiB")
    assert "memory" not in bounded[0].work.settings and bounded[0].work.settings["write_buffer_size"] == 16 << 20
    line = reproduce.budget_line("1GiB", ["wiredtiger-btree", "rocksdb"], given=reproduce.given("004", {}))
    assert "rocksdb cache_size " in line and "write_buffer_size 16 MiB (given)" in line
    # the real engine keeps its journal: WiredTiger's log files are in the loaded database
    wt = steps[0]
    db = tmp_path / "wt"
    run_linkbench("wiredtiger-btree", wt.work.config, "load", db=str(db), **wt.work.settings)
    assert list(db.glob("WiredTigerLog.*")), "seed 004's WiredTiger writes its journal"


def test_the_versions_plan_is_kvlab_versions_schedule():
    """Notebook 08's plan: each version's load, then maincompare's round-robin schedule, the run the notebook's
    experiment makes (reproduce.versions runs the same maincompare.Plan)."""
    from kvlab.lab.seeds import versions
    from kvlab.services import maincompare
    p, steps = estimate.notebook_plan("08_versions", "default")
    assert (p["versions"], p["workloads"], p["threads"], p["repeat"]) == (
        ["lmdb@0.9.24", "lmdb@0.9.70"], ["readrandom", "overwrite"], [1, 2], 5)
    plan = versions._plan(p["versions"], p["workloads"], p["threads"], p["num"], p["repeat"], p["duration"],
                          p["warmup"], p["seed"], p["memory"])
    assert [s.label for s in steps] == [f"{n} fillseq load" for n in p["versions"]] + [
        f"{n} {pt.label()} #{r + 1}" for r, n, pt in maincompare.schedule(plan)]
    assert all(s.spec().duration == p["duration"] and s.spec().use_existing_db for s in steps[2:])
    smoke = estimate.parameters("08_versions", "smoke")
    assert (smoke["num"], smoke["workloads"], smoke["repeat"]) == (2_000, ["readrandom"], 3)


def test_a_version_the_set_up_does_not_build_is_refused_before_anything_runs(monkeypatch, tmp_path):
    """The notebook builds only the two LMDB versions scripts/setup.sh builds; any other version not built stops
    it with EngineNotBuilt naming its build command."""
    from kvlab import errors
    from kvlab.execution.plugins import where
    from kvlab.lab.seeds import versions
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert f"engines build --skip-built --where-possible {' '.join(versions.SETUP_BUILDS)}" in setup
    monkeypatch.setattr(where, "folders", lambda: [tmp_path])
    with pytest.raises(errors.EngineNotBuilt, match=r"kvlab engines build rocksdb@7\.8\.3` builds it"):
        versions.versions(["rocksdb", "rocksdb@7.8.3"], ["readrandom"], [1], 100, 2, 0.1, 0.05)
    assert list(tmp_path.iterdir()) == []


def test_the_field_plan_records_once_and_replays_that_trace_everywhere():
    """Notebook 09's plan: YCSB-A recorded on the recorder (its trace the replays' input), a replay per engine,
    mixgraph per engine, one sine-paced run on the recorder, one `kvlab sla` search per engine; what is not a kvlab
    run (a replay, a search) is costed by its own size."""
    from kvlab.lab.seeds import field
    p, steps = estimate.notebook_plan("09_field", "smoke")
    engines = p["engines"]
    assert engines == ["lmdb", "rocksdb"] and p["sla_repeat"] == 1 and p["sla_duration"] < 1
    record, *rest = steps
    assert record.engine == p["recorder"] and record.spec().record_trace and record.spec().workloads == ("ycsb-a",)
    replays = [s for s in rest if isinstance(s.work, field.Replay)]
    assert [s.engine for s in replays] == engines
    assert replays[0].work.ops == p["num"] + p["operations"] * p["clients"]
    assert [s.engine for s in rest if s.run is not None and s.spec().workloads == ("mixgraph",)] == engines
    [paced] = [s for s in rest if s.run is not None and s.spec().rate_schedule]
    assert paced.engine == p["recorder"] and paced.spec().rate_schedule.startswith("sine:")
    searches = [s for s in rest if isinstance(s.work, field.SlaSearch)]
    assert [s.engine for s in searches] == engines
    work = estimate.step_work(searches[0])
    assert work.seconds >= p["sla_duration"] * (1 + p["sla_max_probes"] * p["sla_repeat"])


def test_the_lsm_family_plan_rotates_the_engines_and_the_table_names_what_it_could_not_measure():
    """Notebook 10's plan: per round every engine once, the first rotating, each round's keys its own seed, the
    three workloads in one run on a fresh database; the table has the median's interval from 3 rounds and an
    amplification that was not measured as None with the record's reason."""
    require("leveldb")
    require("rocksdb")
    from kvlab.lab.seeds import lsm_family
    p, steps = estimate.notebook_plan("10_lsm_family", "smoke")
    assert p["engines"] == ["leveldb", "rocksdb"] and p["memory"] == "256MiB"
    three = lsm_family.lsm_family_plan(["leveldb", "rocksdb", "fjall"], 1000, "128MiB", 3, seed=7)
    assert [s.engine for s in three] == ["leveldb", "rocksdb", "fjall", "rocksdb", "fjall", "leveldb",
                                         "fjall", "leveldb", "rocksdb"]
    assert {s.spec().seed for s in three[:3]} == {7} and three[3].spec().seed == 8
    assert three[0].spec().workloads == lsm_family.WORKLOADS and not three[0].seed_db
    table, results = lsm_family.lsm_family(["leveldb", "rocksdb"], 1000, "128MiB", 3)
    assert list(table.columns) == lsm_family.COLUMNS
    assert [(r.engine, r.workload) for r in table.itertuples()] == [
        (e, w) for e in ("leveldb", "rocksdb") for w in lsm_family.WORKLOADS]
    assert set(table.n) == {3} and list(table.ops_level) == pytest.approx([0.75] * len(table))
    assert all(r.ops_lo <= r.median_ops_per_sec <= r.ops_hi for r in table.itertuples())
    reads = table[table.workload == "readrandom"]
    assert reads.write_amp.isna().all() and set(reads.write_amp_note) == {"no user writes in this phase"}
    assert len(results) == 2 * 3 * len(lsm_family.WORKLOADS)


def test_sla_curves_is_every_engines_walk_as_one_tidy_frame():
    """`kvlab.lab.seeds.field.sla_curves` runs on its own: one row per probe, each engine's in the order walked,
    with its search's bound, answer and capacity; and a replay that ran other counts than recorded is told."""
    require("lmdb")
    from kvlab import errors
    from kvlab.lab.seeds import field
    frame = field.sla_curves(["lmdb"], workload="ycsb-c", p99="50ms", num=1000, duration=0.1, repeat=1,
                             max_probes=3, memory="128MiB")
    assert list(frame.columns) == field.CURVE_COLUMNS
    assert set(frame.engine) == {"lmdb"} and list(frame.probe) == list(range(1, len(frame) + 1))
    assert (frame.bound_us == 50_000).all() and (frame.percentile == 99).all() and frame.capacity.iloc[0] > 0
    assert frame.target_rate.iloc[0] == frame.capacity.iloc[0]   # the top of the range first
    import pandas as pd
    table = pd.DataFrame([dict(engine="lmdb", source="recorded", phase="run", ops=10),
                          dict(engine="rocksdb", source="replayed", phase="run", ops=9)])
    with pytest.raises(errors.KvlabError, match="rocksdb's replay ran 9 operations in its run phase; the trace "
                                                "recorded 10"):
        field.same_ops(table)
    assert field.same_ops(table.assign(ops=10)) == "the 1 replay ran the recorded operations, phase by phase (run 10)"


def test_mixgraph_runs_on_the_engines_whose_scans_are_in_key_order():
    from kvlab.lab.seeds import field
    steps = field.mixgraph_queries_plan(["lmdb", "rocksdb-tuned", "rocksdb"], 1000, 0.1)
    assert [s.engine for s in steps] == ["lmdb", "rocksdb"]   # rocksdb-tuned has no total-order scan


def test_a_bad_engine_workload_or_bound_is_refused_before_anything_runs():
    from kvlab import errors
    from kvlab.lab.seeds import field
    with pytest.raises(errors.SpecError, match="engine 'nosuch' is unknown"):
        field.trace_replay_plan(["lmdb", "nosuch"], 100, 10)
    with pytest.raises(errors.SpecError, match="engine 'nosuch' is unknown"):
        field.sla_searches_plan(["lmdb", "nosuch"], "ycsb-b", "2ms", 100, 0.1, 1, 3)
    with pytest.raises(errors.SpecError, match="no open loop"):
        field.sla_searches(["lmdb"], "readrandom", "2ms", 100, 0.1, 1, 3)
    with pytest.raises(errors.SpecError, match="no unit"):
        field.sla_curves(["lmdb"], p99="10")


def test_an_engine_loaded_at_run_time_counts_as_built():
    """mdbx and redb are never compiled into the extension: the notebooks and `kvlab reproduce` run them where built
    (notebook 09 names mdbx, and skipped it while built() counted compiled-in adapters only)."""
    from kvlab import engines
    from kvlab.execution import native
    from kvlab.lab.seeds.common import built
    loaded = [n for n in ("mdbx", "redb") if native.available(engines.get(n))]
    if not loaded:
        pytest.skip("neither mdbx nor redb is built here (scripts/setup.sh builds both)")
    assert built(["lmdb", *loaded]) == ["lmdb", *loaded]
