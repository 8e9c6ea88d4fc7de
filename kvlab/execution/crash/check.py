"""What a crash test checks, apart from the processes: the keys it writes, the state a reopened database holds
(each key's stamp: the transaction and position that wrote it), and whether that state is the one after some
prefix of the transactions, or torn (and how)."""
from __future__ import annotations

import struct

from .. import native

KEY_SIZE = 16


def key(index: int) -> bytes:
    """The key of index `index`, as the crash writer (workload crashwrite) makes it."""
    return native.load().make_key(index, KEY_SIZE)


def read_state(db) -> dict:
    """Every key -> the stamp (seq, position) its value carries."""
    out = {}
    for k, v in db.scan(b"", -1):
        out[k] = struct.unpack_from("<QI", v, 0) if len(v) >= 12 else ("foreign", v)
    return out


def _apply(state: dict, seq: int, ops: list):
    for j, word in enumerate(ops):
        k = key(word >> 1)
        if word & 1:
            state.pop(k, None)
        else:
            state[k] = (seq, j)


def torn_kind(intents: dict, actual: dict) -> str:
    """Why a state matched no prefix: "half" when some transaction provably shows some of its writes and lacks
    others (only writes to keys no later transaction touched count), else "out of order" (as far as the
    writes show, whole transactions are there after missing ones)."""
    last_touch = {}
    for seq, ops in intents.items():
        for word in ops:
            index = word >> 1
            last_touch[index] = max(seq, last_touch.get(index, 0))
    for seq, ops in intents.items():
        shown = missing = 0
        final = {word >> 1: (j, word) for j, word in enumerate(ops)}   # a key written twice shows its last write
        for j, word in final.values():
            if last_touch[word >> 1] > seq:
                continue   # a later transaction decides what this key shows
            have = actual.get(key(word >> 1))
            if word & 1:   # a delete is seen missing when an older value shows; an absent key proves nothing
                missing += have is not None
            else:   # an earlier write of this transaction to the key, showing, is both
                shown += have == (seq, j) or (have is not None and have[0] == seq)
                missing += have != (seq, j)
        if shown and missing:
            return "half"
    return "out of order"


def verify(expected: dict, last: int, intents: dict, actual: dict, skip: int | None = None):
    """(X, state at X) where the actual state equals the expected one after transactions last+1..X,
    or (None, None) when it equals none of them (torn).  `skip`: a transaction taken as never having happened
    (one the engine reported failed)."""
    newest = max((s[0] for s in actual.values() if isinstance(s[0], int)), default=0)
    state = dict(expected)
    seq = last
    while True:
        if seq >= newest and state == actual:
            return seq, state
        if seq + 1 == skip:
            seq += 1
            continue
        if seq + 1 not in intents:
            return None, None
        seq += 1
        _apply(state, seq, intents[seq])

