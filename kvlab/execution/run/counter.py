"""`--count instructions` (or `cache`): the trial's worker runs under callgrind, which counts each thread's
instructions; at the start of each phase the worker has callgrind zero every thread's counts, and at its end dump
them, one file per thread (through valgrind's own gdbserver, `vgdb --pid=<worker> zero|dump`, which reaches every
thread: the loop's, which have ended by then, and the engine's own, which go on); the dumps are read back into the
record (kvlab.results.instructions).  Nothing in kvlab's native code changes for it.

The worker runs under valgrind because its fork server does: `spawn.call(..., prefix=command())` starts a second
fork server under callgrind beside the plain one (each started once per process), so only the trials that ask are
slowed.  callgrind runs the engine's code 30-100 times slower than it runs natively: a counted trial's wall-clock
figures are valgrind's, and the record says so; its instructions are the engine's.  Cache simulation (`cache`) adds
the simulated L1 and last-level misses at about twice the cost again.  Address space under valgrind is smaller than
the machine's: an engine that reserves a large map (LMDB's and libmdbx's 64 GiB) gets a smaller one (MAP_UNDER_VALGRIND,
said in the record), which changes no instruction of a get or a put.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ... import errors
from ...model.spec import COUNTS

MAP_UNDER_VALGRIND = 4 << 30   # an engine's map under valgrind (which cannot reserve 64 GiB), unless one is given
VGDB_TIMEOUT_S = 60.0
TOOL = "callgrind"
_folders: dict = {}


def check(count: str) -> None:
    """Before anything runs: valgrind is there and the extension can mark a phase for it."""
    if count not in COUNTS:
        raise errors.SpecError(f"count={count!r} is not a count kvlab takes; allowed: {', '.join(COUNTS)}")
    if shutil.which("valgrind") is None:
        raise errors.SpecError("count (--count) runs the trial under callgrind, and valgrind is not on PATH: "
                               "scripts/setup.sh installs it (Debian package valgrind)")
    if shutil.which("vgdb") is None:
        raise errors.SpecError("count (--count) marks each phase through valgrind's vgdb, which is not on PATH "
                               "(it comes with the Debian package valgrind)")


def version() -> str:
    try:
        return subprocess.run(["valgrind", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "valgrind"


def folder(count: str) -> Path:
    """Where this process's callgrind workers write their dumps (made once, removed at exit: kvlab's own)."""
    if count not in _folders:
        made = Path(tempfile.mkdtemp(prefix="kvlab-count-"))
        _folders[count] = made
        atexit.register(shutil.rmtree, made, True)
    return _folders[count]


def command(count: str) -> list:
    """The prefix a counting fork server runs under: callgrind, one dump file per thread, collecting from the start
    (the phase's zero resets it), names uncompressed (so that a dump reads alone)."""
    out = folder(count)
    return ["valgrind", f"--tool={TOOL}", "--separate-threads=yes", "--dump-instr=no", "--dump-line=no",
            "--compress-strings=no", "--compress-pos=no", f"--callgrind-out-file={out}/cg.%p",
            f"--log-file={out}/vg.%p", *(["--cache-sim=yes"] if count == "cache" else [])]


class Counter:
    """In the worker: marks each measured phase and reads its dumps."""

    def __init__(self, count: str, where: Path):
        if "vgpreload_core" not in Path("/proc/self/maps").read_text():
            raise errors.KvlabError("count: the trial's worker is not under valgrind (its fork server did not start "
                                    "under callgrind)")
        self.count, self.where, self.pid = count, Path(where), os.getpid()
        self.phase = 0

    def _vgdb(self, *words: str) -> None:
        try:
            got = subprocess.run(["vgdb", f"--pid={self.pid}", *words], capture_output=True, text=True,
                                 timeout=VGDB_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise errors.KvlabError(f"count: valgrind did not answer `vgdb {' '.join(words)}` within "
                                    f"{VGDB_TIMEOUT_S:g} s") from None
        if got.returncode != 0:
            raise errors.KvlabError(f"count: `vgdb {' '.join(words)}` failed: {(got.stderr or got.stdout).strip()}")

    def start(self) -> None:
        """Every thread's counts to zero (the threads a phase starts begin at zero)."""
        self._vgdb("zero")

    def end(self) -> list:
        """Every thread's counts since start() dumped; [(callgrind's thread number, parsed dump)]."""
        from ...results import instructions
        tag = f"kvlab-phase-{self.phase}"
        self.phase += 1
        self._vgdb("dump", tag)
        got = []
        for path in sorted(self.where.glob(f"cg.{self.pid}.*")):
            text = path.read_text(errors="replace")
            parsed = instructions.parse(text)
            if parsed["trigger"].endswith(tag):
                m = re.search(r"-(\d+)$", path.name)
                got.append((int(m.group(1)) if m else 1, parsed))
            path.unlink()   # a dump this worker asked for (the files under its pid are its own)
        return got


def _map_setting(spec) -> tuple | None:
    """(the engine's descriptor, its map setting) where a counted run's engine reserves a map valgrind cannot hold."""
    from ... import engines
    if not spec.count:
        return None
    cfg = engines.get(spec.engine)
    if cfg.capacity != "map_size" or int(cfg.defaults.get("map_size") or 0) <= MAP_UNDER_VALGRIND:
        return None
    return cfg, cfg.capacity


def fitted(spec):
    """The spec a counted run runs: an engine whose default map valgrind cannot reserve gets MAP_UNDER_VALGRIND,
    unless a map size was given."""
    import dataclasses
    got = _map_setting(spec)
    if got is None or spec.engine_settings.get(got[1]) is not None:
        return spec
    return dataclasses.replace(spec, engine_settings={**spec.engine_settings, got[1]: MAP_UNDER_VALGRIND})


def notes(spec) -> list:
    """What a counted run says before it starts."""
    got = _map_setting(spec)
    if got is None or spec.engine_settings.get(got[1]) not in (None, MAP_UNDER_VALGRIND):
        return []
    cfg, setting = got
    from ... import engines
    title = engines.descriptor(cfg).title
    return [f"count: under valgrind, which cannot reserve {title}'s default {cfg.defaults[setting] >> 30} GiB map, "
            f"{setting} is {MAP_UNDER_VALGRIND >> 30} GiB (it bounds the database's size and changes no instruction "
            f"of an operation; --set {setting}=SIZE for another)"]
