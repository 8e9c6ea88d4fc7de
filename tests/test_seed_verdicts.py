"""Issue 36 items 2 and 3, issue 34's "every notebook states a budget": each seed notebook ends with the verdict
table `kvlab reproduce` prints (kvlab.lab.reproduce.verdicts, one call), stored with the runs behind it and listed
by `kvlab reproduce SEED --show`; the report carries the stored verdicts of its runs and seed 001's
readwhilewriting table in full; every notebook has a `memory` parameter that reaches every run it makes
(params.memory_budget) and prints one line on it, and the budgets hold the data where the seed's cache held it.
The runs are seed 001's experiment on LMDB at a few thousand keys (seconds); the smoke-scale run of every notebook
(tests/test_notebooks.py) checks the executed notebooks' last cells."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kvlab import errors
from kvlab.cli.main import main
from kvlab.lab import estimate, notebooks, reproduce
from kvlab.lab.report import build
from kvlab.lab.seeds import claims, common
from kvlab.model.spec import memory_bytes
from kvlab.results.store import Store

from .conftest import require

NB = Path(__file__).resolve().parent.parent / "notebooks"
SEED_NOTEBOOKS = {"01_read_scalability": "000", "02_readwhilewriting": "001", "03_dbbench_suite": "002",
                  "04_transactions": "003", "06_linkbench": "004"}


def code_cells(name) -> list:
    nb = json.loads((NB / f"{name}.ipynb").read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.fixture(scope="module")
def seed001(tmp_path_factory):
    """Seed 001's experiment on LMDB (2,000 keys, 1 reader, 0.1 s) within 256 MiB, its verdicts stored."""
    require("lmdb")
    path = tmp_path_factory.mktemp("verdicts") / "kvlab.duckdb"
    p = {"num": 2_000, "readers": [1], "duration": 0.1, "writes_per_second": 1000, "memory": "256MiB"}
    load, rww, results = reproduce.load_and_readwhilewriting(["lmdb"], p["num"], p["readers"], p["duration"],
                                                             p["writes_per_second"], memory=p["memory"])
    table = reproduce.verdicts("001", (load, rww), p, results=results, store=path, scale="tiny")
    return path, table, load, rww, results


# --- the verdict table a notebook ends with -------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SEED_NOTEBOOKS))
def test_each_seed_notebook_ends_with_its_verdict_table(name):
    last = code_cells(name)[-1]
    assert last.startswith(f'reproduce.verdicts("{SEED_NOTEBOOKS[name]}", '), last
    assert last.count("\n") == 0, "one call"
    assert "store=" in last and "results=" in last


def test_the_notebooks_without_a_seeds_claims_have_no_verdict_cell():
    for name in set(notebooks.available()) - set(SEED_NOTEBOOKS):   # quickstart, YCSB, durability: no seed's claims
        assert not any("reproduce.verdicts(" in c for c in code_cells(name)), name


def test_the_verdict_table_shows_whole_and_prints_as_reproduce_does(seed001):
    _, table, *_ = seed001
    assert list(table.columns) == claims.logic.COLUMNS
    assert set(table.claim) >= {"001-lmdb-loads-fastest", "001-lmdb-reads-scale"}
    text = repr(table)
    assert text.startswith("001-lmdb-loads-fastest: ") and "\n    published: " in text
    assert re.search(r"\d+ reproduced, \d+ not reproduced, \d+ cannot test here$", text)
    html = table._repr_html_()
    longest = max(table.reason, key=len)
    assert longest.replace("'", "&#x27;")[:60] in html.replace("'", "&#x27;")   # never cut at pandas' 50 characters
    assert "cannot test here</p>" in html
    assert list(table[["claim", "verdict"]].columns) == ["claim", "verdict"]   # any other use: a DataFrame's


def test_verdicts_are_stored_with_the_runs_behind_them(seed001):
    path, table, _, _, results = seed001
    stored = Store(path).verdicts("001")
    assert list(stored.claim) == list(table.claim) and list(stored.verdict) == list(table.verdict)
    [run] = set(stored.run_ids.map(tuple))
    assert len(run) == 1
    runs = Store(path).load(run_id=run[0])
    assert len(runs) == len(results)
    row = stored.iloc[0]
    assert row.scale == "tiny" and list(row.engines) == ["lmdb"] and row.kvlab_version
    assert json.loads(row.setup)["memory"] == "256MiB" and json.loads(row.machine)["cores"] >= 1
    assert Store(path).verdicts("000").empty and Store(path).verdicts(run_ids=["nosuchrun"]).empty


def test_the_memory_budget_reaches_every_run(seed001):
    *_, results = seed001
    for b in results:
        assert b.params["memory_budget"]["bytes"] == memory_bytes("256MiB"), b.workload
        # a notebook's seed runs are held as the command's are: each trial's worker in a cgroup of the budget
        covers = b.params["memory_budget"]["covers"]
        assert covers.startswith("engine and page cache") or "engine caches only (" in covers


def test_reproduce_show_lists_the_stored_verdicts(seed001, capsys):
    path, table, *_ = seed001
    assert main(["reproduce", "001", "--show", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("== seed 001 at scale tiny, stored ") and "engines lmdb; memory 256MiB; runs " in out
    assert "\n001-lmdb-loads-fastest: " in out and claims.counts(table) in out
    assert main(["reproduce", "001", "--show", "--store", str(path), "--format", "markdown"]) == 0
    assert "| claim | statement | published | measured | verdict | reason |" in capsys.readouterr().out
    assert main(["reproduce", "002", "--show", "--store", str(path)]) == 0
    assert capsys.readouterr().out.startswith("no verdicts of seed 002 in ")


def test_reproduce_refuses_a_budget_that_is_not_a_size(capsys, tmp_path):
    assert main(["reproduce", "001", "--memory", "lots", "--store", str(tmp_path / "s.duckdb")]) == 2
    assert "memory='lots' is not a size" in capsys.readouterr().err
    assert claims.parameters("001", "smoke")["memory"] == common.MEMORY["readwhilewriting"]["smoke"]
    assert claims.parameters("001", "smoke", None)["memory"] is None


def test_the_report_carries_the_stored_verdicts_and_seed_001s_table(seed001):
    path, table, *_ = seed001
    run = Store(path).verdicts("001").run_ids.iloc[0][0]
    page = build(run, store=path)
    assert "<h2>The seeds' claims</h2>" in page.html and "<h3>Seed 001 at scale tiny</h3>" in page.html
    assert page.html.index('id="claims"') < page.html.index('id="summary"')
    for claim in table.claim:
        assert f"<td class=\"l\">{claim}</td>" in page.html
    assert "<h4>Seed 001's readwhilewriting table: published beside measured</h4>" in page.html
    for head in ("run time s", "CPU %", "user s", "sys s", "DB KB", "process KB", "total KB", "ctx vol", "ctx invol",
                 "writes/s", "reads/s"):
        assert f">{head}</th>" in page.html


def test_a_report_of_runs_without_verdicts_has_no_claims_section(tmp_path, seed001):
    *_, results = seed001
    store = Store(tmp_path / "s.duckdb")
    run = store.append(results[:1])
    assert "The seeds' claims" not in build(run, store=store).html


# --- seed 001 in full -------------------------------------------------------------------------------------------

def test_seed_001s_table_in_full_beside_the_published(seed001):
    *_, rww, _ = seed001
    table = reproduce.readwhilewriting_table(rww, reproduce.published("seed001_readwhilewriting"))
    assert list(table.columns) == reproduce.SEED001_COLUMNS == [
        "wall_s", "cpu_pct", "user_s", "sys_s", "db_size_kb", "process_size_kb", "total_size_kb", "ctx_voluntary",
        "ctx_involuntary", "writes_per_sec", "reads_per_sec"]
    assert table.index.names == ["engine", "readers", "source"]
    assert set(table.index.get_level_values("engine")) == {"lmdb"}   # only the engines measured
    measured = table.xs("measured", level="source").loc["lmdb"].loc[1]
    published = table.xs("published", level="source").loc["lmdb"].loc[1]
    assert measured.reads_per_sec == rww.reads_per_sec.iloc[0] and published.reads_per_sec == 239_740
    assert measured.total_size_kb > 0 and measured.writes_per_sec > 0
    assert reproduce.readwhilewriting_table(rww.iloc[0:0]).empty


# --- every notebook states a budget ------------------------------------------------------------------------------

def test_the_budget_line_states_the_split_or_the_engines_defaults():
    line = reproduce.budget_line("1GiB", ["wiredtiger-btree", "leveldb", "lmdb"])
    assert line.startswith("memory budget: 1,024 MiB each (1GiB), page cache included where a memory cgroup can be "
                           "made (the result says which)")
    assert "wiredtiger-btree cache_size 720 MiB" in line and "leveldb cache_size 320 MiB, write_buffer_size " in line
    assert "lmdb no cache of its own (the OS page cache)" in line
    given = reproduce.budget_line("1GiB", ["wiredtiger-lsm", "rocksdb", "lmdb"], given={"cache_size": 32 << 20})
    assert "wiredtiger-lsm cache_size 32 MiB (given)" in given and "rocksdb cache_size 32 MiB (given), " in given
    none = reproduce.budget_line(None, ["lmdb"])
    assert none.startswith("engine defaults: ") and "WiredTiger cache 100 MiB" in none and "LMDB unbounded" in none
    with pytest.raises(errors.SpecError, match="not a size"):
        reproduce.budget_line("lots", ["lmdb"])


@pytest.mark.parametrize("name", notebooks.available())
def test_every_notebook_has_a_memory_parameter_and_says_its_budget(name):
    cells = code_cells(name)
    assert re.search(r"^memory = ", cells[0], re.M), "the parameters cell names a budget"
    assert re.search(r'print\(reproduce\.budget_line\(p\["memory"\], engines(, given=.*)?\)\)', cells[1])
    seed = name.split("_", 1)[1]
    assert estimate.parameters(name, "default")["memory"] == common.MEMORY[seed]["default"]


@pytest.mark.parametrize("scale", notebooks.SCALES)
@pytest.mark.parametrize("name", notebooks.available())
def test_the_memory_parameter_reaches_every_run_the_notebook_makes(name, scale):
    p, steps = estimate.notebook_plan(name, scale)
    assert p["memory"] == common.MEMORY[name.split("_", 1)[1]][scale]
    for step in steps:
        if step.run is not None:
            assert step.spec().memory == (memory_bytes(p["memory"]) if p["memory"] else None), step.label
        elif getattr(step.work, "memory_limit", None) is None and hasattr(step.work, "settings"):
            settings = dict(step.work.settings)
            if hasattr(step.work, "config"):   # LinkBench cached and its timeline: the budget; bounded: its limit
                assert settings.get("memory") == p["memory"], step.label


@pytest.mark.parametrize("scale", notebooks.SCALES)
def test_the_budgets_hold_the_data_where_the_seeds_cache_held_it(scale):
    for seed, notebook, engines in (("000", "read_scalability", claims.RUNNERS["000"].engines),
                                    ("001", "readwhilewriting", claims.RUNNERS["001"].engines)):
        p = claims.parameters(seed, scale)
        setup = claims.setup_of(seed, p, engines)
        assert setup["cache_bytes"] >= 2 * setup["data_bytes"], (seed, scale, setup)
    p = claims.parameters("002", scale)   # the seed's 1 GB cache was below its data: so is this one's
    if scale != "smoke":
        assert common.cache_bytes(p["memory"], claims.RUNNERS["002"].engines) < p["num"] * (16 + p.get(
            "value_size", 800))


def test_without_a_budget_the_cache_is_the_engines_own():
    p = {**claims.parameters("000", "default"), "memory": None}
    setup = claims.setup_of("000", p, ["wiredtiger-btree", "leveldb"])
    assert setup["cache_bytes"] == 8 << 20 and setup["memory"] is None   # LevelDB's own 8 MB block cache
    table = reproduce.verdicts("000", reproduce.published("seed000_read_scalability").head(0), p)
    assert set(table.verdict) == {"cannot test here"}


def test_the_estimate_costs_the_caches_the_budget_gives():
    _, works = estimate.notebook_works("01_read_scalability", "default")
    caches = {w.engine: w.cache_bytes for w in works}
    assert caches == {"wiredtiger-btree": 720 * 2**20, "leveldb": 320 * 2**20}


def test_a_claim_whose_engine_went_over_its_budget_cannot_be_tested_here():
    """`kvlab reproduce` records a step the OOM killer ended (setup's over_budget): every claim on that engine is
    "cannot test here" with the step and why, whatever rows the engine's earlier steps left; the others are tested."""
    why = "wiredtiger-lsm fillseq: the run went over its memory budget of 1 GiB (peak 1 GiB) ..."
    measured = reproduce.published("seed002_dbbench")
    measured = measured[measured.num == measured.num.min()].reset_index(drop=True)
    table = reproduce.verdicts("002", measured, setup={"over_budget": {"wiredtiger-lsm": why}})
    named = [c for c in claims.load_claims() if c.seed == "002"]
    assert len(table) == len(named) and len(named) >= 3
    assert (table.verdict == "cannot test here").all()   # every claim of seed 002 names WiredTiger LSM
    assert all(r == f"over the memory budget: {why}" for r in table.reason)
    plain = reproduce.verdicts("002", measured, setup={"over_budget": {"lmdb": "lmdb load: ..."}})
    assert "over the memory budget" not in " ".join(plain.reason)   # an engine the claims do not name
