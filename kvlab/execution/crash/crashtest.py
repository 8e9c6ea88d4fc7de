"""Crash tests: a child process writes through the native driver (workload `crashwrite`: transactions
of puts and deletes on random keys, each value stamped with its transaction and position) and reports
down a pipe every transaction's content before it starts and its sequence number once the engine
acknowledged it; the parent kills it with SIGKILL at a random moment (seeded), reopens the database,
times the reopen (recovery), reads every key and checks the state against the history it was told:

- the database must equal the state after some prefix 1..X of the transactions (a transaction is
  all there or not at all: anything else is a torn transaction);
- acknowledged transactions after X are lost writes: with sync on there must be none; with sync off
  they are measured and reported (a SIGKILL loses only what the engine kept in its own memory, since
  the page cache survives a process kill; a machine crash would lose more: this test does not pull
  the power).

The next child continues from X + 1 on the same database, so N kills make one history.  The idea is
RocksDB's db_crashtest/db_stress, for every engine.

With power_loss=True the child writes through a forgetfs mount (kvlab.execution.crash.forgetfs) over the
database directory, and each kill is followed by a power cut: what the engine never fsynced (file
data, and entries whose directory it never fsynced) is lost, as the loss model says; the parent
reopens the directory itself.  The database is made (opened and closed once, durably) before the
first cut, so the history starts from an empty database.  A durability setting (DURABILITY: LMDB's
nometasync, RocksDB without its WAL, BerkeleyDB's txn_write_nosync, ...) says what the engine's
documentation promises, and so what a cut may cost: `durable` (no acknowledged write lost, nothing
torn, every reopen works), `prefix` (recent writes may be lost, never a torn transaction or a failed
reopen) or `none` (the engine says a crash may corrupt: only measured).

The pieces: execution.crash.settings (the durability settings and their promises), execution.crash.child (the
writer and reader processes, the pipe), execution.crash.check (the state a reopened database must hold).
"""
from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ... import engines, errors
from .. import native
from ..worker import spawn
from . import child as crashchild
from . import forgetfs, reboot
from .check import torn_kind, verify
from .settings import CLAIMS, DURABILITY, Durability, durability

__all__ = ["CLAIMS", "DURABILITY", "MAX_BATCH", "CrashReport", "Durability", "Kill", "crashtest", "durability",
           "format_table"]

MAX_BATCH = 256
GO_ON = 20   # with a fault: transactions the writer tries after the first one its engine failed


@dataclass
class Kill:
    """One kill: when, what had been acknowledged, what the reopened database held."""
    after_s: float                 # the kill, seconds after the child started writing
    acked: int                     # transactions acknowledged in this round
    started: int                   # transactions whose intent was sent (acked, in flight, or never begun)
    recovered_to: int | None       # X: the database equals the state after transactions 1..X
    lost_txns: int                 # acknowledged transactions after X
    lost_writes: int               # their puts and deletes
    torn: bool                     # the database matched no prefix: a transaction was half applied
    reopen_error: str | None       # the engine refused to reopen
    recovery_ms: float | None      # time to reopen (the engine's recovery)
    cut: dict | None = None        # power loss: what the file system dropped (forgetfs' summary)
    kept_at: str | None = None     # a damaged database, copied here for inspection
    torn_kind: str | None = None   # torn: "half" (a transaction partly there) or "out of order" (whole
    #                                transactions there after missing ones, as far as the writes show)
    fault: dict | None = None      # an injected fault: what forgetfs made fail (its summary's "fault")
    writer_error: dict | None = None   # the error the writer's engine call returned ({"error", "message"}), if any
    failed_txn: int | None = None  # the transaction in flight when that call failed
    failed_present: bool | None = None   # the reopened database holds it though it was reported failed
    readback: dict | None = None   # go_on: the failed transaction read back at once ({"shown", "puts", "failed_gets"}:
    #                                puts a get returned with its stamp, data the engine said it did not commit)
    acked_after_error: int = 0     # go_on: transactions the engine acknowledged after it failed one
    lost_after_error: int | None = 0   # ... the writes of those the reopened database lacks (None: it did not reopen)
    later_error: dict | None = None   # go_on: the error that stopped the writer after it went on (or its signal)
    restart_saw_failed: bool | None = None   # restart: a new process, before the cut, read the failed transaction
    restart_error: str | None = None   # ... or could not open or read the database
    boot_id: str | None = None     # power loss: the boot id the reopen saw (a new one per cut: execution.crash.reboot)
    reopen_log: list = field(default_factory=list)   # the last lines the reader wrote on stderr (the engine's log)


@dataclass
class CrashReport:
    engine: str
    sync: bool
    batch: int
    num: int
    seed: int
    kills: list = field(default_factory=list)
    setting: str = ""              # the durability setting's name
    claim: str = "prefix"          # what the engine promises for it (CLAIMS)
    power_loss: bool = False
    loss: str | None = None        # the loss model of the power cuts
    names: str | None = None       # when entries are durable: posix (their directory's fsync) or ext4 (any fsync)
    settings: dict = field(default_factory=dict)
    fault: str | None = None       # the injected fault, in words (forgetfs.Fault.words)
    reboot: bool = False           # each power cut was a reboot: the reopen saw a new boot id
    boot_id_read: bool = False     # the engine read the boot id (else no process of it could tell a reboot)

    @property
    def summary(self) -> dict:
        done = [k for k in self.kills if k.reopen_error is None]
        rec = sorted(k.recovery_ms for k in done if k.recovery_ms is not None)
        return {
            "engine": self.engine, "sync": self.sync, "setting": self.setting, "claim": self.claim,
            "crash": (f"power cut ({self.loss}{', ext4' if self.names == 'ext4' else ''})" if self.power_loss
                      else "SIGKILL") + (f" + {self.fault}" if self.fault else ""), "kills": len(self.kills),
            "fault": self.fault,
            "faults_fired": sum(bool((k.fault or {}).get("errors")) for k in self.kills),
            "writer_saw_error": sum(_saw(k) for k in self.kills),
            "writer_errors": sorted({k.writer_error["error"] for k in self.kills if _saw(k)}),
            "open_failures": sum(k.writer_error is not None and not _saw(k) for k in self.kills),
            "failed_txns_present": sum(bool(k.failed_present) for k in self.kills),
            "failed_read_back": sum(bool((k.readback or {}).get("shown")) for k in self.kills),
            "read_back_tried": sum(k.readback is not None for k in self.kills),
            "went_on": sum(k.acked_after_error > 0 for k in self.kills),
            "acked_after_error": sum(k.acked_after_error for k in self.kills),
            "lost_after_error": sum(k.lost_after_error or 0 for k in self.kills),
            "later_errors": sorted({k.later_error["error"] for k in self.kills if k.later_error}),
            "restart_saw_failed": sum(bool(k.restart_saw_failed) for k in self.kills),
            "restart_errors": sum(k.restart_error is not None for k in self.kills),
            "reopen_failures": sum(k.reopen_error is not None for k in self.kills),
            "acked_txns": sum(k.acked for k in self.kills),
            "acked_writes_lost": sum(k.lost_writes for k in self.kills),
            "acked_txns_lost": sum(k.lost_txns for k in self.kills),
            "kills_with_loss": sum(k.lost_txns > 0 for k in self.kills),
            "torn_txns": sum(k.torn for k in self.kills),
            "torn_half": sum(k.torn_kind == "half" for k in self.kills),
            "recovery_ms_p50": rec[len(rec) // 2] if rec else None,
            "recovery_ms_max": rec[-1] if rec else None,
            "kept": [k.kept_at for k in self.kills if k.kept_at],
        }

    @property
    def broken_promises(self) -> list[str]:
        """What the engine's promise for this setting forbids and this test saw."""
        s, out = self.summary, []
        if self.claim in ("durable", "prefix"):
            if s["reopen_failures"]:
                out.append(f"{s['reopen_failures']} reopen failures")
            if s["torn_txns"]:
                out.append(f"{s['torn_txns']} torn transactions")
        if self.claim == "durable" and s["acked_writes_lost"]:
            out.append(f"{s['acked_writes_lost']} acknowledged writes lost")
        return out

    def to_dict(self) -> dict:
        return {"engine": self.engine, "sync": self.sync, "batch": self.batch, "num": self.num, "seed": self.seed,
                "setting": self.setting, "claim": self.claim, "power_loss": self.power_loss, "loss": self.loss,
                "names": self.names, "fault": self.fault, "reboot": self.reboot, "boot_id_read": self.boot_id_read,
                "settings": self.settings, "summary": self.summary, "kills": [asdict(k) for k in self.kills]}


@dataclass
class _Campaign:
    """One crash test's checked arguments and its places: what every round of it uses."""
    engine: str
    cfg: engines.EngineConfig
    chosen: Durability
    settings: dict                 # the engine settings in effect: the durability setting's and the caller's
    batch: int
    num: int
    value_size: int
    min_s: float
    max_s: float
    power_loss: bool
    loss: str
    names: str
    cut_on: str | None
    keep_damaged: int
    fault: object
    rng: random.Random
    path: Path                     # the database directory (under a forgetfs mount with power_loss)
    temporary: bool                # made here, removed at the end
    lib: object = None             # the loaded extension
    env: dict = field(default_factory=dict)   # the children's environment: they import this kvlab
    log: Path | None = None        # forgetfs' log of the current round (power_loss)
    reboot: bool = False           # each cut is a reboot: every process lives in a boot of its own (reboot.py)
    boot: int = 0                  # cuts so far: the boot the next process lives in
    seed: int = 0
    go_on: int = 0                 # transactions a writer tries after the first its engine failed
    restart: bool = False          # after a failure, a new process reopens the database before the cut
    boot_read: bool = False        # a writer's engine read the boot id (the interposer said so on its stderr)

    def boot_id(self) -> str | None:
        return reboot.boot_id(self.seed, self.boot) if self.reboot else None

    def prefix(self, making: bool = False):
        """The command line a worker runs under: in this boot, where the engine reads the boot id (or, `making`,
        before any writer has said); None: the fork server's, with the host's id, which such an engine never sees."""
        boot = self.boot_id()
        return reboot.prefix(boot) if boot is not None and (self.boot_read or making) else None

    def environ(self) -> dict:
        """A writer's environment: in this boot."""
        boot = self.boot_id()
        return reboot.environ(self.env, boot) if boot is not None else self.env

    def heard(self, stderr: str) -> None:
        self.boot_read = self.boot_read or reboot.SAID in stderr

    def cut(self, mount) -> dict:
        """The power cut: forgetfs' summary; the machine comes back in a new boot."""
        self.boot += 1
        return mount.cut()


@dataclass
class _History:
    """Where the one history of all the kills stands: the state after its transaction `last`."""
    expected: dict = field(default_factory=dict)
    last: int = 0
    kept: int = 0                  # damaged databases copied out so far


@dataclass
class _Round:
    """One writer's life: its pipe, the last transaction it started, seconds to the kill, the power cut's summary."""
    pipe: crashchild.Pipe
    started: int
    after: float
    cut: dict | None
    error: dict | None = None      # the writer's engine call failed (an injected fault) before the kill
    later: dict | None = None      # go_on: the error that stopped it after it went on
    restart: dict | None = None    # restart: what a new process read through the page cache before the cut


def crashtest(engine: str, kills: int, sync: bool = False, db: str | os.PathLike | None = None, seed: int | None = None,
              batch: int = 10, num: int = 10_000, value_size: int = 100, min_s: float = 0.05, max_s: float = 0.8,
              on_kill=None, power_loss: bool = False, loss: str = "all", setting: str | None = None,
              settings: dict | None = None, keep_damaged: int = 3, names: str = "posix",
              cut_on: str | None = None, fault: forgetfs.Fault | None = None, reboot_on_cut: bool = True,
              go_on: int | None = None, restart: bool = False) -> CrashReport:
    """Kill a writing child `kills` times and check the database after each (module docstring).
    `db`: a directory that does not exist yet or is empty (kvlab creates it and leaves it for you to look
    at); by default a temporary one, removed afterwards.  `on_kill(i, Kill)` is called after each.
    `power_loss`: each kill is also a power cut of a forgetfs mount (`loss`: all, random or torn; `names`:
    posix, entries durable when their directory is fsynced, or ext4, when any file is).
    `setting`: a durability setting of the engine (DURABILITY; its settings replace `sync`); `settings`:
    further engine settings on top.  `cut_on`: a regular expression; the kill comes `min_s` seconds after a
    new entry whose name matches it appears in the database directory after the writer opened it (a crash
    point: a new log file, say), or at `max_s` when none does.  Under power loss, up to `keep_damaged`
    databases that broke the setting's promise are copied out and left (Kill.kept_at), with the file
    system's log.  `fault` (forgetfs.Fault: fsync-eio, write-eio, enospc): injected by the file system in every
    round, which implies power_loss; the writer tells the first transaction its engine fails (Kill.writer_error),
    reads it back at once (Kill.readback) and goes on for `go_on` more transactions (default GO_ON with a fault,
    else 0: stop there), as a caller that retries would; then the power is cut at once.  `restart` (with a fault):
    before the cut, a new process reopens the database through the page cache that still holds what failed (the
    application restarts, as in Rebello et al.'s study: Kill.restart_saw_failed), then the power goes.  `reboot_on_cut`: a power cut is a reboot, the reopen after it sees a new boot id
    (execution.crash.reboot); False keeps the host's, as a cut that leaves the machine up."""
    cfg = engines.get(engine)
    native.require_built(engine, load_now=False)   # the writers and readers load it
    _check_sizes(cfg, kills, batch, num, value_size, min_s, max_s, loss)
    go_on = (GO_ON if fault is not None else 0) if go_on is None else go_on
    if not 0 <= go_on <= 1_000_000:
        raise errors.SpecError(f"crashtest: go_on must be 0..1,000,000 (transactions after a failed one), got {go_on}")
    chosen = durability(engine, setting, sync)
    _check_patterns(cut_on, names)
    power_loss = power_loss or fault is not None   # a fault is the file system's: forgetfs injects it
    if power_loss:
        forgetfs.require()
        if reboot_on_cut:
            reboot.library()   # built now: a missing compiler is said before anything is written
    seed = random.SystemRandom().randrange(1, 2**31) if seed is None else seed
    path, temporary, lock = _database_dir(db)
    try:
        c = _Campaign(engine=engine, cfg=cfg, chosen=chosen, settings={**engines.descriptor(cfg).crash_settings, **chosen.settings,
                                                                **(settings or {})},
                      batch=batch, num=num, value_size=value_size, min_s=min_s, max_s=max_s, power_loss=power_loss,
                      loss=loss, names=names, cut_on=cut_on, keep_damaged=keep_damaged, fault=fault,
                      rng=random.Random(seed), path=path, temporary=temporary,
                      reboot=power_loss and reboot_on_cut, seed=seed, go_on=go_on, restart=restart)
        report = CrashReport(engine=engine, sync=bool(c.settings.get("sync")), batch=batch, num=num, seed=seed,
                             setting=chosen.name, claim=chosen.claim, power_loss=power_loss,
                             loss=loss if power_loss else None, names=names if power_loss else None, settings=c.settings,
                             fault=fault.words() if fault is not None else None, reboot=c.reboot)
        c.lib = native.load()
        c.env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[3]),
                                                                         os.environ.get("PYTHONPATH", "")] if p))
        c.log = Path(tempfile.mkstemp(prefix="kvlab-forgetfs-", suffix=".log")[1]) if power_loss else None
    except BaseException:
        os.close(lock)
        if temporary:
            shutil.rmtree(path, ignore_errors=True)
        raise
    history = _History()
    try:
        _fresh(c)
        for i in range(kills):
            kill, then = _one_kill(c, i, history)
            report.kills.append(kill)
            if on_kill:
                on_kill(i, kill)
            if then == "stop":
                break
            if then == "restart":   # the damaged one kept: the next cut starts a new history
                history.kept += kill.kept_at is not None
                _fresh(c, clear=True)
                history.expected, history.last = {}, 0
        report.boot_id_read = c.boot_read
    finally:
        if temporary:
            shutil.rmtree(path, ignore_errors=True)
        if c.log is not None:
            c.log.unlink(missing_ok=True)
        os.close(lock)
    return report


def _check_sizes(cfg, kills, batch, num, value_size, min_s, max_s, loss):
    if not cfg.stores_data:
        raise errors.SpecError(f"crashtest: {cfg.name} stores nothing; choose an engine that keeps data")
    if kills < 1:
        raise errors.SpecError(f"crashtest: kills must be at least 1, got {kills}")
    if not 1 <= batch <= MAX_BATCH:
        raise errors.SpecError(f"crashtest: batch must be 1..{MAX_BATCH} (writes per transaction), got {batch}")
    if num < 1 or value_size < 12:
        raise errors.SpecError(f"crashtest: num must be >= 1 and value_size >= 12 (the stamp), got {num}, {value_size}")
    if not 0 <= min_s <= max_s:
        raise errors.SpecError(f"crashtest: need 0 <= min_s <= max_s, got {min_s}, {max_s}")
    if loss not in forgetfs.LOSS_MODELS:
        raise errors.SpecError(f"crashtest: loss model {loss!r} is unknown; allowed: {', '.join(forgetfs.LOSS_MODELS)}")


def _check_patterns(cut_on, names):
    if cut_on is not None:
        try:
            re.compile(cut_on)
        except re.error as exc:
            raise errors.SpecError(f"crashtest: cut_on {cut_on!r} is not a regular expression: {exc}") from None
    if names not in forgetfs.NAME_MODELS:
        raise errors.SpecError(f"crashtest: names model {names!r} is unknown; "
                               f"allowed: {', '.join(forgetfs.NAME_MODELS)}")


def _database_dir(db) -> tuple:
    """(the directory the test writes its database in, whether it is a temporary one made here, the lock held on
    it).  The lock is the directory's own flock (a file in it would meet the power cuts' mount): a second test on
    the same directory is refused before it writes anything."""
    if db is None:
        path = Path(tempfile.mkdtemp(prefix="kvlab-crashtest-"))
        return path, True, _lock_dir(path)
    path = Path(db)
    _refuse_non_empty(path)
    path.mkdir(parents=True, exist_ok=True)
    lock = _lock_dir(path)
    try:
        _refuse_non_empty(path)   # as it is now that nobody else can start on it
    except BaseException:
        os.close(lock)
        raise
    return path, False, lock


def _refuse_non_empty(path: Path):
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise errors.UnsafeDirectory(f"crashtest: {path} exists and is not an empty directory; give a new or "
                                     "empty one (the test writes a fresh database there)")


def _lock_dir(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise errors.EngineBusy(f"crashtest: {path} is in use by another crash test; nothing in it was touched; "
                                "allowed: wait for it to end, or another directory") from None
    return fd


def _fresh(c: _Campaign, clear: bool = False):
    """An empty database in the test's directory (cleared first if asked): the setting's files, then, for power
    cuts, the database made and closed once so that it exists durably before the first cut."""
    if clear:
        for p in c.path.iterdir():
            shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    for name, text in c.chosen.files:
        (c.path / name).write_text(text)
    if c.power_loss:   # in a worker: the campaign's own process opens no engine
        got = spawn.call("kvlab.execution.crash.child:make_and_close", (c.engine, str(c.path), c.settings),
                         prefix=c.prefix(making=True))
        if got.error is not None:
            raise got.error
        if not got.returned:
            raise errors.EngineError(f"crashtest: making the database died ({got.how()}): "
                                     f"{got.log[-1] if got.log else 'no message'}")


def _one_kill(c: _Campaign, i: int, h: _History) -> tuple:
    """Round `i`: a writer killed (and the power cut), the database reopened and judged.  (its Kill, then what:
    "next" goes on from the state found, "restart" from a fresh database, "stop" ends the test)."""
    mount = None
    if c.power_loss:
        c.log.write_text("")
        fault = dataclasses.replace(c.fault, armed_later=True) if c.fault is not None else None
        mount = forgetfs.Mount(c.path, loss=c.loss, seed=c.rng.randrange(1, 2**62), log=c.log, names=c.names,
                               fault=fault)
    try:
        rnd = _round(c, i, c.path if mount is None else mount.path, h.last, mount)
    finally:
        if mount is not None:
            mount.close()   # after a cut: only makes sure the mount is gone
    if isinstance(rnd, Kill):   # the database would not open for the next writer
        return rnd, "stop"
    acked = rnd.pipe.acked
    # a database that opens but cannot be read through is as broken as one that does not open; after
    # a power cut it may even abort the reader (LMDB's assertions): it reads in a worker of its own
    actual, recovery_ms, what, said = crashchild.reopen_in_worker(c.engine, c.path, c.settings, c.prefix())
    if what is not None:
        kill = Kill(rnd.after, _acked_in_round(acked, h.last, _failed_txn(rnd, h.last)),
                    max(0, rnd.started - h.last), None, 0, 0, False, what,
                    recovery_ms, rnd.cut, fault=(rnd.cut or {}).get("fault"), writer_error=rnd.error,
                    failed_txn=_failed_txn(rnd, h.last), boot_id=c.boot_id(), reopen_log=said, readback=rnd.pipe.readback,
                    later_error=rnd.later)
        if kill.failed_txn is not None:
            kill.acked_after_error = max(0, acked - kill.failed_txn)
            kill.lost_after_error = None   # not known: the database did not reopen
        _restart_into(kill, rnd)
        if c.power_loss and h.kept < c.keep_damaged:
            kill.kept_at = _keep(c.path, c.engine, c.log)
        return kill, "restart" if c.power_loss and c.temporary else "stop"   # else nothing to continue from
    kill = _judge(c, h, rnd, acked, actual, recovery_ms)
    kill.boot_id, kill.reopen_log = c.boot_id(), said
    return kill, "next"


def _saw(k) -> bool:
    """The writer's engine reported an error while it wrote (not its open failing after the last cut)."""
    return k.writer_error is not None and k.writer_error.get("during") != "open"


def _failed_txn(rnd: _Round, last: int) -> int | None:
    """The transaction the engine reported failed: the one the writer told (go_on), else the one in flight when an
    engine call returned an error (not when the writer died of a signal: the engine reported nothing)."""
    if rnd.pipe.failed is not None:
        return rnd.pipe.failed["seq"]
    died = (rnd.error or {}).get("error", "").startswith("died")
    return rnd.started if rnd.error and not died and rnd.started > last else None


def _acked_in_round(acked: int, last: int, failed: int | None) -> int:
    """Transactions acknowledged in a round: those after `last` up to `acked`, less the failed one among them."""
    return max(0, acked - last) - (failed is not None and last < failed < acked)


def _judge(c: _Campaign, h: _History, rnd: _Round, acked: int, actual: dict, recovery_ms: float | None) -> Kill:
    """The Kill of a round whose database reopened holding `actual`; the history moves on to it.  A transaction the
    engine reported failed may be there or not: the state after a prefix with it, or with it left out, both
    hold."""
    pipe = rnd.pipe
    failed = _failed_txn(rnd, h.last)
    x, state = verify(h.expected, h.last, pipe.intents, actual)
    present = failed is not None and x is not None and x >= failed
    if failed is not None and not present:
        x2, state2 = verify(h.expected, h.last, pipe.intents, actual, skip=failed)
        if x2 is not None:
            x, state = x2, state2
    torn = x is None
    kind = torn_kind({q: o for q, o in pipe.intents.items() if q > h.last}, actual) if torn else None
    if torn:   # continue from what is there, after every sequence number used so far
        x, state = rnd.started, actual
    lost = [s for s in range(x + 1, acked + 1) if s != failed]
    kill = Kill(rnd.after, _acked_in_round(acked, h.last, failed), max(0, rnd.started - h.last), None if torn else x,
                len(lost),
                sum(len(pipe.intents.get(s, ())) for s in lost), torn, None, recovery_ms, rnd.cut, torn_kind=kind,
                fault=(rnd.cut or {}).get("fault"), writer_error=rnd.error, readback=pipe.readback,
                later_error=rnd.later)
    if failed is not None:   # the transaction the engine reported failed
        kill.failed_txn = failed
        kill.failed_present = not torn and present
        kill.acked_after_error = max(0, acked - failed)
        kill.lost_after_error = sum(len(pipe.intents.get(s, ())) for s in lost if s > failed)
    _restart_into(kill, rnd)
    if c.power_loss and h.kept < c.keep_damaged and (torn or (lost and c.chosen.claim == "durable")):
        kill.kept_at = _keep(c.path, c.engine, c.log)
        h.kept += 1
    h.expected, h.last = state, x
    return kill


def _restart_into(kill: Kill, rnd: _Round) -> None:
    """`restart`: what the restart before the cut read (Kill.restart_saw_failed), or why it could not."""
    if rnd.restart is None:
        return
    kill.restart_error = rnd.restart["error"]
    if kill.failed_txn is not None and rnd.restart["state"] is not None:
        kill.restart_saw_failed = any(isinstance(v[0], int) and v[0] == kill.failed_txn
                                      for v in rnd.restart["state"].values())


def _keep(path: Path, engine: str, log: Path | None) -> str:
    """Copy a damaged database (and the file system's log) where it survives the test, sparse files sparse."""
    dest = Path(tempfile.mkdtemp(prefix=f"kvlab-damaged-{engine}-"))
    subprocess.run(["cp", "-a", "--sparse=always", f"{path}/.", str(dest / "db")], check=False,
                   capture_output=True)
    if log is not None and log.exists():
        shutil.copy(log, dest / "forgetfs.log")
    return str(dest)


def _wait_for_entry(folder: Path, pattern: str, before: set, limit_s: float) -> float | None:
    """Seconds until a new entry matching `pattern` appears in `folder` (polled each millisecond), or None."""
    rx, t0 = re.compile(pattern), time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        if any(rx.search(n) for n in set(os.listdir(folder)) - before):
            return time.perf_counter() - t0
        time.sleep(0.001)
    return None


def _round(c: _Campaign, i: int, where: Path, last: int, mount) -> _Round | Kill:
    """One writer, started on `where`, killed at a random moment (then the power cut, with a mount): the
    _Round, or a Kill when the writer could not open the database after the last kill."""
    r, w = os.pipe()
    args = {"engine": c.engine, "path": str(where), "settings": c.settings, "batch": c.batch, "num": c.num,
            "value_size": c.value_size, "seed": c.rng.randrange(1, 2**62), "first_seq": last + 1, "fd": w,
            "go_on": c.go_on, "wait_go": c.fault is not None}
    child = subprocess.Popen([sys.executable, "-m", crashchild.CHILD, json.dumps(args)], pass_fds=(w,),
                             env=c.environ(), stdin=subprocess.PIPE if c.fault is not None else subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(w)
    pipe = crashchild.Pipe(r)
    pipe.start()
    if not pipe.ready.wait(60) or child.poll() is not None:
        child.kill()
        _, err = child.communicate()
        text = err.decode(errors="replace").strip()
        c.heard(text)
        if c.fault is not None and child.returncode is not None:   # the engine's open failed (after the last cut)
            pipe.join(30)
            cut = c.cut(mount) if mount is not None else None
            return _Round(pipe, last, 0.0, cut, error=_ended_how(child.returncode, text, "open"))
        if i > 0 and "kvlab.errors." in text:   # the database would not open after the last kill
            return Kill(0.0, 0, 0, None, 0, 0, False, "the next writer's open: " + text.splitlines()[-1], None)
        raise errors.EngineError(f"crashtest: the {c.engine} writer did not start: {text[-800:]}")
    if mount is not None and c.fault is not None:
        mount.arm()   # the fault counts the writer's calls from here, not the open's
    if c.fault is not None:   # and the writer starts writing only now
        try:
            child.stdin.write(b"g")
            child.stdin.close()
        except OSError:
            pass
        child.stdin = None   # communicate() has nothing more to send
    if c.cut_on:   # entries the writer's open made are not the crash point
        before = set(os.listdir(c.path))
        t0 = time.perf_counter()
        seen = _wait_for_entry(c.path, c.cut_on, before, c.max_s)
        if seen is not None:
            time.sleep(c.min_s)
        after = time.perf_counter() - t0
    else:
        after = c.rng.uniform(c.min_s, c.max_s)
        time.sleep(after)
    if child.poll() is not None:
        _, err = child.communicate()
        pipe.join(30)
        text = err.decode(errors="replace").strip()
        c.heard(text)
        if pipe.error is not None or c.fault is not None:   # an engine call failed (the fault), or the writer died
            ended = pipe.error or _ended_how(child.returncode, text, "write" if pipe.opened else "open")
            restarted = _restart(c, where) if pipe.opened else None
            cut = c.cut(mount) if mount is not None else None   # of it: the power goes now, as after a kill
            if pipe.failed is not None:   # it went on after the first failure: what stopped it, if anything did
                return _Round(pipe, max(pipe.intents, default=last), after, cut, error=pipe.failed,
                              later=ended if ended["error"] != "ended" else None, restart=restarted)
            return _Round(pipe, max(pipe.intents, default=last), after, cut, error=ended, restart=restarted)
        if i > 0 and "kvlab.errors.EngineCorruption" in text:   # it opened, then its writes found the last cut's damage
            return Kill(0.0, 0, 0, None, 0, 0, False, "the next writer found it corrupted: " + text.splitlines()[-1],
                        None)
        raise errors.EngineError(f"crashtest: the {c.engine} writer ended before the kill: {text[-800:]}")
    child.send_signal(signal.SIGKILL)
    c.heard(child.communicate()[1].decode(errors="replace"))
    pipe.join(30)
    restarted = _restart(c, where) if pipe.failed is not None else None
    cut = c.cut(mount) if mount is not None else None
    return _Round(pipe, max(pipe.intents, default=last), after, cut, error=pipe.failed, restart=restarted)


def _restart(c: _Campaign, where: Path) -> dict | None:
    """`restart`: the database reopened by a new process in the same boot, before the cut, through the page cache
    that still holds what failed: {"state", "error"} (None without `restart`)."""
    if not c.restart or c.fault is None:
        return None
    actual, _, what, _ = crashchild.reopen_in_worker(c.engine, where, c.settings, c.prefix())
    return {"state": actual, "error": what}


def _ended_how(returncode: int, text: str, during: str) -> dict:
    """A writer that ended without reporting an engine error: its error from its last words, or its signal."""
    last = text.splitlines()[-1] if text else ""
    if returncode < 0:
        name = signal.Signals(-returncode).name
        said = next((ln for ln in reversed(text.splitlines()) if "Assertion" in ln or "assert" in ln), last)
        return {"error": f"died: {name}", "message": said[-300:], "during": during}
    kind = re.search(r"kvlab\.errors\.(\w+)", last)
    return {"error": kind.group(1) if kind else "ended", "message": last[-300:], "during": during}


def format_table(reports: list) -> str:
    """One line per engine configuration, setting and kind of crash (with an injected fault: what it did)."""
    if any(r.fault for r in reports):
        return _fault_table(reports)
    head = (f"{'engine':<18} {'setting':<18} {'crash':<21} {'kills':>5} {'reopen fail':>11} {'acked txns':>10} "
            f"{'acked writes lost':>17} {'kills w/ loss':>13} {'torn txns':>9} {'recovery ms p50/max':>20}")
    lines = [head, "-" * len(head)]
    for r in reports:
        s = r.summary
        rec = "-" if s["recovery_ms_p50"] is None else f"{s['recovery_ms_p50']:.1f} / {s['recovery_ms_max']:.1f}"
        setting = s["setting"] or f"sync {'on' if s['sync'] else 'off'}"
        lines.append(f"{s['engine']:<18} {setting:<18} {s['crash']:<21} {s['kills']:>5} {s['reopen_failures']:>11} "
                     f"{s['acked_txns']:>10,} {s['acked_writes_lost']:>17,} {s['kills_with_loss']:>13} "
                     f"{s['torn_txns']:>9} {rec:>20}")
    return "\n".join(lines)



def _restart_cell(s: dict, r) -> str:
    """Restarts that read the failed transaction, of those that opened ("-": no restart)."""
    tried = [k for k in r.kills if k.restart_saw_failed is not None or k.restart_error]
    if not tried:
        return "-"
    return f"{s['restart_saw_failed']}/{len(tried)}" + (f" ({s['restart_errors']} failed)" if s["restart_errors"] else "")


def _fault_table(reports: list) -> str:
    """Faults: per engine and setting, whether the fault fired, whether the writer's engine call saw it (which
    error), whether a get then returned the failed transaction's data, whether the engine went on acknowledging
    writes (and what stopped it), and after the cut that followed: reopen failures, acknowledged writes lost (those
    acknowledged after the error among them), failed transactions present anyway, torn transactions; with `restart`,
    the restarts before the cut that read the failed transaction."""
    head = (f"{'engine':<17} {'setting':<11} {'fault':<26} {'rounds':>6} {'fired':>5} {'writer saw':>10} "
            f"{'error':<24} {'read back':>9} {'went on':>7} {'then':<18} {'reopen fail':>11} {'writes lost':>11} "
            f"{'of them after err':>17} {'failed present':>14} {'torn':>4} {'restart read it':>15}")
    lines = [head, "-" * len(head)]
    for r in reports:
        s = r.summary
        setting = s["setting"] or f"sync {'on' if s['sync'] else 'off'}"
        lines.append(f"{s['engine']:<17} {setting[:11]:<11} {(s['fault'] or '-')[:26]:<26} {s['kills']:>6} "
                     f"{s['faults_fired']:>5} {s['writer_saw_error']:>10} "
                     f"{(', '.join(s['writer_errors']) or '-')[:24]:<24} "
                     f"{s['failed_read_back'] if s['read_back_tried'] else '-':>9} "
                     f"{s['went_on']:>7} {(', '.join(s['later_errors']) or '-')[:18]:<18} "
                     f"{s['reopen_failures']:>11} {s['acked_writes_lost']:>11,} {s['lost_after_error']:>17,} "
                     f"{s['failed_txns_present']:>14} {s['torn_txns']:>4} "
                     f"{_restart_cell(s, r):>15}")
    return "\n".join(lines)
