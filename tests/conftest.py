"""Shared fixtures: real engines in real temporary directories."""
import os

import pytest

from kvlab.execution import native
from kvlab.model import engines

# Engines whose libraries scripts/setup.sh installs from Debian: in CI their absence is a failure.
DEBIAN_ENGINES = ("lmdb", "leveldb", "rocksdb", "rocksdb-tuned", "wiredtiger-btree", "wiredtiger-lsm", "bdb",
                  "bdb-notxn")
# Configurations the contract suite runs on: one per adapter and variant.
CONFORMANCE = ("lmdb", "leveldb", "rocksdb", "wiredtiger-btree", "wiredtiger-lsm", "bdb", "bdb-notxn")


def require(name):
    cfg = engines.get(name)
    if cfg.adapter not in native.built_adapters():
        if os.environ.get("CI") and name in DEBIAN_ENGINES:
            pytest.fail(f"{name} is not built although scripts/setup.sh installs {cfg.debian_package}")
        pytest.skip(f"{name} not built: install {cfg.debian_package} and rebuild")
    return cfg


@pytest.fixture(params=CONFORMANCE)
def engine_name(request):
    require(request.param)
    return request.param


@pytest.fixture
def open_engine(tmp_path, engine_name):
    """Open engine_name in a fresh directory; returns a factory so tests can reopen."""
    from kvlab import _native
    cfg = engines.get(engine_name)
    handles = []

    def factory(**settings):
        h = _native.Engine(cfg.adapter, str(tmp_path / "db"), cfg.config(settings, max_threads=4))
        handles.append(h)
        return h

    (tmp_path / "db").mkdir()
    yield factory
    for h in handles:
        h.close()
