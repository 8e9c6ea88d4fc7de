"""The engine contract, on every built engine: real libraries, real files."""
import pytest

from kvlab import errors


def k(i):
    return b"%016d" % i


def test_put_get_overwrite(open_engine):
    db = open_engine()
    db.put(k(1), b"one")
    assert db.get(k(1)) == b"one"
    db.put(k(1), b"uno")
    assert db.get(k(1)) == b"uno"


def test_not_found_is_none(open_engine):
    db = open_engine()
    db.put(k(1), b"x")
    assert db.get(k(2)) is None
    try:  # an empty key is engine-defined (LMDB rejects it): absent or an error, never a crash
        assert db.get(b"") is None
    except errors.EngineError as exc:
        assert str(exc)


def test_delete(open_engine):
    db = open_engine()
    db.put(k(1), b"x")
    db.delete(k(1))
    assert db.get(k(1)) is None
    db.delete(k(12345))  # deleting an absent key is not an error on any engine


def test_scan_order_and_limits(open_engine):
    db = open_engine()
    keys = [k(i) for i in (5, 1, 9, 3, 7, 2)]
    for key in keys:
        db.put(key, key[::-1])
    got = db.scan()
    assert [kv[0] for kv in got] == sorted(keys)
    assert all(v == key[::-1] for key, v in got)
    assert [kv[0] for kv in db.scan(k(4), 2)] == [k(5), k(7)]
    assert db.scan(k(10)) == []
    assert db.scan(limit=0) == []


def test_batch_is_atomic(open_engine):
    db = open_engine()
    db.batch_begin()
    for i in range(100):
        db.put(k(i), b"b")
    db.batch_abort()
    assert all(db.get(k(i)) is None for i in range(100))
    db.batch_begin()
    for i in range(100):
        db.put(k(i), b"c")
    db.delete(k(50))
    db.batch_commit()
    assert db.get(k(50)) is None
    assert all(db.get(k(i)) == b"c" for i in range(100) if i != 50)


def test_reopen_persists(open_engine):
    db = open_engine()
    for i in range(1000):
        db.put(k(i), b"v%d" % i)
    db.delete(k(10))
    db.close()
    db2 = open_engine()
    assert db2.get(k(999)) == b"v999"
    assert db2.get(k(10)) is None
    assert len(db2.scan()) == 999


def test_binary_values(open_engine):
    db = open_engine()
    value = bytes(range(256)) * 40
    db.put(k(1), value)
    assert db.get(k(1)) == value


def test_closed_engine_raises(open_engine):
    db = open_engine()
    db.close()
    with pytest.raises(errors.EngineClosed):
        db.get(k(1))
