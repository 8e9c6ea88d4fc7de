"""Notebook output (issue 46, item 16): tables show plain numbers, as kvlab's CLI prints them, with units in their
headers; the quickstart runs what it says (every built engine, or says which it leaves out, and why); and a figure
names each engine it has no bar for, and why (the Python-loop baseline's engines without a binding)."""
import json
import re
import types
from pathlib import Path

import pandas as pd
import pytest

from kvlab import engines as engine_registry
from kvlab.execution import native
from kvlab.lab import coverage, estimate, tables
from kvlab.lab.seeds.bindings import BINDINGS

from .conftest import require

NB = Path(__file__).resolve().parent.parent / "notebooks"
SCIENTIFIC = re.compile(r"\d[eE][+-]\d")


def _frame():
    return pd.DataFrame({"engine": ["lmdb", "rocksdb", "leveldb"],
                         "ops_per_sec": [162420.5, 1.2345, 0.000012],
                         "latency_us.p99": [0.98, float("nan"), 12345678.0],
                         "db_size_bytes": [3 * 2**20, 5e7, 1e9],
                         "partial": [False, True, False],
                         "threads": [1, 2, 2]})


# --- tables -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,expected", [
    ("ops_per_sec", "ops/s"), ("readrandom_ops_per_sec", "readrandom (ops/s)"), ("txn_per_sec", "txn/s"),
    ("mb_per_sec", "MB/s"), ("ops_per_sec_ci95_lo", "ci95 lo (ops/s)"), ("writer.ops_per_sec", "writer.ops/s"),
    ("micros_per_op", "us/op"), ("cpu_us_per_op", "cpu (us/op)"), ("disk_reads_per_op", "disk reads/op"),
    ("kb_written_per_query", "written (KB/query)"), ("p99_us", "p99 (us)"), ("latency_us.p99", "latency.p99 (us)"),
    ("latency_us.count", "latency_us.count"), ("recovery_ms_p50", "recovery p50 (ms)"), ("wall_s", "wall (s)"),
    ("accounting.wall_s", "accounting.wall (s)"), ("cpu_pct", "cpu (%)"), ("db_size_kb", "db size (KB)"),
    ("db_size_mib", "db size (MiB)"), ("qps", "QPS"),
    ("engine", "engine"), ("threads", "threads"), ("write_amp", "write_amp"), (3, 3),
])
def test_a_header_carries_its_columns_unit(name, expected):
    assert tables.header(name) == expected


def test_a_bytes_column_is_shown_in_mib_where_it_reaches_one():
    assert tables.header("db_size_bytes", [5e7]) == "db size (MiB)"
    assert tables.header("db_size_bytes", [100, 200]) == "db size (B)"


def test_numbers_are_shown_as_the_cli_prints_them_never_scientific():
    frame = _frame()
    before = frame.copy()
    shown = tables.shown(frame)
    assert list(shown.columns) == ["engine", "ops/s", "latency.p99 (us)", "db size (MiB)", "partial", "threads"]
    assert shown["ops/s"].tolist() == ["162,420", "1.23", "0.000012"]
    assert shown["latency.p99 (us)"].tolist() == ["0.9800", "-", "12,345,678"]
    assert shown["db size (MiB)"].tolist() == ["3.00", "47.68", "953.7"]
    assert shown["partial"].tolist() == ["no", "yes", "no"]
    pd.testing.assert_frame_equal(frame, before)   # only what is shown changes
    for rendered in (tables.text(frame), tables.html(frame)):
        assert "162,420" in rendered and not SCIENTIFIC.search(rendered), rendered
    # pandas' own display of the same frame: what the notebooks showed before
    assert SCIENTIFIC.search(repr(pd.DataFrame({"x": [162420.5, 1e-7]})))


def test_a_pivots_value_name_gives_its_unit_and_a_float_index_is_plain():
    long = pd.DataFrame({"engine": ["lmdb", "lmdb", "rocksdb"], "workload": ["ycsb-a", "ycsb-b", "ycsb-a"],
                         "txn_per_sec": [2.5e6, 3.1e6, 4.2e5]})
    shown = tables.shown(long.pivot(index="engine", columns="workload", values=["txn_per_sec"]))
    assert list(shown.columns) == [("txn/s", "ycsb-a"), ("txn/s", "ycsb-b")]
    assert shown.loc["lmdb"].tolist() == ["2,500,000", "3,100,000"] and shown.loc["rocksdb"].tolist()[1] == "-"
    assert tables.shown(pd.DataFrame({"x": [1.5]}, index=[1e6])).index.tolist() == ["1,000,000"]


def test_setup_shows_every_plain_dataframe_so_and_a_frame_of_its_own_kind_its_own_way():
    from IPython.core.formatters import DisplayFormatter
    ip = types.SimpleNamespace(display_formatter=DisplayFormatter())
    assert tables.setup(ip)
    data, _ = ip.display_formatter.format(_frame())
    assert "ops/s" in data["text/plain"] and "162,420" in data["text/plain"]
    assert "latency.p99 (us)" in data["text/html"] and "162,420" in data["text/html"]
    assert not SCIENTIFIC.search(data["text/plain"] + data["text/html"])

    class Own(pd.DataFrame):   # as the seeds' verdict table: a display of its own
        def __repr__(self):
            return "own text"

        def _repr_html_(self):
            return "<p>own</p>"
    data, _ = ip.display_formatter.format(Own(_frame()))
    assert data["text/plain"] == "own text" and data["text/html"] == "<p>own</p>"
    assert tables.setup(None) is False   # outside IPython: nothing to set up


def _code(name):
    return ["".join(c["source"]) for c in json.loads((NB / f"{name}.ipynb").read_text())["cells"]
            if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", sorted(NB.glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_notebook_sets_its_tables_up_in_its_first_cell(path):
    code = _code(path.stem)
    assert "tables.setup()" in code[1], code[1]
    assert not any(".style" in c or "float_format" in c for c in code), "one helper formats the tables"


# --- the quickstart: what it runs ------------------------------------------------------------------------------

def test_every_built_engine_is_every_built_configuration_that_stores_data():
    expected = [n for n, c in engine_registry.REGISTRY.items() if c.stores_data and native.available(c)]
    assert coverage.every_built() == expected
    run, left = coverage.chosen(None)
    assert run == expected and not set(run) & set(left)
    # everything `kvlab engines` lists that does not run is said, each with why
    listed = [r["engine"] for r in native.describe() if r["built"] or "@" not in r["engine"]]
    assert set(listed) - set(run) == set(left), (listed, run, left)
    assert all(why for why in left.values())
    stores_nothing = [n for n, c in engine_registry.REGISTRY.items() if not c.stores_data]
    assert all(left[n].startswith("stores no data") for n in stores_nothing)
    text = coverage.engines_text(run, left)
    assert text.startswith(f"engines run ({len(run)}): {', '.join(run)}")
    assert all(n in text for n in left)


def test_a_given_list_runs_its_built_engines_and_names_the_rest():
    require("lmdb")
    run, left = coverage.chosen(["lmdb", "lmdb", "fdb"])
    assert run == ["lmdb"]
    assert left["fdb"].startswith("cannot be had here")
    assert all(left[n] == "not in the notebook's `engines`" for n in coverage.every_built() if n != "lmdb")


def test_the_quickstart_runs_every_built_engine_and_prints_which():
    params = _code("00_quickstart")[0]
    assert re.search(r"^engines = None\b", params, re.M), params
    assert "reproduce.engines_text(engines, left_out)" in _code("00_quickstart")[1]
    p, steps = estimate.notebook_plan("00_quickstart", "smoke")
    native_steps = [s for s in steps if s.run is not None and s.name.startswith("native loop")]
    assert list(dict.fromkeys(s.engine for s in native_steps)) == coverage.every_built()


# --- a figure's missing bars, named ----------------------------------------------------------------------------

def test_each_engine_without_a_python_loop_row_is_named_with_why(monkeypatch):
    import importlib.util
    first = BINDINGS[0]
    kin = next((n for n, c in engine_registry.REGISTRY.items()
                if n != first.engine and c.adapter == engine_registry.get(first.engine).adapter
                and all(b.engine != n for b in BINDINGS)), None)
    unbound = [n for n, c in engine_registry.REGISTRY.items()
               if all(engine_registry.get(b.engine).adapter != c.adapter for b in BINDINGS)]
    assert unbound, "an engine with no binding at all"
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda m, *a: None if m == first.module else real(m, *a))
    names = [first.engine] + ([kin] if kin else []) + unbound[:2]
    frame = pd.DataFrame({"engine": names + [BINDINGS[1].engine, BINDINGS[1].engine],
                          "loop": ["kvlab native"] * len(names) + ["kvlab native", "python"]})
    gaps = coverage.python_loop_gaps(frame)
    assert list(gaps) == names   # the engine with a Python-loop row is not named
    assert gaps[first.engine].startswith(f"Python module {first.module} not installed")
    if kin:
        assert gaps[kin] == f"the {first.module} binding runs {first.engine} only"
    assert all(gaps[n] == "no Python binding in the baseline" for n in unbound[:2])
    note = coverage.python_loop_note(frame)
    assert note.startswith("no Python-loop bar: ") and all(n in note for n in names)
    assert f"{', '.join(unbound[:2])} (no Python binding in the baseline)" in note
    assert coverage.python_loop_note(frame[frame.engine == BINDINGS[1].engine]) is None


def test_a_bars_note_is_drawn_between_title_and_axes_and_passes_the_check():
    pytest.importorskip("matplotlib")
    from kvlab.lab import figcheck, plots
    frame = pd.DataFrame({"engine": ["lmdb", "lmdb", "bdb"], "config": ["native", "python", "native"],
                          "ops_per_sec": [1e6, 2e5, 8e5]})
    note = "no Python-loop bar: " + "; ".join(f"engine{i} (a reason that takes some words to say)" for i in range(6))
    fig = plots.bars(frame, x="engine", y="ops_per_sec", hue="config", title="t", log=True, note=note)
    [drawn] = [t for t in fig.axes[0].texts if t.get_gid() == "note"]
    assert " ".join(drawn.get_text().split()) == note and drawn.get_text().count("\n") >= 1
    renderer = figcheck.render(fig)
    title, box, axes = (fig.axes[0].title.get_window_extent(renderer), drawn.get_window_extent(renderer),
                        fig.axes[0].get_window_extent(renderer))
    assert axes.y1 <= box.y0 and box.y1 <= title.y0
    assert plots.check(fig) == []


def test_the_quickstart_figure_names_an_engine_without_a_binding(tmp_path):
    """The quickstart's figure cell, as committed, on a tiny real run of LMDB and an engine with no binding."""
    pytest.importorskip("matplotlib")
    require("lmdb")
    from kvlab.lab import plots, reproduce
    unbound = next((n for n, c in engine_registry.REGISTRY.items() if c.stores_data and native.available(c)
                    and all(engine_registry.get(b.engine).adapter != c.adapter for b in BINDINGS)), None)
    if unbound is None:
        pytest.skip("every built engine has a binding")
    p = {"num": 2000}
    nat, results = reproduce.native_loop(["lmdb", unbound], p["num"], threads=(1,))
    both = pd.concat([nat, reproduce.python_loop_baseline(p["num"], threads=(1,))], ignore_index=True)
    drawn = {}

    def save(fig, out_dir, name, caption_text, results=None, check=True):
        drawn[name] = fig
    ns = {"plots": types.SimpleNamespace(bars=plots.bars, caption=plots.caption, save=save), "reproduce": reproduce,
          "out": tmp_path, "p": p, "results": results, "both": both, "pd": pd}
    [cell] = [c for c in _code("00_quickstart") if "quickstart_native_vs_python" in c]
    exec(compile(cell, "00_quickstart.ipynb", "exec"), ns)
    [note] = [t.get_text() for t in drawn["quickstart_native_vs_python"].axes[0].texts if t.get_gid() == "note"]
    note = " ".join(note.split())
    assert f"{unbound} (no Python binding in the baseline)" in note and "lmdb" not in note.split(":", 1)[1]
    assert plots.check(drawn["quickstart_native_vs_python"], results) == []
