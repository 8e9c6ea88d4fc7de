"""Whole latency histograms in every result: what a stored record (a --json file, the results store) reads
back is what the run computed, to the last bit; the .hgrm export reads back to the same percentiles; a
record older than kvlab.result/6 upgrades and says it has no histograms."""
import json
import os
import re

import numpy as np
import pytest

import kvlab
from kvlab import errors
from kvlab.execution.run import record
from kvlab.results import result as result_mod
from kvlab.results.histogram import Histogram
from kvlab.results.result import BenchmarkResult, RunResult, load_json

from .conftest import require

QS = [0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100]


def _install_spy():
    """In each trial's worker (KVLAB_WORKER_HOOK): every Histograms the runner merges, pickled into a file."""
    import pickle
    original = record.histograms_record

    def spy(overall, by_op, templates=None, writer=None):
        with open(os.environ["KVLAB_TEST_SPY"], "ab") as f:
            pickle.dump({"all": overall, "by_op": dict(by_op), "templates": templates, "writer": writer}, f)
        return original(overall, by_op, templates, writer)

    record.histograms_record = spy


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """Runs on LMDB with the Histograms the runner merged, as they were before anything was stored:
    fillseq + readrandom, readwhilewriting (its writer), ycsb-a closed loop and open loop."""
    import pickle
    require("lmdb")
    spied = tmp_path_factory.mktemp("spy") / "histograms.pickle"
    env = {"KVLAB_WORKER_HOOK": f"{__name__}:_install_spy", "KVLAB_TEST_SPY": str(spied)}
    os.environ.update(env)
    try:
        runs = [kvlab.run("lmdb", "fillseq,readrandom", num=20_000, threads=2, seed=1),
                kvlab.run("lmdb", "readwhilewriting", num=20_000, threads=2, duration=0.6, seed=1),
                kvlab.run("lmdb", "ycsb-a", num=5_000, reads=3_000, threads=2, seed=1),
                kvlab.run("lmdb", "ycsb-a", num=5_000, reads=2_000, threads=2, target_rate=10_000, seed=1)]
    finally:
        for k in env:
            os.environ.pop(k, None)
    seen = []
    with open(spied, "rb") as f:
        while True:
            try:
                seen.append(pickle.load(f))
            except EOFError:
                break
    benchmarks = [b for r in runs for b in r]
    assert len(seen) == len(benchmarks)
    return list(zip(benchmarks, seen))


def _expected(hists):
    """(op, kind, template, Histogram) for every histogram the run merged."""
    out = [("all", "service", None, hists["all"])]
    for op, h in hists["by_op"].items():
        out.append(("all", "response", None, h) if op == "response" else (op, "service", None, h))
    for name, t in (hists["templates"] or {}).items():
        out += [("all", kind, name, h) for kind, h in t.items()]
    if hists["writer"] is not None:
        out.append(("writer", "service", None, hists["writer"]))
    return out


def _same(stored: Histogram, live: Histogram):
    assert stored.count == live.count and stored.min == live.min and stored.max == live.max
    assert stored.ns_per_tick == live.ns_per_tick
    assert (stored.counts == live.counts).all()
    assert [stored.percentile(q) for q in QS] == [live.percentile(q) for q in QS]
    assert stored.summary_us() == live.summary_us()
    for a, b in zip(stored.cdf(), live.cdf()):
        assert np.array_equal(a, b)


def _check_all(benchmarks, captured):
    kinds = set()
    for b, (orig, hists) in zip(benchmarks, captured):
        assert (b.engine, b.workload, b.phase) == (orig.engine, orig.workload, orig.phase)
        for op, kind, template, live in _expected(hists):
            if op == "lag":   # kept under by_op, read as an op type
                _same(b.histogram("lag"), live)
                continue
            _same(b.histogram(op, kind, template), live)
            kinds.add((b.workload, op if template is None else "template", kind))
    return kinds


def test_percentiles_from_a_json_round_trip_equal_the_runs(captured, tmp_path):
    run = RunResult([b for b, _ in captured])
    run.write_json(tmp_path / "out.json")
    text = (tmp_path / "out.json").read_text()
    # a histogram's runs sit on one line each, not one line a number
    assert re.search(r'"counts": \[\[\d+,\d+', text)
    assert len(text.splitlines()) < 2500 * len(run)
    back = load_json(tmp_path / "out.json")
    kinds = _check_all(back, captured)
    # every kind of histogram the brief names was checked: overall, per op, per template, response, writer
    assert ("readrandom", "all", "service") in kinds and ("readrandom", "read", "service") in kinds
    assert ("readwhilewriting", "writer", "service") in kinds
    assert ("ycsb-a", "template", "service") in kinds and ("ycsb-a", "template", "response") in kinds
    assert ("ycsb-a", "all", "response") in kinds and ("ycsb-a", "txn", "service") in kinds
    # and the summaries each record carries agree with its histograms
    for b in back:
        assert b.histogram().summary_us() == b.latency_us
        for op, lat in b.latency_by_op.items():
            assert b.histogram(op if op != "response" else "all", "response" if op == "response" else "service") \
                .summary_us() == lat


def test_percentiles_from_the_store_equal_the_runs(captured, tmp_path):
    pytest.importorskip("duckdb")
    from kvlab.store import Store
    store = Store(tmp_path / "kvlab.duckdb")
    run_id = store.append(RunResult([b for b, _ in captured]))
    back = store.load(run_id=run_id)
    _check_all(back, captured)
    # the record column holds them: a percentile can come from SQL's JSON alone
    n = store.query("SELECT count(*) AS n FROM benchmarks WHERE json_extract(record, '$.histograms.by_op') "
                    "IS NOT NULL")["n"][0]
    assert n == len(captured)


def test_a_single_op_workload_stores_its_histogram_once(captured):
    b = next(b for b, _ in captured if b.workload == "readrandom")
    assert b.histograms["all"] == "read"          # the overall histogram is the read one: named, not copied
    assert b.histogram("all").summary_us() == b.histogram("read").summary_us() == b.latency_us
    y = next(b for b, _ in captured if b.workload == "ycsb-a")
    assert isinstance(y.histograms["all"], str) or "counts" in y.histograms["all"]


def test_the_histogram_frame(captured):
    run = RunResult([b for b, _ in captured])
    df = run.to_frame("histogram")
    assert {"engine", "workload", "phase", "op", "kind", "bucket", "value_us", "low_us", "high_us", "count",
            "cumulative_fraction"} <= set(df.columns)
    assert set(df[df.workload == "ycsb-a"].kind) >= {"service", "response"}
    for b in run:
        one = RunResult([b]).to_frame("histogram")
        for (op, kind), part in one.groupby(["op", "kind"]):
            assert part["count"].sum() == b.histogram(*(("lag",) if kind == "start_lag" else
                                                        ("all", kind) if op == "all" else
                                                        ("all", kind, op[9:]) if op.startswith("template:") else
                                                        (op, kind))).count
            assert part["cumulative_fraction"].iloc[-1] == pytest.approx(1.0)
            assert part["cumulative_fraction"].is_monotonic_increasing and part["bucket"].is_monotonic_increasing
            assert (part["low_us"] <= part["value_us"] + 1e-9).all() and (part["value_us"] <= part["high_us"]).all()
    rr = df[(df.workload == "readrandom") & (df.op == "all")]
    assert rr["count"].sum() == run.by_workload("readrandom").latency_us["count"]


def test_errors_name_what_a_record_has(captured):
    b = next(b for b, _ in captured if b.workload == "readrandom")
    with pytest.raises(errors.ResultsError, match="no service histogram for op type 'scan'.*ops: all, read"):
        b.histogram("scan")
    with pytest.raises(errors.ResultsError, match="no response histogram"):
        b.histogram(kind="response")
    with pytest.raises(errors.ResultsError, match="no template 'x'.*none"):
        b.histogram(template="x")
    with pytest.raises(errors.SpecError, match="allowed: service, response"):
        b.histogram(kind="queue")


def _parse_hgrm(text):
    """The .hgrm table and footer, read as HistogramLogAnalyzer would."""
    lines = text.splitlines()
    assert lines[0].split() == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"] and lines[1] == ""
    rows, footer = [], {}
    for line in lines[2:]:
        if line.startswith("#["):
            for k, v in re.findall(r"(\w[\w ]*?)\s*=\s*([\d.]+)", line):
                footer[k.strip()] = float(v)
            continue
        parts = line.split()
        assert len(parts) in (3, 4), line
        rows.append((float(parts[0]), float(parts[1]), int(parts[2])))
        if len(parts) == 4:
            assert float(parts[3]) == pytest.approx(1 / (1 - float(parts[1])), rel=1e-3, abs=0.006)
        else:
            assert float(parts[1]) == 1.0   # the last line, at 100%, has no 1/(1-p)
    return rows, footer


def _percentile_from_table(rows, q):
    return next(v for v, p, _ in rows if p * 100 >= q - 1e-9)


def test_hgrm_export_reads_back_to_the_same_percentiles():
    from kvlab import _native
    rng = np.random.default_rng(7)
    values = np.maximum(rng.lognormal(8, 1.3, 200_000), 1).astype(np.uint64)   # ns
    h = Histogram.from_native(_native.histogram_of(values))
    text = h.to_hgrm(1000.0)   # microseconds
    rows, footer = _parse_hgrm(text)
    # HdrHistogram's layout: rows at 0%, 10%, 20%, ... then halving the distance to 100%; counts grow
    assert rows[0][1] == 0.0 and rows[1][1] == pytest.approx(0.1) and rows[-1][1] == 1.0
    assert all(a[1] <= b[1] and a[2] <= b[2] for a, b in zip(rows, rows[1:]))
    assert rows[-1][2] == h.count
    assert footer["Total count"] == h.count and footer["Max"] == pytest.approx(h.max / 1000, abs=1e-3)
    assert footer["Mean"] == pytest.approx(h.mean() / 1000, abs=1e-3)
    assert footer["StdDeviation"] == pytest.approx(h.stddev() / 1000, abs=1e-3)
    assert footer["Buckets"] == 37 and footer["SubBuckets"] == 256
    # every row's value is kvlab's percentile at the row's level (printed to 1 ns)
    for v, p, _ in rows[:-1]:
        assert v * 1000 == pytest.approx(h.percentile(p * 100), abs=0.5), p
    assert rows[-1][0] * 1000 == pytest.approx(h.percentile(100), abs=0.5)
    for q in (0, 10, 50, 90, 99, 99.9, 99.99):
        # read back as a reader of the table does: the rows at or around q bracket the exact value, within the
        # bucket precision (at a level the table has, the row is the value)
        exact = float(np.percentile(values, q, method="inverted_cdf"))
        below = max((r for r in rows if r[1] * 100 <= q + 1e-9), key=lambda r: r[1])[0] * 1000
        above = _percentile_from_table(rows, q) * 1000
        assert below <= exact * 1.004 + 0.5 and above >= exact * 0.996 - 0.5, (q, below, exact, above)
        if any(abs(r[1] * 100 - q) < 1e-9 for r in rows):
            assert abs(above - exact) <= 0.004 * exact + 0.5, (q, above, exact)


def test_hgrm_of_a_stored_result(captured):
    b = next(b for b, _ in captured if b.workload == "readrandom")
    h = b.histogram("read")
    rows, footer = _parse_hgrm(h.to_hgrm())
    assert footer["Total count"] == b.latency_by_op["read"]["count"]
    for q in (0, 50, 90):   # levels the table has
        assert _percentile_from_table(rows, q) == pytest.approx(h.percentile(q) / 1000, abs=5e-4)
    assert _percentile_from_table(rows, 50) == pytest.approx(b.latency_by_op["read"]["p50"], abs=5e-4)
    assert rows[-1][0] == pytest.approx(h.percentile(100) / 1000, abs=5e-4)
    empty = Histogram().to_hgrm()
    assert "Total count    =            0" in empty


def test_histogram_records_are_lossless_and_checked():
    from kvlab import _native
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.integers(0, 300, 1000), rng.integers(10**6, 10**7, 50)]).astype(np.uint64)
    h = Histogram.from_native(_native.histogram_of(values))
    rec = json.loads(json.dumps(h.to_record()))
    back = Histogram.from_record(rec)
    _same(back, h)
    # runs cover every non-empty bucket; a short gap is spanned by zeros, a long one starts a new run
    assert all(run[1] > 0 and run[-1] > 0 for run in rec["counts"])
    assert len(rec["counts"]) > 1
    with pytest.raises(errors.ResultsError, match="add up to"):
        Histogram.from_record({**rec, "count": rec["count"] + 1})
    with pytest.raises(errors.ResultsError, match="past its"):
        Histogram.from_record({**rec, "counts": [[len(h.counts), 1]], "count": 1})
    with pytest.raises(errors.ResultsError, match="kvlab-log-v1"):
        Histogram.from_record({**rec, "bounds": {"scheme": "hdr", "sub_bits": 11, "buckets": 10}})


def test_a_version_5_record_upgrades(captured):
    d = next(b for b, _ in captured if b.workload == "readrandom").to_dict()
    assert d["schema"] == result_mod.SCHEMA == "kvlab.result/7"
    old = {k: v for k, v in d.items() if k != "histograms"}
    old["schema"] = "kvlab.result/5"
    b = BenchmarkResult.from_dict(json.loads(json.dumps(old)))
    assert b.histograms is None and b.to_dict()["schema"] == "kvlab.result/7"
    assert b.latency_us == d["latency_us"]           # its saved percentiles still read
    with pytest.raises(errors.ResultsError, match="keeps no histograms.*older than kvlab.result/6"):
        b.histogram()
    run = RunResult([b])
    assert run.to_frame("histogram").empty
    assert not run.to_frame("latency").empty
    # from the first schema on, one step at a time
    assert result_mod.upgrade({"schema": "kvlab.result/1", "engine": "lmdb"})["histograms"] is None


def test_latency_spectrum_figure(captured, tmp_path):
    pytest.importorskip("matplotlib")
    from kvlab.lab import plots
    rr = next(b for b, _ in captured if b.workload == "readrandom")
    closed, paced = [b for b, _ in captured if b.workload == "ycsb-a"]
    fig = plots.latency_spectrum([rr])
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]
    assert ax.get_xlim() == (1, 1e5)
    (line,) = ax.get_lines()
    assert line.get_color() == plots.engine_palette(["lmdb"])["lmdb"]   # the one palette
    x, y = line.get_data()
    n = rr.latency_us["count"]
    assert x[0] == 1 and x[-1] == pytest.approx(n) and y[-1] * 1000 == pytest.approx(rr.histogram().percentile(100), rel=1e-12)
    # the line passes through the stored percentiles
    for key, q in (("p50", 50), ("p99", 99), ("p999", 99.9)):
        # (at a step's edge nearest-rank's own rounding may pick either side of it)
        x_q = 1 / (1 - q / 100)
        lo, hi = (y[np.searchsorted(x, x_q * f, side="left")] for f in (1 - 1e-9, 1 + 1e-9))
        assert lo <= rr.latency_us[key] <= hi, key
    # open loop: response solid, service dashed, one colour
    ax = plots.latency_spectrum([paced]).axes[0]
    styles = {line.get_label(): line.get_linestyle() for line in ax.get_lines()}
    assert styles == {"lmdb (service)": "--", "lmdb (response)": "-"}
    assert "response solid, service dashed" in ax.get_title()
    # several op types of one engine: markers tell them apart
    ax = plots.latency_spectrum([closed], op=["read", "write"]).axes[0]
    assert {line.get_label(): line.get_marker() for line in ax.get_lines()} == {"lmdb read": "o", "lmdb write": "s"}
    # a record from before kvlab.result/6: its saved percentiles, as points
    old = BenchmarkResult.from_dict({**{k: v for k, v in rr.to_dict().items() if k != "histograms"},
                                     "schema": "kvlab.result/5"})
    (pts,) = plots.latency_spectrum([old]).axes[0].get_lines()
    assert pts.get_linestyle() == "None" and len(pts.get_xdata()) == 6
    with pytest.raises(errors.SpecError, match="no result has a latency histogram for op 'scan'"):
        plots.latency_spectrum([rr], op="scan")
    paths = plots.save(plots.latency_spectrum([rr, closed]), tmp_path, "spectrum", "caption")
    assert all(p.stat().st_size > 0 for p in paths)
