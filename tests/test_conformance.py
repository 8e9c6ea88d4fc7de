"""The engine contract, on every built engine: real libraries, real files.  The checks `kvlab engines check` runs
(kvlab/services/conformance.py: put and get, not found, delete, iteration, batches, transactions, errors, reopen,
threads, a crash) run on every built-in engine in tests/test_engine_check.py; here, the edges they leave out."""
import pytest

from kvlab import errors
from kvlab.services.conformance import k


def test_an_empty_key_is_absent_or_an_error_never_a_crash(open_engine):
    db = open_engine()
    db.put(k(1), b"x")
    try:  # an empty key is engine-defined (LMDB rejects it)
        assert db.get(b"") is None
    except errors.EngineError as exc:
        assert str(exc)


def test_a_scan_with_limit_zero_is_empty(open_engine):
    db = open_engine()
    for i in (1, 2, 3):
        db.put(k(i), b"v")
    assert db.scan(limit=0) == []
    assert [kv[0] for kv in db.scan(k(2), 0)] == []


def test_a_delete_persists_across_a_reopen(open_engine):
    db = open_engine()
    for i in range(1000):
        db.put(k(i), b"v%d" % i)
    db.delete(k(10))
    db.close()
    db2 = open_engine()
    assert db2.get(k(999)) == b"v999"
    assert db2.get(k(10)) is None
    assert len(db2.scan()) == 999


def test_closed_engine_raises(open_engine):
    db = open_engine()
    db.close()
    with pytest.raises(errors.EngineClosed):
        db.get(k(1))
