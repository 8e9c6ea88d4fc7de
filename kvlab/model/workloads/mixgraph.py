"""Meta's mixgraph model (Cao et al., "Characterizing, modeling, and benchmarking RocksDB key-value workloads at
Facebook", FAST 2020) as a Mix, with db_bench's names for its parameters (tools/db_bench_tool.cc, MixGraph):

    gets, puts and seeks     weighted by mix_get_ratio, mix_put_ratio, mix_seek_ratio
    keys                     two-term-exp (distributions.py): keyrange_num key ranges whose shares follow
                             keyrange_dist_a*exp(keyrange_dist_b*x) + keyrange_dist_c*exp(keyrange_dist_d*x), and
                             the power law key_dist_a*x^key_dist_b within a range
    value sizes              a generalized Pareto (value_k, value_sigma, value_theta), at most mix_max_value_size
    seek lengths             a generalized Pareto (iter_k, iter_sigma, iter_theta), at most mix_max_scan_len
    request rate             sine_a*sin(sine_b*t + sine_c) + sine_d queries/s with sine_mix_rate, cut into
                             sine_mix_rate_interval_milliseconds segments (rate.py)

`mixgraph()` takes them as keyword arguments (db_bench's defaults where left out); `from_dbbench` takes
`kvlab dbbench`'s parsed flags.  As db_bench does, key_dist_a or key_dist_b 0 draws keys uniformly over the whole
key space (the key ranges then play no part), and a put's or a seek's size past its bound wraps modulo the bound.
Where kvlab differs: each draw (key, query type, size) takes its own uniform number, where db_bench reuses one for
the key, the query type and the size; a rank is hashed onto its range's keys with FNV-1a where db_bench seeds a
Mersenne twister with it; and the sine is an open loop's target (each query's intended start, latency measured
from it) where db_bench caps a closed loop with rate limiters.
"""
from __future__ import annotations

from typing import Any, Mapping

from ... import errors
from .distributions import Distribution
from .mix import Mix, Op, Pacing, Template
from .rate import RateSchedule
from .sizes import Pareto

# db_bench's defaults for each mixgraph flag (RocksDB 7.x's db_bench_tool.cc), the names kvlab dbbench takes
DEFAULTS: dict[str, Any] = {
    "mix_get_ratio": 1.0, "mix_put_ratio": 0.0, "mix_seek_ratio": 0.0,
    "keyrange_dist_a": 0.0, "keyrange_dist_b": 0.0, "keyrange_dist_c": 0.0, "keyrange_dist_d": 0.0,
    "keyrange_num": 1, "key_dist_a": 0.0, "key_dist_b": 0.0,
    "value_k": 0.2615, "value_sigma": 25.45, "value_theta": 0.0,
    "iter_k": 2.517, "iter_sigma": 14.236, "iter_theta": 0.0,
    "mix_max_scan_len": 10000, "mix_max_value_size": 1024,
    "sine_mix_rate": False, "sine_a": 1.0, "sine_b": 1.0, "sine_c": 0.0, "sine_d": 1.0,
    "sine_mix_rate_interval_milliseconds": 10000, "sine_mix_rate_noise": 0.0,
}
# the paper's fitted "all_dist" parameters for its UDB workload (and db_bench's mixgraph examples): the preset
PAPER: dict[str, Any] = {
    "mix_get_ratio": 0.83, "mix_put_ratio": 0.14, "mix_seek_ratio": 0.03,
    "keyrange_dist_a": 14.18, "keyrange_dist_b": -2.917, "keyrange_dist_c": 0.0164, "keyrange_dist_d": -0.08082,
    "keyrange_num": 30, "key_dist_a": 0.002312, "key_dist_b": 0.3467,
    "value_k": 0.2615, "value_sigma": 25.45, "iter_k": 2.517, "iter_sigma": 14.236,
}
# what kvlab cannot honour, with why: given a value other than db_bench's default, refused
REFUSED = {
    "sine_mix_rate_noise": "kvlab's rate schedules are exact; db_bench's noise draws from rand() without a seed",
}
# value sizes below this are 10 bytes in db_bench (a negative Pareto draw); kvlab holds them to [1, max]
MIN_VALUE = 1


def mixgraph(name: str = "mixgraph", **params) -> Mix:
    """The mixgraph Mix for db_bench's parameters (DEFAULTS' names; the rest are db_bench's defaults)."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        raise errors.SpecError(f"mixgraph: {', '.join(unknown)} unknown; allowed: {', '.join(DEFAULTS)}")
    p = {**DEFAULTS, **params}
    for flag, why in REFUSED.items():
        if p[flag] != DEFAULTS[flag]:
            raise errors.SpecError(f"mixgraph: {flag}={p[flag]} cannot be honoured ({why}); allowed: "
                                   f"{DEFAULTS[flag]} (db_bench's default)")
    weights = {"get": p["mix_get_ratio"], "put": p["mix_put_ratio"], "seek": p["mix_seek_ratio"]}
    for kind, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not w >= 0:
            raise errors.SpecError(f"mixgraph: mix_{kind}_ratio={w!r}; allowed: a number >= 0")
    if not any(weights.values()):
        raise errors.SpecError("mixgraph: mix_get_ratio, mix_put_ratio and mix_seek_ratio are all 0; allowed: some "
                               "ratio above 0")
    scan_max = _whole(p, "mix_max_scan_len", 1, 10_000_000)
    value_max = _whole(p, "mix_max_value_size", 1, 1 << 20)   # db_bench: at most its 1 MiB value buffer
    ops = {"get": Op("get"), "put": Op("put"),
           "seek": Op("scan", length=scan_max, min_length=0, length_distribution="pareto",
                      length_pareto=Pareto(p["iter_k"], p["iter_sigma"], p["iter_theta"]))}
    templates = tuple(Template(kind, (ops[kind],), weight=w) for kind, w in weights.items() if w > 0)
    return Mix(name, templates, distribution=key_distribution(p), pacing=pacing(p),
               value_size=(MIN_VALUE, value_max),
               value_pareto=Pareto(p["value_k"], p["value_sigma"], p["value_theta"]),
               source="mixgraph", description="Meta's mixgraph (Cao et al., FAST 2020; db_bench's mixgraph)")


def key_distribution(p: Mapping) -> Distribution:
    """db_bench's choice: uniform when key_dist_a or key_dist_b is 0; else the key ranges (one range when every
    keyrange_dist parameter is 0) with the power law in each."""
    if p["key_dist_a"] == 0 or p["key_dist_b"] == 0:
        return Distribution("uniform")
    ranges = any(p[f"keyrange_dist_{x}"] != 0 for x in "abcd")
    return Distribution("two-term-exp", {
        **{f"keyrange_dist_{x}": float(p[f"keyrange_dist_{x}"]) for x in "abcd"},
        "keyrange_num": int(p["keyrange_num"]) if ranges and p["keyrange_num"] > 0 else 1,
        "key_dist_a": float(p["key_dist_a"]), "key_dist_b": float(p["key_dist_b"])})


def pacing(p: Mapping) -> Pacing:
    """Closed loop, or with sine_mix_rate an open loop whose target is the sine, in queries/s in total, each
    segment sine_mix_rate_interval_milliseconds long."""
    if not p["sine_mix_rate"]:
        return Pacing()
    interval = _whole(p, "sine_mix_rate_interval_milliseconds", 1, 86_400_000) / 1000
    return Pacing(schedule=RateSchedule("sine", a=float(p["sine_a"]), b=float(p["sine_b"]), c=float(p["sine_c"]),
                                        d=float(p["sine_d"]), interval=interval))


def _whole(p, key, lo, hi) -> int:
    v = p[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or not lo <= v <= hi:
        raise errors.SpecError(f"mixgraph: {key}={v!r} is out of range; allowed: a whole number from {lo:,} to {hi:,}")
    return int(v)


def from_dbbench(flags: Mapping) -> Mix:
    """The mixgraph Mix for `kvlab dbbench`'s parsed flags (those of DEFAULTS among them)."""
    return mixgraph(**{k: v for k, v in flags.items() if k in DEFAULTS})
