"""The key format every loop writes (kv_gen.h's kv_make_key): the index's last key_size decimal digits,
zero-padded, byte for byte as db_bench's digit-at-a-time loop writes it."""
import random

import pytest

from kvlab import _native


def expected(index, key_size):
    return str(index).zfill(key_size)[-key_size:].encode()


EDGES = [0, 1, 9, 10, 99, 100, 9999, 10000, 99_999_999, 100_000_000, 123_456_789, 10**15, 10**16 - 1, 10**16,
         10**16 + 7, 2**63, 2**64 - 1]


@pytest.mark.parametrize("portable", [False, True])
@pytest.mark.parametrize("key_size", [1, 8, 15, 16, 17, 24, 100])
def test_key_format_at_the_edges(key_size, portable):
    for index in EDGES:
        assert _native.make_key(index, key_size, portable) == expected(index, key_size), (index, key_size)


@pytest.mark.parametrize("portable", [False, True])
def test_key_format_every_eight_digit_group(portable):
    # each 8-digit half goes through the same lane steps (SSE2 for both halves at once, or SWAR a half at
    # a time): sweep all its 4-digit lanes and 2-digit pairs
    rng = random.Random(7)
    indices = [hi * 10**8 + lo for hi in (0, 1, 42, 99_999_999) for lo in range(0, 10**8, 9_973)]
    indices += [rng.randrange(10**16) for _ in range(200_000)]
    for index in indices:
        assert _native.make_key(index, 16, portable) == expected(index, 16), index
