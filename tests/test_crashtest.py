"""kvlab crashtest at a small size on every engine configuration: a real child process writing
through the native driver, really killed with SIGKILL, the database really reopened.  The full
campaign (100 kills each, sync on and off) is benchmarks/crashtest_campaign.py."""
import subprocess
import sys

import pytest

from kvlab import engines, errors
from kvlab.execution.crash import check as crashcheck
from kvlab.execution.crash import crashtest as ct
from kvlab.model import dbformat

from .conftest import CONFORMANCE, require

# every configuration of the contract suite whose engine recovers after a crash (not bdb-notxn: no log)
RECOVERING = tuple(n for n in CONFORMANCE if dbformat.rules(engines.get(n)).recovers)


@pytest.mark.parametrize("name", RECOVERING)
def test_sync_on_loses_nothing_and_tears_nothing(name):
    require(name)
    # late enough that a writer fsyncing every commit (SQLite FULL) has acknowledged some on a busy machine
    r = ct.crashtest(name, kills=2, sync=True, seed=11, min_s=0.2, max_s=0.8)
    s = r.summary
    assert s["kills"] == 2 and s["reopen_failures"] == 0, r.kills
    assert s["acked_writes_lost"] == 0 and s["torn_txns"] == 0, r.kills
    assert s["acked_txns"] > 0 and all(k.recovered_to is not None for k in r.kills)


def test_sync_off_loss_is_measured_not_failed():
    """WiredTiger without sync runs without its log: a kill loses what was not checkpointed, and the
    report says how much; no transaction is torn."""
    require("wiredtiger-btree")
    r = ct.crashtest("wiredtiger-btree", kills=1, sync=False, seed=5, min_s=0.3, max_s=0.3)
    k = r.kills[0]
    assert k.reopen_error is None and not k.torn
    assert k.lost_txns == k.acked > 0 and k.lost_writes == 10 * k.lost_txns


def test_verify_accepts_prefixes_and_finds_torn_transactions():
    key = crashcheck.key
    intents = {1: [0 << 1, 1 << 1], 2: [1 << 1, (0 << 1) | 1], 3: [2 << 1]}
    # after 1, after 2 (key 0 deleted), after 3
    assert crashcheck.verify({}, 0, intents, {key(0): (1, 0), key(1): (1, 1)})[0] == 1
    assert crashcheck.verify({}, 0, intents, {key(1): (2, 0)})[0] == 2
    assert crashcheck.verify({}, 0, intents, {key(1): (2, 0), key(2): (3, 0)})[0] == 3
    assert crashcheck.verify({}, 0, intents, {})[0] == 0
    # half of transaction 1; half of 2 (its put without its delete)
    assert crashcheck.verify({}, 0, intents, {key(0): (1, 0)}) == (None, None)
    assert crashcheck.verify({}, 0, intents, {key(0): (1, 0), key(1): (2, 0)}) == (None, None)


def test_bad_input_and_directories(tmp_path):
    require("lmdb")
    with pytest.raises(errors.SpecError, match="kills must be at least 1"):
        ct.crashtest("lmdb", kills=0)
    with pytest.raises(errors.SpecError, match="batch must be 1..256"):
        ct.crashtest("lmdb", kills=1, batch=1000)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("not kvlab's")
    with pytest.raises(errors.UnsafeDirectory, match="not an empty directory"):
        ct.crashtest("lmdb", kills=1, db=tmp_path / "full")
    assert (tmp_path / "full" / "mine.txt").read_text() == "not kvlab's"
    r = ct.crashtest("lmdb", kills=1, db=tmp_path / "new", seed=2, max_s=0.2)
    assert r.summary["torn_txns"] == 0 and (tmp_path / "new").is_dir()   # left for inspection


def test_cli_prints_the_table_stores_the_report_and_fails_on_loss(tmp_path):
    require("lmdb")
    store = tmp_path / "s.duckdb"
    out = subprocess.run([sys.executable, "-m", "kvlab.cli", "crashtest", "--engine", "lmdb", "--kills", "1", "--sync",
                          "--seed", "4", "--max-delay", "0.2", "--store", str(store), "--tag", "ct"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "acked writes lost" in out.stdout and "lmdb" in out.stdout and "table crashtests" in out.stdout
    from kvlab.results.store import Store
    rows = Store(store).query("SELECT engine, sync, kills, tags FROM crashtests")
    assert rows.to_dict("records")[0] | {"tags": list(rows["tags"][0])} == \
        {"engine": "lmdb", "sync": True, "kills": 1, "tags": ["ct"]}
    bad = subprocess.run([sys.executable, "-m", "kvlab.cli", "crashtest", "--engine", "null", "--kills", "1"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "stores nothing" in bad.stderr
