"""Issue 28's last figure and ordering defects, each caught on the bad form and passed on the fixed one:

- fair trials alternate the side that starts a round (A B, B A, ...) and record the order in each result;
- the figure check finds a line hidden exactly under another (02's write-rate panel drew every engine at the
  writer's target, only the last one visible), and plots.rww draws every engine visibly, against the target;
- the figure check finds panel titles that overlap or spill over a neighbour (the compare figure's
  amplification panels), and plots.compare fits its titles to their panels.
"""
import pytest

matplotlib = pytest.importorskip("matplotlib")
pytest.importorskip("seaborn")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from kvlab.execution.orchestration.interleave import rounds, run_interleaved  # noqa: E402
from kvlab.lab import plots  # noqa: E402
from kvlab.model.spec import make_spec  # noqa: E402

from .conftest import require  # noqa: E402

# --- fair trials ----------------------------------------------------------------------------------------


def test_the_side_that_starts_alternates_by_round():
    assert rounds(1) == [("A", "B")]
    assert ["".join(r) for r in rounds(5)] == ["AB", "BA", "AB", "BA", "AB"]
    # every side is first as often as second (up to one round), so a steady drift falls on both alike
    for n in range(1, 9):
        firsts = [r[0] for r in rounds(n)]
        assert abs(firsts.count("A") - firsts.count("B")) <= 1


def test_the_order_is_recorded_in_every_result():
    require("null")
    ran = []
    a, b = run_interleaved(make_spec("null", "readrandom", num=2_000, seed=3),
                           make_spec("null", "readrandom", num=2_000, seed=3, value_size=500), 4,
                           on_trial=lambda side, i, r: ran.append(side), label="t")
    assert "".join(ran) == "ABBAABBA"
    for x in list(a) + list(b):
        where = x.provenance["interleaved"]
        assert where["sequence"] == "ABBAABBA" and where["label"] == "t" and where["of"] == 4
        assert where["first"] == ("A" if where["trial"] % 2 == 0 else "B")
        assert where["sequence"][where["order"]] == where["side"]
    assert [x.provenance["interleaved"]["order"] for x in a if x.phase == "run"] == [0, 3, 4, 7]
    assert [x.provenance["interleaved"]["order"] for x in b if x.phase == "run"] == [1, 2, 5, 6]



# --- a line hidden under another: notebook 02's write-rate panel --------------------------------------------

ENGINES = ["lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "bdb"]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def rules(problems) -> set:
    return {p.rule for p in problems}


def _rww_frame(readers=(1, 2, 4), target=1000.0):
    """Every engine's writer exactly at its target (as a paced writer is), reads and CPU apart."""
    return pd.DataFrame([{"engine": e, "readers": n, "writes_per_sec": target, "reads_per_sec": 1e5 * (i + 1) * n,
                          "cpu_pct": 100.0 + 10 * i} for i, e in enumerate(ENGINES) for n in readers])


def test_a_line_exactly_under_another_is_caught_and_distinct_markers_side_by_side_pass():
    fig, ax = plt.subplots()
    for e in ENGINES:
        ax.plot([1, 2, 4], [1000, 1000, 1000], marker="o", label=e)
    hidden = [p for p in plots.check(fig) if p.rule == "hidden-line"]
    assert len(hidden) == len(ENGINES) - 1 and "lies exactly under" in hidden[0].message
    # the upper line thinner, or with another marker: part of the lower one shows
    fig, ax = plt.subplots()
    ax.plot([1, 2], [5, 5], linewidth=4, label="lmdb")
    ax.plot([1, 2], [5, 5], linewidth=1, label="rocksdb")
    ax.plot([1, 2], [7, 7], marker="o", linestyle="none", label="leveldb")
    ax.plot([1, 2], [7, 7], marker="s", linestyle="none", label="bdb")
    assert "hidden-line" not in rules(plots.check(fig))
    # reference lines are not data: a measured value on the ideal is the ideal reached
    fig, ax = plt.subplots()
    ax.plot([1, 2], [100, 200], color="#666666", gid="reference", label="ideal")
    ax.plot([1, 2], [100, 200], color="#0072B2", label="lmdb")
    assert "hidden-line" not in rules(plots.check(fig))


def test_the_old_write_rate_panel_is_caught():
    import seaborn as sns
    frame = _rww_frame()
    fig, ax = plt.subplots()
    sns.lineplot(data=frame, x="readers", y="writes_per_sec", hue="engine", marker="o", ax=ax,
                 palette=plots.engine_palette(ENGINES), legend=False)
    assert "hidden-line" in rules(plots.check(fig))


@pytest.mark.parametrize("readers", [(1, 2, 4), (1, 2, 4, 8, 16, 32, 64), (2,)])
def test_rww_draws_every_engine_visibly_against_the_target(readers):
    fig = plots.rww(_rww_frame(readers), target=1000)
    assert plots.check(fig) == []
    write = fig.axes[1]
    assert "paced to 1k/s" in write.get_title()
    (target,) = [ln for ln in write.get_lines() if str(ln.get_gid()).startswith("reference")]
    assert set(target.get_ydata()) == {1000}
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ENGINES + ["target: 1k writes/s", "ideal: readers + writer,\nat most "
                                f"{plots._machine_cores()} cores"]
    # one marker per engine, the same in every panel; at one reader count the engines' points stand apart
    for ax in fig.axes:
        data = [ln for ln in ax.get_lines() if str(ln.get_label()) in ENGINES]
        assert len({ln.get_marker() for ln in data}) == len(ENGINES)
        xs = sorted(ln.get_transform().transform([(readers[0], 1000)])[0][0] for ln in data)
        assert min(b - a for a, b in zip(xs, xs[1:])) >= 1.5   # display pixels apart
    assert {ln.get_linestyle() for ln in write.get_lines() if ln.get_label() in ENGINES} == {"None"}


def test_rww_without_a_target_draws_no_target_line():
    fig = plots.rww(_rww_frame())
    assert plots.check(fig) == []
    assert not [ln for ln in fig.axes[1].get_lines() if str(ln.get_gid()).startswith("reference")]
    assert fig.axes[1].get_title() == "write rate"


# --- titles: the compare figure's amplification panels ------------------------------------------------------

def _compare_frame():
    from kvlab.results.compare import METRICS
    rows = []
    for m in METRICS:
        rows.append({"metric": m.name, "workload": "fillseq", "phase": "run", "threads": 1, "a_median": 100.0,
                     "b_median": 103.0, "change_pct": 3.0, "verdict": "worse", "a_ci_lo": 99.0, "a_ci_hi": 101.0,
                     "b_ci_lo": 102.0, "b_ci_hi": 104.0, "floor_pct": 2.0, "geomean_of": None})
        rows.append({**rows[-1], "workload": None, "phase": None, "threads": None, "geomean_of": 1,
                     "a_ci_lo": None, "a_ci_hi": None, "b_ci_lo": None, "b_ci_hi": None})
    frame = pd.DataFrame(rows)
    frame.attrs.update({"match": ["workload", "phase", "threads"], "a": "tag:base", "b": "B (lmdb, in hand)"})
    return frame


def test_overlapping_panel_titles_are_caught():
    """The compare figure as it was: the amplification metrics' names as one-line titles, side by side."""
    from kvlab.results.compare import BY_NAME
    fig, axes = plt.subplots(1, 2, figsize=(4.4 * 2 + 1.8, 2.4), sharey=True)
    for ax, name in zip(axes, ("write_amp", "read_amp")):
        ax.set_title(f"{BY_NAME[name].label} (lower is better)", fontsize=9)
    fig.tight_layout()
    problems = plots.check(fig)
    assert any(p.rule == "text-overlap" and "write amplification" in p.message and "read amplification" in p.message
               for p in problems), problems


def test_a_title_reaching_over_a_neighbour_is_caught_though_it_meets_no_text():
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    axes[0].set_title("a title far wider than its own panel, over the next one's column", fontsize=11)
    axes[1].set_title("")
    fig.tight_layout()
    problems = plots.check(fig)
    assert [p for p in problems if "reaches over" in p.message], problems
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    axes[0].set_title("a title that fits", fontsize=11)
    fig.tight_layout()
    assert plots.check(fig) == []


@pytest.mark.parametrize("metrics", [None, ["ops_per_sec", "write_amp", "read_amp"], ["write_amp", "read_amp"],
                                     ["ops_per_sec", "write_amp"]])
def test_the_compare_figure_fits_its_titles(metrics):
    frame = _compare_frame()
    if metrics:
        frame = frame[frame.metric.isin(metrics)]
    fig = plots.compare(frame)
    assert plots.check(fig) == []
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        if ax.get_visible():
            title, box = ax.title.get_window_extent(renderer), ax.get_window_extent(renderer)
            assert box.x0 - 1 <= title.x0 and title.x1 <= box.x1 + 1, ax.get_title()
            assert "is\u00a0better)" in ax.get_title().splitlines()[-1]   # '(lower is better)' never split
    assert fig._suptitle.get_text() == "B (lmdb, in hand) against A (tag:base)"
