"""Rate over time (issue 38, item 3): the open loop's target as a function of time (constant, sine, steps, a
rate file), validated as data; the intended starts the C loop computes follow the schedule without drift
(checked through kvlab._native.rate_times, the loop's own kv_rate_time); a sine-rate run's intervals follow
the sine, each interval recording its target beside what it achieved."""
import math

import numpy as np
import pytest

import kvlab
from kvlab import _native, errors
from kvlab.model.spec import make_spec
from kvlab.model.workloads.mix import Pacing
from kvlab.model.workloads.rate import RateSchedule, parse
from kvlab.model.workloads.toml_file import from_toml_text
from kvlab.results.result import RunResult, frame_rows
from kvlab.results.store import Store

from .conftest import require

# --- the schedule as data -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,match", [
    ("steps:5=100", "first time is 5 s"),
    ("steps:0=100,10=0", "last rate is 0 and holds"),
    ("steps:0=100,3=200,2=50", "time 2 s follows 3 s"),
    ("steps:0=100,20=50,repeat=10", "repeat=10 s ends before the last step"),
    ("steps:0=0,5=0,repeat=10", "every rate is 0"),
    ("steps:0=-5", "rate at 0 s=-5.0 is out of range"),
    ("sine:a=10,b=1,d=-20", "never above 0"),
    ("sine:a=10,b=-1,d=20", "b=-1.0 is out of range"),
    ("sine:a=10,e=3", "'e' unknown"),
    ("constant:0", "rate=0.0 is out of range"),
    ("constant:2e9", r"at most 1e\+09"),
    ("wave:1", "kind 'wave' is unknown"),
    ("steps:0", "is not name=value"),
    ("file:/nonexistent/rates.csv", "cannot be read"),
])
def test_a_bad_schedule_is_refused_saying_what_is_allowed(text, match):
    with pytest.raises(errors.SpecError, match=match):
        parse(text)


def test_a_bad_schedule_is_refused_before_anything_runs():
    with pytest.raises(errors.SpecError, match="first time"):
        make_spec("lmdb", "ycsb-c", rate_schedule="steps:1=100")
    with pytest.raises(errors.SpecError, match="applies to mixes only"):
        make_spec("lmdb", "readrandom", rate_schedule="constant:100")
    with pytest.raises(errors.SpecError, match="not both"):
        make_spec("lmdb", "ycsb-c", rate_schedule="constant:100", target_rate=50)
    with pytest.raises(errors.SpecError, match="not both"):
        Pacing(target_rate=10, schedule="constant:5")


def test_text_dict_and_file_forms(tmp_path):
    for text in ("constant:5000", "sine:a=1000,b=0.1,c=0.5,d=5000,interval=0.5", "steps:0=1000,10=8000,11=1000",
                 "steps:0=1000,30=0,repeat=60"):
        s = parse(text)
        assert parse(s.to_text()) == s and parse(s.to_dict()) == s
    f = tmp_path / "rates.csv"
    f.write_text("# time,rate\n0,100\n2.5, 400\n\n4\t100  # back down\n")
    s = parse(f"file:{f}")
    assert s == RateSchedule("steps", steps=((0, 100), (2.5, 400), (4, 100)))
    f.write_text("0,100\n1,x\n")
    with pytest.raises(errors.SpecError, match="line 2"):
        parse(f"file:{f}")
    # a run's spec holds the schedule as data: the file inlined, so the stored spec runs without it
    f.write_text("0,100\n1,300\n")
    spec = make_spec("lmdb", "ycsb-c", num=100, rate_schedule=f"file:{f}")
    assert spec.rate_schedule == "steps:0=100,1=300"


def test_toml_pacing_takes_a_schedule_and_a_rate_file_beside_it(tmp_path):
    (tmp_path / "rates.csv").write_text("0,100\n5,900\n6,100\n")
    body = '[[template]]\nname = "r"\ntxn = "g1"\n'
    mix = from_toml_text(f'[pacing]\nschedule = "file:rates.csv"\n{body}', str(tmp_path / "w.toml"))
    assert mix.pacing.schedule.steps == ((0, 100), (5, 900), (6, 100)) and mix.pacing.open_loop
    mix = from_toml_text(f'[pacing.schedule]\nkind = "sine"\na = 10\nb = 1\nd = 20\n{body}', "w.toml")
    assert mix.pacing.schedule == RateSchedule("sine", a=10, b=1, d=20)
    assert "schedule" in mix.to_dict()["pacing"]


# --- the intended starts: the integral inverted, without drift --------------------------------------------

def _starts(schedule, clients=1, work=()):
    t = schedule.compile(1.0 / clients)
    return _native.rate_times(t["t_ns"], t["per_ns"], t["cum"], t["period_ns"], t["period_cum"], work) / 1e9


def test_intended_starts_follow_steps_exactly():
    s = parse("steps:0=1000,2=5000,2.5=1000")
    starts = _starts(s, work=np.arange(0, 7000))
    # 1000/s for 2 s: 2000 starts; 5000/s for 0.5 s: 2500 more; then 1000/s
    assert np.count_nonzero(starts < 2) == 2000
    assert np.count_nonzero((starts >= 2) & (starts < 2.5)) == 2500
    assert starts[6999] == pytest.approx(2.5 + (6999 - 4500) / 1000)
    assert np.all(np.diff(starts) > 0)


def test_intended_starts_follow_a_sine_without_drift():
    """A day's sine at about 2,000 starts/s for 10^7 starts: each start is the inverse of the sine's integral at
    its count, so the count by any segment's end is the sine's own integral (no error that grows)."""
    s = parse("sine:a=800,b=0.01,c=0.3,d=2000")
    n = 10_000_000
    starts = _starts(s, work=np.arange(n, dtype=float))
    for t in (1.0, 100.0, 1234.5, starts[-1] - 1):
        exact = 2000 * t + 800 * (math.cos(0.3) - math.cos(0.01 * t + 0.3)) / 0.01   # the sine's integral
        assert abs(np.searchsorted(starts, t) - exact) <= 2, t


def test_a_repeating_schedule_repeats():
    s = parse("steps:0=100,1=0,repeat=2")   # 100 starts in the first second of every two
    starts = _starts(s, work=np.arange(500, dtype=float))
    assert np.all((starts % 2) < 1 + 1e-9)
    assert starts[100] == pytest.approx(2.0) and starts[499] == pytest.approx(8.99)


def test_clients_share_the_rate():
    s = parse("constant:1000")
    one = _starts(s, clients=4, work=np.arange(10, dtype=float))
    assert np.allclose(np.diff(one), 4 / 1000)


# --- a run: each interval's target beside what it achieved --------------------------------------------------

def _sine_run(engine, duration, interval):
    # a period of 2 s, 200 to 1,000 transactions/s in total on 2 clients: light for any engine
    return kvlab.run(engine, "ycsb-c", num=2000, duration=duration, rate_schedule="sine:a=400,b=3.14159,d=600",
                     interval=interval, threads=2, seed=3).by_workload("ycsb-c")


def test_a_sine_rate_runs_intervals_follow_the_sine(tmp_path):
    require("lmdb")
    b = _sine_run("lmdb", 4.0, 0.25)
    assert b.mix["pacing"]["schedule"] == "sine:a=400.0,b=3.14159,c=0.0,d=600.0"
    rows = [(iv["workers"]["target_txn_per_sec"], iv["workers"]["ops_per_sec"].get("txn", 0.0))
            for iv in b.intervals if iv["seconds"] > 0.1]
    target, achieved = np.array(rows).T
    expected = [600 + 400 * math.sin(3.14159 * (iv["t_start_s"] + iv["t_end_s"]) / 2) for iv in b.intervals
                if iv["seconds"] > 0.1]
    assert np.allclose(target, expected, rtol=0.05)            # the target is the sine's, interval by interval
    assert target.max() > 900 and target.min() < 300
    # loose: on a busy machine the loop can fall behind for a moment, but it follows the sine's shape and total
    assert np.corrcoef(target, achieved)[0, 1] > 0.8
    assert abs(b.ops / b.seconds - 600) / 600 < 0.15
    assert b.mix["pacing"]["achieved_ratio"] == pytest.approx(1.0, abs=0.15)
    rows = frame_rows([b], "intervals")   # the tidy frame carries the target beside each interval's rates
    assert all(r["target_txn_per_sec"] > 0 for r in rows)
    store = Store(tmp_path / "s.duckdb")   # and so does the store's intervals table, beside the achieved rate
    store.append(RunResult([b]))
    stored = store.query("SELECT interval, target_txn_per_sec FROM intervals WHERE side = 'workers' AND op = 'txn' "
                         "ORDER BY interval")
    assert [round(t, 6) for t in stored["target_txn_per_sec"]] == [round(iv["workers"]["target_txn_per_sec"], 6) for iv in b.intervals
                                                if "txn" in iv["workers"].get("ops", {})]


def test_a_sine_rate_runs_intervals_follow_the_sine_closely():
    """Timing tier: every full interval within 15% (and 40 txn/s) of its target (each interval has 50 to 250
    starts; a quiet machine keeps them to within a few percent)."""
    require("lmdb")
    b = _sine_run("lmdb", 4.0, 0.2)
    for iv in b.intervals[1:-1]:
        target, got = iv["workers"]["target_txn_per_sec"], iv["workers"]["ops_per_sec"].get("txn", 0.0)
        assert abs(got - target) <= max(0.15 * target, 40), (iv["t_start_s"], target, got)
