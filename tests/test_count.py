"""--count instructions (issue 47): the trial's worker runs under callgrind, each phase's instructions per op are
counted per thread kind and component, and two identical trials agree."""
import json
import shutil

import pytest

import kvlab
from kvlab import cli, errors
from kvlab.results import instructions as ins
from kvlab.services import maincompare

from .conftest import require

# a callgrind dump as valgrind 3.19 writes one with names uncompressed, and the same names compressed
DUMP = """\
# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
thread: 3
part: 1
desc: Trigger: dump kvlab-phase-0
positions: line
events: Ir
summary: 1200
ob=(1) /usr/lib/x86_64-linux-gnu/liblmdb.so.0.0.0
fl=(1) ???
fn=(1) mdb_get
0 500
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfi=(2) ???
cfn=(2) __memcmp_avx2_movbe
calls=10 0
0 300
ob=(2)
fl=(2)
fn=(2)
0 300
ob=(3) /x/kvlab/_native.cpython-311-x86_64-linux-gnu.so
fl=(3) ???
fn=(3) worker
0 400
totals: 1200
"""


def test_a_dump_s_self_costs_by_function_and_object():
    got = ins.parse(DUMP)
    assert got["events"] == ["Ir"] and got["trigger"].endswith("kvlab-phase-0")
    assert got["totals"] == {"Ir": 1200}
    # the line after calls= is the call's inclusive cost, not mdb_get's own
    assert got["functions"]["mdb_get (liblmdb.so.0.0.0)"] == {"Ir": 500}
    assert got["functions"]["__memcmp_avx2_movbe (libc.so.6)"] == {"Ir": 300}
    assert ins.thread_kind(got, main=False) == "benchmark"


def test_threads_are_told_apart_and_counted_per_op():
    loop = ins.parse(DUMP)
    engine_thread = ins.parse(DUMP.replace("fn=(3) worker", "fn=(3) rocksdb::ThreadPoolImpl::BGThread")
                              .replace("/x/kvlab/_native.cpython-311-x86_64-linux-gnu.so", "/usr/lib/librocksdb.so"))
    python = ins.parse(DUMP.replace("fn=(3) worker", "fn=(3) _PyEval_EvalFrameDefault")
                       .replace("/x/kvlab/_native.cpython-311-x86_64-linux-gnu.so", "/usr/bin/python3.11"))
    assert ins.thread_kind(engine_thread, main=False) == "background"
    assert ins.thread_kind(python, main=False) == "caller"
    rec = ins.phase_record([(1, python), (2, loop), (3, engine_thread)], 100, ["liblmdb"], tool="callgrind",
                           version="valgrind-3.19.0", cache=False)
    assert ins.per_op(rec) == pytest.approx(12.0)             # the loop thread's 1,200 over 100 ops
    assert ins.per_op(rec, "background") == pytest.approx(12.0)
    assert ins.per_op(rec, "all") == pytest.approx(24.0)      # never the caller's
    comps = ins.components_per_op(rec)
    assert comps["engine"] == pytest.approx(5.0) and comps["libc+alloc"] == pytest.approx(3.0)
    assert comps["kvlab"] == pytest.approx(4.0)
    assert "user space only" in ins.summary_line(rec)


def test_count_is_refused_with_profile_and_named_when_unknown():
    with pytest.raises(errors.SpecError, match="count and profile cannot go together"):
        kvlab.run("null", "readrandom", num=10, count="instructions", profile=True)
    with pytest.raises(errors.SpecError, match="allowed: instructions, cache"):
        kvlab.run("null", "readrandom", num=10, count="cycles")


def test_a_counted_round_is_planned_after_the_timed_one_and_estimated():
    plan = maincompare.Plan(engines=("lmdb",), count="instructions")
    spec = plan.count_spec("lmdb", plan.points[0], "/nonexistent")
    assert spec.count == "instructions" and spec.reads == plan.count_reads and spec.use_existing_db
    assert maincompare.estimate_seconds(plan) > maincompare.estimate_seconds(maincompare.Plan(engines=("lmdb",)))


needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None or shutil.which("vgdb") is None,
                                    reason="needs valgrind (scripts/setup.sh installs it)")


def _per_op(result, workload):
    b = next(b for b in result if b.workload == workload and b.params.get("instructions"))
    return ins.per_op(b.params["instructions"]), b.params["instructions"]


@needs_valgrind
def test_two_identical_lmdb_trials_agree_and_the_value_size_shows(tmp_path, capsys):
    require("lmdb")
    small = kvlab.run("lmdb", "fillseq,readrandom", num=5000, reads=5000, value_size=100, seed=7, repeat=2,
                      interval=0, count="instructions")
    trials = [b for b in small if b.params.get("instructions")]
    puts = [ins.per_op(b.params["instructions"]) for b in trials if b.workload == "fillseq"]
    gets = [ins.per_op(b.params["instructions"]) for b in trials if b.workload == "readrandom"]
    assert len(puts) == 2 and len(gets) == 2
    for a, b in (puts, gets):
        assert abs(a / b - 1) < 0.005, (puts, gets)   # two identical trials within 0.5%
    _, rec = _per_op(small, "readrandom")
    assert rec["tool"] == "callgrind" and rec["ops"] == 5000
    top = [f for f, _ in ins.top_functions(rec, most=15)]
    assert any("liblmdb" in f for f in top), top            # LMDB's own code, counted in the loop's thread
    assert ins.components_per_op(rec)["engine"] > ins.components_per_op(rec)["kvlab"]
    # the same load with values ten times larger, through the command line: copying them shows per put
    out = tmp_path / "big.json"
    code = cli.main(["run", "--engine", "lmdb", "--workload", "fillseq", "--num", "5000", "--value-size", "1000",
                     "--seed", "7", "--interval", "0", "--count", "instructions", "--no-store", "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "instr/op" in printed and "top functions by self instructions/op" in printed
    big = json.loads(out.read_text())
    rec_big = next(b["params"]["instructions"] for b in big if b["workload"] == "fillseq")
    assert ins.per_op(rec_big) > puts[0] * 1.05, (ins.per_op(rec_big), puts)
