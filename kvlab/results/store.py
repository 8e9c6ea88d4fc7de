"""The results store: an embedded DuckDB database in a results folder outside git.

Each stored run is appended in one transaction, so a process killed while
writing loses at most the run in flight; every earlier row stays readable.
The schema is versioned (table `kvlab_meta`); opening an older store migrates it
in place, one step at a time, inside a transaction.  The full result record
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
from pathlib import Path

from .. import _signals as signals
from .. import errors
from .result import BenchmarkResult, RunResult, _jsonable, load_json, write_json_atomic

STORE_VERSION = 8

_V1 = """
CREATE TABLE benchmarks (
    id BIGINT PRIMARY KEY, run_id VARCHAR, stored_at TIMESTAMP DEFAULT current_timestamp,
    engine VARCHAR, workload VARCHAR, phase VARCHAR, threads INTEGER, ops BIGINT, seconds DOUBLE,
    ops_per_sec DOUBLE, micros_per_op DOUBLE, found BIGINT, seed UBIGINT, record JSON);
CREATE SEQUENCE benchmark_ids START 1;
"""

# step n upgrades a store at version n to n+1
_MIGRATIONS = {
    # engine events per interval (kvlab.results.events: flushes, compactions, stalls, checkpoints, eviction as
    # named fields), taken from each stored record's intervals
    7: """
ALTER TABLE intervals ADD COLUMN events JSON;
UPDATE intervals SET events = json_extract(b.record, '$.intervals[' || intervals.interval || '].events')
    FROM benchmarks b WHERE b.id = intervals.benchmark_id;
""",
    # amplification (kvlab.result/7): write (the process's bytes written / user bytes), read (device block reads
    # per read op) and space (allocated / live bytes) per benchmark and per interval, taken from each record
    6: """
ALTER TABLE benchmarks ADD COLUMN write_amp DOUBLE;
ALTER TABLE benchmarks ADD COLUMN read_amp DOUBLE;
ALTER TABLE benchmarks ADD COLUMN space_amp DOUBLE;
ALTER TABLE intervals ADD COLUMN write_amp DOUBLE;
ALTER TABLE intervals ADD COLUMN read_amp DOUBLE;
ALTER TABLE intervals ADD COLUMN space_amp DOUBLE;
UPDATE benchmarks SET
    write_amp = TRY_CAST(json_extract(record, '$.amplification.write_amp') AS DOUBLE),
    read_amp = TRY_CAST(json_extract(record, '$.amplification.read_amp') AS DOUBLE),
    space_amp = TRY_CAST(json_extract(record, '$.amplification.space_amp') AS DOUBLE);
""",
    # the machine's A/A spread (kvlab noise): per metric, the max-min range of N identical runs in % of their
    # median, keyed by host, engine, workload, phase and threads; compare takes the latest as its noise floor
    5: """
CREATE TABLE noise (
    measured_at TIMESTAMP DEFAULT current_timestamp, host VARCHAR, engine VARCHAR, workload VARCHAR, phase VARCHAR,
    threads INTEGER, n INTEGER, method VARCHAR, ops_per_sec_pct DOUBLE, p50_us_pct DOUBLE, p99_us_pct DOUBLE,
    p999_us_pct DOUBLE, cpu_us_per_op_pct DOUBLE, run_id VARCHAR, tags VARCHAR[], spec JSON, detail JSON);
""",
    # rows that tell runs apart at a glance (num, sizes, settings, latency unit, the user's tags), taken from
    # each stored record; crash tests' reports beside the benchmarks
    4: """
ALTER TABLE benchmarks ADD COLUMN num BIGINT;
ALTER TABLE benchmarks ADD COLUMN value_size BIGINT;
ALTER TABLE benchmarks ADD COLUMN key_size INTEGER;
ALTER TABLE benchmarks ADD COLUMN latency_unit VARCHAR;
ALTER TABLE benchmarks ADD COLUMN engine_settings VARCHAR;
ALTER TABLE benchmarks ADD COLUMN tags VARCHAR[];
UPDATE benchmarks SET
    num = TRY_CAST(json_extract(record, '$.params.num') AS BIGINT),
    value_size = TRY_CAST(json_extract(record, '$.params.value_size') AS BIGINT),
    key_size = TRY_CAST(json_extract(record, '$.params.key_size') AS INTEGER),
    latency_unit = json_extract_string(record, '$.latency_unit'),
    tags = [];
CREATE TABLE crashtests (
    run_id VARCHAR, stored_at TIMESTAMP DEFAULT current_timestamp, engine VARCHAR, sync BOOLEAN, kills INTEGER,
    batch INTEGER, num BIGINT, seed UBIGINT, reopen_failures INTEGER, acked_txns BIGINT, acked_writes_lost BIGINT,
    kills_with_loss INTEGER, torn_txns INTEGER, recovery_ms_p50 DOUBLE, recovery_ms_max DOUBLE, tags VARCHAR[],
    record JSON);
""",
    # sweeps: each benchmark says which sweep point it measured; sweep_points holds one row per attempt
    # that ended (done or failed), written in the same transaction as the point's benchmarks
    3: """
ALTER TABLE benchmarks ADD COLUMN sweep_id VARCHAR;
ALTER TABLE benchmarks ADD COLUMN point_id VARCHAR;
CREATE TABLE sweeps (sweep_id VARCHAR PRIMARY KEY, definition JSON, updated_at TIMESTAMP DEFAULT current_timestamp);
CREATE TABLE sweep_points (
    sweep_id VARCHAR, point_id VARCHAR, run_id VARCHAR, status VARCHAR, repeat INTEGER, axis_values JSON,
    host VARCHAR, worker VARCHAR, started_at DOUBLE, ended_at DOUBLE, error VARCHAR,
    recorded_at TIMESTAMP DEFAULT current_timestamp);
""",
    2: """
ALTER TABLE benchmarks ADD COLUMN transactions BIGINT;
ALTER TABLE benchmarks ADD COLUMN txn_per_sec DOUBLE;
""",
    1: """
ALTER TABLE benchmarks ADD COLUMN trial INTEGER DEFAULT 0;
ALTER TABLE benchmarks ADD COLUMN partial BOOLEAN DEFAULT false;
ALTER TABLE benchmarks ADD COLUMN p50_us DOUBLE;
ALTER TABLE benchmarks ADD COLUMN p99_us DOUBLE;
ALTER TABLE benchmarks ADD COLUMN p999_us DOUBLE;
ALTER TABLE benchmarks ADD COLUMN p9999_us DOUBLE;
ALTER TABLE benchmarks ADD COLUMN max_us DOUBLE;
ALTER TABLE benchmarks ADD COLUMN cpu_pct DOUBLE;
ALTER TABLE benchmarks ADD COLUMN db_size_bytes BIGINT;
ALTER TABLE benchmarks ADD COLUMN engine_library VARCHAR;
ALTER TABLE benchmarks ADD COLUMN git_commit VARCHAR;
CREATE TABLE intervals (
    benchmark_id BIGINT, interval INTEGER, side VARCHAR, op VARCHAR, t_start_s DOUBLE, t_end_s DOUBLE,
    ops BIGINT, ops_per_sec DOUBLE, p50_us DOUBLE, p99_us DOUBLE, p999_us DOUBLE, max_us DOUBLE,
    cpu_pct DOUBLE, io_read_bytes BIGINT, io_write_bytes BIGINT);
UPDATE benchmarks SET
    p50_us = TRY_CAST(json_extract(record, '$.latency_us.p50') AS DOUBLE),
    p99_us = TRY_CAST(json_extract(record, '$.latency_us.p99') AS DOUBLE),
    p999_us = TRY_CAST(json_extract(record, '$.latency_us.p999') AS DOUBLE),
    p9999_us = TRY_CAST(json_extract(record, '$.latency_us.p9999') AS DOUBLE),
    max_us = TRY_CAST(json_extract(record, '$.latency_us.max') AS DOUBLE);
""",
}


# the metrics kvlab noise measures a spread for (kvlab.compare's names)
NOISE_METRICS = ("ops_per_sec", "p50_us", "p99_us", "p999_us", "cpu_us_per_op")


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
        v = self.version(con)
        if v == STORE_VERSION:
            return
        if v is not None and v > STORE_VERSION:
            raise errors.ResultsError(f"{self.path} has store version {v}; this kvlab knows up to {STORE_VERSION}")
        con.execute("BEGIN TRANSACTION")
        try:
            if v is None:
                con.execute(_V1)
                v = 1
            while v < STORE_VERSION:
                con.execute(_MIGRATIONS[v])
                v += 1
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
            for b in benchmarks:
                d = b.to_dict()
                acct = b.accounting or {}
                amp = b.amplification or {}
                bid = con.execute("SELECT nextval('benchmark_ids')").fetchone()[0]
                lat = b.latency_us
                con.execute(
                    "INSERT INTO benchmarks (id, run_id, engine, workload, phase, threads, ops, seconds, ops_per_sec, "
                    "micros_per_op, found, seed, record, trial, partial, p50_us, p99_us, p999_us, p9999_us, max_us, "
                    "cpu_pct, db_size_bytes, engine_library, git_commit, transactions, txn_per_sec, sweep_id, "
                    "point_id, num, value_size, key_size, latency_unit, engine_settings, tags, write_amp, read_amp, "
                    "space_amp) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [bid, run_id, b.engine, b.workload, b.phase, b.threads, b.ops, b.seconds, b.ops_per_sec,
                     b.micros_per_op, b.found, b.seed, json.dumps(d, default=_jsonable), b.trial, b.partial,
                     lat.get("p50"), lat.get("p99"), lat.get("p999"), lat.get("p9999"), lat.get("max"),
                     acct.get("cpu_pct"), acct.get("db_size_bytes"), b.versions.get("engine_library"),
                     b.versions.get("git_commit"), (b.mix or {}).get("transactions"), (b.mix or {}).get("txn_per_sec"),
                     (point or {}).get("sweep_id"), (point or {}).get("point_id"), b.params.get("num"),
                     b.params.get("value_size"), b.params.get("key_size"), b.latency_unit, settings_text(b),
                     list(b.tags), amp.get("write_amp"), amp.get("read_amp"), amp.get("space_amp")])
                for i, iv in enumerate(b.intervals):
                    iamp = iv.get("amplification") or {}
                    events = json.dumps(iv["events"], default=_jsonable) if iv.get("events") is not None else None
                    for side in ("workers", "writer"):
                        for op, n in iv.get(side, {}).get("ops", {}).items():
                            l = iv[side]["latency_us"].get(op, {})
                            con.execute(
                                "INSERT INTO intervals (benchmark_id, interval, side, op, t_start_s, t_end_s, ops, "
                                "ops_per_sec, p50_us, p99_us, p999_us, max_us, cpu_pct, io_read_bytes, io_write_bytes, "
                                "write_amp, read_amp, space_amp, events) "
                                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [bid, i, side, op, iv["t_start_s"], iv["t_end_s"], n,
                                 iv[side]["ops_per_sec"][op], l.get("p50"), l.get("p99"), l.get("p999"),
                                 l.get("max"), iv.get("cpu_pct"), iv.get("io_read_bytes"),
                                 iv.get("io_write_bytes"), iamp.get("write_amp"), iamp.get("read_amp"),
                                 iamp.get("space_amp"), events])
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
            con.execute("INSERT OR REPLACE INTO sweeps (sweep_id, definition, updated_at) "
                        "VALUES (?, ?, current_timestamp)", [sweep_id, json.dumps(definition, default=_jsonable)])
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
        s = report["summary"]
        con = self._connect()
        try:
            con.execute(
                "INSERT INTO crashtests (run_id, engine, sync, kills, batch, num, seed, reopen_failures, acked_txns, "
                "acked_writes_lost, kills_with_loss, torn_txns, recovery_ms_p50, recovery_ms_max, tags, record) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [run_id, s["engine"], s["sync"], s["kills"], report.get("batch"), report.get("num"),
                 report.get("seed"), s["reopen_failures"], s["acked_txns"], s["acked_writes_lost"],
                 s["kills_with_loss"], s["torn_txns"], s["recovery_ms_p50"], s["recovery_ms_max"], list(tags),
                 json.dumps(report, default=_jsonable)])
        except _duckdb().Error as exc:
            raise errors.ResultsError(f"{self.path}: the crash test could not be stored ({exc})") from None
        finally:
            con.close()
        return run_id

    def append_noise(self, row: dict) -> None:
        """Store one A/A spread (kvlab noise): host, engine, workload, phase, threads, n, method, the metrics'
        spreads in % (NOISE_METRICS, each `<metric>_pct`), run_id, tags, spec and detail (dicts), in one
        statement."""
        columns = ["host", "engine", "workload", "phase", "threads", "n", "method",
                   *(f"{m}_pct" for m in NOISE_METRICS), "run_id", "tags", "spec", "detail"]
        values = [row.get(c) for c in columns]
        for i, c in enumerate(columns):
            if c in ("spec", "detail"):
                values[i] = json.dumps(values[i], default=_jsonable)
            elif c == "tags":
                values[i] = list(values[i] or ())
        con = self._connect()
        try:
            con.execute(f"INSERT INTO noise ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                        _utf8(values))
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
    con.execute(
        "INSERT INTO sweep_points (sweep_id, point_id, run_id, status, repeat, axis_values, host, worker, started_at, "
        "ended_at, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [point["sweep_id"], point["point_id"], run_id, status, point.get("repeat"),
         json.dumps(point.get("values") or {}, default=_jsonable), point.get("host"), point.get("worker"),
         point.get("started_at"), point.get("ended_at"), point.get("error")])


def settings_text(b) -> str:
    """A benchmark's engine settings as given (k=v,k=v), for a column a reader can scan."""
    spec = (b.provenance or {}).get("spec") or {}
    return ",".join(f"{k}={v}" for k, v in (spec.get("engine_settings") or {}).items())


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
