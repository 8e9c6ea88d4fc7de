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

With power_loss=True the child writes through a forgetfs mount (kvlab.execution.forgetfs) over the
database directory, and each kill is followed by a power cut: what the engine never fsynced (file
data, and entries whose directory it never fsynced) is lost, as the loss model says; the parent
reopens the directory itself.  The database is made (opened and closed once, durably) before the
first cut, so the history starts from an empty database.  A durability setting (DURABILITY: LMDB's
nometasync, RocksDB without its WAL, BerkeleyDB's txn_write_nosync, ...) says what the engine's
documentation promises, and so what a cut may cost: `durable` (no acknowledged write lost, nothing
torn, every reopen works), `prefix` (recent writes may be lost, never a torn transaction or a failed
reopen) or `none` (the engine says a crash may corrupt: only measured).
"""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import errors
from ..model import engines
from . import forgetfs, native

INTENT, ACK, READY = 1, 2, 3       # record tags on the pipe (kv_driver.h: KV_CRASH_INTENT / KV_CRASH_ACK)
KEY_SIZE = 16
MAX_BATCH = 256


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


@dataclass(frozen=True)
class Durability:
    """A durability setting of one engine, and what its documentation promises for a crash."""
    name: str
    settings: dict                 # engine settings (sync, disable_wal, options)
    claim: str                     # durable | prefix | none (module docstring)
    promise: str                   # the documentation's promise, in a sentence
    files: tuple = ()              # (name, text) written into the database directory before it is made


CLAIMS = ("durable", "prefix", "none")
_LMDB = (
    Durability("default", {"sync": True}, "durable",
               "LMDB: a committed transaction is on disk when mdb_txn_commit returns (fdatasync of the data file)"),
    Durability("nometasync", {"sync": True, "options": "nometasync"}, "prefix",
               "MDB_NOMETASYNC: omits the meta page flush; keeps ACI, a system crash may undo the last transaction"),
    Durability("nosync", {"sync": True, "options": "nosync"}, "none",
               "MDB_NOSYNC: no flush at commit; a system crash can corrupt the database or lose the last transactions"),
    Durability("writemap", {"sync": True, "options": "writemap"}, "durable",
               "MDB_WRITEMAP: writes through a writable map, msync(MS_SYNC) at commit: as durable as the default"),
    Durability("writemap,mapasync", {"sync": True, "options": "writemap,mapasync"}, "none",
               "MDB_MAPASYNC: asynchronous flushes of the map; as MDB_NOSYNC, a system crash can corrupt or lose"),
)
_WT = (
    Durability("log+sync", {"sync": True}, "durable",
               "WiredTiger with its log and transaction_sync=(enabled=true): a commit is durable when it returns"),
    Durability("log", {"sync": False, "options": "log=(enabled=true)"}, "prefix",
               "WiredTiger's log without transaction_sync: commits are written to the log, flushed in the "
               "background; a crash loses the newest, recovery replays the rest"),
    Durability("no log", {"sync": False}, "prefix",
               "WiredTiger without a log: durable as of the last checkpoint"),
)
DURABILITY: dict[str, tuple] = {
    "lmdb": _LMDB,
    "rocksdb": (
        Durability("wal+sync", {"sync": True}, "durable",
                   "RocksDB WriteOptions.sync: the WAL is fsynced before the write returns"),
        Durability("wal", {"sync": False}, "prefix",
                   "RocksDB without sync: a machine crash may lose the newest writes; recovery is to a point in time"),
        Durability("no wal", {"sync": False, "disable_wal": True}, "prefix",
                   "RocksDB with the WAL disabled: writes since the last memtable flush are lost on a crash"),
    ),
    "leveldb": (
        Durability("sync", {"sync": True}, "durable",
                   "LevelDB WriteOptions.sync: the log is fsynced before the write returns"),
        Durability("nosync", {"sync": False}, "prefix",
                   "LevelDB without sync: a machine crash may lose the newest writes"),
    ),
    "wiredtiger-btree": _WT,
    "wiredtiger-lsm": _WT,
    "bdb": (
        Durability("txn sync", {"sync": True}, "durable",
                   "Berkeley DB transactions: the log is flushed at commit"),
        Durability("txn_write_nosync", {"sync": True}, "prefix",
                   "DB_TXN_WRITE_NOSYNC: the log is written, not flushed, at commit; a system crash loses the "
                   "newest transactions, keeps ACI",
                   files=(("DB_CONFIG", "set_flags DB_TXN_WRITE_NOSYNC\n"),)),
        Durability("txn_nosync", {"sync": False}, "prefix",
                   "DB_TXN_NOSYNC: the log is neither written nor flushed at commit; a crash loses the newest "
                   "transactions, keeps ACI"),
    ),
}


def durability(engine: str, name: str | None = None, sync: bool = False) -> Durability:
    """The named durability setting of `engine`; without a name, plain sync on (durable) or off (prefix)."""
    if name is None:
        return Durability("", {"sync": sync}, "durable" if sync else "prefix",
                          "sync on: no acknowledged write lost" if sync else "sync off: recent writes may be lost")
    known = DURABILITY.get(engine, ())
    for d in known:
        if d.name == name:
            return d
    raise errors.SpecError(f"crashtest: {engine} has no durability setting {name!r}; allowed: "
                           f"{', '.join(d.name for d in known) or 'none (use --sync or not)'}")


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

    @property
    def summary(self) -> dict:
        done = [k for k in self.kills if k.reopen_error is None]
        rec = sorted(k.recovery_ms for k in done if k.recovery_ms is not None)
        return {
            "engine": self.engine, "sync": self.sync, "setting": self.setting, "claim": self.claim,
            "crash": (f"power cut ({self.loss}{', ext4' if self.names == 'ext4' else ''})" if self.power_loss
                      else "SIGKILL"), "kills": len(self.kills),
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
                "names": self.names,
                "settings": self.settings, "summary": self.summary, "kills": [asdict(k) for k in self.kills]}


def _config(engine: str, settings: dict) -> dict:
    cfg = engines.get(engine)
    config = cfg.config(settings, max_threads=4)
    config["transactions"] = True
    return config


def _key(index: int) -> bytes:
    return native.load().make_key(index, KEY_SIZE)


class _Pipe(threading.Thread):
    """Reads the child's records as they come (a full pipe would stall the child)."""

    def __init__(self, fd: int):
        super().__init__(daemon=True)
        self.fd = fd
        self.intents: dict[int, list] = {}
        self.acked = 0
        self.ready = threading.Event()
        self.buf = b""

    def run(self):
        with os.fdopen(self.fd, "rb", buffering=0) as f:
            while True:
                chunk = f.read(1 << 16)
                if not chunk:
                    break
                self.buf += chunk
                self._parse()
        self.ready.set()   # EOF: the child is gone, ready or not

    def _parse(self):
        b, pos = self.buf, 0
        while len(b) - pos >= 8:
            tag = struct.unpack_from("<Q", b, pos)[0]
            if tag == READY:
                pos += 8
                self.ready.set()
            elif tag == ACK:
                if len(b) - pos < 16:
                    break
                self.acked = struct.unpack_from("<Q", b, pos + 8)[0]
                pos += 16
            elif tag == INTENT:
                if len(b) - pos < 24:
                    break
                seq, n = struct.unpack_from("<QQ", b, pos + 8)
                if len(b) - pos < 24 + 8 * n:
                    break
                self.intents[seq] = list(struct.unpack_from(f"<{n}Q", b, pos + 24))
                pos += 24 + 8 * n
            else:
                raise errors.EngineError(f"crashtest: unexpected record {tag} from the child")
        self.buf = b[pos:]


def _read_state(db) -> dict:
    """Every key -> the stamp (seq, position) its value carries."""
    out = {}
    for k, v in db.scan(b"", -1):
        out[k] = struct.unpack_from("<QI", v, 0) if len(v) >= 12 else ("foreign", v)
    return out


def _apply(state: dict, seq: int, ops: list):
    for j, word in enumerate(ops):
        key = _key(word >> 1)
        if word & 1:
            state.pop(key, None)
        else:
            state[key] = (seq, j)


def _torn_kind(intents: dict, actual: dict) -> str:
    """Why a state matched no prefix: "half" when some transaction provably shows some of its writes and lacks
    others (only writes to keys no later transaction touched count), else "out of order" (as far as the
    writes show, whole transactions are there after missing ones)."""
    last_touch = {}
    for seq, ops in intents.items():
        for word in ops:
            key = word >> 1
            last_touch[key] = max(seq, last_touch.get(key, 0))
    for seq, ops in intents.items():
        shown = missing = 0
        final = {word >> 1: (j, word) for j, word in enumerate(ops)}   # a key written twice shows its last write
        for j, word in final.values():
            if last_touch[word >> 1] > seq:
                continue   # a later transaction decides what this key shows
            have = actual.get(_key(word >> 1))
            if word & 1:   # a delete is seen missing when an older value shows; an absent key proves nothing
                missing += have is not None
            else:   # an earlier write of this transaction to the key, showing, is both
                shown += have == (seq, j) or (have is not None and have[0] == seq)
                missing += have != (seq, j)
        if shown and missing:
            return "half"
    return "out of order"


def _verify(expected: dict, last: int, intents: dict, actual: dict):
    """(X, state at X) where the actual state equals the expected one after transactions last+1..X,
    or (None, None) when it equals none of them (torn)."""
    newest = max((s[0] for s in actual.values() if isinstance(s[0], int)), default=0)
    state = dict(expected)
    seq = last
    while True:
        if seq >= newest and state == actual:
            return seq, state
        if seq + 1 not in intents:
            return None, None
        seq += 1
        _apply(state, seq, intents[seq])


CHILD = "kvlab.execution.crashtest"


def _child(args: dict):
    """The writing process: open the engine as the parent will, say ready, write until killed."""
    lib = native.load()
    cfg = engines.get(args["engine"])
    db = lib.Engine(cfg.adapter, args["path"], _config(args["engine"], args["settings"]))
    fd = args["fd"]
    os.write(fd, struct.pack("<Q", READY))
    params = dict(num=args["num"], reads=0, threads=1, duration=3600.0, key_size=KEY_SIZE,
                  value_size=args["value_size"], batch=args["batch"], seed=args["seed"], compression_ratio=0.5,
                  seek_nexts=0, writes_per_second=0.0, ack_fd=fd, first_seq=args["first_seq"])
    lib.Run(db, "crashwrite", params).execute()
    raise SystemExit("crashtest child: the writer stopped before it was killed")


def _keep(path: Path, engine: str, log: Path | None) -> str:
    """Copy a damaged database (and the file system's log) where it survives the test, sparse files sparse."""
    dest = Path(tempfile.mkdtemp(prefix=f"kvlab-damaged-{engine}-"))
    subprocess.run(["cp", "-a", "--sparse=always", f"{path}/.", str(dest / "db")], check=False,
                   capture_output=True)
    if log is not None and log.exists():
        shutil.copy(log, dest / "forgetfs.log")
    return str(dest)


def _reopen(cfg, path: Path, settings: dict, env=None):
    """(state, recovery ms, None), or (None, ms or None, what went wrong)."""
    lib = native.load()   # not timed: loading the extension is no part of recovery
    t0 = time.perf_counter()
    recovery_ms = None
    try:
        handle = lib.Engine(cfg.adapter, str(path), _config(cfg.name, settings))
        recovery_ms = (time.perf_counter() - t0) * 1e3
        try:
            return _read_state(handle), recovery_ms, None
        finally:
            handle.close()
    except errors.KvlabError as exc:
        return None, recovery_ms, str(exc) if recovery_ms is None else f"reading it back: {exc}"


def _reopen_in_child(cfg, path: Path, settings: dict, env):
    fd, answer = tempfile.mkstemp(prefix="kvlab-crashtest-read-", suffix=".json")
    os.close(fd)
    args = {"read": True, "engine": cfg.name, "path": str(path), "settings": settings, "out": answer}
    try:   # the answer goes to its own file: engines print on stdout (WiredTiger's messages)
        out = subprocess.run([sys.executable, "-m", CHILD, json.dumps(args)], env=env, capture_output=True,
                             timeout=600)
        text = Path(answer).read_text()
    except subprocess.TimeoutExpired:
        return None, None, "the reopen did not finish in 600 s"
    finally:
        Path(answer).unlink(missing_ok=True)
    try:
        r = json.loads(text) if out.returncode == 0 else None
    except ValueError:
        r = None
    if r is None:
        err = out.stderr.decode(errors="replace").strip().splitlines()
        sig = f" (signal {-out.returncode})" if out.returncode < 0 else ""
        return None, None, f"the reader died{sig}: {err[-1] if err else 'no message'}"
    state = None if r["state"] is None else \
        {bytes.fromhex(k): (tuple(v) if v[0] != "foreign" else ("foreign", bytes.fromhex(v[1]))) for k, v in r["state"]}
    return state, r["recovery_ms"], r["error"]


def _reader(args: dict):
    """The reopen after a power cut, in its own process: JSON on stdout."""
    state, ms, error = _reopen(engines.get(args["engine"]), Path(args["path"]), args["settings"])
    if state is not None:
        state = [[k.hex(), list(v) if v[0] != "foreign" else ["foreign", v[1].hex()]] for k, v in state.items()]
    Path(args["out"]).write_text(json.dumps({"state": state, "recovery_ms": ms, "error": error}))


def _fresh(path: Path, chosen: Durability, lib, cfg, settings: dict, power_loss: bool, clear: bool = False):
    """An empty database in `path` (cleared first if asked): the setting's files, then, for power cuts,
    the database made and closed once so that it exists durably before the first cut."""
    if clear:
        for p in path.iterdir():
            shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    for name, text in chosen.files:
        (path / name).write_text(text)
    if power_loss:
        lib.Engine(cfg.adapter, str(path), _config(cfg.name, settings)).close()


def crashtest(engine: str, kills: int, sync: bool = False, db: str | os.PathLike | None = None, seed: int | None = None,
              batch: int = 10, num: int = 10_000, value_size: int = 100, min_s: float = 0.05, max_s: float = 0.8,
              on_kill=None, power_loss: bool = False, loss: str = "all", setting: str | None = None,
              settings: dict | None = None, keep_damaged: int = 3, names: str = "posix",
              cut_on: str | None = None) -> CrashReport:
    """Kill a writing child `kills` times and check the database after each (module docstring).
    `db`: a directory that does not exist yet or is empty (kvlab creates it and leaves it for you to look
    at); by default a temporary one, removed afterwards.  `on_kill(i, Kill)` is called after each.
    `power_loss`: each kill is also a power cut of a forgetfs mount (`loss`: all, random or torn; `names`:
    posix, entries durable when their directory is fsynced, or ext4, when any file is).
    `setting`: a durability setting of the engine (DURABILITY; its settings replace `sync`); `settings`:
    further engine settings on top.  `cut_on`: a regular expression; the kill comes `min_s` seconds after a
    new entry whose name matches it appears in the database directory after the writer opened it (a crash point: a new log file, say),
    or at `max_s` when none does.  Under power loss, up to `keep_damaged` databases that broke the
    setting's promise are copied out and left (Kill.kept_at), with the file system's log."""
    cfg = engines.get(engine)
    native.require_built(engine)
    if not cfg.stores_data:
        raise errors.SpecError(f"crashtest: {engine} stores nothing; choose an engine that keeps data")
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
    chosen = durability(engine, setting, sync)
    effective = {**chosen.settings, **(settings or {})}
    if cut_on is not None:
        try:
            re.compile(cut_on)
        except re.error as exc:
            raise errors.SpecError(f"crashtest: cut_on {cut_on!r} is not a regular expression: {exc}") from None
    if names not in forgetfs.NAME_MODELS:
        raise errors.SpecError(f"crashtest: names model {names!r} is unknown; allowed: {', '.join(forgetfs.NAME_MODELS)}")
    if power_loss:
        forgetfs.require()
    seed = random.SystemRandom().randrange(1, 2**31) if seed is None else seed
    rng = random.Random(seed)
    temporary = db is None
    path = Path(tempfile.mkdtemp(prefix="kvlab-crashtest-")) if temporary else Path(db)
    if not temporary:
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise errors.UnsafeDirectory(f"crashtest: {path} exists and is not an empty directory; give a new or "
                                         "empty one (the test writes a fresh database there)")
        path.mkdir(parents=True, exist_ok=True)
    report = CrashReport(engine=engine, sync=bool(effective.get("sync")), batch=batch, num=num, seed=seed,
                         setting=chosen.name, claim=chosen.claim, power_loss=power_loss,
                         loss=loss if power_loss else None, names=names if power_loss else None, settings=effective)
    lib = native.load()
    expected: dict = {}
    last = 0
    kept = 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[2]),
                                                                   os.environ.get("PYTHONPATH", "")] if p))
    log = Path(tempfile.mkstemp(prefix="kvlab-forgetfs-", suffix=".log")[1]) if power_loss else None
    try:
        _fresh(path, chosen, lib, cfg, effective, power_loss)
        for i in range(kills):
            mount = None
            if power_loss:
                log.write_text("")
                mount = forgetfs.Mount(path, loss=loss, seed=rng.randrange(1, 2**62), log=log, names=names)
            try:
                kill, pipe, started, after, cut = _round(i, engine, path if mount is None else mount.path, effective,
                                                         batch, num, value_size, rng, last, min_s, max_s, env, mount,
                                                         cut_on, path)
            finally:
                if mount is not None:
                    mount.close()   # after a cut: only makes sure the mount is gone
            if kill is not None:   # the database would not open for the next writer
                report.kills.append(kill)
                if on_kill:
                    on_kill(i, kill)
                break
            acked = pipe.acked
            # a database that opens but cannot be read through is as broken as one that does not open; after
            # a power cut it may even abort the reader (LMDB's assertions), so that one reads in a child
            actual, recovery_ms, what = (_reopen_in_child if power_loss else _reopen)(cfg, path, effective, env)
            if what is not None:
                kill = Kill(after, max(0, acked - last), max(0, started - last), None, 0, 0, False, what,
                            recovery_ms, cut)
                if power_loss and kept < keep_damaged:
                    kill.kept_at = _keep(path, engine, log)
                report.kills.append(kill)
                if on_kill:
                    on_kill(i, kill)
                if power_loss and temporary:   # the damaged one kept: the next cut starts a new history
                    kept += kill.kept_at is not None
                    _fresh(path, chosen, lib, cfg, effective, power_loss, clear=True)
                    expected, last = {}, 0
                    continue
                break   # nothing to continue from
            x, state = _verify(expected, last, pipe.intents, actual)
            torn = x is None
            kind = _torn_kind({q: o for q, o in pipe.intents.items() if q > last}, actual) if torn else None
            if torn:   # continue from what is there, after every sequence number used so far
                x, state = started, actual
            lost = [s for s in range(x + 1, acked + 1)]
            kill = Kill(after, max(0, acked - last), max(0, started - last), None if torn else x, len(lost),
                        sum(len(pipe.intents.get(s, ())) for s in lost), torn, None, recovery_ms, cut,
                        torn_kind=kind)
            if power_loss and kept < keep_damaged and (torn or (lost and chosen.claim == "durable")):
                kill.kept_at = _keep(path, engine, log)
                kept += 1
            report.kills.append(kill)
            if on_kill:
                on_kill(i, kill)
            expected, last = state, x
    finally:
        if temporary:
            shutil.rmtree(path, ignore_errors=True)
        if log is not None:
            log.unlink(missing_ok=True)
    return report


def _wait_for_entry(folder: Path, pattern: str, before: set, limit_s: float) -> float | None:
    """Seconds until a new entry matching `pattern` appears in `folder` (polled each millisecond), or None."""
    rx, t0 = re.compile(pattern), time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        if any(rx.search(n) for n in set(os.listdir(folder)) - before):
            return time.perf_counter() - t0
        time.sleep(0.001)
    return None


def _round(i, engine, where, settings, batch, num, value_size, rng, last, min_s, max_s, env, mount, cut_on=None,
           backing=None):
    """One writer, started on `where`, killed at a random moment (then the power cut, with a mount):
    (None, pipe, last transaction started, seconds to the kill, the cut's summary), or a Kill first
    when the writer could not open the database."""
    r, w = os.pipe()
    args = {"engine": engine, "path": str(where), "settings": settings, "batch": batch, "num": num,
            "value_size": value_size, "seed": rng.randrange(1, 2**62), "first_seq": last + 1, "fd": w}
    child = subprocess.Popen([sys.executable, "-m", CHILD, json.dumps(args)], pass_fds=(w,), env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(w)
    pipe = _Pipe(r)
    pipe.start()
    if not pipe.ready.wait(60) or child.poll() is not None:
        child.kill()
        _, err = child.communicate()
        text = err.decode(errors="replace").strip()
        if i > 0 and "kvlab.errors." in text:   # the database would not open after the last kill
            return Kill(0.0, 0, 0, None, 0, 0, False, "the next writer's open: " + text.splitlines()[-1],
                        None), None, 0, 0.0, None
        raise errors.EngineError(f"crashtest: the {engine} writer did not start: {text[-800:]}")
    if cut_on:   # entries the writer's open made are not the crash point
        before = set(os.listdir(backing))
        t0 = time.perf_counter()
        seen = _wait_for_entry(backing, cut_on, before, max_s)
        if seen is not None:
            time.sleep(min_s)
        after = time.perf_counter() - t0
    else:
        after = rng.uniform(min_s, max_s)
        time.sleep(after)
    if child.poll() is not None:
        _, err = child.communicate()
        raise errors.EngineError(f"crashtest: the {engine} writer ended before the kill: "
                                 f"{err.decode(errors='replace').strip()[-800:]}")
    child.send_signal(signal.SIGKILL)
    child.communicate()
    pipe.join(30)
    cut = mount.cut() if mount is not None else None
    return None, pipe, max(pipe.intents, default=last), after, cut


def format_table(reports: list) -> str:
    """One line per engine configuration, setting and kind of crash."""
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


if __name__ == "__main__":
    _args = json.loads(sys.argv[1])
    _reader(_args) if _args.get("read") else _child(_args)
