"""Sizes a mix draws other than keys: a generalized Pareto for value sizes and scan lengths, as Meta's mixgraph
model fits them (Cao et al., FAST 2020; db_bench's value_k/value_sigma/value_theta and
iter_k/iter_sigma/iter_theta).  Drawn in C (cython_ext/include/kv_dist.h: kv_pareto_size, the same code in the
mix loop and in kvlab._native.pareto_sizes) by inversion, theta + sigma * (u^-k - 1) / k rounded up, a size past
the bound wrapped modulo it as db_bench does."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from ... import errors

# db_bench's defaults for mixgraph ("reasonable defaults based on the mixgraph paper")
VALUE_DEFAULTS = {"k": 0.2615, "sigma": 25.45, "theta": 0.0}
SCAN_DEFAULTS = {"k": 2.517, "sigma": 14.236, "theta": 0.0}


@dataclass(frozen=True)
class Pareto:
    """A generalized Pareto: shape k, scale sigma > 0, location theta; P(X <= x) = 1 - (1 + k (x - theta) /
    sigma)^(-1/k)."""
    k: float = VALUE_DEFAULTS["k"]
    sigma: float = VALUE_DEFAULTS["sigma"]
    theta: float = 0.0

    def __post_init__(self):
        for name, lo, hi, lo_open in (("k", -100.0, 100.0, False), ("sigma", 0.0, 1e12, True),
                                      ("theta", -1e12, 1e12, False)):
            v = getattr(self, name)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            if not ok or not ((lo < v) if lo_open else (lo <= v)) or v > hi:
                raise errors.SpecError(f"pareto {name}={v!r} is out of range; allowed: a number "
                                       f"{'above' if lo_open else 'from'} {lo:g} {'and up' if lo_open else ''} to "
                                       f"{hi:g}".replace("  ", " "))
            object.__setattr__(self, name, float(v))

    def cdf(self, x: float) -> float:
        """P(X <= x) of the continuous distribution (before rounding up and bounding)."""
        z = (x - self.theta) / self.sigma
        if z <= 0:
            return 0.0
        if self.k == 0:
            return 1 - math.exp(-z)
        base = 1 + self.k * z
        return 1.0 if base <= 0 else 1 - base ** (-1 / self.k)

    def to_dict(self) -> dict:
        return {"k": self.k, "sigma": self.sigma, "theta": self.theta}

    def describe(self) -> str:
        return f"pareto(k={self.k:g}, sigma={self.sigma:g}, theta={self.theta:g})"


def pareto(value, defaults: Mapping[str, float] = VALUE_DEFAULTS, where: str = "pareto") -> Pareto:
    """A Pareto from itself or a dict of k, sigma, theta (missing ones from `defaults`)."""
    if isinstance(value, Pareto):
        return value
    if isinstance(value, Mapping):
        d = {k: v for k, v in value.items() if k != "name"}
        if value.get("name", "pareto") != "pareto":
            raise errors.SpecError(f"{where}: distribution {value.get('name')!r} is unknown; allowed: pareto")
        extra = sorted(set(d) - {"k", "sigma", "theta"})
        if extra:
            raise errors.SpecError(f"{where}: {', '.join(map(str, extra))} unknown; allowed: k, sigma, theta")
        return Pareto(**{**defaults, **d})
    raise errors.SpecError(f"{where}: {value!r}; allowed: {{ k = ..., sigma = ..., theta = ... }} (a generalized "
                           "Pareto)")
