"""--profile and `kvlab results why` (issue 47): perf samples the trial's worker over each measured phase, the
record keeps the folded stacks, the CPU per op is split by component, a flame graph is one self-contained SVG, and
two runs' profiles explain their gap per operation."""
import json
import xml.etree.ElementTree as ET

import pytest

import kvlab
from kvlab import cli, errors
from kvlab.execution.run import profiler
from kvlab.lab.plots import flame, flame_diff, flame_of
from kvlab.results import profile as prof

from .conftest import require

SCRIPT = """\
worker 101 100.500000:
\t    7f01 mdb_cursor_get+0x10 (/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0)
\t    7f02 mdb_get+0x20 (/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0)
\t    7f03 loop_read_on (/x/kvlab/_native.cpython-311-x86_64-linux-gnu.so)
\t    7f04 clone3 (/usr/lib/x86_64-linux-gnu/libc.so.6)

worker 101 100.600000:
\t    ffff1 copy_page+0x5 ([kernel.kallsyms])
\t    7f05 __memcmp_evex (inlined)
\t    7f05 mdb_page_search (/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0)
\t    7f03 loop_read_on (/x/kvlab/_native.cpython-311-x86_64-linux-gnu.so)

worker 101 99.000000:
\t    7f01 mdb_cursor_get+0x10 (/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0)
"""


def test_fold_keeps_the_window_and_names_an_inlined_frame_by_its_library():
    got = prof.fold(SCRIPT, {"p0": (100.0, 101.0)})["p0"]
    assert sum(got.values()) == 2   # the sample at 99.0 s is before the window (the warm-up)
    assert ("clone3 (libc.so.6);loop_read_on (_native.cpython-311-x86_64-linux-gnu.so);mdb_get (liblmdb.so.0.0.0);"
            "mdb_cursor_get (liblmdb.so.0.0.0)") in got
    second = next(s for s in got if "copy_page" in s)
    assert second.endswith("mdb_page_search (liblmdb.so.0.0.0);__memcmp_evex (liblmdb.so.0.0.0);copy_page ([kernel])")


def _profile(folded, ops=1000, rate=100):
    return prof.record_profile(folded, rate, ops, 1.0, ["liblmdb"], event="cpu-clock", unwind="dwarf")


def test_per_op_splits_the_cpu_by_the_leaf_s_component():
    p = _profile({"a (_native.so);b (liblmdb.so.0);c (libc.so.6)": 30, "a (_native.so);b (liblmdb.so.0)": 60,
                  "a (_native.so);k ([kernel])": 10})
    o = prof.per_op(p)
    us = 1e6 / 100 / 1000   # one sample at 100 Hz over 1,000 ops
    assert o["total_us"] == pytest.approx(100 * us)
    assert o["components"]["engine"] == pytest.approx(60 * us)
    assert o["components"]["libc+alloc"] == pytest.approx(30 * us)
    assert o["components"]["kernel"] == pytest.approx(10 * us)
    top = o["functions"][0]
    assert top["function"] == "b (liblmdb.so.0)" and top["total_us"] == pytest.approx(90 * us)


def test_why_normalises_per_op_and_ranks_the_changes():
    a = _profile({"x (_native.so);f (liblmdb.so.0)": 50}, ops=1000)
    b = _profile({"x (_native.so);f (liblmdb.so.0)": 50, "x (_native.so);g (liblmdb.so.0)": 50}, ops=500)
    w = prof.why(a, b)
    # 50 samples at 100 Hz: 0.5 s of CPU, over 1,000 ops 500 us/op; B's 100 over 500 ops: 2,000 us/op
    assert w["a_total_us"] == pytest.approx(500) and w["b_total_us"] == pytest.approx(2000)
    assert w["functions"][0]["function"] == "g (liblmdb.so.0)" and w["functions"][0]["change_us"] == pytest.approx(1000)
    assert w["functions"][1]["change_us"] == pytest.approx(500)   # f: 500 -> 1,000 us/op


def test_a_flame_graph_is_one_svg_with_its_legend():
    p = _profile({"a (_native.so);b (liblmdb.so.0)": 60, "a (_native.so);k ([kernel])": 10})
    root = ET.fromstring(flame(p, "t"))
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "engine: the engine's library" in texts and any(t and t.startswith("b (liblmdb") for t in texts)
    diff = ET.fromstring(flame_diff(p, _profile({"a (_native.so);b (liblmdb.so.0)": 30}), "d"))
    assert any(t.text == "more CPU per op in B" for t in diff.iter("{http://www.w3.org/2000/svg}text"))


def test_profile_needs_perf(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(errors.SpecError, match="needs perf"):
        profiler.check()


@pytest.fixture(scope="module")
def profiled_lmdb(tmp_path_factory):
    require("lmdb")
    profiler.check()
    return kvlab.run("lmdb", "fillseq,readrandom", num=50_000, duration=1.5, warmup=0.3, profile=True)


def test_a_profiled_run_keeps_its_stacks(profiled_lmdb):
    b = profiled_lmdb[-1]
    p = b.params["profile"]
    assert p["samples"] > 20 and p["rate_hz"] == profiler.RATE_HZ and p["event"] == "cpu-clock"
    assert any("liblmdb" in s and "loop_read" in s for s in p["folded"])
    o = prof.per_op(p)
    assert o["components"]["engine"] > o["components"]["kvlab"]   # an LMDB get is the engine's work
    ET.fromstring(flame_of(b))


def test_a_profile_is_stored_and_why_explains_two_runs(profiled_lmdb, tmp_path, capsys):
    require("rocksdb")
    from kvlab.results.store import Store
    store = Store(tmp_path / "s.duckdb")
    store.append(profiled_lmdb)
    store.append(kvlab.run("rocksdb", "fillseq,readrandom", num=50_000, duration=1.5, warmup=0.3, profile=True))
    assert cli.main(["results", "why", "engine=lmdb", "engine=rocksdb", "--store", str(store.path),
                     "--svg", str(tmp_path / "svg")]) == 0
    out = capsys.readouterr().out
    assert "readrandom 1 thr: A lmdb" in out and "B rocksdb" in out and "component" in out
    assert "rocksdb::" in out   # a RocksDB function among those that changed
    svgs = list((tmp_path / "svg").glob("why-*.svg"))
    assert len(svgs) == 2
    ET.fromstring(svgs[0].read_text())
    got = kvlab.why("engine=lmdb", "engine=rocksdb", store=store)
    assert {e["benchmark"] for e in got} == {"fillseq 1 thr", "readrandom 1 thr"}
    assert json.dumps(got[0]["why"]["components"])


def test_why_says_when_a_side_has_no_profile(tmp_path, capsys):
    require("lmdb")
    from kvlab.results.store import Store
    store = Store(tmp_path / "s.duckdb")
    store.append(kvlab.run("lmdb", "fillseq", num=1000))
    assert cli.main(["results", "why", "engine=lmdb", "engine=lmdb", "--store", str(store.path)]) == 2
    assert "holds no profiled benchmark: run it with --profile" in capsys.readouterr().err


def test_a_glibc_function_perf_calls_inlined_at_its_own_address_is_libc_s():
    """perf marks glibc's memcpy variants '(inlined)' at an address of their own: no inlining into the caller, so
    not the caller's library (an LMDB put's memcpy is libc's, not liblmdb's)."""
    script = ("worker 101 100.5:\n"
              "\t    16db75 __memcpy_avx512_unaligned_erms (inlined)\n"
              "\t    7f02 mdb_put+0x20 (/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0)\n\n"
              "worker 101 100.6:\n"
              "\t    7f05 mdb_cmp_memn (inlined)\n"
              "\t    7f05 mdb_page_search (/usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0)\n")
    got = prof.fold(script, {"p": (100.0, 101.0)})["p"]
    assert "mdb_put (liblmdb.so.0.0.0);__memcpy_avx512_unaligned_erms (libc.so.6)" in got
    assert "mdb_page_search (liblmdb.so.0.0.0);mdb_cmp_memn (liblmdb.so.0.0.0)" in got   # the same ip: inlined
