"""A crash test's other processes and what crosses to them: the writer (workload crashwrite, reporting each
transaction's intent and acknowledgement down a pipe), the pipe's reader in the parent, and the reopen that
reads a database back (in a worker of its own, execution.worker: the campaign's process opens no engine, and a
broken database that aborts the reader is an answer).  Run as `python -m kvlab.execution.crash.child '<json>'`."""
from __future__ import annotations

import json
import os
import struct
import sys
import threading
import time
from pathlib import Path

from ... import engines, errors
from .. import native
from ..worker import spawn
from .check import KEY_SIZE, read_state

INTENT, ACK, READY = 1, 2, 3       # record tags on the pipe (kv_driver.h: KV_CRASH_INTENT / KV_CRASH_ACK)
ERROR = 4                           # the writer's engine call failed: the error's name and text follow (the child's)
FAILED, READBACK = 5, 6             # go_on: the first failed transaction, and its read-back (KV_CRASH_FAILED/READBACK)
CHILD = "kvlab.execution.crash.child"


def engine_config(engine: str, settings: dict) -> dict:
    """The engine's configuration for a crash test (the writer, the parent and the reader open it alike)."""
    cfg = engines.get(engine)
    config = cfg.config(settings, max_threads=4)
    config["transactions"] = True
    return config


class Pipe(threading.Thread):
    """Reads the child's records as they come (a full pipe would stall the child)."""

    def __init__(self, fd: int):
        super().__init__(daemon=True)
        self.fd = fd
        self.intents: dict[int, list] = {}
        self.acked = 0
        self.error: dict | None = None   # {"error": its class's name, "message"}: the engine call that failed
        self.failed: dict | None = None  # go_on: the first failed transaction {"seq", "error", "message"}
        self.readback: dict | None = None   # ... read back after it {"shown", "puts", "failed_gets"}
        self.ready = threading.Event()
        self.opened = False            # the writer said READY: its engine opened
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
                self.opened = True
                self.ready.set()
            elif tag == ACK:
                if len(b) - pos < 16:
                    break
                self.acked = struct.unpack_from("<Q", b, pos + 8)[0]
                pos += 16
            elif tag == ERROR:
                if len(b) - pos < 16:
                    break
                n = struct.unpack_from("<Q", b, pos + 8)[0]
                if len(b) - pos < 16 + n:
                    break
                self.error = json.loads(b[pos + 16:pos + 16 + n].decode(errors="replace"))
                pos += 16 + n
            elif tag == FAILED:
                if len(b) - pos < 32:
                    break
                seq, code, n = struct.unpack_from("<QqQ", b, pos + 8)
                end = pos + 32 + (n + 7) // 8 * 8
                if len(b) < end:
                    break
                message = b[pos + 32:pos + 32 + n].decode(errors="replace")
                self.failed = {"seq": seq, "error": type(errors.from_code(code, message)).__name__,
                               "message": message}
                pos = end
            elif tag == READBACK:
                if len(b) - pos < 40:
                    break
                seq, shown, puts, failed_gets = struct.unpack_from("<QQQQ", b, pos + 8)
                self.readback = {"shown": shown, "puts": puts, "failed_gets": failed_gets}
                pos += 40
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


def _writer(args: dict):
    """The writing process: open the engine as the parent will, say ready, write until killed."""
    lib = native.load()
    cfg = engines.get(args["engine"])
    db = lib.Engine(native.adapter_name(cfg), args["path"], engine_config(args["engine"], args["settings"]))
    fd = args["fd"]
    os.write(fd, struct.pack("<Q", READY))
    if args.get("wait_go"):   # a fault: the parent arms it, then says go (its first write is then counted)
        os.read(0, 1)
    params = dict(num=args["num"], reads=0, threads=1, duration=3600.0, key_size=KEY_SIZE,
                  value_size=args["value_size"], batch=args["batch"], seed=args["seed"], compression_ratio=0.5,
                  seek_nexts=0, writes_per_second=0.0, ack_fd=fd, first_seq=args["first_seq"],
                  after_error=args.get("go_on", 0))
    try:
        lib.Run(db, "crashwrite", params).execute()
        if params["after_error"]:   # it went on after a failed transaction as far as it was asked: the parent cuts
            os._exit(0)
    except errors.KvlabError as exc:   # an engine call failed (an injected fault): which, and how, to the parent
        text = json.dumps({"error": type(exc).__name__, "message": str(exc)}).encode()
        os.write(fd, struct.pack("<QQ", ERROR, len(text)) + text)
        os._exit(0)   # the engine is left as the error left it: no close, as a process that dies
    raise SystemExit("crashtest child: the writer stopped before it was killed")


def reopen(cfg, path: Path, settings: dict, env=None):
    """(state, recovery ms, None), or (None, ms or None, what went wrong)."""
    lib = native.load()   # not timed: loading the extension (and a version's adapter) is no part of recovery
    adapter = native.adapter_name(cfg)
    t0 = time.perf_counter()
    recovery_ms = None
    try:
        handle = lib.Engine(adapter, str(path), engine_config(cfg.name, settings))
        recovery_ms = (time.perf_counter() - t0) * 1e3
        try:
            return read_state(handle), recovery_ms, None
        finally:
            handle.close()
    except errors.KvlabError as exc:
        return None, recovery_ms, str(exc) if recovery_ms is None else f"reading it back: {exc}"


def reopen_in_worker(engine: str, path: Path, settings: dict, prefix=None):
    """As reopen, in a trial's worker (execution.worker): the caller opens no engine, and a reader that a broken
    database aborts (LMDB's assertions after a power cut) is an answer, not a dead campaign.  `engine`: the name
    as given (an own engine's path); `prefix`: the command line the worker runs under (a new boot: reboot.prefix).
    (state, recovery ms, what went wrong, the last lines the reader wrote on stderr: the engine's own log)."""
    got = spawn.call("kvlab.execution.crash.child:reopen_target", (engine, str(path), settings), prefix=prefix)
    if got.returned:
        if got.error is not None:
            return None, None, str(got.error), got.log
        state, recovery_ms, what = got.value
        return state, recovery_ms, what, got.log
    return None, None, f"the reader died ({got.how()}): {got.log[-1] if got.log else 'no message'}", got.log


def reopen_target(link, engine: str, path: str, settings: dict):
    return reopen(engines.get(engine), Path(path), settings)


def make_and_close(link, engine: str, path: str, settings: dict) -> None:
    """In a worker: the database made and closed once, so that it exists durably before the first cut."""
    cfg = engines.get(engine)
    native.load().Engine(native.adapter_name(cfg), path, engine_config(engine, settings)).close()


if __name__ == "__main__":
    _writer(json.loads(sys.argv[1]))
