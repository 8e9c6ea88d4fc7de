"""Issue 34, items 5 (the % change part), 7 and 8, on made-up results (no engine runs): verdicts that can happen
(sample sizes that cannot reach p < alpha said before the table and before --run spends trials), sides not
interleaved on a machine that changed, load phases out of comparisons and geomeans, no % change for a zero
or an interval reaching 0; the header states the interval's level; figures whose legends name what differs;
plots.bars with the median and its interval, labelled; figcheck on duplicate legend entries."""
import math

import pytest

import kvlab
from kvlab import cli
from kvlab.cli.results.comparison_table import print_comparison
from kvlab.results import stats
from kvlab.results.result import BenchmarkResult


def bench(rate, *, workload="readrandom", phase="run", started="2026-01-01T00:00:00+0000", load=0.0,
          write_amp=None, value_size=100, engine="lmdb", threads=1, trial=0):
    return BenchmarkResult(
        engine=engine, workload=workload, phase=phase, threads=threads, ops=100_000, seconds=100_000 / rate,
        thread_seconds=100_000 / rate, found=None, not_found=None, bytes=0,
        latency_us={"p50": 1e6 / rate, "p99": 2e6 / rate, "p999": 3e6 / rate}, latency_by_op={}, latency_unit="op",
        seed=1, params={"num": 100_000, "value_size": value_size, "key_size": 16}, versions={}, key_encoding="",
        started_at=started, ended_at=started, trial=trial,
        provenance={"machine": {"hostname": "h", "system": {"load": {"others_1min": load}, "others_cpu_pct": 0.0,
                                                           "cores": 2}}},
        amplification={"write_amp": write_amp})


def side(rates, minute=0, load=0.0, **kw):
    out = []
    for i, r in enumerate(rates):
        at = f"2026-01-01T00:{minute + i:02d}:00+0000"
        out += [bench(r * 3, workload="fillseq", phase="load", started=at, load=load, **kw),
                bench(r, started=at, load=load, **kw)]
    return out


# --- item 8: verdicts that can happen -------------------------------------------------------------------

def test_the_sizes_that_cannot_reach_alpha_are_named():
    assert stats.smallest_p(3, 3) == pytest.approx(0.1) and stats.smallest_p(5, 5) == pytest.approx(0.00794, 1e-3)
    assert stats.fewest_per_side(0.05) == 4
    assert stats.reach_text(4, 4, 0.05) is None and stats.reach_text(5, 5, 0.01) is None
    text = stats.reach_text(3, 3, 0.05)
    assert "3 vs 3 samples cannot reach p < 0.05" in text and "0.100" in text and "5 a side: 0.008" in text


def test_three_a_side_is_said_on_top(capsys):
    a, b = side([100, 101, 99], 0), side([186, 190, 185], 10)     # +86%: still '~' at 3 a side
    frame = kvlab.compare(a, b, metrics=["ops_per_sec"])
    row = frame[(frame.workload == "readrandom")].iloc[0]
    assert row.verdict == "~" and row.min_p == pytest.approx(0.1)
    assert any("n=3/3: 3 vs 3 samples cannot reach p < 0.05" in w for w in frame.attrs["warnings"])
    print_comparison(frame)
    lines = capsys.readouterr().out.splitlines()
    first_table = next(i for i, ln in enumerate(lines) if ln.startswith("ops/s"))
    assert any("cannot reach p < 0.05" in ln for ln in lines[:first_table])     # above the table, not a footnote


def test_run_says_before_trials_are_spent(capsys, tmp_path, monkeypatch):
    from kvlab.execution.orchestration import interleave

    class Spent(Exception):
        pass

    def no_trials(*args, **kw):
        raise Spent()
    monkeypatch.setattr(interleave, "run_interleaved", no_trials)
    for repeat, said in (("3", True), ("5", False)):
        with pytest.raises(Spent):
            cli.main(["results", "compare", "--run", "--engine null --workload readrandom --num 1000",
                      "--engine null --workload readrandom --num 1000", "--repeat", repeat, "--no-store",
                      "--progress", "off", "--store", str(tmp_path / "s.duckdb")])
        err = capsys.readouterr().err
        assert ("warning: --repeat 3: 3 vs 3 samples cannot reach p < 0.05" in err) == said, err


def test_not_interleaved_on_a_changed_machine_is_said_on_top(capsys):
    a = side([100, 101, 99, 100, 102], 0, load=0.1)
    b = side([80, 79, 81, 80, 78], 10, load=1.6)      # afterwards, while something else ran
    frame = kvlab.compare(a, b, metrics=["ops_per_sec"])
    warning = next(w for w in frame.attrs["warnings"] if w.startswith("not interleaved"))
    assert "every benchmark of A started before B's first" in warning and "0.10 during A and 1.60 during B" in warning
    assert "--run" in warning
    print_comparison(frame)
    out = capsys.readouterr().out
    assert out.index("warning: not interleaved") < out.index("ops/s, higher is better")
    # interleaved in time, or one after the other on an unchanged machine: nothing said
    quiet = kvlab.compare(side([100, 101, 99, 100, 102], 0, load=0.1), side([80, 79, 81, 80, 78], 10, load=0.2),
                          metrics=["ops_per_sec"])
    assert not [w for w in quiet.attrs["warnings"] if w.startswith("not interleaved")]
    mixed = [x for pair in zip(side([100, 101, 99, 100, 102], 0, load=0.1)[1::2],
                               side([80, 79, 81, 80, 78], 0, load=1.6)[1::2]) for x in pair]
    inter = kvlab.compare(mixed[0::2], mixed[1::2], metrics=["ops_per_sec"])
    assert not [w for w in inter.attrs["warnings"] if w.startswith("not interleaved")]


def test_sides_that_differ_in_budget_value_size_or_machine_are_said_not_like_for_like(capsys, tmp_path):
    a, b = side([100, 101, 99, 100, 102]), side([90, 91, 89, 90, 92], value_size=400)
    for x in b:
        x.params["memory_budget"] = {"bytes": 1 << 30}
    frame = kvlab.compare(a, b, metrics=["ops_per_sec"])
    unlike = next(w for w in frame.attrs["warnings"] if w.startswith("not like for like"))
    assert "memory budget (A engine defaults; B 1,024 MiB)" in unlike and "value size (A 100 B; B 400 B)" in unlike
    assert "durability" not in unlike and "machine" not in unlike and "results diff" in unlike
    print_comparison(frame)
    out = capsys.readouterr().out
    assert out.index("warning: not like for like") < out.index("ops/s, higher is better")
    same = kvlab.compare(side([100, 101, 99, 100, 102]), side([90, 91, 89, 90, 92]), metrics=["ops_per_sec"])
    assert not [w for w in same.attrs["warnings"] if w.startswith("not like for like")]
    # from the store, as `kvlab results compare` reads it: the same facts, the same line
    from kvlab.results.store import Store
    store = Store(tmp_path / "s.duckdb")
    for tag, results in (("a", a), ("b", b)):
        for x in results:
            x.tags = [tag]
        store.append(results)
    stored = kvlab.compare("tag:a", "tag:b", store=store, metrics=["ops_per_sec"])
    assert [w for w in stored.attrs["warnings"] if w.startswith("not like for like")] == [unlike]


def test_load_phases_stay_out_unless_asked():
    a, b = side([100, 101, 99, 100, 102]), side([90, 91, 89, 90, 92], 10)
    frame = kvlab.compare(a, b, metrics=["ops_per_sec"])
    assert set(frame.phase.dropna()) == {"run"}
    geo = frame[frame.workload == "geomean"]
    assert len(geo) == 1 and geo.iloc[0].geomean_of == 1 and geo.iloc[0].phase == "run"
    assert any(n.startswith("load phases left out (fillseq load)") for n in frame.attrs["notes"])
    both = kvlab.compare(a, b, metrics=["ops_per_sec"], loads=True)
    geo = both[both.workload == "geomean"]
    assert sorted(geo.phase) == ["load", "run"] and list(geo.geomean_of) == [1, 1]   # one kind a geomean
    asked = kvlab.compare(a, b, metrics=["ops_per_sec"], where="phase=load")
    assert set(asked.phase.dropna()) == {"load"}


# --- item 5's part: no % change for a zero or an interval reaching 0 ------------------------------------

def test_no_change_for_a_zero_or_an_interval_reaching_zero(capsys):
    a = [bench(100, write_amp=w, started=f"2026-01-01T00:0{i}:00+0000") for i, w in enumerate((0.000030, 0.0, 6.53))]
    b = [bench(100, write_amp=w, started=f"2026-01-01T00:0{i}:30+0000") for i, w in enumerate((25.9, 26.1, 25.7))]
    frame = kvlab.compare(a, b, metrics=["write_amp"])
    row = frame[frame.workload == "readrandom"].iloc[0]
    assert row.change_pct is None or math.isnan(row.change_pct)
    assert "A's interval of the median, 0 .. 6.53, reaches 0" in row.change_why and row.verdict == "~"
    assert not (frame.workload == "geomean").any()     # nothing to pool
    print_comparison(frame)
    out = capsys.readouterr().out
    assert "86,385,625" not in out and "+inf" not in out and "no % change for write_amp" in out
    zero = kvlab.compare([bench(100, write_amp=0.0)] * 3, [bench(100, write_amp=2.0)] * 3, metrics=["write_amp"])
    assert zero.iloc[0].change_why == "A's median is 0"


# --- item 7: the header states the level used ------------------------------------------------------------

def test_the_header_states_the_level_used(capsys):
    frame = kvlab.compare(side([100, 101, 99]), side([90, 91, 89], 10), metrics=["ops_per_sec"])
    print_comparison(frame)
    out = capsys.readouterr().out
    assert "A: median's 75% CI" in out and "95% CI" not in out
    nine = kvlab.compare(side([100 + i for i in range(9)]), side([90 + i for i in range(9)], 10),
                         metrics=["ops_per_sec"])
    print_comparison(nine)
    assert "A: median's 96.1% CI" in capsys.readouterr().out


# --- item 7: figures that say what differs ------------------------------------------------------------------

@pytest.fixture
def plt():
    matplotlib = pytest.importorskip("matplotlib")
    pytest.importorskip("seaborn")
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    yield pyplot
    pyplot.close("all")


def _legend_texts(fig):
    return [t.get_text() for lg in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
            for t in lg.get_texts()]


def test_figcheck_catches_two_legend_entries_with_the_same_text(plt):
    from kvlab.lab import plots
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.plot([1, 2, 3], [1, 2, 3], color="#1f77b4", label="lmdb 1 thr")
    ax.plot([1, 2, 3], [2, 3, 5], color="#ff7f0e", label="lmdb 1 thr")
    ax.set_ylabel("ops/s")
    fig.legend(loc="upper left", bbox_to_anchor=(1.0, 0.95))
    problems = [p for p in plots.check(fig) if p.rule == "duplicate-legend-entry"]
    assert len(problems) == 1 and "2 entries 'lmdb 1 thr'" in str(problems[0])
    ax.get_lines()[1].set_label("lmdb 1 thr, 4000 B values")
    fig.legends[0].remove()
    fig.legend(loc="upper left", bbox_to_anchor=(1.0, 0.95))
    assert not [p for p in plots.check(fig) if p.rule == "duplicate-legend-entry"]


def test_a_spectrums_legend_names_the_value_size_that_differs(plt):
    from kvlab.lab import plots
    results = [bench(1000, value_size=v, threads=t) for v in (100, 4000) for t in (1, 1)][:2] + \
        [bench(900, value_size=4000, threads=2)]
    fig = plots.latency_spectrum(results)
    labels = _legend_texts(fig)
    assert len(set(labels)) == len(labels), labels        # was: 'lmdb', 'lmdb', 'lmdb 2 thr'
    assert any("100 B values" in t for t in labels) and any("4000 B values" in t for t in labels)
    assert not [p for p in plots.check(fig) if p.rule == "duplicate-legend-entry"]
    # alike in every setting: told apart by their trial
    alike = plots.latency_spectrum([bench(1000, trial=0), bench(1010, trial=1)])
    assert sorted(_legend_texts(alike)) == ["lmdb trial 0 (saved percentiles)", "lmdb trial 1 (saved percentiles)"]


def test_bars_are_medians_with_the_medians_interval_labelled(plt):
    import numpy as np
    import pandas as pd

    from kvlab.lab import plots
    values = {"lmdb": [100.0, 130.0, 90.0], "rocksdb": [50.0, 52.0, 400.0]}   # a mean would be 106.7 and 167.3
    frame = pd.DataFrame([{"engine": e, "benchmark": "readrandom", "ops_per_sec": v}
                          for e, vs in values.items() for v in vs])
    fig = plots.bars(frame, x="benchmark", y="ops_per_sec", title="ops/s")
    heights = sorted(p.get_height() for p in fig.axes[0].patches)
    assert heights == sorted(float(np.median(v)) for v in values.values())
    whiskers = sorted(tuple(sorted(seg[:, 1])) for c in fig.axes[0].collections for seg in c.get_segments())
    assert whiskers == [(50.0, 400.0), (90.0, 130.0)]     # min-max of 3: the median's 75% interval
    assert "bar: median; whisker: median's 75% interval" in _legend_texts(fig)
    assert plots.check(fig) == []


# --- the report: the comparison's header, the summary's trial and definition, a 1400 px window -------------

def _summary_entries():
    from kvlab.lab.report.gather import Entry
    out = []
    for trial in range(2):
        for b in (bench(100, workload="fillseq", phase="load", trial=trial), bench(90, trial=trial)):
            b.tags = ["sweep-like-tag", "value-100", "another-long-tag-name"]
            b.warnings = ["a warning"]
            out.append(Entry(b, f"run{trial:09d}abc"))
    return out


def test_report_summary_has_the_trial_and_the_workloads_definition():
    from kvlab.lab.report.tables import comparison_section, summary_table
    html = summary_table(_summary_entries())
    assert ">trial</th>" in html and ">definition</th>" in html and "reads per thread, keys uniform" in html
    assert "fillseq <small>(load)</small>" in html and ">partial</th>" not in html   # no partial: no column
    frame = kvlab.compare(side([100, 101, 99]), side([90, 91, 89], 10), metrics=["ops_per_sec"])
    section = comparison_section(frame, [], {})
    assert "A: median&#x27;s 75% CI" in section and "95% CI" not in section
    assert "cannot reach p &lt; 0.05" in section.split("<h3>")[0]      # above the tables


def test_report_summary_fits_a_1400px_window(tmp_path):
    import shutil
    chromium = shutil.which("chromium")
    if not chromium:
        pytest.skip("no chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    from kvlab.lab.report.page import render
    page_html = render(_summary_entries() * 4, [], None, None, [], [], "t")
    out = tmp_path / "r.html"
    out.write_text(page_html)
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(out.as_uri())
            scroll, client = page.eval_on_selector("#summary .scroll", "e => [e.scrollWidth, e.clientWidth]")
        finally:
            browser.close()
    assert scroll <= client, (scroll, client)
