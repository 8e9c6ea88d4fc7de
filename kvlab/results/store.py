"""The results store: an embedded DuckDB database in a results folder outside git.

Each stored run is appended in one transaction, so a process killed while
writing loses at most the run in flight; every earlier row stays readable.
The tables are written once, as column tables (TABLES): each column's name, type and where its value
comes from make the CREATE, the INSERT and the upgrade.  The schema is versioned (table `kvlab_meta`);
opening an older store adds, inside one transaction, the tables and columns it lacks, each new column filled
from the stored records.  The full result record
(JSON, `kvlab.result/N`) is kept beside the queryable columns, and is upgraded
on load (results.upgrade), so nothing a run measured is lost to the table layout.

Default location (default_path): $KVLAB_RESULTS, else the user's data directory,
$XDG_DATA_HOME/kvlab/kvlab.duckdb (~/.local/share/kvlab/kvlab.duckdb without it): one store wherever kvlab
runs from, never a folder in the current directory.  The first run that creates that store says where it is,
once, on stderr.

A run is never lost to the store: `check()` opens it for writing before a benchmark runs (the
CLI calls it first), and an append that fails (disk full, the store locked or broken) saves
the run as a JSON file elsewhere (`rescue_json`: beside the store, else the temp directory,
else ~/.kvlab-unsaved) and raises a ResultsError naming that file; `append_json` stores it later.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .. import _signals as signals
from .. import errors
from .result import BenchmarkResult, RunResult, _jsonable, load_json, write_json_atomic

# A store made by an older kvlab has a lower version; opening it adds the columns and tables it lacks (each
# new column filled from the stored records where the column says where its value sits in one).  A change to
# TABLES raises STORE_VERSION by one, so that every older store is looked at again.
STORE_VERSION = 10

# the metrics kvlab noise measures a spread for (kvlab.compare's names)
NOISE_METRICS = ("ops_per_sec", "p50_us", "p99_us", "p999_us", "cpu_us_per_op")


@dataclass(frozen=True)
class Column:
    """One column of a store table: its name, its DuckDB type (with the DEFAULT a row gets where nothing is
    written), and where its value comes from: `path`, a dotted place in the row's source (a benchmark's
    record, an interval of it, a crash test's report, ...; `{side}` and `{op}` stand for an interval row's
    side and op), which the INSERT reads and an upgrade fills the new column from, in each stored record; or
    `read`, a function of the row's source and context (the run id, the sweep point, ...); or `sql`, an
    expression the INSERT writes (current_timestamp).  None of them: the column takes its DEFAULT."""
    name: str
    type: str
    path: str | None = None
    read: Callable[[Mapping, Mapping], object] | None = None
    sql: str | None = None

    def value(self, source: Mapping, context: Mapping):
        """What the INSERT writes for one row: JSON as text, a list as a list."""
        v: Any
        if self.read is not None:
            v = self.read(source, context)
        else:
            v = source
            for part in (self.path or "").split("."):
                v = v.get(part.format(**context)) if isinstance(v, Mapping) else None
        if self.type.startswith("JSON"):
            return None if v is None else json.dumps(v, default=_jsonable)
        if "[]" in self.type:
            return list(v or ())
        return v

    @property
    def written(self) -> bool:
        return self.path is not None or self.read is not None or self.sql is not None


@dataclass(frozen=True)
class Table:
    """A store table: its columns in order; `record`, the JSON an upgrade fills a new column from (its `path`
    read there: the row's own record, or for an interval its benchmark's record at that interval), with
    `join` for the UPDATE; None where rows keep no record."""
    name: str
    columns: tuple
    record: str | None = None
    join: str = ""

    def create(self) -> str:
        return f"CREATE TABLE {self.name} ({', '.join(f'{c.name} {c.type}' for c in self.columns)})"

    def insert(self, replace: bool = False) -> str:
        cols = [c for c in self.columns if c.written]
        return (f"INSERT {'OR REPLACE ' if replace else ''}INTO {self.name} ({', '.join(c.name for c in cols)}) "
                f"VALUES ({', '.join(c.sql or '?' for c in cols)})")

    def values(self, source: Mapping, **context) -> list:
        """The INSERT's parameters for one row."""
        return [c.value(source, context) for c in self.columns if c.written and c.sql is None]

    def fill(self, column: Column) -> str | None:
        """The UPDATE that gives an added column the value each stored record holds at its path (its DEFAULT
        where the record has none), or None where there is nothing to fill it from."""
        if self.record is None or column.path is None:
            return None
        where = " || ".join(self._json_path(column.path))
        kind = column.type.split(" DEFAULT")[0].split(" PRIMARY")[0]
        got = (f"json_extract_string({self.record}, {where})" if kind == "VARCHAR" else
               f"NULLIF(json_extract({self.record}, {where}), 'null')" if kind == "JSON" else
               f"TRY_CAST(json_extract({self.record}, {where}) AS {kind})")
        return f"UPDATE {self.name} SET {column.name} = COALESCE({got}, {self.name}.{column.name}) {self.join}"

    def _json_path(self, path: str) -> list:
        out = ["'$'"] if self.name != "intervals" else ["'$.intervals[' || intervals.interval || ']'"]
        for part in path.split("."):   # each key quoted; {side}, {op}: the row's own
            out.append(f"'.\"' || {self.name}.{part[1:-1]} || '\"'" if part.startswith("{") else f"'.\"{part}\"'")
        return out


def _context(key: str) -> Callable:
    return lambda source, context: context.get(key)


def _point(key: str) -> Callable:
    return lambda source, context: (context.get("point") or {}).get(key)


def _engine_settings(record, context) -> str:
    """A benchmark's engine settings as given (k=v,k=v), for a column a reader can scan."""
    spec = (record.get("provenance") or {}).get("spec") or {}
    return ",".join(f"{k}={v}" for k, v in (spec.get("engine_settings") or {}).items())


def _percentiles(prefix: str, names=("p50", "p99", "p999", "p9999", "max")) -> tuple:
    return tuple(Column(f"{n}_us", "DOUBLE", f"{prefix}.{n}") for n in names)


# write (the process's bytes written / user bytes), read (device block reads per read op) and space (allocated /
# live bytes) amplification, of a benchmark and of each interval (kvlab.result/7)
_AMPLIFICATION = tuple(Column(n, "DOUBLE", f"amplification.{n}") for n in ("write_amp", "read_amp", "space_amp"))

# One row per benchmark, from its record (BenchmarkResult.to_dict); kept whole in `record`
BENCHMARKS = Table("benchmarks", (
    Column("id", "BIGINT PRIMARY KEY", read=_context("id")),
    Column("run_id", "VARCHAR", read=_context("run_id")),
    Column("stored_at", "TIMESTAMP DEFAULT current_timestamp"),
    *(Column(n, t, n) for n, t in (("engine", "VARCHAR"), ("workload", "VARCHAR"), ("phase", "VARCHAR"),
                                   ("threads", "INTEGER"), ("ops", "BIGINT"), ("seconds", "DOUBLE"),
                                   ("ops_per_sec", "DOUBLE"), ("micros_per_op", "DOUBLE"), ("found", "BIGINT"),
                                   ("seed", "UBIGINT"))),
    Column("record", "JSON", read=lambda record, context: record),
    Column("trial", "INTEGER DEFAULT 0", "trial"),
    Column("partial", "BOOLEAN DEFAULT false", "partial"),
    *_percentiles("latency_us"),
    Column("cpu_pct", "DOUBLE", "accounting.cpu_pct"),
    Column("db_size_bytes", "BIGINT", "accounting.db_size_bytes"),
    Column("engine_library", "VARCHAR", "versions.engine_library"),
    Column("git_commit", "VARCHAR", "versions.git_commit"),
    Column("transactions", "BIGINT", "mix.transactions"),
    Column("txn_per_sec", "DOUBLE", "mix.txn_per_sec"),
    Column("sweep_id", "VARCHAR", read=_point("sweep_id")),
    Column("point_id", "VARCHAR", read=_point("point_id")),
    Column("num", "BIGINT", "params.num"),
    Column("value_size", "BIGINT", "params.value_size"),
    Column("key_size", "INTEGER", "params.key_size"),
    Column("latency_unit", "VARCHAR", "latency_unit"),
    Column("engine_settings", "VARCHAR", read=_engine_settings),
    Column("tags", "VARCHAR[] DEFAULT []", "tags"),
    *_AMPLIFICATION,
), record="record")

# One row per interval, side (workers, writer) and op of a benchmark's time series, from the interval's record
INTERVALS = Table("intervals", (
    Column("benchmark_id", "BIGINT", read=_context("benchmark_id")),
    Column("interval", "INTEGER", read=_context("interval")),
    Column("side", "VARCHAR", read=_context("side")),
    Column("op", "VARCHAR", read=_context("op")),
    Column("t_start_s", "DOUBLE", "t_start_s"),
    Column("t_end_s", "DOUBLE", "t_end_s"),
    Column("ops", "BIGINT", "{side}.ops.{op}"),
    Column("ops_per_sec", "DOUBLE", "{side}.ops_per_sec.{op}"),
    Column("target_txn_per_sec", "DOUBLE", "{side}.target_txn_per_sec"),   # an open loop's target (its schedule)
    *_percentiles("{side}.latency_us.{op}", ("p50", "p99", "p999", "max")),
    Column("cpu_pct", "DOUBLE", "cpu_pct"),
    Column("io_read_bytes", "BIGINT", "io_read_bytes"),
    Column("io_write_bytes", "BIGINT", "io_write_bytes"),
    *_AMPLIFICATION,
    Column("events", "JSON", "events"),   # kvlab.results.events: flushes, compactions, stalls, ... as named fields
), record="b.record", join="FROM benchmarks b WHERE b.id = intervals.benchmark_id")

# A sweep's latest definition, and one row per sweep point attempt that ended (done or failed), written in
# the same transaction as the point's benchmarks
SWEEPS = Table("sweeps", (
    Column("sweep_id", "VARCHAR PRIMARY KEY", "sweep_id"),
    Column("definition", "JSON", "definition"),
    Column("updated_at", "TIMESTAMP DEFAULT current_timestamp", sql="current_timestamp"),
))
SWEEP_POINTS = Table("sweep_points", (
    Column("sweep_id", "VARCHAR", "sweep_id"),
    Column("point_id", "VARCHAR", "point_id"),
    Column("run_id", "VARCHAR", read=_context("run_id")),
    Column("status", "VARCHAR", read=_context("status")),
    Column("repeat", "INTEGER", "repeat"),
    Column("axis_values", "JSON", read=lambda point, context: point.get("values") or {}),
    *(Column(n, t, n) for n, t in (("host", "VARCHAR"), ("worker", "VARCHAR"), ("started_at", "DOUBLE"),
                                   ("ended_at", "DOUBLE"), ("error", "VARCHAR"))),
    Column("recorded_at", "TIMESTAMP DEFAULT current_timestamp"),
))

# A crash test's report (CrashReport.to_dict: its summary and every kill), kept whole in `record`
CRASHTESTS = Table("crashtests", (
    Column("run_id", "VARCHAR", read=_context("run_id")),
    Column("stored_at", "TIMESTAMP DEFAULT current_timestamp"),
    Column("engine", "VARCHAR", "summary.engine"),
    Column("sync", "BOOLEAN", "summary.sync"),
    Column("kills", "INTEGER", "summary.kills"),
    Column("batch", "INTEGER", "batch"),
    Column("num", "BIGINT", "num"),
    Column("seed", "UBIGINT", "seed"),
    *(Column(n, t, f"summary.{n}") for n, t in (
        ("reopen_failures", "INTEGER"), ("acked_txns", "BIGINT"), ("acked_writes_lost", "BIGINT"),
        ("kills_with_loss", "INTEGER"), ("torn_txns", "INTEGER"), ("recovery_ms_p50", "DOUBLE"),
        ("recovery_ms_max", "DOUBLE"))),
    Column("tags", "VARCHAR[]", read=_context("tags")),
    Column("record", "JSON", read=lambda report, context: report),
), record="record")

# The machine's A/A spread (kvlab noise): per metric, the max-min range of N identical runs in % of their median,
# keyed by host, engine, workload, phase and threads; compare takes the latest as its noise floor
NOISE = Table("noise", (
    Column("measured_at", "TIMESTAMP DEFAULT current_timestamp"),
    *(Column(n, t, n) for n, t in (("host", "VARCHAR"), ("engine", "VARCHAR"), ("workload", "VARCHAR"),
                                   ("phase", "VARCHAR"), ("threads", "INTEGER"), ("n", "INTEGER"),
                                   ("method", "VARCHAR"))),
    *(Column(f"{m}_pct", "DOUBLE", f"{m}_pct") for m in NOISE_METRICS),
    Column("run_id", "VARCHAR", "run_id"),
    Column("tags", "VARCHAR[]", "tags"),
    Column("spec", "JSON", "spec"),
    Column("detail", "JSON", "detail"),
))

# A seed's verdict table (kvlab reproduce, a notebook's verdicts call): one row per claim (per engine, for a claim
# tested on each), with the runs behind it (their run ids), what the run was set up with, the machine, and kvlab's
# version; `reproduction` ties the rows of one table together
VERDICTS = Table("verdicts", (
    Column("reproduction", "VARCHAR", read=_context("reproduction")),
    Column("stored_at", "TIMESTAMP DEFAULT current_timestamp"),
    Column("seed", "VARCHAR", read=_context("seed")),
    Column("scale", "VARCHAR", read=_context("scale")),
    *(Column(n, "VARCHAR", n) for n in ("claim", "statement", "published", "measured", "verdict", "reason")),
    Column("run_ids", "VARCHAR[] DEFAULT []", read=_context("run_ids")),
    Column("engines", "VARCHAR[] DEFAULT []", read=_context("engines")),
    Column("setup", "JSON", read=_context("setup")),
    Column("machine", "JSON", read=_context("machine")),
    Column("kvlab_version", "VARCHAR", read=_context("kvlab_version")),
))

TABLES = (BENCHMARKS, INTERVALS, SWEEPS, SWEEP_POINTS, CRASHTESTS, NOISE, VERDICTS)


STORE_NAME = "kvlab.duckdb"
LOCK_WAIT_S = 15.0   # how long a command waits for another process's hold on the store file (DuckDB's lock)


def data_home() -> Path:
    """The user's data directory (XDG base directories): $XDG_DATA_HOME where it is an absolute path, else
    ~/.local/share."""
    xdg = os.environ.get("XDG_DATA_HOME", "")
    if os.path.isabs(xdg):
        return Path(xdg)
    try:
        return Path.home() / ".local" / "share"
    except RuntimeError:   # no HOME and no password entry
        raise errors.ResultsError("the results store has no home: neither $XDG_DATA_HOME nor a home directory "
                                  "is known; set KVLAB_RESULTS or give --store PATH") from None


def kvlab_home() -> Path:
    """kvlab's per-user folder ($XDG_DATA_HOME/kvlab, else ~/.local/share/kvlab): the store, and what a command
    writes when no place is named (compare's records, executed notebooks)."""
    return data_home() / "kvlab"


def user_default_path() -> Path:
    """The per-user store: $XDG_DATA_HOME/kvlab/kvlab.duckdb, else ~/.local/share/kvlab/kvlab.duckdb."""
    return kvlab_home() / STORE_NAME


def default_path() -> Path:
    """The results store when none is named: $KVLAB_RESULTS, else the per-user store (user_default_path).
    Never relative to the current directory unless $KVLAB_RESULTS is."""
    return Path(os.environ.get("KVLAB_RESULTS") or user_default_path())


# Called before the store connects to DuckDB.  A connection takes glibc's static TLS room that kvlab's
# initial-exec module needs, so kvlab.execution.native (a layer above) registers its loader here.
BEFORE_CONNECT: list = []


def _duckdb():
    for hook in BEFORE_CONNECT:
        hook()
    try:
        # a stop signal waits for the import: raised inside DuckDB's module set-up (nanobind's enum_create), an
        # exception aborts the interpreter ("Critical nanobind error", SIGABRT), found by the lose-data campaign
        with signals.held():
            import duckdb
    except ImportError as exc:
        raise errors.ResultsError("the results store needs duckdb (pip install duckdb; make setup does)") from exc
    return duckdb


class Store:
    def __init__(self, path=None):
        self.path = Path(path) if path is not None else default_path()
        # the store nobody named (no path, no $KVLAB_RESULTS): its folders are made private, and its creation said
        self._unnamed = path is None and not os.environ.get("KVLAB_RESULTS")
        try:
            str(self.path).encode("utf-8")
        except UnicodeEncodeError:
            raise errors.ResultsError(f"results store {str(self.path)!r}: the path is not valid UTF-8, which DuckDB "
                                      "needs; allowed: a path in UTF-8") from None

    def _connect(self, write=True):
        duckdb = _duckdb()
        new = write and not self.path.exists()
        if write:
            try:
                _make_folder(self.path.parent, private=self._unnamed)
            except OSError as exc:
                raise errors.ResultsError(f"{self.path}: cannot create the results folder ({exc})") from None
        elif not self.path.exists():
            raise errors.ResultsError(f"no results store at {self.path}")
        con = self._connect_waiting(duckdb)
        try:
            self._migrate(con)
        except duckdb.Error as exc:
            con.close()
            raise errors.ResultsError(f"{self.path}: cannot open the results store ({exc})") from None
        if new and self._unnamed:
            _say_created(self.path)
        return con

    def _connect_waiting(self, duckdb):
        """DuckDB lets one process at a time have a store file open: another kvlab's short write (the one store
        every run shares) is waited for, up to LOCK_WAIT_S, before it is an error."""
        deadline, pause = time.monotonic() + LOCK_WAIT_S, 0.05
        while True:
            try:
                return duckdb.connect(str(self.path))
            except duckdb.Error as exc:
                if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                    waited = f" after waiting {LOCK_WAIT_S:g} s for it" if "lock" in str(exc).lower() else ""
                    raise errors.ResultsError(f"{self.path}: cannot open the results store{waited} ({exc})") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)

    def check(self) -> Path:
        """Open the store for writing now, before a benchmark runs: a store that cannot be opened or
        written (broken, locked by another process, unwritable, from a newer kvlab) is a ResultsError
        before any time is spent measuring."""
        duckdb = _duckdb()
        con = self._connect()
        try:
            con.execute("INSERT OR REPLACE INTO kvlab_meta VALUES ('checked_at', ?)",
                        [time.strftime("%Y-%m-%dT%H:%M:%S%z")])
        except duckdb.Error as exc:
            raise errors.ResultsError(f"{self.path}: the results store cannot be written ({exc})") from None
        finally:
            con.close()
        return self.path

    def append_json(self, path, run_id: str | None = None) -> str:
        """Store a run saved as JSON (a --json file, or one `append` rescued)."""
        return self.append(load_json(path), run_id=run_id)

    def version(self, con) -> int | None:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "kvlab_meta" in tables:
            return int(con.execute("SELECT value FROM kvlab_meta WHERE key = 'version'").fetchone()[0])
        return None if "benchmarks" not in tables else 1

    def _migrate(self, con):
        """Bring a store from an older kvlab (or none: a new file) to STORE_VERSION in one transaction: the
        tables it lacks made, the columns it lacks added and filled from its records (Table.fill)."""
        v = self.version(con)
        if v == STORE_VERSION:
            return
        if v is not None and v > STORE_VERSION:
            raise errors.ResultsError(f"{self.path} has store version {v}; this kvlab knows up to {STORE_VERSION}")
        con.execute("BEGIN TRANSACTION")
        try:
            have = {}   # table -> its columns
            for table, column in con.execute("SELECT table_name, column_name FROM information_schema.columns "
                                             "WHERE table_schema = 'main'").fetchall():
                have.setdefault(table, set()).add(column)
            con.execute("CREATE SEQUENCE IF NOT EXISTS benchmark_ids START 1")
            for table in TABLES:
                if table.name not in have:
                    con.execute(table.create())
                    continue
                for column in table.columns:
                    if column.name not in have[table.name]:
                        con.execute(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {column.type}")
                        fill = table.fill(column)
                        if fill:
                            con.execute(fill)
            con.execute("CREATE TABLE IF NOT EXISTS kvlab_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
            con.execute("INSERT OR REPLACE INTO kvlab_meta VALUES ('version', ?)", [str(STORE_VERSION)])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise

    def append(self, result: RunResult | list, run_id: str | None = None, point: dict | None = None) -> str:
        """Store every benchmark of a run in one transaction; returns the run id.  `point` (a sweep
        point's record: sweep_id, point_id, repeat, values, host, worker, started_at, ended_at) tags
        the benchmarks and marks the point done in the same transaction.  If that fails, the run is
        saved as JSON elsewhere and the ResultsError names the file."""
        benchmarks = list(result)
        run_id = run_id or uuid.uuid4().hex[:12]
        try:
            self._append(benchmarks, run_id, point)
        except Exception as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            saved = rescue_json([b.to_dict() for b in benchmarks], f"unsaved-run-{run_id}.json", self.path.parent)
            raise errors.ResultsError(
                f"{self.path}: run {run_id} could not be appended to the results store ({reason}); the run is "
                f"saved in {saved} (Store.append_json reads it into a store later)") from exc
        return run_id

    def _append(self, benchmarks, run_id, point):
        con = self._connect()
        try:
            con.execute("BEGIN TRANSACTION")
            add_benchmark, add_interval = BENCHMARKS.insert(), INTERVALS.insert()
            for b in benchmarks:
                d = b.to_dict()
                bid = con.execute("SELECT nextval('benchmark_ids')").fetchone()[0]
                con.execute(add_benchmark, BENCHMARKS.values(d, id=bid, run_id=run_id, point=point))
                for i, iv in enumerate(d["intervals"]):
                    for side in ("workers", "writer"):
                        for op in iv.get(side, {}).get("ops", {}):
                            con.execute(add_interval, INTERVALS.values(iv, benchmark_id=bid, interval=i, side=side,
                                                                       op=op))
            if point is not None:
                _insert_point(con, point, "done", run_id)
            con.execute("COMMIT")
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except Exception:   # a failed COMMIT ends the transaction itself: keep the first error
                pass
            finally:
                con.close()
            raise
        con.close()

    def record_point(self, point: dict, status: str, error: str | None = None):
        """A sweep point that ended without a result (status 'failed', with the error), in one statement."""
        con = self._connect()
        try:
            _insert_point(con, {**point, "error": error}, status, None)
        finally:
            con.close()

    def define_sweep(self, sweep_id: str, definition: dict):
        """Remember the latest definition a sweep ran with."""
        con = self._connect()
        try:
            con.execute(SWEEPS.insert(replace=True), SWEEPS.values({"sweep_id": sweep_id, "definition": definition}))
        finally:
            con.close()

    def query(self, sql: str, args=()):
        """A read-only query on the store, as a pandas frame (the sweep views use it)."""
        con = self._connect(write=False)
        try:
            return con.execute(sql, _utf8(args)).df()
        finally:
            con.close()

    def _where(self, engine=None, workload=None, run_id=None, phase=None, tag=None, table=""):
        clauses, args = [], []
        for col, val in (("engine", engine), ("workload", workload), ("run_id", run_id), ("phase", phase)):
            if val is not None:
                clauses.append(f"{table}{col} = ?")
                args.append(val)
        if tag is not None:
            clauses.append(f"list_contains({table}tags, ?)")
            args.append(tag)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), args

    def append_crashtest(self, report: dict, tags=(), run_id: str | None = None) -> str:
        """Store a crash test's report (CrashReport.to_dict: its summary and every kill) in one statement."""
        run_id = run_id or uuid.uuid4().hex[:12]
        con = self._connect()
        try:
            con.execute(CRASHTESTS.insert(), CRASHTESTS.values(report, run_id=run_id, tags=tags))
        except _duckdb().Error as exc:
            raise errors.ResultsError(f"{self.path}: the crash test could not be stored ({exc})") from None
        finally:
            con.close()
        return run_id

    def append_noise(self, row: dict) -> None:
        """Store one A/A spread (kvlab noise): host, engine, workload, phase, threads, n, method, the metrics'
        spreads in % (NOISE_METRICS, each `<metric>_pct`), run_id, tags, spec and detail (dicts), in one
        statement."""
        con = self._connect()
        try:
            con.execute(NOISE.insert(), _utf8(NOISE.values(row)))
        except _duckdb().Error as exc:
            raise errors.ResultsError(f"{self.path}: the noise floor could not be stored ({exc})") from None
        finally:
            con.close()

    def noise_floor(self, host: str, engine: str, workload: str, threads: int, phase: str | None = None):
        """The latest stored A/A spread for this host, engine, workload and thread count (and phase, where
        given), as {metric: percent, ..., "n", "method", "measured_at", "run_id"}; None when none is stored."""
        if not self.path.exists():
            return None
        sql = ("SELECT * FROM noise WHERE host = ? AND engine = ? AND workload = ? AND threads = ?"
               + (" AND phase = ?" if phase is not None else "") + " ORDER BY measured_at DESC LIMIT 1")
        args = [host, engine, workload, int(threads)] + ([phase] if phase is not None else [])
        con = self._connect(write=False)
        try:
            cur = con.execute(sql, _utf8(args))
            names = [d[0] for d in cur.description]
            got = cur.fetchone()
        finally:
            con.close()
        if got is None:
            return None
        row = dict(zip(names, got))
        out = {m: row[f"{m}_pct"] for m in NOISE_METRICS if row.get(f"{m}_pct") is not None}
        out.update({k: row[k] for k in ("n", "method", "measured_at", "run_id", "host", "engine", "workload",
                                         "phase", "threads")})
        return out

    def append_verdicts(self, rows, *, seed: str, run_ids=(), scale: str | None = None, engines=(),
                        setup: Mapping | None = None, machine: Mapping | None = None) -> str:
        """Store a seed's verdict table (rows with claim, statement, published, measured, verdict, reason) with the
        run ids behind it, in one transaction; returns the id that ties its rows together (`reproduction`)."""
        from .._version import __version__
        reproduction = uuid.uuid4().hex[:12]
        context = dict(reproduction=reproduction, seed=seed, scale=scale, run_ids=list(dict.fromkeys(run_ids)),
                       engines=list(engines), setup=dict(setup or {}), machine=dict(machine or {}),
                       kvlab_version=__version__)
        con = self._connect()
        try:
            con.execute("BEGIN TRANSACTION")
            for row in rows:
                con.execute(VERDICTS.insert(), _utf8(VERDICTS.values(row, **context)))
            con.execute("COMMIT")
        except _duckdb().Error as exc:
            with contextlib.suppress(Exception):
                con.execute("ROLLBACK")
            raise errors.ResultsError(f"{self.path}: the verdicts could not be stored ({exc})") from None
        finally:
            con.close()
        return reproduction

    def verdicts(self, seed: str | None = None, run_ids=None):
        """Stored verdict rows (oldest first), of one seed where given, and only those whose runs include one of
        `run_ids` where given; an empty frame where the store holds none."""
        clauses: list[str] = []
        args: list[Any] = []
        if seed is not None:
            clauses.append("seed = ?")
            args.append(seed)
        if run_ids is not None:
            clauses.append("len(list_intersect(run_ids, ?)) > 0")
            args.append(list(run_ids))
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        if not self.path.exists():
            import pandas as pd
            return pd.DataFrame(columns=[c.name for c in VERDICTS.columns])
        return self.query(f"SELECT * FROM verdicts{where} ORDER BY stored_at, reproduction, rowid", args)

    def frame(self, **filters):
        """The queryable columns of stored benchmarks, as a pandas frame."""
        where, args = self._where(**filters)
        con = self._connect(write=False)
        try:
            return con.execute(
                "SELECT id, run_id, stored_at, engine, workload, phase, threads, trial, ops, seconds, ops_per_sec, "
                "micros_per_op, found, p50_us, p99_us, p999_us, p9999_us, max_us, cpu_pct, db_size_bytes, seed, "
                "engine_library, git_commit, partial, num, value_size, key_size, latency_unit, engine_settings, tags, "
                f"write_amp, read_amp, space_amp FROM benchmarks{where} ORDER BY id", args).df()
        finally:
            con.close()

    def load(self, **filters) -> RunResult:
        """Full records of stored benchmarks, upgraded to the current schema."""
        where, args = self._where(**filters)
        con = self._connect(write=False)
        try:
            rows = con.execute(f"SELECT record FROM benchmarks{where} ORDER BY id", _utf8(args)).fetchall()
        finally:
            con.close()
        return RunResult([BenchmarkResult.from_dict(json.loads(r[0])) for r in rows])

    def export(self, out, fmt="csv", table="benchmarks", **filters) -> Path:
        """Write stored rows (table "benchmarks" without the full records, or "intervals") to `out` as CSV
        or Parquet, through DuckDB (read it back with read_frame); a suffix that says the other format
        is an error, never a mislabelled file."""
        check_format(out, fmt)
        if table not in ("benchmarks", "intervals"):
            raise errors.SpecError(f"table {table!r} is unknown; allowed: benchmarks, intervals")
        where, args = self._where(**filters, table="" if table == "benchmarks" else "b.")
        if table == "benchmarks":
            query = f"SELECT * EXCLUDE (record) FROM benchmarks{where} ORDER BY id"
        else:
            query = (f"SELECT i.* FROM intervals i JOIN benchmarks b ON b.id = i.benchmark_id{where} "
                     "ORDER BY i.benchmark_id, i.interval")
        con = self._connect(write=False)
        try:
            return _copy_to(_duckdb(), con, f"({query})", Path(out), fmt, args)
        finally:
            con.close()


def _make_folder(folder: Path, private: bool) -> None:
    """`folder` and any missing parent; for the per-user store, each made 0700 as the XDG base directory
    specification asks of the folders it names (a named store's folders take the umask's mode)."""
    if not private:
        folder.mkdir(parents=True, exist_ok=True)
        return
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for f in reversed(missing):
        try:
            f.mkdir(mode=0o700)
        except FileExistsError:   # another kvlab made it in between
            pass


_SAID: set = set()


def _say_created(path: Path) -> None:
    """The per-user store was just made: say where, once a process, on stderr (stdout is the result's)."""
    where = str(path.absolute())
    if where not in _SAID:
        _SAID.add(where)
        print(f"kvlab: created the results store at {where} (set KVLAB_RESULTS or --store to choose another)",
              file=sys.stderr)


# Tables leave kvlab as CSV or Parquet, written and read by DuckDB: Parquet needs no pyarrow.
FORMATS = {"csv": "(FORMAT CSV, HEADER)", "parquet": "(FORMAT PARQUET)"}
_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def format_of(path) -> str | None:
    """The format a file name says ("csv" for .csv, "parquet" for .parquet or .pq), else None."""
    return _SUFFIXES.get(Path(path).suffix.lower())


def check_format(path, fmt: str | None) -> str:
    """`fmt` itself, once it is known and agrees with `path`'s suffix (where the suffix names a format)."""
    if fmt is None or fmt not in FORMATS:
        raise errors.SpecError(f"format {fmt!r} is unknown; allowed: {', '.join(FORMATS)}")
    said = format_of(path)
    if said is not None and said != fmt:
        raise errors.SpecError(f"{path} is named as {said} but the format asked is {fmt}: give a path ending in "
                               f".{fmt}, or the format {said}")
    return fmt


def _format_for(path, fmt) -> str:
    if fmt is None and format_of(path) is None:
        raise errors.SpecError(f"{path}: the name says no format; give one of {', '.join(FORMATS)}")
    return check_format(path, fmt or format_of(path))


def write_frame(df, path, fmt: str | None = None) -> Path:
    """Write a pandas frame to `path` as CSV or Parquet through DuckDB; `fmt` defaults to the one the
    suffix names.  The file appears whole or not at all (written beside it, then renamed)."""
    fmt = _format_for(path, fmt)
    duckdb = _duckdb()
    con = duckdb.connect()
    try:
        con.register("frame", df)
        return _copy_to(duckdb, con, "frame", Path(path), fmt)
    finally:
        con.close()


def read_frame(path, fmt: str | None = None):
    """A CSV or Parquet file (write_frame's, Store.export's, or anyone's) as a pandas frame, read by DuckDB."""
    path = Path(path)
    fmt = _format_for(path, fmt)
    if not path.is_file():
        raise errors.ResultsError(f"{path}: no such file")
    duckdb = _duckdb()
    con = duckdb.connect()
    reader = "read_parquet(?)" if fmt == "parquet" else "read_csv(?, header = true)"
    try:
        return con.execute(f"SELECT * FROM {reader}", [str(path)]).df()
    except duckdb.Error as exc:
        raise errors.ResultsError(f"{path}: cannot be read as {fmt} ({_first_line(exc)})") from None
    finally:
        con.close()


def _first_line(exc) -> str:
    return (str(exc) or type(exc).__name__).splitlines()[0]


def _copy_to(duckdb, con, source: str, out: Path, fmt: str, args=()) -> Path:
    """COPY `source` (a table name or a parenthesised query) to `out`, through a temporary file beside it."""
    tmp = out.with_name(out.name + ".tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        quoted = str(tmp).replace("'", "''")
        con.execute(f"COPY {source} TO '{quoted}' {FORMATS[fmt]}", list(args))
        os.replace(tmp, out)
    except (OSError, duckdb.Error) as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise errors.ResultsError(f"{out}: cannot write the {fmt} file ({_first_line(exc)})") from None
    return out


def rescue_json(data, name: str, near: Path | None = None) -> Path:
    """Write `data` as JSON where it can go: beside `near`, else the temp directory, else
    ~/.kvlab-unsaved; returns the file.  A ResultsError lists every place tried if none took it."""
    tried = []
    for folder in ([Path(near)] if near is not None else []) + [Path(tempfile.gettempdir()),
                                                                 Path.home() / ".kvlab-unsaved"]:
        target = folder / name
        try:
            write_json_atomic(target, data)
            return target
        except OSError as exc:
            tried.append(f"{target} ({exc.strerror or exc})")
    raise errors.ResultsError("the result could not be saved anywhere; tried " + "; ".join(tried))


def _insert_point(con, point: dict, status: str, run_id):
    con.execute(SWEEP_POINTS.insert(), SWEEP_POINTS.values(point, status=status, run_id=run_id))


def settings_text(b) -> str:
    """A benchmark's engine settings as given (k=v,k=v), for a column a reader can scan."""
    return _engine_settings({"provenance": b.provenance}, {})


def _utf8(args) -> list:
    """Query parameters as DuckDB takes them: a value that is not valid UTF-8 (a filter typed with bytes the
    terminal could not decode) is refused with its name, never passed on to fail inside DuckDB."""
    out = list(args)
    for v in out:
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise errors.ResultsError(f"{v!r} is not valid UTF-8 text; allowed: a run id, engine, workload or "
                                          "tag in UTF-8") from None
    return out
