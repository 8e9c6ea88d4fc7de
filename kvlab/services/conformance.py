"""`kvlab engines check NAME_OR_PATH`: the conformance checks every built-in engine passes, on any engine: one built
into kvlab, a version built at run time (NAME@VERSION) or your own (the path of its shared object).

Each check opens the engine in a fresh directory of its own (removed after) and says what went wrong when it fails:
reads and writes, not-found, deletes, iteration in key order with limits, batches (abort drops, commit applies,
atomically), transactions where the adapter has them, an error (not a crash) for what it cannot do, data kept across
a close and reopen, a 2-thread run through kvlab's driver (fillseq, then readrandom), and data kept across a SIGKILL while writing with `sync`
on (kvlab.execution.crash: every acknowledged transaction there, none half applied)."""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import engines, errors
from ..execution import native
from ..execution.crash import crashtest
from ..execution.run import runner
from ..model import dbformat
from ..model.spec import RunSpec


class Failed(Exception):
    """A check's finding: what the engine did, against what the contract asks."""


@dataclass(frozen=True)
class Outcome:
    check: str
    passed: bool | None        # None: not applicable here (said why)
    detail: str = ""


def k(i: int) -> bytes:
    return b"%016d" % i


def expect(ok: bool, what: str) -> None:
    if not ok:
        raise Failed(what)


class Opener:
    """Opens the engine in one fresh directory (`again` reopens the same one)."""

    def __init__(self, cfg, folder: Path):
        self.cfg, self.folder, self.handles = cfg, folder, []
        self.lib = native.load()
        self.name = native.adapter_name(cfg)
        (folder / "db").mkdir()

    def __call__(self, **settings):
        h = self.lib.Engine(self.name, str(self.folder / "db"), self.cfg.config(settings, max_threads=4))
        self.handles.append(h)
        return h

    def close_all(self):
        for h in self.handles:
            try:
                h.close()
            except errors.KvlabError:
                pass


def check_put_get(open_):
    db = open_()
    db.put(k(1), b"one")
    expect(db.get(k(1)) == b"one", f"get after put gave {db.get(k(1))!r}, not b'one'")
    db.put(k(1), b"uno")
    expect(db.get(k(1)) == b"uno", "an overwrite did not replace the value")
    big = bytes(range(256)) * 64
    db.put(k(2), big)
    expect(db.get(k(2)) == big, "a 16 KiB value with every byte value did not come back whole")


def check_not_found(open_):
    db = open_()
    db.put(k(1), b"x")
    expect(db.get(k(2)) is None, "get of an absent key did not say not found")


def check_delete(open_):
    db = open_()
    db.put(k(1), b"x")
    db.delete(k(1))
    expect(db.get(k(1)) is None, "a deleted key is still found")
    db.delete(k(12345))   # deleting an absent key is no error


def check_iteration(open_):
    db = open_()
    keys = [k(i) for i in (5, 1, 9, 3, 7, 2)]
    for key in keys:
        db.put(key, key[::-1])
    got = db.scan()
    expect([kv[0] for kv in got] == sorted(keys), f"a full scan gave {[kv[0] for kv in got]}, not the keys in order")
    expect(all(v == key[::-1] for key, v in got), "a scan gave a key with another key's value")
    expect([kv[0] for kv in db.scan(k(4), 2)] == [k(5), k(7)], "a scan from a key with a limit of 2 was wrong")
    expect(db.scan(k(10)) == [], "a scan past the last key found something")


def check_batch(open_):
    db = open_()
    db.batch_begin()
    for i in range(100):
        db.put(k(i), b"b")
    db.batch_abort()
    expect(all(db.get(k(i)) is None for i in range(100)), "an aborted batch left writes behind")
    db.batch_begin()
    for i in range(100):
        db.put(k(i), b"c")
    db.delete(k(50))
    db.batch_commit()
    expect(all(db.get(k(i)) == (None if i == 50 else b"c") for i in range(100)), "a committed batch is not all there")


def check_transactions(open_):
    db = open_(transactions=True)   # an adapter without txn_begin: kvlab brackets the writes in a batch
    db.txn_begin("write")
    db.put(k(1), b"t")
    db.txn_abort()
    expect(db.get(k(1)) is None, "an aborted write transaction left its write")
    db.txn_begin("write")
    db.put(k(1), b"t")
    db.txn_commit()
    expect(db.get(k(1)) == b"t", "a committed write transaction's write is missing")


def check_errors(open_):
    try:
        open_(create=False).close()
    except errors.KvlabError as exc:
        expect(bool(str(exc)), "the error for opening a missing database has no message")
        return None
    return "opening a missing database without create made one (allowed; nothing to check)"


def check_reopen(open_):
    db = open_()
    for i in range(1000):
        db.put(k(i), b"v%d" % i)
    db.close()
    again = open_()
    expect(all(again.get(k(i)) == b"v%d" % i for i in range(1000)), "after a close and reopen, data is missing")


def _name(cfg) -> str:
    """What a spec names the engine by: its name, or the path of an engine of your own."""
    return cfg.build if engines.descriptor(cfg).own else cfg.name


def check_threads(cfg, folder: Path):
    got = runner.run_spec(RunSpec(engine=_name(cfg), workloads=("fillseq", "readrandom"), num=5000, threads=2,
                                  seed=1, db=str(folder / "run"), interval=0.0))
    read = got[-1]
    expect(read.found == read.ops and read.ops > 0,
           f"readrandom at 2 threads found {read.found} of {read.ops} keys after fillseq wrote them all")


def check_crash(cfg, folder: Path):
    """Under the engine's durable setting (its descriptor's first Durability row promising "durable"; an engine of
    your own, which has none, with sync on)."""
    if not dbformat.rules(cfg).recovers:
        return "it keeps no log: its documentation promises no recovery of a database a killed process left open"
    durable = next((d for d in cfg.durability if d.claim == "durable"), None)
    if cfg.durability and durable is None:
        return (f"it promises no durability across a crash in any setting kvlab knows "
                f"({', '.join(f'{d.name}: {d.claim}' for d in cfg.durability)})")
    report = crashtest.crashtest(_name(cfg), kills=2, sync=True, setting=durable.name if durable else None,
                                 db=folder / "crash", num=2000, seed=7, max_s=0.4)
    s = report.summary
    expect(not s["reopen_failures"], f"{s['reopen_failures']} of 2 reopens after SIGKILL failed")
    expect(not s["torn_txns"], f"{s['torn_txns']} transactions half applied after SIGKILL")
    expect(not s["acked_writes_lost"], f"{s['acked_writes_lost']} acknowledged writes lost after SIGKILL "
                                       f"({'setting ' + durable.name if durable else 'sync on'})")
    return None


# name -> (check, takes the opener (else the configuration and a folder), what it checks)
CHECKS: dict[str, tuple[Callable, bool, str]] = {
    "put-get": (check_put_get, True, "a put is read back; an overwrite replaces; a 16 KiB value comes back whole"),
    "not-found": (check_not_found, True, "an absent key is not found (a counted outcome, no error)"),
    "delete": (check_delete, True, "a deleted key is gone; deleting an absent key is no error"),
    "iteration": (check_iteration, True, "a cursor goes in key order from a key, with a limit"),
    "batch": (check_batch, True, "a batch is atomic: abort drops it, commit applies it whole"),
    "transactions": (check_transactions, True, "a write transaction (a batch where the adapter has none): abort drops "
                                               "it, commit applies it"),
    "errors": (check_errors, True, "what it cannot do is an error with a message, not a crash"),
    "reopen": (check_reopen, True, "data written is there after a close and reopen"),
    "threads": (check_threads, False, "kvlab's driver at 2 threads: fillseq, then readrandom finds every key"),
    "crash": (check_crash, False, "SIGKILL while writing, at its durable setting (yours: sync on): every "
                                  "acknowledged transaction there, whole"),
}


def run_checks(name: str, only: tuple = ()) -> list[Outcome]:
    """Every check (or those named in `only`) on engine `name`; an engine that does not load is one failure."""
    cfg = native.require_built(name)
    out = []
    for check, (fn, takes_opener, _) in CHECKS.items():
        if only and check not in only:
            continue
        if not cfg.stores_data and check in ("reopen", "crash", "iteration", "not-found", "delete", "batch",
                                             "put-get", "threads", "transactions"):
            out.append(Outcome(check, None, "the engine stores nothing (the null engine)"))
            continue
        folder = Path(tempfile.mkdtemp(prefix="kvlab-check-"))
        opener = Opener(cfg, folder) if takes_opener else None
        try:
            said = fn(opener) if takes_opener else fn(cfg, folder)
            out.append(Outcome(check, None if said else True, said or ""))
        except Failed as exc:
            out.append(Outcome(check, False, str(exc)))
        except errors.KvlabError as exc:
            out.append(Outcome(check, False, f"{type(exc).__name__}: {exc}"))
        finally:
            if opener is not None:
                opener.close_all()
            shutil.rmtree(folder, ignore_errors=True)
    return out
