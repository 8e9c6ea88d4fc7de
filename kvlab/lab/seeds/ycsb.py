"""YCSB's core workloads A-F, closed loop, and the open-loop latency-throughput curve (notebook 05_ycsb)."""
from __future__ import annotations

from ... import engines as engine_registry
from .plan import Step, execute


def ycsb_suite_plan(engines, num, operations, clients, seed=1, memory=None) -> list:
    """YCSB's core workloads A-F per engine, closed loop; E (scans) only where the engine reads in key order."""
    return [Step(name, f"ycsb-{w}", dict(workload=f"ycsb-{w}", num=num, reads=max(1, operations // clients),
                                         clients=clients, seed=seed, interval=0, memory=memory))
            for name in engines for w in "abcdef" if w != "e" or engine_registry.get(name).ordered_scan]


def ycsb_suite(engines, num, operations, clients, seed=1, memory=None):
    """YCSB's core workloads A-F per engine (closed loop): (table, results)."""
    import pandas as pd
    rows, results = [], []
    for step in ycsb_suite_plan(engines, num, operations, clients, seed, memory):
        b = execute(step)[-1]
        results.append(b)
        rows.append({"engine": step.engine, "workload": f"YCSB-{step.name[-1].upper()}",
                     "txn_per_sec": b.mix["txn_per_sec"], "p50_us": b.latency_us["p50"], "p99_us": b.latency_us["p99"]})
    return pd.DataFrame(rows), results


# No engine here serves a client more than this many ops/s: a ladder step's reads are capped at this rate for
# `seconds`, so a step past saturation (a target of 10^9/s) ends near `seconds` instead of after 50M reads.
MAX_OPS_PER_CLIENT = 10_000_000


def ladder_reads(rate, seconds, clients) -> int:
    """The reads a client makes at one step of the open-loop ladder: `seconds` at the target rate, capped."""
    return max(1, min(int(rate * seconds / clients), int(MAX_OPS_PER_CLIENT * seconds)))


def latency_throughput_plan(engine, rates, seconds, clients, num, workload="ycsb-c", seed=1, memory=None) -> list:
    """The open-loop rate ladder: one run per target rate, `seconds` long at that rate (ladder_reads)."""
    return [Step(engine, f"{workload} at {rate:,}/s", dict(workload=workload, num=num,
                                                          reads=ladder_reads(rate, seconds, clients), clients=clients,
                                                          target_rate=float(rate), seed=seed, interval=0,
                                                          memory=memory))
            for rate in rates]


def latency_throughput(engine, rates, seconds, clients, num, workload="ycsb-c", seed=1, memory=None):
    """An open-loop rate ladder: per target rate, the achieved rate, service time (from the actual
    start) and response time (from the intended start): (table, results)."""
    import pandas as pd
    rows, results = [], []
    for rate, step in zip(rates, latency_throughput_plan(engine, rates, seconds, clients, num, workload, seed,
                                                         memory)):
        b = execute(step)[-1]
        results.append(b)
        p, resp = b.mix["pacing"], b.latency_by_op["response"]
        rows.append({"engine": engine, "target_rate": rate, "achieved_rate": p["achieved_rate"],
                     "achieved_ratio": p["achieved_ratio"], "lag_p50_us": p["start_lag_us"]["p50"],
                     "service_p50_us": b.latency_us["p50"], "service_p99_us": b.latency_us["p99"],
                     "response_p50_us": resp["p50"], "response_p99_us": resp["p99"]})
    return pd.DataFrame(rows), results


def notebook_plan(p, engines) -> list:
    """Notebook 05_ycsb's runs: the suite, then the ladder on the curve's engine."""
    return (ycsb_suite_plan(engines, p["num"], p["operations"], p["clients"], memory=p.get("memory"))
            + latency_throughput_plan(p["curve_engine"], p["rates"], p["seconds"], p["clients"], p["num"],
                                      memory=p.get("memory")))
