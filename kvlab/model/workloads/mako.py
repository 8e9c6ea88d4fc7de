"""mako's transaction spec strings (FoundationDB's bindings/c/test/mako): `<type><count>[:<range>]`
repeated, e.g. `g9u1` (9 gets, 1 update), `gr1:1000` (one 1000-key range read), `g8ui`.
A count left out is 1.  Each string is one transaction template."""
from __future__ import annotations

import re

from ... import errors
from .mix import Mix, Op, Template

# mako's operation types as kvlab ops: (kind, snapshot, what mako means)
MAKO_OPS = {
    "g": ("get", False, "GET"),
    "sg": ("get", True, "snapshot GET"),
    "gr": ("range", False, "GET RANGE of <range> keys (negative: in reverse)"),
    "sgr": ("range", True, "snapshot GET RANGE"),
    "u": ("rmw", False, "update: GET followed by SET"),
    "i": ("insert", False, "insert: SET of a new key"),
    "o": ("put", False, "overwrite: blind SET of an existing key"),
    "c": ("delete", False, "CLEAR"),
    "cr": ("clear_range", False, "CLEAR RANGE of <range> keys"),
}
# FoundationDB-only types: nothing to map them onto in an embedded engine
MAKO_FDB_ONLY = {"grv": "GetReadVersion", "sj": "status json from the special key space",
                 "ir": "insert range", "sc": "SET & CLEAR", "scr": "SET & CLEAR RANGE"}

_TOKEN = re.compile(r"(grv|sgr|scr|gr|sg|sj|ir|sc|cr|g|u|i|o|c)(\d*)(?::(-?\d+))?")


def parse_ops(spec: str) -> list:
    """The ops of one mako spec string."""
    if not isinstance(spec, str) or not spec.strip():
        raise errors.SpecError(f"a mako transaction spec is a string such as 'g9u1' or 'gr1:1000', got {spec!r}")
    s = spec.strip()
    ops, pos = [], 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m:
            raise errors.SpecError(
                f"mako spec {spec!r}: cannot read {s[pos:]!r} at position {pos}; expected <type><count>[:<range>] "
                f"with type one of {', '.join(MAKO_OPS)} (e.g. g9u1, gr1:1000)")
        kind_code, count, rng = m.group(1), m.group(2), m.group(3)
        if kind_code in MAKO_FDB_ONLY:
            raise errors.SpecError(f"mako spec {spec!r}: {kind_code!r} ({MAKO_FDB_ONLY[kind_code]}) is "
                                   f"FoundationDB-only and has no meaning on an embedded engine; allowed: "
                                   f"{', '.join(MAKO_OPS)}")
        kind, snapshot, _ = MAKO_OPS[kind_code]
        n = int(count) if count else 1
        if n < 1:
            raise errors.SpecError(f"mako spec {spec!r}: count {n} of {kind_code!r} must be at least 1")
        ranged = kind in ("range", "clear_range")
        if ranged and rng is None:
            raise errors.SpecError(f"mako spec {spec!r}: {kind_code!r} needs a range, as in {kind_code}{n}:1000")
        if not ranged and rng is not None:
            raise errors.SpecError(f"mako spec {spec!r}: {kind_code!r} takes no range (only gr, sgr and cr do)")
        try:
            ops.append(Op(kind, n, length=int(rng) if ranged else None, snapshot=snapshot))
        except errors.SpecError as exc:   # say which spec and token, not only which operation
            raise errors.SpecError(f"mako spec {spec!r}, {m.group(0)!r}: {exc}") from None
        pos = m.end()
    return ops


def from_mako(spec: str, name: str | None = None, **mix_fields) -> Mix:
    """A one-template Mix from a mako spec string (`kvlab run --txn g9u1`)."""
    ops = parse_ops(spec)
    return Mix(name or f"txn:{spec.strip()}", (Template(spec.strip(), tuple(ops)),), source=f"mako:{spec.strip()}",
               **mix_fields)
