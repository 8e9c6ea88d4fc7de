"""What a mix runs and records: its value size, the mix as run (the run's distribution and target rate), what it
had done at the warm-up's cut (read from the sampler's snapshot; execution.run.phases cuts it), and its record
(transactions, rates, per-template latency and histograms)."""
from __future__ import annotations

import dataclasses

from ...model.workloads.distributions import distribution as make_distribution
from ...model.workloads.rate import parse as parse_schedule
from ...results.histogram import Histogram
from .. import native


def value_size(wl, spec) -> int:
    """A mix that says its value size (YCSB's records, seed 003's 8-100 bytes) writes and loads
    values of its largest size; the rest use the spec's."""
    return wl.mix.value_size[1] if wl.mix is not None and wl.mix.value_size else spec.value_size


# what a mix's op types count as in reads/s and writes/s
_READ_OPS, _WRITE_OPS = ("read", "rmw", "range", "scan"), ("write", "insert", "delete", "rmw", "clear_range")


def warm_mix(wsnap, plan) -> dict:
    """What a mix had done by the end of its warm-up, from the snapshot taken then: transactions, ops per
    type (each op is recorded once in its type's histogram), and per template the count and histograms
    (a simple template's are its op's, which the loop derives only at the end)."""
    w = wsnap["workers"]
    hist, tpl = w["hist"], w.get("templates") or {}
    op_names = native.load().OP_TYPES
    ops = {op: int(c.sum()) for op, c in hist.items() if op not in ("txn", "response", "lag")}
    # every count comes from a histogram read in the same pass, so the figures agree with each other
    # (the threads run on while the snapshot is taken; counters and histograms are not read at one instant)
    per, txn_hist = {}, None
    for ti, name in enumerate(plan["template_names"]):
        first, _, _, simple, _ = plan["txns"][ti]
        h = hist.get(op_names[plan["ops"][first][0]]) if simple else (tpl["hist"][ti] if tpl else None)
        if h is not None:
            txn_hist = h.copy() if txn_hist is None else txn_hist + h
        resp = tpl["response_hist"][ti] if tpl and tpl.get("response_hist") else None
        per[name] = {"count": int(h.sum()) if h is not None else 0, "hist": h, "response_hist": resp}
    return {"txns": sum(p["count"] for p in per.values()), "ops": ops, "templates": per, "txn_hist": txn_hist}


def mix_record(counted, plan, seconds, found, isolation, lag=None):
    """Transactions, rates and per-template latency of a mix run from what it counted (execution.run.phases.MixCount,
    after its warm-up, if it had one; `lag`: its start-lag histogram, likewise), and the per-template histograms
    the result keeps ({name: {"service": .., "response": ..}})."""
    txns = counted.txns
    templates, kept = {}, {}
    for name in plan["template_names"]:
        t = counted.templates[name]
        count, hist = t["count"], t["hist"]
        templates[name] = {"count": count, "share": count / txns if txns else 0.0, "latency_us": hist.summary_us()}
        kept[name] = {"service": hist}
        if plan["pacing"]["mode"] == "open":   # response time: from the intended start (no coordinated omission)
            resp = t["response_hist"] if t["response_hist"] is not None else Histogram()
            templates[name]["response_latency_us"] = resp.summary_us()
            kept[name]["response"] = resp
    ops = counted.ops
    rate = (lambda n: n / seconds) if seconds > 0 else (lambda n: 0.0)
    pacing = dict(plan["pacing"])
    if pacing["mode"] == "open":
        pacing["achieved_rate"] = rate(txns)
        schedule, times = schedule_of(plan)
        if schedule is not None and seconds > 0:   # what the schedule asked for over the run, from its start
            pacing["target_rate"] = schedule.expected(0.0, seconds) * times / seconds
        pacing["achieved_ratio"] = rate(txns) / pacing["target_rate"] if pacing["target_rate"] else None
        pacing["start_lag_us"] = (lag if lag is not None else Histogram()).summary_us()
    return ({
        "transactions": txns, "txn_per_sec": rate(txns),
        "reads_per_sec": rate(sum(ops.get(k, 0) for k in _READ_OPS)),
        "writes_per_sec": rate(sum(ops.get(k, 0) for k in _WRITE_OPS)),
        "keys_per_sec": rate(found or 0), "ops_by_type": dict(ops),
        "templates": templates, "retries": counted.retries,
        "aborts": counted.aborts, "pacing": pacing,
        "isolation": isolation, "template_txn": plan["template_txn"],
    }, kept)


def mix_as_run(mix, spec):
    """The mix a run executes: the workload's own, with the run's distribution (--distribution) and target
    rate (--target-rate, in total) in place of the mix's.  A result records the mix as defined
    (mix.definition) and, beside it, the distribution and pacing it ran with (mix.distribution, mix.pacing)."""
    if spec.distribution is not None:
        mix = dataclasses.replace(mix, distribution=make_distribution(spec.distribution))
    if spec.target_rate:
        mix = dataclasses.replace(mix, pacing=dataclasses.replace(mix.pacing, target_rate=spec.target_rate,
                                                                  per_client=False, schedule=None))
    if spec.rate_schedule is not None:
        mix = dataclasses.replace(mix, pacing=dataclasses.replace(mix.pacing, target_rate=0.0, per_client=False,
                                                                  schedule=spec.rate_schedule))
    return mix


def schedule_of(plan):
    """The rate schedule a compiled mix follows (kvlab.model.workloads.rate), in total over its clients, or None."""
    pacing = (plan or {}).get("pacing") or {}
    if not pacing.get("schedule"):
        return None, 1
    return parse_schedule(pacing["schedule"]), (pacing["clients"] if pacing.get("schedule_per_client") else 1)

