"""How a database was made, and which of it a reopen must respect: data per adapter.

A database directory's marker (`.kvlab-db`, kvlab.execution.dbfiles.dbdir) keeps a `format`
record written before the engine first creates its files.  Reopening with
use_existing_db reconciles the run's engine settings with it (`reconcile`):

  fixed       decided once, when the database was made (WiredTiger's table config:
              compression, page size, LSM chunk and bloom settings; the engine ignores a new
              value on a reopen).  The recorded value is always used (so the snappy extension
              is loaded for a snappy table, and the result states what the table really has);
              a different value asked for is named in a warning of the result.  Refusing would
              break seed 002's db_bench lines, which change them between steps on one database
              as db_bench (which ignores them just as silently) allowed.
  remembered  written into each new file (LSM compression, block size, ...; LMDB's map size),
              so a reopen may change them for what it writes.  Not given: the recorded value
              is used.  Given and different: used, with a warning in the result.
  runtime     everything else (sync, cache_size, max_open_files, LMDB's flags, BDB's sync):
              each run says its own; nothing is carried over.
  log         an engine whose recovery log is switched by settings (WiredTiger: the log is on
              only with sync, and a connection opened with the log off skips recovery and sets
              aside a table it finds no checkpoint for).  Once the log has been on, it stays on:
              every later open turns it on whatever sync says (sync then decides only whether a
              commit waits for fsync), and disable_wal or options that turn it off are refused.
              The directory's own log files count too, for markers written before this record.

RocksDB and LevelDB always replay their WAL at open and BDB's transactional environment
always runs recovery (DB_RECOVER), so none of them has a `log` rule: disable_wal is a write
option of the run (RocksDB), never a way to open.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from .. import engines, errors
from ..engines.descriptor import AdapterFormat

FORMAT_VERSION = 1


# Per adapter, or per configuration where its variant differs: each engine's descriptor (kvlab/engines/<adapter>/)
# writes its rules down, an empty AdapterFormat() where a reopen carries nothing over.
FORMATS: dict[str, AdapterFormat] = {
    **{name: d.format for name, d in engines.DESCRIPTORS.items() if isinstance(d.format, AdapterFormat)},
    **{c.name: c.format for d in engines.DESCRIPTORS.values() for c in d.configs if c.format is not None},
}

# a setting's value when not given, as the adapters read it, for comparisons
_UNSET = {"compression": "none"}


def _norm(key, value):
    if value in (None, ""):
        return _UNSET.get(key)
    return value


def _shown(value):
    return "unset (the engine's default)" if value is None else repr(value)


def rules(cfg) -> AdapterFormat:
    """The rules for an engine configuration (by its name, else its adapter's).  An engine with no row
    is refused rather than given none: "no rules" is a decision its row writes down (AdapterFormat())."""
    found = FORMATS.get(cfg.name) or FORMATS.get(cfg.adapter)
    if found is None and cfg.adapter in engines.OWN:   # an engine of your own, loaded after import
        own = engines.OWN[cfg.adapter].format
        found = own if isinstance(own, AdapterFormat) else None
    if found is None:
        raise LookupError(f"engine {cfg.name!r} has no reopen rules: give its adapter {cfg.adapter!r} a format "
                          f"in its descriptor, kvlab/engines/<adapter>/ (tests/test_engine_checklist.py)")
    return found


def record(cfg, settings: Mapping, path: Path | None = None, previous: Mapping | None = None) -> dict:
    """The format record for a database opened with `settings` (given settings, engine defaults apart)."""
    r = rules(cfg)
    out = {"version": FORMAT_VERSION}
    for key in r.fixed + r.remembered:
        if key in cfg.honours and settings.get(key) not in (None, ""):
            out[key] = settings[key]
    if r.log is not None:
        out["log"] = bool((previous or {}).get("log")) or r.log.on_for(settings) or \
            (path is not None and r.log.has_files(path))
    return out


def reconcile(cfg, recorded: Mapping | None, settings: Mapping, path: Path) -> tuple[dict, list]:
    """Settings to open an existing database with, and warnings; raises DatabaseMismatch when the
    run asks for what the database cannot be opened with.  `recorded` is the marker's format
    record (None for a marker from before it existed)."""
    r = rules(cfg)
    recorded = dict(recorded or {})
    out, notes = dict(settings), []
    for key in r.fixed:
        if key not in cfg.honours:
            continue
        made, asked = _norm(key, recorded.get(key)), _norm(key, settings.get(key))
        out.pop(key, None)
        if recorded.get(key) not in (None, ""):
            out[key] = recorded[key]
        if settings.get(key) not in (None, "") and asked != made:
            notes.append(f"the database at {path} was made with {key}={_shown(made)}, which {cfg.name} fixes "
                         f"when a database is made; this run asked for {key}={asked!r} and uses the "
                         f"database's {_shown(made)} (a fresh database, without use_existing_db, takes a new value)")
    for key in r.remembered:
        if key not in cfg.honours or key not in recorded:
            continue
        if settings.get(key) in (None, ""):
            out[key] = recorded[key]
        elif settings[key] != recorded[key]:
            notes.append(f"the database at {path} was made with {key}={recorded[key]!r}; this run uses "
                         f"{key}={settings[key]!r} for what it writes (files written before keep theirs)")
    if r.log is not None and (recorded.get("log") or r.log.has_files(path)):
        why = ("its log files are there" if not recorded.get("log") else "its log was on")
        if out.get("disable_wal"):
            raise errors.DatabaseMismatch(
                f"--db {path} is a {cfg.name} database whose log must stay on ({why}); disable_wal=true would "
                "open it with the log off, which skips recovery and loses acknowledged writes. "
                "Allowed: disable_wal unset or false; or a fresh database (without use_existing_db)")
        if re.search(r.log.off_pattern, str(out.get("options") or "")):
            raise errors.DatabaseMismatch(
                f"--db {path} is a {cfg.name} database whose log must stay on ({why}); options "
                f"{out['options']!r} turn it off, which skips recovery. Allowed: options without "
                "log=(enabled=false); or a fresh database (without use_existing_db)")
        if not r.log.on_for(out):
            opts = out.get("options")
            out["options"] = f"{opts}{cfg.options_separator}{r.log.on_option}" if opts else r.log.on_option
    return out, notes
