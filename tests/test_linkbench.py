"""LinkBench on the embedded engines, real files, real threads (kv_graph.h's encoding):

- after a load, and again after a request phase of concurrent writers, every link count equals the
  number of visible links of its (id1, type) and every visible link has exactly one list entry;
- get_links_list reads newest first and returns at most range_limit links;
- the request mix matches its weights; out-degrees at load follow their power law;
- a memory-bounded run stays under its cgroup's limit and reads from disk where a cached one does not;
- bad settings get clear errors; the CLI runs load, request and run.
"""
import json
import math
import struct
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from kvlab import _native, engines, errors
from kvlab.execution import native
from kvlab.execution.host import cgroup
from kvlab.execution.orchestration.linkbench import run_linkbench
from kvlab.model.workloads.linkbench import DEFAULT_MIX, MIX_PROPERTIES, LinkBench, from_properties

from .conftest import CONFORMANCE, require

SMALL = LinkBench(maxid1=3001, loaders=2, requesters=4, intervals=2, interval_seconds=0.5)


def _scan_prefix(eng, prefix: bytes):
    out, start = [], prefix
    while True:
        rows = eng.scan(start, 1000)
        rows = [(k, v) for k, v in rows if k.startswith(prefix)]
        out.extend(r for r in rows if r[0] != start or not out or out[-1][0] != start)
        if len(rows) < 1000:
            return out
        start = rows[-1][0]


def _check_graph(engine, path):
    """Counts equal visible links per (id1, type); list entries are exactly the visible links."""
    cfg = engines.get(engine)
    with _native.Engine(native.adapter_name(cfg), str(path), cfg.config({}, max_threads=2)) as eng:
        visible, listed, counts = {}, {}, {}
        for k, v in _scan_prefix(eng, b"L"):
            id1, typ, id2 = struct.unpack(">QQQ", k[1:25])
            if v[0] == 1:
                visible.setdefault((id1, typ), set()).add(id2)
        for k, v in _scan_prefix(eng, b"I"):
            id1, typ, inv_time, id2 = struct.unpack(">QQQQ", k[1:33])
            listed.setdefault((id1, typ), []).append((~inv_time & (2 ** 64 - 1), id2))
        for k, v in _scan_prefix(eng, b"C"):
            id1, typ = struct.unpack(">QQ", k[1:17])
            counts[(id1, typ)] = struct.unpack(">Q", v[:8])[0]
    assert visible, "the load wrote no links"
    for key, ids in visible.items():
        assert counts.get(key) == len(ids), f"{engine}: count of {key} is {counts.get(key)}, {len(ids)} visible links"
        assert sorted(i for _, i in listed.get(key, [])) == sorted(ids), f"{engine}: list entries of {key}"
    for key, n in counts.items():
        assert n == len(visible.get(key, ())), f"{engine}: count {n} for {key} without as many visible links"
    for key, entries in listed.items():   # the index order is newest first
        times = [t for t, _ in entries]
        assert times == sorted(times, reverse=True)
    return visible


@pytest.mark.parametrize("engine", CONFORMANCE)
def test_counts_equal_visible_links_after_load_and_requests(engine, tmp_path):
    require(engine)
    db = tmp_path / "db"
    load = run_linkbench(engine, SMALL, "load", db=str(db))[0]
    assert load.graph["nodes_loaded"] == SMALL.nodes
    visible = _check_graph(engine, db)
    assert sum(len(v) for v in visible.values()) == load.graph["links_loaded"]
    # the loaded out-degrees are the generator's (split over the link types)
    degrees = _native.graph_degrees(SMALL.graph_plan(), 0, SMALL.nodes)
    for (id1, _typ) in list(visible)[:200]:
        total = sum(len(visible.get((id1, t), ())) for t in (123456789, 123456790))
        assert total == degrees[id1 - SMALL.startid1]
    # concurrent requesters, each link write one transaction: the invariants still hold where the engine
    # detects conflicts; LevelDB, Pebble and bdb-notxn declare none (two add_links may both count a link), so one
    # requester there
    no_conflicts = engine in ("leveldb", "bdb-notxn", "pebble")
    req = run_linkbench(engine, replace(SMALL, requesters=1 if no_conflicts else 4), "request", db=str(db))[-1]
    assert req.mix["templates"]["add_link"]["count"] > 0 and req.mix["templates"]["delete_link"]["count"] > 0
    _check_graph(engine, db)


def test_get_links_list_returns_at_most_range_limit(tmp_path):
    require("lmdb")
    lb = LinkBench(maxid1=2001, requesters=2, intervals=1, interval_seconds=0.5, range_limit=3,
                   mix={k: (100.0 if k == "getlinklist" else 0.0) for k in MIX_PROPERTIES})
    r = run_linkbench("lmdb", lb, "run")[-1]
    lists = r.mix["templates"]["get_links_list"]["count"]
    assert lists > 1000
    assert 0 < r.graph["links_listed"] <= 3 * lists


def test_mix_matches_its_weights(tmp_path):
    require("lmdb")
    r = run_linkbench("lmdb", LinkBench(maxid1=5001, requesters=2, intervals=2, interval_seconds=1.0), "run")[-1]
    total = sum(t["count"] for t in r.mix["templates"].values())
    weights = {MIX_PROPERTIES[k]: v for k, v in DEFAULT_MIX.items() if v > 0}
    wsum = sum(weights.values())
    assert total > 20_000
    for op, w in weights.items():
        p = w / wsum
        got = r.mix["templates"][op]["count"] / total
        assert abs(got - p) < 5 * math.sqrt(p * (1 - p) / total) + 1e-4, f"{op}: {got:.4f} vs {p:.4f}"


def test_out_degrees_follow_their_power_law():
    lb = LinkBench(maxid1=400_001, nlinks_shape=2.0, nlinks_max=10_000)
    d = _native.graph_degrees(lb.graph_plan(), 0, lb.nodes)
    support = np.arange(lb.nlinks_max + 1)
    pmf = (support + 1.0) ** -lb.nlinks_shape
    pmf /= pmf.sum()
    # chi-square over degrees 0..19 and the tail, at significance 0.001 (df 20: critical 45.3)
    bins = 20
    observed = np.append(np.bincount(np.minimum(d, bins), minlength=bins + 1)[:bins], (d >= bins).sum())
    expected = np.append(pmf[:bins], pmf[bins:].sum()) * len(d)
    chi2 = float(((observed - expected) ** 2 / expected).sum())
    assert chi2 < 45.3, chi2
    mean = (support * pmf).sum()
    sd = math.sqrt(((support - mean) ** 2 * pmf).sum() / len(d))   # a heavy tail: the mean moves
    assert abs(d.mean() - mean) < 5 * sd
    # deterministic: the same seed gives the same graph
    assert np.array_equal(d[:1000], _native.graph_degrees(lb.graph_plan(), 0, 1000))


def test_memory_bounded_run_is_bounded_and_reads_from_disk(tmp_path):
    require("lmdb")
    why = cgroup.unavailable(128 << 20)
    if why:
        pytest.skip(why)
    db = tmp_path / "db"
    lb = LinkBench(maxid1=250_001, loaders=2, requesters=4, intervals=2, interval_seconds=1.0)
    load = run_linkbench("lmdb", lb, "load", db=str(db))[0]
    limit = 128 << 20
    assert load.accounting["db_size_bytes"] > 2 * limit
    cached = run_linkbench("lmdb", lb, "request", db=str(db))[-1]
    bounded = run_linkbench("lmdb", lb, "request", db=str(db), memory_limit="128M")[-1]
    a = bounded.accounting
    assert a["memory_limit_bytes"] == limit
    assert 0 < a["cgroup_peak_bytes"] <= limit
    if cached.accounting.get("disk_reads_per_op") is None:
        pytest.skip(f"no disk counters here: {cached.accounting.get('disk_note')}")
    assert a["disk_reads_per_op"] > 0.1
    assert cached.accounting["disk_reads_per_op"] < a["disk_reads_per_op"] / 10


@pytest.mark.parametrize("kw, words", [
    ({"maxid1": 1}, "maxid1"),
    ({"requesters": 0}, "requesters"),
    ({"mix": {"addlinks": 5}}, "not an operation"),
    ({"mix": {k: 0.0 for k in MIX_PROPERTIES}}, "weight 0"),
    ({"read_shape": -1}, "read_shape"),
    ({"link_datasize_max": 1000}, "link_datasize_max"),
])
def test_bad_settings_are_refused_clearly(kw, words):
    with pytest.raises(errors.SpecError, match=words):
        LinkBench(**kw)


def test_properties_parse_and_errors(tmp_path):
    lb = from_properties({"maxid1": "5001", "addlink": "20", "read_shape": "0.7", "displayfreq": "1800"})
    assert lb.maxid1 == 5001 and lb.mix["addlink"] == 20.0 and lb.read_shape == 0.7
    assert any("displayfreq" in n for n in lb.notes)
    with pytest.raises(errors.SpecError, match="unknown; allowed"):
        from_properties({"maxidl": "5"})
    with pytest.raises(errors.SpecError, match="not an integer"):
        from_properties({"maxid1": "lots"})
    for bad in ("12", "lots", "-1G", True):
        with pytest.raises(errors.SpecError):
            cgroup.parse_size(bad)
    assert cgroup.parse_size("512M") == 512 << 20
    with pytest.raises(errors.SpecError, match="request runs on a loaded database"):
        run_linkbench("lmdb", SMALL, "request")
    with pytest.raises(errors.NoDatabase):
        run_linkbench("lmdb", SMALL, "request", db=str(tmp_path / "nothing"))
    with pytest.raises(errors.SpecError, match="LinkBench operations"):
        from kvlab.model.workloads.mix import Mix, Op, Template
        Mix("x", (Template("t", (Op("add_link"),)),))


def test_cli_load_then_request(tmp_path):
    require("lmdb")
    kvlab = [sys.executable, "-m", "kvlab.cli"]
    db = tmp_path / "db"
    common = ["--engine", "lmdb", "--db", str(db), "--no-store", "--maxid1", "2001", "--requesters", "2"]
    out = subprocess.run(kvlab + ["linkbench", "load", *common], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "load: 2,000 nodes" in out.stdout
    out = subprocess.run(kvlab + ["linkbench", "request", *common, "--intervals", "2", "--interval-seconds", "0.5",
                                  "-D", "addlink=20", "--json", str(tmp_path / "r.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "get_links_list" in out.stdout and "I/O per query" in out.stdout
    rec = json.loads((tmp_path / "r.json").read_text())
    assert rec[-1]["schema"] == "kvlab.result/7" and rec[-1]["mix"]["templates"]["add_link"]["count"] > 0
    out = subprocess.run(kvlab + ["linkbench", "request", "--engine", "lmdb", "--no-store", "-D", "maxidd=3",
                                  "--db", str(db)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "maxidd" in out.stderr
    # engine settings; the header names the graph the database holds, not the default maxid1
    out = subprocess.run(kvlab + ["linkbench", "request", "--engine", "lmdb", "--no-store", "--db", str(db),
                                  "--requests", "50", "--set", "map_size=1073741824"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "maxid1=2,001 (2,000 nodes)" in out.stdout
    out = subprocess.run(kvlab + ["linkbench", "request", "--engine", "lmdb", "--no-store", "--db", str(db),
                                  "--set", "mapsize=1"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "allowed keys" in out.stderr and "Traceback" not in out.stderr


def test_load_writes_every_node_whatever_the_request_phase_time(tmp_path):
    """The request phase's intervals x interval_seconds bound the requests, never the load (a load of a large
    graph was cut off at 60 s and the partial graph recorded as loaded)."""
    require("lmdb")
    lb = LinkBench(maxid1=200_001, loaders=1, requesters=2, intervals=1, interval_seconds=0.05)
    load = run_linkbench("lmdb", lb, "load", db=tmp_path / "db")[0]
    assert not load.partial
    assert load.graph["nodes_loaded"] == 200_000   # ~1 s of LMDB load against a 0.05 s request phase
    req = run_linkbench("lmdb", lb, "request", db=tmp_path / "db")[-1]
    assert req.mix["transactions"] > 0
