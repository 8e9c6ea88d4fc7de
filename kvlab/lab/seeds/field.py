"""Workloads from the field (notebook 09_field): a trace recorded on one engine and replayed on every other,
Meta's mixgraph, a load that varies in time, and the best rate under a latency bound (issue 38; docs/traces.md,
docs/mixes.md's mixgraph and rate schedules, docs/sla.md).

Four experiments, each with its plan (`<experiment>_plan`: the Steps the estimate costs):
- `trace_replay`: YCSB-A recorded on the recorder (LMDB) into a kvlab trace, then replayed at max speed on each
  engine, as recorded (the same threads, each thread's ops in their order): one row per engine and phase;
- `mixgraph_queries`: the `mixgraph` preset (the paper's fitted parameters) per engine, closed loop: queries/s and
  the gets, puts and seeks it made;
- `varying_rate`: one open-loop run whose target follows a rate schedule (`sine:...`): per interval the target
  beside what was done, and the response time's p99 (from each transaction's intended start);
- `sla_searches`: `kvlab sla`'s search (kvlab.services.sla, in this process) per engine at one bound;
  `curves_frame` makes their walks one tidy frame, and `sla_curves(engines, ...)` is the two in one call, to run
  on its own at a bigger scale.
A replay and a search are work, not one kvlab run (the replay's trace is made by the plan's first step; a
search's rates are found as it goes): `Replay` and `SlaSearch` say what the estimate costs for each."""
from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass

from ... import engines as engine_registry
from ... import errors
from ...model import workloads
from ...model.spec import RunSpec, make_spec
from ...services import sla as sla_service
from ..api import replay
from .plan import Step, execute

RECORDED = "ycsb-a"        # what the recorder runs: YCSB-A, half reads, half updates
TRACE_FILE = "field.kvtrace"

REPLAY_COLUMNS = ["engine", "source", "phase", "ops", "ops_per_sec", "p50_us", "p99_us"]
MIXGRAPH_COLUMNS = ["engine", "queries", "queries_per_sec", "gets", "puts", "seeks", "get_pct", "put_pct", "seek_pct",
                    "gets_per_sec", "puts_per_sec", "seeks_per_sec"]
INTERVAL_COLUMNS = ["engine", "interval", "t_start_s", "t_end_s", "target_txn_per_sec", "achieved_txn_per_sec",
                    "transactions", "response_p99_us", "service_p99_us"]
CURVE_COLUMNS = ["engine", "workload", "probe", "target_rate", "achieved_rate", "latency_us", "latency_lo_us",
                 "latency_hi_us", "runs", "verdict", "percentile", "bound_us", "answer", "bracket_lo", "bracket_hi",
                 "capacity"]


# --- 1. a trace recorded on one engine, replayed on every engine -----------------------------------------

@dataclass(frozen=True)
class Replay:
    """A replay of the recorded trace on the threads it recorded (work: its trace is the plan's first step's)."""
    num: int          # keys its load phase writes
    ops: int          # operations of all its phases, the load's included
    threads: int
    memory: str | None
    record_bytes: int
    speed: str = "max"   # back to back, each thread as fast as the engine lets it


def record_bytes(workload: str) -> int:
    """A record of `workload` (a mix) as stored: the key and its largest value."""
    mix = workloads.get(workload).mix
    if mix is None:
        raise errors.SpecError(f"workload {workload!r} is one of db_bench's loops; allowed: a mix (ycsb-a..f, ...)")
    return RunSpec.key_size + (max(mix.value_size) if mix.value_size else RunSpec.value_size)


def _known(engines) -> None:
    """A SpecError naming the engines allowed for a name that is none, before anything runs."""
    for name in engines:
        engine_registry.get(name)


def recorded_ops(num: int, operations: int, clients: int) -> int:
    """The trace's operations: the load's `num` puts and each client's `operations` transactions (one op each)."""
    return num + operations * clients


def trace_replay_plan(engines, num, operations, clients=2, seed=1, memory=None, recorder="lmdb",
                      trace=TRACE_FILE) -> list:
    """YCSB-A on `recorder` (`operations` per client, after a load of `num` keys) recorded into `trace`, then a
    replay of it at max speed on each of `engines`."""
    _known([recorder, *engines])
    record = Step(recorder, f"{RECORDED} recorded", dict(workload=RECORDED, num=num, reads=operations,
                                                         clients=clients, seed=seed, interval=0, memory=memory,
                                                         record_trace=str(trace)))
    work = Replay(num, recorded_ops(num, operations, clients), clients, memory, record_bytes(RECORDED))
    return [record] + [Step(e, "replay at max speed", work=work) for e in engines]


def trace_replay(engines, num, operations, clients=2, seed=1, memory=None, recorder="lmdb"):
    """YCSB-A recorded on `recorder`, replayed at max speed on each engine: (table, results).  The table has the
    recorded run's phases first (source "recorded"), then each replay's (source "replayed"); every replay runs the
    recorded operations, which `same_ops` checks."""
    import pandas as pd
    folder = tempfile.mkdtemp(prefix="kvlab-field-")
    try:
        trace = os.path.join(folder, TRACE_FILE)
        steps = trace_replay_plan(engines, num, operations, clients, seed, memory, recorder, trace)
        rows, results = [], []
        recorded = list(execute(steps[0]))
        results += recorded
        rows += [_phase_row(b, steps[0].engine, "recorded") for b in recorded]
        for step in steps[1:]:
            got = list(replay(trace, engine=step.engine, speed=step.work.speed, interval=0, seed=seed,
                              memory=step.work.memory))
            results += got
            rows += [_phase_row(b, step.engine, "replayed") for b in got]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return pd.DataFrame(rows, columns=REPLAY_COLUMNS), results


def _phase_row(b, engine, source) -> dict:
    return {"engine": engine, "source": source, "phase": b.phase, "ops": b.ops, "ops_per_sec": b.ops_per_sec,
            "p50_us": b.latency_us.get("p50"), "p99_us": b.latency_us.get("p99")}


def same_ops(table) -> str:
    """One line saying that every replay ran the recorded operations, phase by phase; a KvlabError where one
    did not (a replay that ran other counts compares nothing)."""
    recorded = table[table.source == "recorded"].set_index("phase").ops
    for row in table[table.source == "replayed"].itertuples():
        if row.phase not in recorded or row.ops != recorded[row.phase]:
            raise errors.KvlabError(f"{row.engine}'s replay ran {row.ops:,} operations in its {row.phase} phase; "
                                    f"the trace recorded {recorded.get(row.phase, 0):,}")
    engines = list(dict.fromkeys(table[table.source == "replayed"].engine))
    counts = ", ".join(f"{phase} {n:,}" for phase, n in recorded.items())
    return f"the {len(engines)} replay{'s' * (len(engines) != 1)} ran the recorded operations, phase by phase ({counts})"


# --- 2. Meta's mixgraph --------------------------------------------------------------------------------

def mixgraph_queries_plan(engines, num, duration, clients=2, seed=1, memory=None) -> list:
    """The `mixgraph` preset, closed loop, `duration` s after a load of `num` keys, on each engine that can run it:
    its seeks scan in key order, so an engine with no total-order scan (rocksdb-tuned's plain table, prefix-hash
    memtable) is left out, as YCSB-E leaves it out."""
    return [Step(e, "mixgraph", dict(workload="mixgraph", num=num, duration=duration, clients=clients, seed=seed,
                                     interval=0, memory=memory))
            for e in engines if engine_registry.get(e).ordered_scan]


def mixgraph_queries(engines, num, duration, clients=2, seed=1, memory=None):
    """mixgraph per engine: (table, results), a row per engine: queries/s and its gets, puts and seeks."""
    import pandas as pd
    rows, results = [], []
    for step in mixgraph_queries_plan(engines, num, duration, clients, seed, memory):
        b = execute(step)[-1]
        results.append(b)
        by = b.mix["ops_by_type"]
        gets, puts, seeks = by.get("read", 0), by.get("write", 0), by.get("scan", 0)
        queries, seconds = gets + puts + seeks, b.mix["transactions"] / b.mix["txn_per_sec"]
        rows.append({"engine": step.engine, "queries": queries, "queries_per_sec": b.mix["txn_per_sec"],
                     "gets": gets, "puts": puts, "seeks": seeks, "get_pct": 100 * gets / queries,
                     "put_pct": 100 * puts / queries, "seek_pct": 100 * seeks / queries,
                     "gets_per_sec": gets / seconds, "puts_per_sec": puts / seconds,
                     "seeks_per_sec": seeks / seconds})
    return pd.DataFrame(rows, columns=MIXGRAPH_COLUMNS), results


# --- 3. a load that varies in time ----------------------------------------------------------------------

def varying_rate_plan(engine, schedule, num, duration, interval, clients=2, workload="ycsb-c", seed=1,
                      memory=None) -> list:
    """One open-loop run of `workload` whose target follows `schedule` (total over the clients)."""
    return [Step(engine, f"{workload} at {schedule}", dict(workload=workload, num=num, duration=duration,
                                                           interval=interval, clients=clients, rate_schedule=schedule,
                                                           seed=seed, memory=memory))]


def varying_rate(engine, schedule, num, duration, interval, clients=2, workload="ycsb-c", seed=1, memory=None):
    """(table, results): a row per interval of the run, its target rate beside the rate achieved, and the p99 of
    its transactions' response time (from the intended start) and of their service time (from the actual start)."""
    import pandas as pd
    [step] = varying_rate_plan(engine, schedule, num, duration, interval, clients, workload, seed, memory)
    b = execute(step)[-1]
    rows = []
    for i, iv in enumerate(b.intervals):
        w = iv.get("workers", {})
        lat = w.get("latency_us", {})
        rows.append({"engine": engine, "interval": i, "t_start_s": iv["t_start_s"], "t_end_s": iv["t_end_s"],
                     "target_txn_per_sec": w.get("target_txn_per_sec"),
                     "achieved_txn_per_sec": w.get("ops_per_sec", {}).get("txn", 0.0),
                     "transactions": w.get("ops", {}).get("txn", 0),
                     "response_p99_us": lat.get("response", {}).get("p99"),
                     "service_p99_us": lat.get("txn", {}).get("p99")})
    frame = pd.DataFrame(rows, columns=INTERVAL_COLUMNS)
    frame.attrs["schedule"] = b.mix["pacing"].get("schedule", schedule)
    return frame, [b]


# --- 4. the best rate under a latency bound ---------------------------------------------------------------

@dataclass(frozen=True)
class SlaSearch:
    """`kvlab sla`'s search on one engine (work: its rates are found as it goes).  It loads `num` keys, runs
    the closed loop once and then at most `max_probes` rates, each `repeat` runs of `duration` s."""
    workload: str
    num: int
    clients: int
    duration: float
    repeat: int
    max_probes: int
    memory: str | None
    record_bytes: int

    def seconds(self) -> float:
        """Its runs' time at most, the load's aside (an undecided rate's extra runs aside too)."""
        return self.duration * (1 + self.max_probes * self.repeat)


def sla_searches_plan(engines, workload, p99, num, duration, repeat, max_probes, clients=2, seed=1,
                      memory=None) -> list:
    """One search per engine, each in a database of its own loaded once.  A bound that is no latency, a workload
    that is no mix, an engine that is none: refused here, before any search runs."""
    sla_service.bound_from(p99=p99)
    for e in engines:
        sla_service.check_spec(make_spec(e, workload, num=num, duration=duration, clients=clients, seed=seed,
                                         memory=memory))
    work = SlaSearch(workload, num, clients, duration, repeat, max_probes, memory, record_bytes(workload))
    return [Step(e, f"sla {workload} p99 <= {p99}", work=work) for e in engines]


def sla_searches(engines, workload, p99, num, duration, repeat, max_probes, clients=2, seed=1, memory=None,
                 min_rate=None, max_rate=None) -> list:
    """`kvlab sla --p99 P99` on each engine (kvlab.services.sla's search): the Outcomes, in engine order."""
    return [sla_service.sla(step.engine, workload, p99=p99, repeat=repeat, max_probes=max_probes, num=num,
                            duration=duration, clients=clients, seed=seed, interval=0, memory=memory,
                            min_rate=min_rate, max_rate=max_rate)
            for step in sla_searches_plan(engines, workload, p99, num, duration, repeat, max_probes, clients, seed,
                                          memory)]


def curves_frame(outcomes):
    """The searches' walks as one tidy frame: a row per probe (in the order walked) with its engine, the
    percentile's median and interval (µs), its verdict, and its search's bound, answer, bracket and capacity."""
    import pandas as pd
    frames = []
    for out in outcomes:
        f = out.to_frame()
        if f.empty:
            continue
        lo, hi = out.bracket
        f.insert(0, "engine", out.spec.engine)
        f.insert(1, "workload", ",".join(out.spec.workloads))
        frames.append(f.assign(percentile=out.bound.percentile, bound_us=out.bound.latency_us, answer=out.answer,
                               bracket_lo=lo, bracket_hi=hi, capacity=out.capacity))
    if not frames:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    return pd.concat(frames, ignore_index=True)[CURVE_COLUMNS]


def sla_curves(engines, workload="ycsb-b", p99="20ms", num=100_000, duration=1.0, repeat=3, max_probes=8,
               clients=2, seed=1, memory="1GiB", min_rate=None, max_rate=None):
    """Every engine's `kvlab sla` walk at one bound, as one tidy frame (curves_frame): run it on its own at a
    bigger scale, `sla_curves(["lmdb", "rocksdb"], num=10_000_000, duration=10, memory="16GiB")`, and draw it with
    `plots.sla_curves(frame)`."""
    return curves_frame(sla_searches(engines, workload, p99, num, duration, repeat, max_probes, clients, seed, memory,
                                     min_rate, max_rate))


def notebook_plan(p, engines) -> list:
    """Notebook 09_field's runs."""
    return (trace_replay_plan(engines, p["num"], p["operations"], p["clients"], p["seed"], p["memory"],
                              p["recorder"])
            + mixgraph_queries_plan(engines, p["num"], p["duration"], p["clients"], p["seed"], p["memory"])
            + varying_rate_plan(p["recorder"], p["schedule"], p["num"], p["schedule_duration"], p["schedule_interval"],
                                p["clients"], p["schedule_workload"], p["seed"], p["memory"])
            + sla_searches_plan(engines, p["sla_workload"], p["p99"], p["num"], p["sla_duration"], p["sla_repeat"],
                                p["sla_max_probes"], p["clients"], p["seed"], p["memory"]))

