"""Issue 28's last figure and ordering defects, each caught on the bad form and passed on the fixed one:

- fair trials alternate the side that starts a round (A B, B A, ...) and record the order in each result;
- the figure check finds a line hidden exactly under another (02's write-rate panel drew every engine at the
  writer's target, only the last one visible), and plots.rww draws every engine visibly, against the target;
- the figure check finds panel titles that overlap or spill over a neighbour (the compare figure's
  amplification panels), and plots.compare fits its titles to their panels.
"""
from kvlab.execution.interleave import rounds, run_interleaved
from kvlab.model.spec import make_spec

from .conftest import require

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

