"""Bad command lines never surprise (issue 24, part 3): property-based fuzz of `kvlab.cli.main(argv)`.

Random argument lists for every subcommand, built from the real parser (`kvlab.cli.build_parser()`
walked: subcommands and their actions, sub-subcommands, option strings, choices, nargs, typed values
with their bounds), so a new flag is fuzzed without touching this file.  Each case draws real flag
names and near-misses (typos, wrong case, '_' for '-', db_bench's `--name=value` and YCSB's `-p`/`-P`
where they do not belong, abbreviations, a single dash), values of every shape (empty, negative, zero,
at and past each bound, huge, NaN, inf, non-numeric, unicode, whitespace, `=`-joined), missing values
(a flag last, or followed by another flag), options given twice, and paths of every kind: an existing
file where a directory is expected and vice versa, a missing nested path, a path below a file, a
non-empty foreign directory, a read-only file system (a tmpfs mounted read-only), an immutable
directory and file (chattr +i: the tests run as root, so chmod would not stop a write), names with
spaces, unicode, newlines, '=' and a leading '-', and an undecodable byte (surrogateescape, as Linux
hands such an argv to Python).  `kvlab dbbench` gets random db_bench flags after kvlab's own.

Each case runs `main(argv)` in-process in a temporary working directory (HOME, TMPDIR, KVLAB_TMPDIR,
KVLAB_RESULTS and tempfile's directory all inside the test's temporary root) and must:
- return 0, 1, 2 or 130; nothing may escape main, not even SystemExit, except SystemExit(0) from
  --help/-h/--version, which argparse raises by design;
- on 2, print a line starting with "kvlab: error:" whose message says what was wrong (test_fuzz's
  names_what: the offending token, or what is allowed);
- print no traceback, and finish within CASE_SECONDS;
- write nothing outside the temporary root: a Python audit hook sees every file opened for writing,
  every mkdir, rename, unlink, chmod, rmtree, mkdtemp and subprocess of the case, and every results
  store DuckDB opens for writing; after the fuzz, the checkout (its results/ folder, new untracked files
  with the fuzz's marker in their name), the real home's ~/.kvlab-unsaved and the real temp directory
  are compared with a snapshot taken before.

What is real and what is stood in (test_argv_fuzz: 2,000 cases in the suite, 10,000 in the campaign).
A valid command line would run a benchmark (seconds to hours), so the executions are replaced by light
stand-ins; everything before them is real: the parser, each handler, make_spec and every check of the
spec, the preflight (dbdir.check, check_output_file, the results store's check), and everything after
them (the result lines, the accounting table, warnings, --json, the results store, exit codes).
- `kvlab.execution.run.runner.run_spec` (also bound by name in kvlab.execution.orchestration.sweep;
  kvlab.cli.common and kvlab.cli.dbbench import it from the runner when called): the stand-in does what
  the real one does up to the native driver: dbdir.check, spec.validate(), the CPU check (pinning.check),
  native.require_built, the real dbdir.prepare (creating or clearing --db, refusing what it must),
  dbdir.reconcile and the engine configuration (cfg.config); it then releases and cleans up the
  directory as the runner does, and returns one tiny real BenchmarkResult per workload (copied from
  one real null-engine run made when the module starts, relabelled).  So LinkBench without
  --memory-limit, compare, sweeps, dbbench, ycsb and run all reach it.
- `kvlab.execution.orchestration.linkbench._bounded` (--memory-limit: a child process in a memory cgroup): the
  stand-in builds the phase's spec (spec_for) and calls the run_spec stand-in; the size was parsed by
  the real cgroup.parse_size before it.
- `kvlab.execution.host.cgroup.unavailable` (the probe that makes and removes a memory cgroup, as `kvlab
  reproduce 004` asks before its larger-than-RAM half): the stand-in says a cgroup can be made, so that half
  reaches the `_bounded` stand-in.
- `kvlab.execution.crash.crashtest.crashtest` runs for real up to its first child process: its checks, the
  --db directory it makes; the module's `native` is swapped, for that call only, for a proxy whose
  load() stops it there; the stand-in returns an empty CrashReport (no kills).
- `papermill.execute_notebook`: writes an empty notebook where the real one would (kvlab.lab.notebooks
  runs for real: names, scale, the output folder, the optional dependencies).
- `kvlab.execution.orchestration.dask_sweep.connect`: the fuzz has no scheduler to reach; the stand-in checks the
  address as the real one does, then fails as an unreachable scheduler does (a KvlabError).
- The default results store (KVLAB_RESULTS, shared by every case) is checked for real once and written
  for real 25 times; after that its check returns at once and an append (also a crash test's report)
  serializes the records and returns a run id without DuckDB (a connection costs ~20 ms, four cases'
  budget).  Every store a case names with --store (a file, a directory, a read-only or immutable place,
  a new path, a corrupt file) is opened, checked and written for real, every time; so are reads
  (results list/export, sweeps).
- The parser is built once (kvlab.cli.main.build_parser memoized: it is deterministic, and building it
  takes about a third of a case's budget); each parse uses a fresh namespace, as a fresh process would.
- The temporary root is a tmpfs where this machine allows the mount (kvlab fsyncs every marker it
  writes; ~1 ms each on a disk), else a plain directory.

test_argv_real_sample runs REAL_CASES command lines drawn the same way but kept small (engines lmdb and
null, --num <= 2000, --duration 0, no --sync, open-loop rates or memory limits, a crash test of one
kill), with nothing stood in: real engines, real runs, the real store.

KVLAB_FUZZ_EXAMPLES sets the number of cases (2,000 in the suite, 10,000 in the full campaign,
scripts/fuzz_campaign.sh; the real sample is 1 in 200 of it, at least 5); above 10,000 each run also draws
new cases instead of the fixed ones.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvlab import engines, errors
from kvlab.execution import native
from kvlab.execution.dbfiles import dbdir
from kvlab.model import workloads
from kvlab.model.dbbench_flags import FLAGS
from kvlab.model.spec import make_spec
from kvlab.results.result import BenchmarkResult, RunResult
from kvlab.results.store import Store

from .test_fuzz import names_what

cli_main = sys.modules["kvlab.cli.main"]   # the module (kvlab.cli.main is the function)
TOTAL = int(os.environ.get("KVLAB_FUZZ_EXAMPLES", "2000"))
REAL_CASES = max(5, TOTAL // 200)
CASE_SECONDS = 20           # a case that takes longer is a hang
MARK = "kvfz"               # in every file name the fuzz makes up, so an escaped one is found
CHECKOUT = Path(__file__).resolve().parents[1]
HELP_TOKENS = ("-h", "--help", "--version")


def fuzz(examples):
    return settings(max_examples=examples, deadline=None, database=None, derandomize=TOTAL <= 10000,
                    suppress_health_check=list(HealthCheck))


# --- the command lines kvlab has, read from its parser ---------------------------------------------

@dataclass
class Option:
    strings: tuple          # ("--num",), ("--quiet", "-q"), ...
    dest: str
    nargs: object           # 0 for flags, None for one value
    repeatable: bool
    choices: tuple | None
    type: object
    metavar: str | None
    required: bool = False


@dataclass
class Command:
    path: tuple             # ("results", "export")
    options: list
    positionals: list       # Options without strings (sweep's FILE, linkbench's phase)
    subcommands: tuple = () # a command that needs an ACTION: its names


def _walk(parser, path=()):
    options, positionals, sub = [], [], None
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            sub = a
            continue
        if isinstance(a, (argparse._HelpAction, argparse._VersionAction)):
            continue
        o = Option(tuple(a.option_strings), a.dest, a.nargs if a.nargs is not None else None,
                   isinstance(a, argparse._AppendAction), tuple(a.choices) if a.choices else None, a.type,
                   a.metavar if isinstance(a.metavar, str) else None, bool(a.required))
        if a.option_strings and isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction,
                                               argparse._StoreConstAction, argparse._CountAction)):
            o.nargs = 0
        (options if a.option_strings else positionals).append(o)
    out = [Command(path, options, positionals, tuple(sub.choices) if sub else ())]
    if sub:
        for name, p in sub.choices.items():
            out += _walk(p, path + (name,))
    return out


PARSER = cli_main.build_parser()
COMMANDS = {c.path: c for c in _walk(PARSER)}
# how often each command is drawn (the running commands most: they have the most to check)
WEIGHT = {"run": 24, "dbbench": 14, "ycsb": 12, "compare": 6, "results": 6, "linkbench": 9, "crashtest": 6,
          "sweep": 6, "notebooks": 3, "engines": 2, "workloads": 2}


def _weight(path) -> int:
    if not path:
        return 3
    c = COMMANDS[path]
    if c.subcommands:             # `kvlab results` alone: a missing action, rarely
        return 1
    w = WEIGHT.get(path[0], 3)
    if len(path) == 1:
        return w
    siblings = sum(1 for p in COMMANDS if len(p) == len(path) and p[:-1] == path[:-1])
    return max(1, round(w / max(1, siblings)))


COMMAND_POOL = [p for p in COMMANDS for _ in range(_weight(p))]


def _bounds(fn):
    """(kind, lo, hi) of a kvlab.cli.parsing number type, from its closure; None for another type."""
    try:
        cells = dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__ or ())))
        return cells["kind"], cells["lo"], cells["hi"]
    except (AttributeError, KeyError, ValueError):
        return None


# --- the paths a command line may name ---------------------------------------------------------------

@dataclass
class Paths:
    root: Path                  # everything the fuzz may write is under it
    cwd: Path
    kinds: dict = field(default_factory=dict)    # name -> absolute path (str)
    relative: list = field(default_factory=list)
    cleanups: list = field(default_factory=list)

    def all(self) -> list:
        return list(self.kinds.values()) + self.relative


TOML_MIX = f"""name = "shop{MARK}"
record_count = 2000
operation_count = 600
[[template]]
name = "browse"
weight = 3
txn = "g2"
[[template]]
name = "buy"
txn = "u1"
"""
YCSB_PROPS = """recordcount=1500
operationcount=800
readproportion=0.5
updateproportion=0.5
requestdistribution=uniform
"""
LINKBENCH_PROPS = "maxid1=1001\nrequesters=1\nloaders=1\nrequests=50\n"
SWEEP = (f'name = "s{MARK}"\nrepeats = 1\n[base]\nworkload = "fillseq,readrandom"\nnum = 500\ninterval = 0\n'
         '[axes]\nengine = ["lmdb", "null"]\n')
SWEEP_BAD = '[axes]\nthreads = [0, "x"]\n'


def make_paths(p: Paths) -> Paths:
    """Every kind of path, under p.root; the read-only mount and the immutable ones where this machine
    allows them (skipped otherwise).  What must be undone is appended to p.cleanups at once."""
    root = p.root
    # on a tmpfs where this machine allows it: kvlab fsyncs every marker it writes, ~1 ms each on a disk
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", str(root)],
                      capture_output=True).returncode == 0:
        p.cleanups.append(["umount", "-l", str(root)])
    base = root / "paths"
    for d in (p.cwd, base, root / "home", root / "tmp"):
        d.mkdir(parents=True, exist_ok=True)
    k = p.kinds

    def put(name, path):
        k[name] = str(path)
        return path

    put("file", base / f"file-{MARK}.txt").write_text("not a directory\n")
    put("empty_file", base / f"empty-{MARK}").write_text("")
    put("binary", base / f"binary-{MARK}.bin").write_bytes(bytes(range(256)) * 4)
    put("dir", base / f"dir-{MARK}").mkdir()
    full = put("foreign_dir", base / f"foreign-{MARK}")
    full.mkdir()
    (full / "someone-elses.txt").write_text("x")
    put("missing_nested", base / f"missing-{MARK}" / "a" / "b" / "c")
    put("below_file", base / f"file-{MARK}.txt" / "sub")
    kv = put("kvlab_db", base / f"kvdb-{MARK}")
    dbdir.prepare(str(kv), "lmdb", native.load().KEY_ENCODING, False)
    put("odd_spaces", base / f"with spaces {MARK}")
    put("odd_unicode", base / f"ünïcødé-{MARK}-日本")
    put("odd_newline", base / f"new\nline-{MARK}")
    put("odd_equals", base / f"a=b-{MARK}")
    put("odd_dash", base / f"-dash-{MARK}")
    put("odd_undecodable", base / f"bad\udcff-{MARK}")
    put("toml_mix", base / f"shop-{MARK}.toml").write_text(TOML_MIX)
    put("ycsb_props", base / f"work-{MARK}.properties").write_text(YCSB_PROPS)
    put("linkbench_props", base / f"lb-{MARK}.properties").write_text(LINKBENCH_PROPS)
    put("sweep", base / f"sweep-{MARK}.toml").write_text(SWEEP)
    put("sweep_bad", base / f"sweepbad-{MARK}.toml").write_text(SWEEP_BAD)
    put("store_other", base / f"other-{MARK}.duckdb")
    put("store_corrupt", base / f"corrupt-{MARK}.duckdb").write_bytes(b"DUCK" + bytes(range(200)) * 8)
    put("json_out", base / f"out-{MARK}.json")
    put("csv_out", base / f"out-{MARK}.csv")
    put("parquet_out", base / f"out-{MARK}.parquet")
    # a read-only file system
    ro = base / f"ro-{MARK}"
    ro.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)],
                      capture_output=True).returncode == 0:
        p.cleanups.append(["umount", "-l", str(ro)])
        k["readonly_fs"] = str(ro)
        k["readonly_fs_sub"] = str(ro / "sub")
        k["readonly_fs_file"] = str(ro / f"x-{MARK}.json")
    # immutable: even root cannot write there
    imm_dir, imm_file = base / f"immutable-{MARK}", base / f"immutable-{MARK}.json"
    imm_dir.mkdir()
    imm_file.write_text("[]")
    if subprocess.run(["chattr", "+i", str(imm_dir), str(imm_file)], capture_output=True).returncode == 0:
        p.cleanups.append(["chattr", "-i", str(imm_dir), str(imm_file)])
        k["immutable_dir"] = str(imm_dir)
        k["immutable_dir_sub"] = str(imm_dir / "sub")
        k["immutable_file"] = str(imm_file)
    # relative to the working directory (inside root too)
    p.relative = [f"{MARK}.json", f"db-{MARK}", f"{MARK}.parquet", f"{MARK}.csv", f"{MARK}.pq", f"{MARK}",
                  f"results/{MARK}.json", f"nested/{MARK}/x.json", f"../sibling-{MARK}", f"~/{MARK}-home.json",
                  f"./{MARK} space.json", f"{MARK}.duckdb", "workloada", "workloade", "workloadz", ".", "", "-"]
    return p


def weighted(*pairs) -> st.SearchStrategy:
    """One of the strategies, each as often as its weight (st.one_of picks its distinct branches evenly)."""
    index = st.sampled_from([i for i, (w, _) in enumerate(pairs) for _ in range(w)])
    strategies = [s for _, s in pairs]

    @st.composite
    def pick(draw):
        return draw(strategies[draw(index)])
    return pick()


# --- values of every shape ---------------------------------------------------------------------------

def _safe(s: str) -> str:
    """Free text as it may appear anywhere in an argv, but never naming a place outside the temporary
    root: no leading '/', no '..' (relative names land in the working directory, which is inside it).
    NUL cannot be in a real argv."""
    s = s.replace("\x00", "").replace("..", "._")
    return s.lstrip("/")


weird_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8).map(_safe)
NUMBER_JUNK = ["", " ", "0", "-0", "-1", "1", "2", "3", "nan", "NaN", "inf", "-inf", "Infinity", "1e3", "1e309",
               "1e-9", "0.5", "-0.5", "1.0", "2.5", "0x10", "0o7", "1_000", "١٢", "１２", "²", " 7", "7 ", "\t3\n",
               "18446744073709551616", "9" * 40, "-" + "9" * 30, "1,000", "1k", "64M", "abc", "=", "--", "-",
               "true", "None", "½", "1e", "e3", "+5", "--5"]
GENERIC = weighted((4, st.sampled_from(NUMBER_JUNK)), (2, weird_text), (1, st.integers(-2**70, 2**70).map(str)),
                   (1, st.floats(allow_nan=True, allow_infinity=True).map(repr)))
SIZES = ["0", "1", "4096", "64M", "1G", "1.5G", "1T", "99999T", "64 MiB", "64mb", "-1", "10Q", "k", "", " 1k ", "1e9"]

ENGINE_NAMES = list(engines.REGISTRY) + ["wiredtiger", "LMDB", "lmdb,null", "rocks", "lmdbb", "", " lmdb",
                                         "lmdb ", "bdb-notxn", "null"]
MAKO = ["g9u1", "g2u1", "gr1:-50", "gr1:10", "g", "u0", "g9x", "txn", "g1:2:3", "s1", "r1:5", "", "g-1",
        "g99999999999999999999", "o1", "c1", "j1"]


def _domain(opt: Option, paths: Paths, command) -> st.SearchStrategy | None:
    """Values that mean something for this option (besides the generic shapes)."""
    dest = opt.dest
    file_paths = st.sampled_from(paths.all())
    named = {
        "engine": weighted((3, st.sampled_from(ENGINE_NAMES)),
                           (1, st.lists(st.sampled_from(ENGINE_NAMES[:8]), min_size=1, max_size=3).map(",".join))),
        "engines": st.lists(st.sampled_from(ENGINE_NAMES), max_size=4).map(",".join),
        "workload": st.one_of(
            st.sampled_from(list(workloads.REGISTRY) + ["ycsb-a", "ycsb-e", "ycsb-f", "fdb-90-10-c100",
                                                        "linkbench", "nosuch", "fillseq,,", ",", "readrandom "]),
            st.sampled_from(MAKO).map(lambda s: "txn:" + s), st.sampled_from(MAKO).map(lambda s: "mako:" + s),
            st.lists(st.sampled_from(["fillseq", "readrandom", "ycsb-a", "txn:g2u1", "overwrite"]), min_size=1,
                     max_size=3).map(",".join),
            st.sampled_from([paths.kinds["toml_mix"], paths.kinds["ycsb_props"], paths.kinds["file"],
                             paths.kinds["binary"], paths.kinds["dir"], paths.kinds["missing_nested"],
                             paths.kinds["sweep"]])),
        "txn": st.sampled_from(MAKO),
        "distribution": st.sampled_from(["uniform", "zipfian", "zipfian-plain", "latest", "hotspot", "sequential",
                                         "exponential", "Zipfian", "zipf", "", "normal"]),
        "compression": st.sampled_from(["none", "snappy", "lz4", "zstd", "zlib", "", "SNAPPY"]),
        "cpus": st.sampled_from(["0", "0-1", "0,1", "1-0", "99", "0-99", "a", "-1", "0-", ",", "0,,1", "1"]),
        "set": st.one_of(
            st.tuples(st.sampled_from(list(engines.ENGINE_SETTINGS) + ["nosuch", "", "num"]),
                      st.one_of(st.sampled_from(SIZES + ["true", "false", "snappy", "x"]), GENERIC))
            .map(lambda kv: f"{kv[0]}={kv[1]}"),
            st.sampled_from(["=", "x", "sync", "cache_size=", "=1"])),
        "options": st.sampled_from(["", "nosync", "write_buffer_size=1", "x=y", "=", "(", "{", "a;b",
                                    "write_buffer_size=-1"]),
        "table_options": st.sampled_from(["", "leaf_page_max=4KB", "x", "(", "block_compressor=snappy"]),
        "tag": weighted((3, st.sampled_from(["nightly", "a.b:c/d+e-f_g", "", "has space", "x" * 65, "ü", "a,b",
                                             "-x"])), (1, weird_text)),
        "p": st.one_of(
            st.tuples(st.sampled_from(["recordcount", "operationcount", "threadcount", "target", "maxexecutiontime",
                                       "readproportion", "updateproportion", "requestdistribution",
                                       "insertorder", "fieldcount", "fieldlength", "nosuch", ""]),
                      st.one_of(st.sampled_from(["0", "1", "100", "0.5", "-1", "nan", "zipfian", "hashed", ""]),
                                GENERIC))
            .map(lambda kv: f"{kv[0]}={kv[1]}"),
            st.sampled_from(["recordcount", "=", "=1", "a=b=c"])),
        "P": st.one_of(st.sampled_from(["workloada", "workloadb", "workloadc", "workloadd", "workloade",
                                        "workloadf", "workloadg", "Workloada"]), file_paths),
        "props": st.one_of(
            st.tuples(st.sampled_from(["addlink", "read_shape", "maxid1", "requesters", "requests", "nlinks_max",
                                       "link_type_count", "nosuch", ""]), GENERIC).map(lambda kv: f"{kv[0]}={kv[1]}"),
            st.sampled_from(["=", "x", "maxid1"])),
        "memory_limit": st.sampled_from(SIZES + ["512M", "2G"]),
        "only": st.lists(st.sampled_from(["intro", "nosuch", "", "01_intro"]), max_size=3).map(",".join),
        "scheduler": st.sampled_from(["tcp://127.0.0.1:1", "", "x", "tcp://", "inproc://"]),
        "run_id": st.sampled_from(["abc", "", "0" * 12, "'; DROP TABLE benchmarks; --"]),
        "sweep": st.sampled_from([f"s{MARK}", "nosuch", "", "'"]),
    }
    if dest == "out" and command.path[:1] == ("results",):     # an export's file: its suffix names the format
        k = paths.kinds
        return st.sampled_from([f"{MARK}.csv", f"{MARK}.parquet", f"{MARK}.pq", f"results/{MARK}.csv", k["csv_out"],
                                k["parquet_out"], k["dir"], k["missing_nested"] + ".csv", f"{MARK}.CSV", f"{MARK}"]
                               + [k[n] for n in ("readonly_fs_file", "immutable_file") if n in k])
    if dest in named:
        return named[dest]
    if opt.metavar == "N" and opt.type is None:     # counts checked after parsing (LinkBench's)
        return st.integers(-2, 5000).map(str)
    if dest in ("db", "json", "store", "out", "config", "file"):
        return file_paths
    return None


_VALUES: dict = {}


def value_strategy(opt: Option, paths: Paths, command) -> st.SearchStrategy:
    key = (id(opt), id(paths))
    if key not in _VALUES:
        _VALUES[key] = _value_strategy(opt, paths, command)
    return _VALUES[key]


def _value_strategy(opt: Option, paths: Paths, command) -> st.SearchStrategy:
    """What this option's meaning suggests (its choices, bounds, domain, paths), then every other shape."""
    options = [(1, GENERIC)]
    if opt.metavar in ("FILE", "DIR", "PATH") or opt.dest in ("db", "json", "store", "out", "config", "file"):
        options.append((4, st.sampled_from(paths.all())))
    dom = _domain(opt, paths, command)
    if dom is not None:
        options.append((4, dom))
    if opt.choices:
        cs = [str(c) for c in opt.choices]
        options += [(4, st.sampled_from(cs)),
                    (1, st.sampled_from([c.upper() for c in cs] + [c[:-1] for c in cs] + [c + "x" for c in cs]))]
    b = _bounds(opt.type) if opt.type is not None else None
    if b:
        kind, lo, hi = b
        edges = [x for x in (lo, hi) if x is not None]
        near = [e + d for e in edges for d in (-1, 0, 1)] + ([lo + 0.5] if kind is float and lo is not None else [])
        top = int(min(hi if hi is not None else 10**6, 5000))
        options += [(2, st.sampled_from([str(x) for x in near])),
                    (4, st.integers(int(lo) if lo is not None else -10, top).map(str))]
    elif getattr(opt.type, "__name__", "") == "byte_size":
        options.append((3, st.sampled_from(SIZES)))
    return weighted(*options)


def near_misses(opt: Option) -> list:
    """Spellings a user might type for this option."""
    out = []
    for s in opt.strings:
        body = s.lstrip("-")
        if len(body) > 1:
            out += ["--" + body.replace("-", "_"), "--" + body.upper(), "--" + body[:-1], "--" + body + "s",
                    "-" + body, "--" + body[1:] if len(body) > 2 else "--" + body * 2, "---" + body]
            if len(body) > 3:
                out.append("--" + body[1] + body[0] + body[2:])
    return [o for o in out if o not in _all_option_strings()]


_ALL = None


def _all_option_strings() -> set:
    global _ALL
    if _ALL is None:
        _ALL = {s for c in COMMANDS.values() for o in c.options for s in o.strings} | set(HELP_TOKENS)
    return _ALL


OUTSIDERS = ["--value_size", "--key_size", "--benchmarks=fillseq", "--benchmarks", "--use_existing_db",
             "--use_existing_db=1", "--num=100", "--db=x", "-p", "-P", "-t", "-load", "-s", "-D", "-c", "--out",
             "--format", "--scale", "--", "-", "--=1", "---", "-x", "--thread", "--wrkload", "--Engine", "-q", "-qq",
             "--no-store=1", "--quiet=1", "--tag=", "--json="]


# --- command lines ---------------------------------------------------------------------------------

# what the real sample leaves out or keeps small (everything else is drawn as in the fuzz)
REAL_EXCLUDED = {"num", "reads", "duration", "repeat", "warmup", "interval", "threads", "clients", "value_size",
                 "writes_per_second", "target_rate", "rate_schedule", "sync", "kills", "max_delay", "requests",
                 "maxtime", "maxid1",
                 "startid1", "intervals", "interval_seconds", "memory_limit", "scheduler", "requesters", "loaders",
                 "warmup_time", "p", "set", "options", "table_options", "map_size", "cache_size", "batch", "seek_nexts",
                 "target", "props", "config", "engine", "engines", "P", "workload", "txn", "progress", "status"}
REAL_DBBENCH = ["benchmarks", "histogram", "db", "use_existing_db", "compression_type", "key_size", "seed",
                "verify_checksum", "perf_level", "use_lsm", "statistics", "bloom_bits", "block_size"]
REAL_ENGINES = ["lmdb", "null"]
REAL_WEIGHT = {("run",): 10, ("ycsb",): 6, ("dbbench",): 6, ("compare",): 2, ("linkbench",): 4, ("crashtest",): 1,
               ("sweep", "show"): 1, ("sweep", "run"): 2, ("sweep", "list"): 1, ("results", "list"): 2,
               ("results", "export"): 2, ("results", "sweeps"): 1, ("engines",): 1, ("workloads",): 1,
               ("notebooks", "list"): 1}
REAL_POOL = [p for p, w in REAL_WEIGHT.items() if p in COMMANDS for _ in range(w)]
REAL_WORKLOADS = ["fillseq", "fillseq,readrandom", "readrandom", "ycsb-a", "ycsb-e", "txn:g2u1", "fillrandom,readseq",
                  "txn:gr1:-50", "nosuch", "deleterandom"]


@dataclass(frozen=True)
class Typed:
    """One way to type one option: `pair` (flag value), `joined` (flag=value), `bare` (the value missing:
    the flag last, or another flag after it), `flag` (an option without value), `flag=` (one given a
    value anyway), `word` (a fixed token: a near-miss, another command's flag), `text` (free text)."""
    opt: object
    flag: str
    form: str


_MENUS: dict = {}


def menu(command: Command, real: bool) -> list:
    """Everything a user might type for this command, weighted; one draw picks one (a value is a second)."""
    key = (command.path, real)
    if key in _MENUS:
        return _MENUS[key]
    out = []
    for o in command.options:
        if real and o.dest in REAL_EXCLUDED:
            continue
        for s in o.strings:
            if o.nargs == 0:
                out += [Typed(o, s, "flag")] * 8 + [Typed(o, s, "flag=")]
            else:
                out += [Typed(o, s, "pair")] * 7 + [Typed(o, s, "joined")] * (2 if s.startswith("--") else 0) \
                    + [Typed(o, s, "bare")]
        if not real:
            out += [Typed(o, m, "pair" if o.nargs != 0 else "word") for m in near_misses(o)[:3]]
    if not real:
        extra = max(2, len(out) // 14)
        out += [Typed(None, w, "word") for w in OUTSIDERS][:extra] + [Typed(None, "", "text")] * max(1, extra // 4)
    _MENUS[key] = out or [Typed(None, "", "none")]
    return _MENUS[key]


def _positional_values(pos: Option, paths: Paths, real: bool) -> st.SearchStrategy:
    if pos.choices:
        choices = st.sampled_from([str(c) for c in pos.choices])
        return choices if real else weighted((6, choices), (1, st.sampled_from(["LOAD", "loads", "", "-load"])),
                                             (1, weird_text))
    return st.sampled_from([paths.kinds["sweep"]] * (3 if real else 12) + [paths.kinds["sweep_bad"]] * 3
                           + ([] if real else paths.all()))


def _dbbench_value(name, paths):
    f = FLAGS[name]
    if name == "db":
        return st.sampled_from(paths.all())
    if name == "benchmarks":
        return st.lists(st.sampled_from(list(workloads.REGISTRY) + ["nosuch", "", "ycsb-a", "fillseq"]),
                        max_size=3).map(",".join)
    if f.parse is str:
        return st.one_of(st.sampled_from(["", "x", "none", "snappy", "1"]), weird_text)
    return st.one_of(st.sampled_from(["0", "1", "-1", "true", "no", "1e3", "1.5", "", "x", "nan", "inf",
                                      "18446744073709551616", "100", "1000"]), GENERIC)


_DBBENCH_VALUES: dict = {}


def _dbbench_menu(real: bool) -> list:
    names = REAL_DBBENCH if real else list(FLAGS)
    out = [(n, "eq") for n in names for _ in range(6)] + [(n, "space") for n in names] + [(n, "bare") for n in names]
    if not real:
        out += [(n, "no") for n in names]
        out += [(t, "eq") for n in names[::4] for t in (n[:-1], n.replace("_", "-"), n.upper())]
        out += [(j, "junk") for j in ("--", "-x", "--=1", "5", "-num=5", "")]
    return out


_DBBENCH_MENUS = {}


def dbbench_tokens(draw, paths, real: bool) -> list:
    if real not in _DBBENCH_MENUS:
        _DBBENCH_MENUS[real] = st.sampled_from(_dbbench_menu(real))
    out = []
    for _ in range(draw(st.integers(0, 5))):
        name, form = draw(_DBBENCH_MENUS[real])
        if form == "junk":
            out.append(name or draw(weird_text))
        elif form == "bare":
            out.append(f"--{name}")
        elif form == "no":
            out.append(f"--no{name}")
        else:
            if (name, id(paths)) not in _DBBENCH_VALUES:
                _DBBENCH_VALUES[name, id(paths)] = _dbbench_value(name, paths) if name in FLAGS else GENERIC
            value = draw(_DBBENCH_VALUES[name, id(paths)])
            out += [f"--{name}={value}"] if form == "eq" else [f"--{name}", value]
    if real:
        out.append(f"--num={draw(st.integers(1, 2000))}")
    return out


HEAD_MISSES = ("upper", "short", "plural", "db_bench", "rn", "", "dash")


@st.composite
def argvs(draw, paths: Paths, real=False):
    """A command line: the command (sometimes misspelt), 0-6 options typed every way, the positionals
    (sometimes missing), now and then an option twice, a help flag or a stray word; for dbbench, db_bench
    flags after kvlab's own.  `real`: the real sample's (small) command lines."""
    path = draw(st.sampled_from(REAL_POOL if real else COMMAND_POOL))
    rare = 1000 if real else draw(st.integers(0, 199))      # one draw decides the rare events
    command = COMMANDS[path]
    head = list(path)
    if 20 <= rare < 25 and head:                            # a misspelt command or action
        i, how = rare % len(head), HEAD_MISSES[rare % len(HEAD_MISSES)]
        w = head[i]
        head[i] = {"upper": w.upper(), "short": w[:-1], "plural": w + "s", "dash": "-" + w}.get(how, how)
    choices = st.sampled_from(menu(command, real))
    items, used = [], set()
    for _ in range(draw(st.integers(0, 6))):
        t = draw(choices)
        if t.opt is not None and not t.opt.repeatable:
            if t.opt.dest in used:
                continue                                    # twice only as the rare event below
            used.add(t.opt.dest)
        if t.form in ("word", "flag", "bare"):
            items.append([t.flag])
        elif t.form == "text":
            items.append([draw(weird_text)])
        elif t.form == "flag=":
            items.append([t.flag + "=" + ("", "1", "yes", "x")[len(items) % 4]])
        elif t.form in ("pair", "joined"):
            value = draw(value_strategy(t.opt, paths, command)) if t.opt is not None else draw(GENERIC)
            items.append([f"{t.flag}={value}"] if t.form == "joined" else [t.flag, value])
    for opt in command.options:                             # a required option (results export --out)
        if opt.required and opt.dest not in used and rare % 8 and not (real and opt.dest in REAL_EXCLUDED):
            items.insert(rare % (len(items) + 1), [opt.strings[0], draw(value_strategy(opt, paths, command))])
    if items and rare < 20:                                 # an option given twice
        items.append(list(items[rare % len(items)]))
    for pos in command.positionals:                         # sweep's FILE, linkbench's phase
        if rare % 8 or real:
            key = (id(pos), id(paths), real)
            if key not in _VALUES:
                _VALUES[key] = _positional_values(pos, paths, real)
            items.insert(rare % (len(items) + 1), [draw(_VALUES[key])])
    if 25 <= rare < 28:                                     # help: argparse exits 0 by design
        items.insert(rare % (len(items) + 1), [HELP_TOKENS[rare % 3]])
    if 28 <= rare < 36:                                     # a stray word
        items.insert(rare % (len(items) + 1), [draw(weird_text)])
    if real:
        items += _real_forced(draw, path, paths)
    argv = head + [t for item in items for t in item]
    if path and path[0] == "dbbench":
        argv += dbbench_tokens(draw, paths, real)
    return argv


def _real_forced(draw, path, paths) -> list:
    """The real sample's size: small and quick whatever else was drawn."""
    eng = draw(st.sampled_from(REAL_ENGINES))
    small = draw(st.integers(1, 2000))
    name = path[0] if path else ""
    if name == "run":
        return [["--engine", eng], ["--workload", draw(st.sampled_from(REAL_WORKLOADS))], ["--num", str(small)],
                ["--duration", "0"], ["--interval", "0"]]
    if name == "ycsb":
        return [["--engine", eng], ["-P", draw(st.sampled_from(["workloada", "workloadc", "workloade",
                                                                 paths.kinds["ycsb_props"]]))],
                ["-p", f"recordcount={small}"], ["-p", f"operationcount={draw(st.integers(1, 2000))}"],
                ["--duration", "0"]]
    if name == "dbbench":
        return [["--engine", eng]]
    if name == "compare":
        return [["--engines", draw(st.sampled_from(["lmdb", "null", "lmdb,null", "nosuch"]))],
                ["--num", str(small)], ["--threads", draw(st.sampled_from(["1", "2"]))], ["--duration", "0.2"],
                ["--warmup", "0.05"], ["--repeat", "2"]]
    if name == "linkbench":
        return [["--engine", eng], ["--maxid1", str(draw(st.integers(2, 1000)))], ["--requests", "50"],
                ["--requesters", "1"], ["--loaders", "1"]]
    if name == "crashtest":
        return [["--engine", "lmdb"], ["--kills", "1"], ["--max-delay", "0.05"], ["--num", "100"]]
    return []


# --- one case: main(argv) watched --------------------------------------------------------------------

class _Stream(io.TextIOWrapper):
    """stdout/stderr as a real process has them (UTF-8 bytes underneath); main may close stderr."""

    def __init__(self, errors_mode):
        super().__init__(io.BytesIO(), encoding="utf-8", errors=errors_mode, write_through=True)

    def close(self):
        self.flush()

    def text(self) -> str:
        return self.buffer.getvalue().decode("utf-8", "replace")

    def isatty(self):
        return False


class _Hung(BaseException):
    pass


def _alarm(signum, frame):
    raise _Hung(f"the case took more than {CASE_SECONDS} s")


class Writes:
    """Every path a case writes, as the interpreter reports it (sys.addaudithook) and as the store
    opens it; on only while a case runs."""
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    EVENTS = {"os.mkdir": (0,), "os.rename": (0, 1), "os.remove": (0,), "os.rmdir": (0,), "shutil.rmtree": (0,),
              "os.chmod": (0,), "os.chown": (0,), "os.truncate": (0,), "os.symlink": (1,), "os.link": (1,),
              "os.utime": (0,), "tempfile.mkdtemp": (0,), "tempfile.mkstemp": (0,), "shutil.copyfile": (1,),
              "shutil.move": (1,), "os.mkfifo": (0,), "os.mknod": (0,)}
    DIR_FD = {"os.mkdir": 2, "os.rename": 2, "os.remove": 1, "os.rmdir": 1, "os.chmod": 2, "os.utime": 3,
              "shutil.rmtree": 1, "os.symlink": 2, "os.mkfifo": 2, "os.mknod": 3, "os.chown": 3}
    _installed = False
    on = False
    seen: list = []
    processes: list = []

    @classmethod
    def install(cls):
        if not cls._installed:
            sys.addaudithook(cls._hook)
            cls._installed = True

    @classmethod
    def _path(cls, path, dir_fd=None):
        if isinstance(path, int) or path is None:
            return None
        path = os.fsdecode(path) if isinstance(path, (bytes, os.PathLike)) else str(path)
        if not os.path.isabs(path):
            base = os.getcwd()
            if isinstance(dir_fd, int) and dir_fd >= 0:
                try:
                    base = os.readlink(f"/proc/self/fd/{dir_fd}")
                except OSError:
                    pass
            path = os.path.join(base, path)
        return path

    @classmethod
    def _hook(cls, event, args):
        if not cls.on:
            return
        try:
            if event == "open":
                path, _mode, flags = args
                if isinstance(flags, int) and flags & cls.WRITE_FLAGS:
                    p = cls._path(path)
                    if p:
                        cls.seen.append((event, p))
            elif event in cls.EVENTS:
                i_fd = cls.DIR_FD.get(event)
                dir_fd = args[i_fd] if i_fd is not None and len(args) > i_fd else None
                for i in cls.EVENTS[event]:
                    if len(args) > i:
                        p = cls._path(args[i], dir_fd)
                        if p:
                            cls.seen.append((event, p))
            elif event == "subprocess.Popen":
                cls.processes.append(args[1] if len(args) > 1 else args)
        except Exception:   # noqa: BLE001 - a hook must never fail the code it watches
            cls.seen.append((event, f"<unreadable {args!r}>"))

    @classmethod
    def outside(cls, roots) -> list:
        allowed = [os.path.realpath(r) + os.sep for r in roots]
        bad = []
        for event, p in cls.seen:
            if p == os.devnull or p.startswith("/proc/"):   # e.g. accounting's /proc/self/clear_refs
                continue
            if p.startswith("/sys/fs/cgroup/") and "/kvlab-" in p:   # a trial's memory cgroup, made and removed
                continue
            if os.path.basename(os.path.dirname(p)) == "__pycache__":   # an import's bytecode
                continue
            real = os.path.realpath(p)
            if not any((real + os.sep).startswith(a) for a in allowed):
                bad.append(f"{event} {p}")
        return bad


@dataclass
class Outcome:
    argv: list
    code: object = None
    stdout: str = ""
    stderr: str = ""
    problem: str | None = None
    seconds: float = 0.0


def run_case(argv, paths: Paths) -> Outcome:
    out, err = _Stream("strict"), _Stream("backslashreplace")
    o = Outcome(list(argv))
    Writes.seen, Writes.processes = [], []
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    t0 = time.perf_counter()
    try:
        Writes.on = True
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            o.code = cli_main.main(list(argv))
    except SystemExit as exc:
        o.code = f"SystemExit({exc.code!r})"
        if not (exc.code in (0, None) and any(t in argv for t in HELP_TOKENS)):
            o.problem = f"SystemExit({exc.code!r}) escaped main"
    except BaseException as exc:   # noqa: BLE001 - the property: nothing escapes main
        o.problem = "".join(traceback.format_exception(exc)).rstrip()
    finally:
        Writes.on = False
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        o.seconds = time.perf_counter() - t0
    o.stdout, o.stderr = out.text(), err.text()
    if o.problem:
        return o
    if o.code not in (0, 1, 2, 130) and not str(o.code).startswith("SystemExit"):
        o.problem = f"exit code {o.code!r}"
    elif "Traceback (most recent call last)" in o.stdout + o.stderr:
        o.problem = "a traceback was printed"
    elif o.code == 2:
        lines = [ln for ln in o.stderr.splitlines() if ln.startswith("kvlab: error:")]
        if not lines:
            o.problem = f"exit 2 without a 'kvlab: error:' line; stderr: {o.stderr[-400:]!r}"
        else:
            msg = o.stderr[o.stderr.index("kvlab: error:") + len("kvlab: error:"):].strip()
            things = [p for t in argv for p in (t, *t.split("=", 1))]
            if not (names_what(msg, *things) or any(w in msg for w in ("missing", "required", "twice"))):
                o.problem = f"the error does not say what was wrong: {msg!r}"
    if not o.problem:
        bad = Writes.outside([paths.root])
        if bad:
            o.problem = "wrote outside the temporary root: " + "; ".join(bad[:5])
    return o


def describe(o: Outcome) -> str:
    return (f"argv: {o.argv!r}\nexit: {o.code!r}\nproblem: {o.problem}\n--- stdout (tail)\n{o.stdout[-1500:]}\n"
            f"--- stderr (tail)\n{o.stderr[-1500:]}")


# --- the stand-ins -----------------------------------------------------------------------------------

class _Stop(BaseException):
    """Raised where the crash test would start its first child."""


class StandIns:
    def __init__(self, template: BenchmarkResult):
        self.template = template.to_dict()

    def result(self, spec, workload, phase="run") -> BenchmarkResult:
        b = BenchmarkResult.from_dict(json.loads(json.dumps(self.template)))
        b.engine, b.workload, b.phase, b.threads = spec.engine, workload, phase, spec.threads
        b.params = {**(b.params or {}), "num": spec.num, "value_size": spec.value_size}
        return b

    def run_spec(self, spec, on_result=None, control=None, load_only=False):
        from kvlab.execution.run import pinning
        dbdir.check(spec.db, spec.use_existing_db)
        spec.validate()
        pinning.check(spec.cpus)
        cfg = native.require_built(spec.engine, load_now=False)
        lib = native.load()
        where = dbdir.prepare(spec.db, spec.engine, lib.KEY_ENCODING, spec.use_existing_db)
        try:
            settings, _notes = dbdir.reconcile(where, cfg, dict(spec.engine_settings))
            cfg.config(settings, max_threads=spec.threads + 2)
        finally:
            where.release()
            if not spec.keep_db:
                where.cleanup()
        names = list(spec.workloads)[:1] if load_only else list(spec.workloads)[:3]
        results = [self.result(spec, n, "load" if load_only else "run") for n in names]
        for b in results:
            if on_result:
                on_result(b)
        return RunResult(results, spec)

    def bounded(self, engine, config, phase, db, limit, settings):
        from kvlab.execution.orchestration import linkbench
        return self.run_spec(linkbench.spec_for(engine, config, phase, db, **settings))

    def crashtest(self, engine, kills, **kw):
        from kvlab.execution.crash import crashtest as ct

        class Proxy:
            def __getattr__(self, name):
                return getattr(native, name)

            def load(self):
                raise _Stop

        real_native, ct.native = ct.native, Proxy()
        made = set(Path(tempfile.gettempdir()).glob("kvlab-crashtest-*"))
        try:
            ct.crashtest(engine, kills, **kw)
        except _Stop:
            pass
        finally:
            ct.native = real_native
            for d in set(Path(tempfile.gettempdir()).glob("kvlab-crashtest-*")) - made:
                d.rmdir()
        return ct.CrashReport(engine=engine, sync=kw.get("sync", False), batch=kw.get("batch", 10),
                              num=kw.get("num", 10_000), seed=kw.get("seed") or 1)

    @staticmethod
    def connect(scheduler):
        if not isinstance(scheduler, str) or not scheduler:
            raise errors.SpecError(f"scheduler {scheduler!r}: give an address like tcp://10.0.0.1:8786 or a "
                                   "dask.distributed.Client")
        raise errors.KvlabError(f"cannot reach the Dask scheduler at {scheduler}: (the fuzz has no scheduler)")

    @staticmethod
    def execute_notebook(source, target, **kw):
        Path(target).write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')


def _light_default_store(mp, default: Path, real_writes: int = 25):
    """The default store (KVLAB_RESULTS, a good store every case shares) is checked for real once and
    written for real `real_writes` times; after that a check of it returns at once and an append
    serializes the run (to_dict, JSON) and returns a run id without DuckDB (a DuckDB connection takes
    ~20 ms, the whole budget of two cases).  Every other store a case names (--store: files,
    directories, read-only places, new paths) is checked and written for real, every time."""
    real_check, real_append = Store.check, Store.append
    state = {"checked": False, "writes": 0}

    def is_default(store):
        return os.path.abspath(store.path) == str(default)

    def check(self):
        if is_default(self) and state["checked"]:
            return self.path
        path = real_check(self)
        state["checked"] = state["checked"] or is_default(self)
        return path

    def append(self, result, run_id=None, point=None):
        if is_default(self) and point is None and state["writes"] >= real_writes:
            json.dumps([b.to_dict() for b in result])
            return run_id or f"light{state['writes']:07d}"
        state["writes"] += is_default(self)
        return real_append(self, result, run_id=run_id, point=point)

    mp.setattr(Store, "check", check)
    mp.setattr(Store, "append", append)
    real_crash = getattr(Store, "append_crashtest", None)
    if real_crash is not None:   # kvlab crashtest's report
        def append_crashtest(self, report, *args, **kw):
            if is_default(self) and state["writes"] >= real_writes:
                json.dumps(report)
                return f"light{state['writes']:07d}"
            state["writes"] += is_default(self)
            return real_crash(self, report, *args, **kw)
        mp.setattr(Store, "append_crashtest", append_crashtest)


# --- the environment ---------------------------------------------------------------------------------

def _snapshot() -> dict:
    """What the fuzz must leave as it was: the checkout's results/ folder and new untracked files with the
    fuzz's mark, the real home's unsaved-run folder, the real temp directory's kvlab files."""
    snap = {}
    results = CHECKOUT / "results"
    if results.exists():
        for p in results.rglob("*"):
            with contextlib.suppress(OSError):
                st_ = p.lstat()
                snap[str(p)] = (st_.st_size, st_.st_mtime_ns)
    try:
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=CHECKOUT,
                                capture_output=True, text=True, timeout=60).stdout
        for line in status.splitlines():
            if MARK in line:
                snap["git:" + line] = None
    except (OSError, subprocess.SubprocessError):
        pass
    for folder in (Path(os.path.expanduser("~")) / ".kvlab-unsaved", Path("/tmp"), Path("/var/tmp"),
                   Path(tempfile.gettempdir())):
        with contextlib.suppress(OSError):
            for p in folder.iterdir():
                if MARK in p.name or p.name.startswith("unsaved-run-") or folder.name == ".kvlab-unsaved":
                    snap[str(p)] = None
    return snap


@contextlib.contextmanager
def fuzz_environment(tmp_path_factory, stand_ins: bool):
    root = tmp_path_factory.mktemp("argv-fuzz")
    paths = Paths(root, root / "cwd")
    with contextlib.ExitStack() as undo, pytest.MonkeyPatch.context() as mp:
        undo.callback(lambda: [subprocess.run(cmd, capture_output=True) for cmd in reversed(paths.cleanups)])
        make_paths(paths)
        mp.chdir(paths.cwd)
        mp.setenv("HOME", str(root / "home"))
        mp.setenv("XDG_DATA_HOME", str(root / "home" / ".local" / "share"))   # kvlab's per-user folder
        mp.setenv("TMPDIR", str(root / "tmp"))
        mp.setenv("KVLAB_TMPDIR", str(root / "tmp"))
        mp.setenv("KVLAB_RESULTS", str(root / "store" / "kvlab.duckdb"))
        mp.setattr(tempfile, "tempdir", str(root / "tmp"))
        # every store DuckDB opens for writing is a write the audit hook cannot see (DuckDB is C++)
        real_connect = Store._connect

        def connect(self, write=True):
            if write and Writes.on:
                Writes.seen.append(("duckdb", str(self.path.absolute())))
            return real_connect(self, write)
        mp.setattr(Store, "_connect", connect)
        if stand_ins:
            _light_default_store(mp, root / "store" / "kvlab.duckdb")
            from kvlab.execution.run import runner
            template = runner.run_spec(make_spec("null", "fillseq", num=10, interval=0))[0]
            s = StandIns(template)
            import papermill

            import kvlab.cli.crashtest
            import kvlab.execution.crash.crashtest
            import kvlab.execution.host.cgroup
            import kvlab.execution.orchestration.dask_sweep
            import kvlab.execution.orchestration.linkbench
            import kvlab.execution.orchestration.sweep
            mp.setattr(runner, "run_spec", s.run_spec)
            mp.setattr(kvlab.execution.orchestration.sweep, "run_spec", s.run_spec)
            mp.setattr(kvlab.execution.orchestration.linkbench, "_bounded", s.bounded)
            mp.setattr(kvlab.execution.host.cgroup, "unavailable", lambda limit=0: None)
            mp.setattr(kvlab.cli.crashtest, "crashtest", s.crashtest)
            mp.setattr(kvlab.execution.orchestration.dask_sweep, "connect", s.connect)
            mp.setattr(papermill, "execute_notebook", s.execute_notebook)
            mp.setattr(cli_main, "build_parser", lambda: PARSER)
        Writes.install()
        yield paths


def _check_all(outcomes, total, before):
    after = _snapshot()
    escaped = sorted(set(after) - set(before)) + sorted(k for k in before if k in after and after[k] != before[k]
                                                          and k.startswith(str(CHECKOUT)))
    failures = [o for o in outcomes if o.problem]
    slow = sorted(outcomes, key=lambda o: -o.seconds)[:3]
    codes = {}
    for o in outcomes:
        codes[str(o.code)] = codes.get(str(o.code), 0) + 1
    summary = (f"{total} cases; exit codes {dict(sorted(codes.items()))}; slowest "
               + ", ".join(f"{o.seconds:.2f} s {o.argv[:4]}" for o in slow))
    print(summary)
    assert not escaped, f"written outside the temporary root: {escaped[:10]}"
    if failures:
        seen, shown = set(), []
        for o in failures:
            key = (o.problem or "").splitlines()[-1][:120]
            if key not in seen:
                seen.add(key)
                shown.append(describe(o))
        pytest.fail(f"{len(failures)} of {total} command lines failed ({len(shown)} distinct):\n\n"
                    + "\n\n".join(shown[:15]))


def test_argv_fuzz(tmp_path_factory):
    """TOTAL random command lines against the real CLI with the executions stood in (module docstring)."""
    before = _snapshot()
    outcomes = []
    with fuzz_environment(tmp_path_factory, stand_ins=True) as paths:
        @fuzz(TOTAL)
        @given(argv=argvs(paths))
        def case(argv):
            outcomes.append(run_case(argv, paths))

        case()
    _check_all(outcomes, TOTAL, before)


def test_argv_real_sample(tmp_path_factory):
    """REAL_CASES small command lines drawn the same way, with nothing stood in."""
    before = _snapshot()
    outcomes = []
    with fuzz_environment(tmp_path_factory, stand_ins=False) as paths:
        @fuzz(REAL_CASES)
        @given(argv=argvs(paths, real=True))
        def case(argv):
            outcomes.append(run_case(argv, paths))

        case()
    _check_all(outcomes, REAL_CASES, before)
