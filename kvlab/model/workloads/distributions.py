"""Key distributions as validated data: a name and its parameters, checked here, drawn in C
(cython_ext/include/kv_dist.h, the same code for a run's hot loop and for kvlab.keys).

The names and meanings are YCSB's (`requestdistribution=`), which users compare against;
`zipfian` is YCSB's scrambled zipfian, and the plain zipfian over exactly the keys has its
own name, `zipfian-plain`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from ... import errors


@dataclass(frozen=True)
class DistributionKind:
    name: str
    description: str
    params: Mapping[str, float] = field(default_factory=dict)   # allowed parameters and their defaults


KINDS: dict[str, DistributionKind] = {}


def _kind(name, description, **params):
    KINDS[name] = DistributionKind(name, description, params)


_kind("uniform", "every key equally likely")
_kind("zipfian", "YCSB's scrambled zipfian (requestdistribution=zipfian): Gray's zipfian over 10^10 items, "
      "FNV-hashed onto the keys; hot keys scattered", theta=0.99, expected_inserts=0)
_kind("zipfian-plain", "a zipfian over exactly the current keys, key 0 the most popular (exact pmf k^-theta)",
      theta=0.99)
_kind("latest", "YCSB's latest: the newest key the most popular, zipfian over recency", theta=0.99)
_kind("hotspot", "a hot fraction of the keys (the lowest) gets a given fraction of the ops",
      hot_fraction=0.2, hot_ops=0.8)
_kind("sequential", "key after key, wrapping; each thread starts at its share of the key space")
_kind("exponential", "YCSB's exponential, counted back from the newest key: `percentile`% of draws fall in the "
      "newest `frac` of the keys", percentile=95.0, frac=0.8571428571)
# Meta's mixgraph (Cao et al., FAST 2020; db_bench's GenerateTwoTermExpKeys): defaults are the paper's fitted
# "all_dist" parameters, as db_bench's mixgraph examples give them
_kind("two-term-exp", "Meta's mixgraph (db_bench --benchmarks=mixgraph): keyrange_num equal key ranges, shuffled, "
      "with shares keyrange_dist_a*exp(keyrange_dist_b*x) + keyrange_dist_c*exp(keyrange_dist_d*x); within a "
      "range, ranks from the power law P(rank <= s) = key_dist_a * s^key_dist_b, hashed onto its keys (uniform "
      "when key_dist_a or key_dist_b is 0)", keyrange_dist_a=14.18, keyrange_dist_b=-2.917,
      keyrange_dist_c=0.0164, keyrange_dist_d=-0.08082, keyrange_num=30, key_dist_a=0.002312, key_dist_b=0.3467)

# what each parameter may be: (low, high, low inclusive, high inclusive)
_RANGES = {
    "theta": (0.0, 100.0, False, True),
    "hot_fraction": (0.0, 1.0, False, False),
    "hot_ops": (0.0, 1.0, True, True),
    "percentile": (0.0, 100.0, False, False),
    "frac": (0.0, 1.0, False, True),
    "expected_inserts": (0, 10**15, True, True),
    "keyrange_dist_a": (-1e12, 1e12, True, True),
    "keyrange_dist_b": (-1e3, 1e3, True, True),
    "keyrange_dist_c": (-1e12, 1e12, True, True),
    "keyrange_dist_d": (-1e3, 1e3, True, True),
    "keyrange_num": (1, 1_000_000, True, True),
    "key_dist_a": (0.0, 1e12, True, True),
    "key_dist_b": (0.0, 1e3, True, True),
}
_WHOLE = ("keyrange_num",)
_KEY_RANGE_SHUFFLE_SEED = 0x6D6978677261706B   # the ranges' order depends on their parameters alone


def range_shares(params: Mapping[str, float]) -> list:
    """two-term-exp's key ranges' shares in key order: range x (1..keyrange_num, db_bench's numbering, placed
    from the last down as db_bench does) weighs a*exp(b*x) + c*exp(d*x) (0 below 1e-16, as db_bench), the
    weights normalised, then the ranges shuffled (Fisher-Yates, a fixed splitmix64 stream) so hot ranges are
    scattered over the key space, the same on every run and engine."""
    n = int(params["keyrange_num"])
    a, b, c, d = (params[f"keyrange_dist_{x}"] for x in "abcd")
    weights = []
    for x in range(n, 0, -1):
        try:
            w = a * math.exp(b * x) + c * math.exp(d * x)
        except OverflowError:
            w = math.inf
        weights.append(w if w >= 1e-16 else 0.0)
    total = sum(weights)
    if n == 1:
        return [1.0]
    if not math.isfinite(total) or total <= 0:
        raise errors.SpecError(f"distribution 'two-term-exp': the key ranges' weights a*exp(b*x) + c*exp(d*x) over "
                               f"x = 1..{n} sum to {total!r}; allowed: parameters that give every range a finite "
                               "weight >= 0 and some range one above 0")
    state = _KEY_RANGE_SHUFFLE_SEED
    for i in range(n - 1, 0, -1):
        state, r = _splitmix64(state)
        j = r % (i + 1)
        weights[i], weights[j] = weights[j], weights[i]
    return [w / total for w in weights]


def _splitmix64(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


def range_cumulative(shares) -> tuple:
    """The cumulative shares the C draw searches (kv_dist.h), the last exactly 1."""
    out, total = [], 0.0
    for s in shares:
        total += s
        out.append(total)
    out[-1] = 1.0
    return tuple(out)


@dataclass(frozen=True)
class Distribution:
    """A key distribution: one of KINDS with its parameters (defaults filled in)."""
    name: str = "uniform"
    params: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self):
        kind = KINDS.get(self.name)
        if kind is None:
            raise errors.SpecError(f"distribution {self.name!r} is unknown; allowed: {', '.join(KINDS)}")
        given = dict(self.params)
        unknown = set(given) - set(kind.params)
        if unknown:
            allowed = ", ".join(kind.params) or "none"
            raise errors.SpecError(f"distribution {self.name!r} has no parameter(s) {', '.join(sorted(unknown))}; "
                                   f"allowed: {allowed}")
        full = {**kind.params, **given}
        for key, value in full.items():
            lo, hi, lo_in, hi_in = _RANGES[key]
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            if ok and key in _WHOLE:
                ok = value == int(value)
            if ok:
                ok = (lo <= value if lo_in else lo < value) and (value <= hi if hi_in else value < hi)
            if not ok:
                left, right = "[" if lo_in else "(", "]" if hi_in else ")"
                raise errors.SpecError(f"distribution {self.name!r}: {key}={value!r} is out of range; "
                                       f"allowed: a number in {left}{lo}, {hi}{right}")
        if self.name in ("zipfian", "latest") and not full["theta"] < 1.0:
            raise errors.SpecError(f"distribution {self.name!r}: theta={full['theta']} is out of range; allowed: "
                                   "0 < theta < 1 (Gray's method, as YCSB's; zipfian-plain takes any theta > 0)")
        if self.name == "two-term-exp":
            full["keyrange_num"] = int(full["keyrange_num"])
            range_shares(full)   # refuses weights that give no range a share
        object.__setattr__(self, "params", full)

    def native_args(self) -> dict:
        """The keyword arguments of _native.keys / the driver's kv_dist_init."""
        p = self.params
        return {"theta": float(p.get("theta", 0.99)), "hot_fraction": float(p.get("hot_fraction", 0.2)),
                "hot_ops": float(p.get("hot_ops", 0.8)), "exp_percentile": float(p.get("percentile", 95.0)),
                "exp_frac": float(p.get("frac", 0.8571428571)),
                "expected_inserts": int(p.get("expected_inserts", 0)),
                "range_cum": range_cumulative(range_shares(p)) if self.name == "two-term-exp" else None,
                "key_a": float(p.get("key_dist_a", 0.0)), "key_b": float(p.get("key_dist_b", 0.0))}

    def to_dict(self) -> dict:
        """As results and workload files record it: {"name": ..., parameter: value, ...}."""
        return {"name": self.name, **self.params}

    def describe(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.name}({extra})" if extra else self.name


def distribution(spec, **params) -> Distribution:
    """A Distribution from a name (plus parameters) or a Distribution."""
    if isinstance(spec, Distribution):
        if params:
            return Distribution(spec.name, {**spec.params, **params})
        return spec
    if not isinstance(spec, str):
        raise errors.SpecError(f"a distribution is a name, got {spec!r}; allowed: {', '.join(KINDS)}")
    return Distribution(spec.strip().lower(), params)
