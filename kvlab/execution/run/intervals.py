"""A phase's time series: one record per interval between two samples (ops, rates and latency of the workers,
the writer and each mix template; the process's accounting; the interval's amplification; the engine's events)."""
from __future__ import annotations

from ...results import events
from ...results.histogram import Histogram
from .. import native
from ..host import accounting
from . import mixrecord


def _interval_hist(counts, ns_per_tick) -> Histogram:
    return Histogram(counts, int(counts.sum()), 0, 2 ** 62, ns_per_tick)


def _template_intervals(a, b, secs, plan, ns_per_tick) -> dict:
    """Per template in one interval: transactions, their rate and service latency."""
    ta, tb = a.get("templates"), b.get("templates")
    if not tb or plan is None:
        return {}
    out = {}
    for ti, name in enumerate(plan["template_names"]):
        first, n, kind, simple, _ = plan["txns"][ti]
        count = tb["count"][ti] - (ta["count"][ti] if ta else 0)
        if simple:   # its transactions are its op: that op's histogram
            op = native.load().OP_TYPES[plan["ops"][first][0]]
            hb, ha = b["hist"].get(op), a["hist"].get(op)
        else:
            hb, ha = tb["hist"][ti], (ta["hist"][ti] if ta else None)
        rec = {"count": count, "per_sec": count / secs}
        if hb is not None:
            d = hb - ha if ha is not None else hb
            if d.sum():
                h = _interval_hist(d, ns_per_tick)
                rec["latency_us"] = {k: h.percentile(q) / 1000 for k, q in
                                     (("p50", 50), ("p99", 99), ("p999", 99.9), ("max", 100))}
        out[name] = rec
    return out


def _events(ea, eb) -> dict | None:
    """The engine's background work in one interval (kvlab.results.events), from the two samples' readings."""
    if eb is None or eb.get("fields") is None:
        return None
    return events.interval(eb["adapter"], (ea or {}).get("fields"), eb["fields"])


def _target(plan, t0: float, t1: float) -> float | None:
    """An open loop's target rate over one interval (transactions/s, all clients): the constant rate, or what the
    rate schedule asks for between t0 and t1 seconds from the start, over the interval's length."""
    pacing = (plan or {}).get("pacing") or {}
    if pacing.get("mode") != "open":
        return None
    schedule, times = mixrecord.schedule_of(plan)
    if schedule is None:
        return pacing["target_rate"]
    return schedule.expected(t0, t1) * times / (t1 - t0)


def intervals(samples, t_origin, plan=None, amp=None) -> list:
    out = []
    for (ta, na, aa), (tb, nb, ab) in zip(samples, samples[1:]):
        secs = (tb - ta) / 1e9
        if secs <= 0:
            continue
        rec = {"t_start_s": (ta - t_origin) / 1e9, "t_end_s": (tb - t_origin) / 1e9, "seconds": secs}
        for side in ("workers", "writer"):
            a, b = na[side], nb[side]
            ops = {op: b["ops"].get(op, 0) - a["ops"].get(op, 0) for op in b["ops"]}
            if side == "writer" and not any(ops.values()):
                continue
            lat = {}
            for op, counts in b["hist"].items():
                prev = a["hist"].get(op)
                d = counts - prev if prev is not None else counts
                if d.sum():
                    h = _interval_hist(d, nb["ns_per_tick"])
                    lat[op] = {k: h.percentile(q) / 1000 for k, q in
                               (("p50", 50), ("p99", 99), ("p999", 99.9), ("max", 100))}
            rec[side] = {"ops": ops, "ops_per_sec": {op: v / secs for op, v in ops.items()},
                         "latency_us": lat}
            if side == "workers" and plan is not None:
                rec[side]["templates"] = _template_intervals(a, b, secs, plan, nb["ns_per_tick"])
                target = _target(plan, rec["t_start_s"], rec["t_end_s"])
                if target is not None:   # the open loop's target beside what it achieved (ops_per_sec["txn"])
                    rec[side]["target_txn_per_sec"] = target
        acct = accounting.delta(aa, ab)
        rec.update({k: acct[k] for k in ("cpu_user_s", "cpu_sys_s", "cpu_pct", "io_read_bytes", "io_write_bytes",
                                         "ctx_voluntary", "ctx_involuntary") if k in acct})
        for k in ("disk_reads", "disk_writes"):
            if k in acct:
                rec[k] = acct[k]
        if amp is not None:
            rec["amplification"] = amp.interval(na, nb, acct, ab.db_bytes)
        ev = _events(na.get("engine_events"), nb.get("engine_events"))
        if ev is not None:
            rec["events"] = ev
        out.append(rec)
    return out

