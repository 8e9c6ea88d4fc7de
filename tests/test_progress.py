"""Live progress, stopping, background runs and the run builder, on real engines.

Stop times are checked against the issue's one-second bound with margin for this
2-core machine; they are not performance claims (those live in benchmarks/)."""
import json
import signal
import subprocess
import sys
import time

import pytest

import kvlab
from kvlab.cli import build_parser, spec_from_args
from kvlab.execution.progress import Progress, RunControl, expected_ops
from kvlab.services.progress import TextBar

from .conftest import CONFORMANCE, require

STOP_BOUND_S = 1.0


def test_progress_advances_and_ends_at_the_total():
    seen = []
    control = RunControl([seen.append], every=0.05)
    result = kvlab.run("lmdb", "fillseq,readrandom", num=300_000, threads=2, seed=3, control=control)
    reads = [p for p in seen if p.workload == "readrandom"]
    assert len(reads) >= 2
    done = [p.done_ops for p in reads]
    assert done == sorted(done), "progress never goes backwards"
    assert reads[-1].finished and reads[-1].done_ops == 600_000 == reads[-1].total_ops
    assert reads[-1].fraction == 1.0 and not result.by_workload("readrandom").partial
    assert any(p.ops_per_sec.get("read", 0) > 0 for p in reads[:-1])


def test_time_bounded_progress_reports_time_left():
    seen = []
    kvlab.run("lmdb", "readrandom", num=10_000, duration=1.0, control=RunControl([seen.append], every=0.1))
    mid = [p for p in seen if p.workload == "readrandom" and not p.finished]
    assert mid and all(p.duration_s == 1.0 and p.remaining_s is not None for p in mid)
    assert mid[-1].remaining_s < mid[0].remaining_s


@pytest.mark.parametrize("name", CONFORMANCE)
def test_stop_within_a_second_partial_and_the_db_reopens(tmp_path, name):
    require(name)
    db = tmp_path / "db"
    handle = kvlab.start(name, "fillrandom", num=50_000, threads=2, duration=60, db=str(db), keep_db=True)
    deadline = time.monotonic() + 20
    while (handle.progress is None or handle.progress.done_ops == 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert handle.progress and handle.progress.done_ops > 0, "the run never reported progress"
    t0 = time.monotonic()
    result = handle.stop(timeout=10)
    took = time.monotonic() - t0
    assert took < STOP_BOUND_S, f"{name} took {took:.2f} s to stop"
    b = result.by_workload("fillrandom")
    assert b.partial and b.ops > 0 and b.seconds < 30
    # consistent: the same directory reopens and every key it reads is a whole value
    again = kvlab.run(name, "readrandom", num=50_000, reads=2_000, db=str(db), use_existing_db=True,
                      keep_db=True, value_size=100)
    r = again.by_workload("readrandom")
    assert r.found > 0 and not r.partial and r.bytes == r.found * (16 + 100)


def test_stop_a_rate_limited_writer_and_readers():
    handle = kvlab.start("lmdb", "readwhilewriting", num=20_000, threads=2, duration=60, writes_per_second=50)
    time.sleep(1.0)
    t0 = time.monotonic()
    result = handle.stop()
    assert time.monotonic() - t0 < STOP_BOUND_S
    b = result.by_workload("readwhilewriting")
    assert b.partial and b.writer is not None and b.writer["ops"] > 0


def test_background_run_is_awaitable_and_pollable():
    import asyncio
    handle = kvlab.start("lmdb", "fillseq", num=100_000)
    assert isinstance(handle, kvlab.RunHandle)
    result = asyncio.run(_await(handle))
    assert handle.done() and result.by_workload("fillseq").ops == 100_000
    assert handle.result() is result


async def _await(handle):
    return await handle


def test_background_errors_arrive_on_the_handle(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("not kvlab's")
    handle = kvlab.start("lmdb", "fillseq", num=1000, db=str(foreign))
    with pytest.raises(kvlab.UnsafeDirectory):
        handle.result(timeout=10)
    assert (foreign / "precious.txt").read_text() == "not kvlab's"


def test_expected_totals_follow_db_bench_meanings():
    assert expected_ops("fillrandom", {"num": 1000, "reads": 5, "threads": 4}) == 1000
    assert expected_ops("readrandom", {"num": 1000, "reads": 5, "threads": 4}) == 20
    assert expected_ops("readrandom", {"num": 1000, "reads": 5, "threads": 4, "duration": 2.0}) is None
    assert expected_ops("compact", {"num": 1000, "reads": 5, "threads": 4}) is None


def test_text_bar_on_a_log_writes_one_line_per_workload(capsys):
    import io
    out = io.StringIO()
    bar = TextBar(out)
    p = Progress("lmdb", "fillseq", "run", 1.0, {"write": 10}, {"write": 10.0}, total_ops=20)
    bar(p)
    assert out.getvalue() == ""
    bar(Progress("lmdb", "fillseq", "run", 2.0, {"write": 20}, {"write": 10.0}, total_ops=20, finished=True))
    assert out.getvalue().count("\n") == 1 and "100%" in out.getvalue()


def test_a_failing_observer_does_not_end_the_run(capsys):
    def broken(_p):
        raise RuntimeError("display gone")
    result = kvlab.run("lmdb", "fillseq", num=20_000, control=RunControl([broken], every=0.05))
    assert result.by_workload("fillseq").ops == 20_000
    assert "display gone" in capsys.readouterr().err


def test_progress_interval_is_validated():
    with pytest.raises(ValueError, match="must be > 0"):
        RunControl(every=0)


def test_cli_ctrl_c_stops_within_a_second_with_a_partial_result(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "kvlab.cli", "run", "--engine", "lmdb", "--workload",
                             "fillrandom", "--num", "100000", "--duration", "60", "--json", str(out),
                             "--no-store", "--progress", "on"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # Ctrl-C as at a terminal: a suite started in the background by a shell without job
                            # control inherits SIGINT ignored, and a Python started that way keeps ignoring it
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # wait for kvlab's header line (imports done, the run about to start), then let it run a while
    header = proc.stdout.readline()
    assert header.startswith("kvlab run:"), header
    time.sleep(1.5)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    took = time.monotonic() - t0
    assert proc.returncode == 130, stderr
    assert took < STOP_BOUND_S + 1.5, f"stop and write-out took {took:.2f} s"  # includes writing the JSON
    assert "PARTIAL" in stdout and "fillrandom" in stderr  # the bar was drawn
    data = json.loads(out.read_text())
    assert data[0]["partial"] is True and data[0]["ops"] > 0


def _wait_for(fn, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn() is not None:
            return
        time.sleep(0.05)


def test_python_call_and_command_line_describe_the_same_spec():
    spec = kvlab.make_spec("rocksdb", "fillseq,readrandom", num=5000, threads=2, value_size=400, seed=9,
                           compression="snappy", write_buffer_size=1 << 20, duration=2.5)
    py = spec.python_call()
    assert eval(py.replace("kvlab.run(", "kvlab.make_spec("), {"kvlab": kvlab}) == spec
    argv = spec.cli_command().split()[1:]
    args = build_parser().parse_args(argv)
    assert spec_from_args(args) == spec


def test_cli_set_rejects_unknown_settings(capsys):
    from kvlab.cli import main
    assert main(["run", "--set", "colour=blue", "--num", "10", "--no-store"]) == 2
    assert "colour=blue" in capsys.readouterr().err


def test_run_builder_builds_specs_runs_and_stops():
    pytest.importorskip("ipywidgets")
    from kvlab.widgets import RunBuilder
    b = RunBuilder(engine_names=("lmdb",), num=10_000, threads=1, repeat=1)
    import html
    code = html.unescape(b.code.value)
    assert "kvlab.run(engine='lmdb'" in code and "kvlab run --engine lmdb" in code
    b.options.value = "colour=blue"
    assert "colour" in b.code.value and "allowed" in b.code.value and b.run_button.disabled
    b.options.value = "map_size=1073741824"
    assert not b.run_button.disabled and "map_size=1073741824" in b.code.value
    b.run()
    results = b.wait(timeout=60)
    assert [r.workload for r in results if r.phase == "run"] == ["fillseq", "readrandom"]
    assert "finished" in b.status.value and "ops_per_sec" in b.table.value and len(b.figure.value) > 1000
    b.duration.value = 60.0
    b.run()
    _wait_for(lambda: True if b.progress.updates >= 3 else None, 20)
    b.stop()
    results = b.wait(timeout=10)
    assert any(r.partial for r in results) and "partial" in b.status.value


KERNEL_CODE_START = """
import time, kvlab
handle = kvlab.start("lmdb", "fillrandom", num=100_000, duration=60)
"""


def test_kernel_stays_responsive_and_its_interrupt_stops_a_foreground_run():
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        _execute(kc, KERNEL_CODE_START, 60)
        # other cells run while the background run does
        t0 = time.monotonic()
        reply, out = _execute(kc, "print(sum(range(1000)), handle.done())", 30)
        assert time.monotonic() - t0 < 5 and "499500 False" in out
        _, out = _execute(kc, "r = handle.stop(); print(r.by_workload('fillrandom').partial)", 30)
        assert "True" in out
        # a foreground run, stopped by the kernel's interrupt
        kc.execute("r = kvlab.run('lmdb', 'fillrandom', num=100_000, duration=60)")
        time.sleep(3.0)
        t0 = time.monotonic()
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)
        assert time.monotonic() - t0 < STOP_BOUND_S + 1.0
        assert reply["content"]["status"] == "ok"
        _, out = _execute(kc, "print(r.by_workload('fillrandom').partial, r.by_workload('fillrandom').ops > 0)", 30)
        assert "True True" in out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _execute(kc, code, timeout):
    msg_id = kc.execute(code)
    reply = kc.get_shell_msg(timeout=timeout)
    assert reply["content"]["status"] == "ok", reply["content"]
    out = []
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    return reply, "".join(out)


def test_an_interrupt_outside_the_wait_still_stops_the_run(tmp_path):
    """Ctrl-C can land anywhere in the sampling loop (here: inside an observer); the native
    threads must still stop, and the engine close only after they have."""
    calls = []

    def interrupting(p):
        calls.append(p)
        if len(calls) == 2:
            raise KeyboardInterrupt
    t0 = time.monotonic()
    r = kvlab.run("lmdb", "fillrandom", num=50_000, duration=30, db=str(tmp_path / "db"), keep_db=True,
                  control=RunControl([interrupting], every=0.1))
    assert time.monotonic() - t0 < 10
    assert r.by_workload("fillrandom").partial
    again = kvlab.run("lmdb", "readrandom", num=50_000, reads=1000, db=str(tmp_path / "db"), use_existing_db=True)
    assert again.by_workload("readrandom").found > 0
