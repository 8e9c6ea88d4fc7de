"""Bad input never crashes (issue 14, part 4): property-based fuzz of every way input reaches kvlab.

RunSpec (make_spec keyword sets), mako strings, YCSB properties, TOML workload files, `kvlab dbbench`
flag sets and engine option strings opened on the real engines (kvlab._native.Engine in a temporary
directory).  Each case either parses or raises a kvlab.errors exception whose message names what was
wrong (the offending key or value, or what is allowed); anything else (another exception, a crash of
the interpreter) fails.

KVLAB_FUZZ_EXAMPLES sets the total number of cases, split across the targets by SHARE: 2,000 in the suite,
10,000 in the full campaign (scripts/fuzz_campaign.sh); above 10,000 each run also draws new random cases
instead of the fixed ones.
"""
import os
import shutil
import string
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvlab import engines, errors
from kvlab.cli import dbbench
from kvlab.execution import native
from kvlab.model import workloads
from kvlab.model.dbbench_flags import FLAGS, parse_argv
from kvlab.model.spec import RunSpec, make_spec
from kvlab.model.workloads import mako, toml_file, ycsb

TOTAL = int(os.environ.get("KVLAB_FUZZ_EXAMPLES", "2000"))
SHARE = {"spec": 0.22, "mako": 0.14, "ycsb": 0.14, "toml": 0.12, "dbbench": 0.14, "options": 0.24}


def fuzz(target):
    return settings(max_examples=max(1, int(TOTAL * SHARE[target])), deadline=None, database=None,
                    derandomize=TOTAL <= 10000, suppress_health_check=list(HealthCheck))


def names_what(exc, *things) -> bool:
    """The message names the problem: one of the given keys or values, or what is allowed."""
    msg = str(exc)
    if not msg:
        return False
    low = msg.lower()
    if any(w in low for w in ("allowed", "expected", "must", "unknown", "out of range", "not a number",
                              "needs", "give ", "such as", "got ", "cannot", "not ")):
        return True
    for t in things:
        for text in (str(t), repr(t)):
            if text and text in msg:
                return True
    return False


def check_error(exc, *things):
    assert isinstance(exc, errors.KvlabError), f"{type(exc).__name__}: {exc}"
    assert names_what(exc, *things), f"the message does not say what was wrong: {exc!r}"


# --- values of every shape: what a notebook user or a file might pass --------------------------

weird_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.integers(-5, 2_000_000),
    st.floats(allow_nan=True, allow_infinity=True), weird_text,
    st.sampled_from(["", "0", "1", "true", "none", "snappy", "zstd", "1e3", "-1", "nan", "0-1", "0,2", "lmdb"]))
values = st.one_of(scalars, st.lists(scalars, max_size=3), st.dictionaries(weird_text, scalars, max_size=2))

RUN_FIELDS = [f for f in RunSpec.__dataclass_fields__ if f not in ("engine", "workloads", "mixes")]
# make_spec's own parameters are not keyword names a caller can pass twice (hypothesis also draws the
# string constants of the code under test, so weird_text does produce "workload")
PARAM_NAMES = st.one_of(st.sampled_from(RUN_FIELDS + list(engines.ENGINE_SETTINGS) + ["clients", "txn"]),
                        weird_text).filter(lambda name: name not in ("engine", "workload"))
ENGINE_NAMES = st.one_of(st.sampled_from(list(engines.REGISTRY)), weird_text)
WORKLOAD_NAMES = st.one_of(
    st.sampled_from(list(workloads.REGISTRY) + ["ycsb-a", "ycsb-e", "fdb-90-10-c100", "txn:g9u1"]),
    st.builds(lambda s: "txn:" + s, st.text(alphabet="gsruiocj:-0123456789 ", max_size=10)),
    weird_text)


@fuzz("spec")
@given(engine=ENGINE_NAMES, workload=st.one_of(WORKLOAD_NAMES, st.lists(WORKLOAD_NAMES, max_size=3).map(",".join)),
       params=st.dictionaries(PARAM_NAMES, values, max_size=5))
def test_runspec(engine, workload, params):
    try:
        spec = make_spec(engine, workload, **params)
    except Exception as exc:  # noqa: BLE001 - the property: only kvlab errors, naming the problem
        parts = [w.strip() for w in workload.split(",")]
        check_error(exc, engine, workload, *parts, *(p[4:].strip() for p in parts if p.startswith("txn:")),
                    *params, *params.values())
        return
    assert isinstance(spec, RunSpec)
    spec.cli_command(), spec.python_call(), spec.to_dict()


# --- mako strings ------------------------------------------------------------------------------

@fuzz("mako")
@given(st.one_of(st.text(alphabet="gsruiocjvr:-0123456789 ", max_size=16), weird_text,
                 st.lists(st.tuples(st.sampled_from(list(mako.MAKO_OPS) + list(mako.MAKO_FDB_ONLY)),
                                    st.integers(-3, 10**30), st.one_of(st.none(), st.integers(-10**20, 10**20))),
                          min_size=1, max_size=4).map(
                     lambda ops: "".join(f"{k}{n}" + ("" if r is None else f":{r}") for k, n, r in ops))))
def test_mako(spec):
    try:
        mix = mako.from_mako(spec)
    except Exception as exc:  # noqa: BLE001
        check_error(exc, spec)
        assert repr(spec.strip()) in str(exc) or repr(spec) in str(exc), str(exc)
        return
    assert mix.templates and mix.to_dict()


# --- YCSB properties ---------------------------------------------------------------------------

YCSB_KEYS = st.one_of(st.sampled_from(list(ycsb.DEFAULTS) + list(ycsb.NOT_USED)),
                      st.sampled_from(["readproportio", "requestdistrib", "scanproportion ", "foo"]), weird_text)
YCSB_VALUES = st.one_of(st.sampled_from(["0", "1", "0.5", "-1", "1e400", "nan", "inf", "uniform", "zipfian", "latest",
                                         "hotspot", "exponential", "sequential", "ordered", "hashed", "", "x"]),
                        st.integers(-10**20, 10**20).map(str), st.floats().map(str), weird_text)


@fuzz("ycsb")
@given(props=st.dictionaries(YCSB_KEYS, YCSB_VALUES, max_size=6),
       text=st.one_of(st.none(), st.text(alphabet=string.printable, max_size=60)))
def test_ycsb(props, text):
    try:
        if text is not None:
            props = {**ycsb.read_properties(text, "fuzzed"), **props}
        mix = ycsb.from_properties(props)
    except Exception as exc:  # noqa: BLE001
        check_error(exc, *props, *props.values())
        assert "YCSB" in str(exc) or "fuzzed" in str(exc), str(exc)
        return
    assert mix.templates and mix.to_dict()


# --- TOML workload files -----------------------------------------------------------------------

def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if v == v and abs(v) != float("inf") else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()) + " }"
    return '""'


def _toml_doc(top, pacing, run, templates) -> str:
    lines = [f'"{k}" = {_toml_value(v)}' for k, v in top.items()]
    if pacing is not None:
        lines += ["[pacing]"] + [f'"{k}" = {_toml_value(v)}' for k, v in pacing.items()]
    if run is not None:
        lines += ["[run]"] + [f'"{k}" = {_toml_value(v)}' for k, v in run.items()]
    for t in templates:
        lines += ["[[template]]"] + [f'"{k}" = {_toml_value(v)}' for k, v in t.items()]
    return "\n".join(lines) + "\n"


toml_scalar = st.one_of(st.booleans(), st.integers(-10**6, 10**12), st.floats(allow_nan=False, allow_infinity=False),
                        st.sampled_from(["uniform", "zipfian", "hotspot", "poisson", "g9u1", "gr1:10", "get", "rmw",
                                         "scan", "range", "x", ""]), weird_text)
toml_any = st.one_of(toml_scalar, st.lists(toml_scalar, max_size=3),
                     st.dictionaries(st.sampled_from(["name", "kind", "count", "theta", "hot_fraction", "length"]),
                                     toml_scalar, max_size=3))
op_tables = st.dictionaries(st.sampled_from(list(toml_file.OP_KEYS) + ["colour"]), toml_any, max_size=4)
template_tables = st.fixed_dictionaries({}, optional={
    "name": toml_scalar, "weight": toml_scalar, "txn": toml_any,
    "ops": st.one_of(st.lists(op_tables, max_size=3), toml_any), "extra": toml_scalar})


@fuzz("toml")
@given(top=st.dictionaries(st.sampled_from([k for k in toml_file.TOP if k not in ("pacing", "run", "template")]
                                           + ["bogus"]), toml_any, max_size=4),
       pacing=st.one_of(st.none(), st.dictionaries(st.sampled_from(["target_rate", "per_client", "arrivals", "x"]),
                                                   toml_any, max_size=3)),
       run=st.one_of(st.none(), st.dictionaries(st.sampled_from(list(toml_file.RUN_KEYS) + ["y"]), toml_any,
                                                max_size=3)),
       templates=st.lists(template_tables, max_size=3),
       raw=st.one_of(st.none(), st.text(alphabet=string.printable, max_size=80)))
def test_toml_workload_file(top, pacing, run, templates, raw):
    text = raw if raw is not None else _toml_doc(top, pacing, run, templates)
    try:
        mix = toml_file.from_toml_text(text, "fuzzed.toml")
    except Exception as exc:  # noqa: BLE001
        check_error(exc)
        return
    assert mix.templates and mix.to_dict()


# --- kvlab dbbench flag sets -------------------------------------------------------------------

flag_values = st.one_of(st.sampled_from(["0", "1", "-1", "true", "no", "snappy", "zstd", "none", "1e3", "", "x",
                                         "fillseq,readrandom", "readwhilewriting", "fillsync", "nosuch",
                                         "prefix_hash", "skip_list", "4096", "18446744073709551616"]),
                        st.integers(-10**20, 10**20).map(str), weird_text)
flag_tokens = st.one_of(
    st.tuples(st.sampled_from(list(FLAGS)), flag_values).map(lambda kv: f"--{kv[0]}={kv[1]}"),
    st.sampled_from(list(FLAGS)).map(lambda k: f"--{k}"), st.sampled_from(list(FLAGS)).map(lambda k: f"--no{k}"),
    weird_text, st.sampled_from(["--", "-x", "--=1", "--num", "5"]))


@fuzz("dbbench")
@given(engine=st.one_of(st.sampled_from(list(engines.REGISTRY) + ["wiredtiger"]), weird_text),
       argv=st.lists(flag_tokens, max_size=6))
def test_dbbench_flags(engine, argv):
    try:
        parse_argv(argv)
        plan = dbbench.plan(engine, argv)
    except Exception as exc:  # noqa: BLE001
        check_error(exc, engine, *argv)
        return
    assert isinstance(plan.spec, RunSpec)
    dbbench.header(plan, "1.0", "decimal-zero-padded"), dbbench.command_line(engine, argv)


# --- engine option strings, opened on the real engines ----------------------------------------

# real option names (so values get exercised, not only the name check) beside random tokens
OPTION_NAMES = {
    "lmdb": ["nosync", "nometasync", "writemap", "mapasync", "nordahead", "nomeminit"],
    "leveldb": ["write_buffer_size", "block_size", "max_open_files", "max_file_size", "paranoid_checks",
                "block_restart_interval", "bloom_bits"],
    "rocksdb": ["write_buffer_size", "max_write_buffer_number", "num_levels", "max_background_jobs",
                "level0_file_num_compaction_trigger", "target_file_size_base", "max_bytes_for_level_base",
                "compression", "bottommost_compression", "max_open_files", "table_factory", "memtable",
                "prefix_extractor", "allow_concurrent_memtable_write", "block_based_table_factory",
                "plain_table_factory", "bloom_locality", "arena_block_size", "max_subcompactions",
                "compaction_style", "use_direct_reads", "allow_mmap_reads", "paranoid_checks"],
    "wiredtiger": ["cache_size", "eviction", "log", "checkpoint", "statistics", "session_max", "direct_io",
                   "file_manager", "in_memory", "mmap", "create", "readonly", "verbose", "config_base",
                   "transaction_sync", "error_prefix", "hazard_max", "eviction_target", "eviction_trigger"],
    "wiredtiger/table": ["leaf_page_max", "internal_page_max", "block_compressor", "prefix_compression",
                         "split_pct", "memory_page_max", "allocation_size", "checksum", "type", "lsm",
                         "key_format", "value_format", "os_cache_max", "huffman_key"],
    "bdb": [],
}
option_values = st.one_of(st.sampled_from(["0", "1", "-1", "true", "false", "4096", "1GB", "10MB", "(enabled=true)",
                                           "(enabled=false)", "PlainTable", "kSnappyCompression", "{}",
                                           "{block_size=0}", "", "=", "x", "9223372036854775807",
                                           "18446744073709551615", "-9223372036854775808", "rocksdb.FixedPrefix.0",
                                           "prefix_hash:0",
                                           "(wait=0)", "[a,b]", "\"q\"", "(", ")", "{", "}"]),
                          st.integers(-2**64, 2**64).map(str), weird_text)


def option_strings(adapter, sep):
    token = st.one_of(
        st.tuples(st.sampled_from(OPTION_NAMES[adapter] or ["x"]), option_values).map(lambda kv: f"{kv[0]}={kv[1]}"),
        st.sampled_from(OPTION_NAMES[adapter] or ["x"]), weird_text)
    return st.lists(token, max_size=4).map(sep.join)


BUILT = [a for a in ("lmdb", "leveldb", "rocksdb", "wiredtiger", "bdb") if a in native.built_adapters()]
OPTION_CASES = max(1, int(TOTAL * SHARE["options"]) // max(1, len(BUILT)))
FIRST_CONFIG = {a: next(c for c in engines.REGISTRY.values() if c.adapter == a) for a in BUILT}


def _open_and_use(adapter, config):
    from kvlab import _native
    d = tempfile.mkdtemp(prefix=f"kvlab-fuzz-{adapter}-")
    try:
        with _native.Engine(adapter, d, config) as e:
            e.put(b"k1", b"v1")
            assert e.get(b"k1") == b"v1"
            e.scan(limit=2)
            if adapter in ("leveldb", "rocksdb"):
                e.compact()   # builds a table: table-level options take effect here
    finally:
        shutil.rmtree(d, ignore_errors=True)


size_values = st.one_of(st.none(), st.integers(-2, 1 << 40), st.integers(-2**70, 2**70),
                        st.sampled_from([0, 1, 4096, 100, 101, 2**31, 2**62, -1]), weird_text)
generic_settings = st.fixed_dictionaries({}, optional={
    "cache_size": size_values, "block_size": size_values, "bloom_bits": size_values, "map_size": size_values,
    "write_buffer_size": size_values, "max_open_files": size_values,
    "compression": st.sampled_from(["none", "snappy", "lz4", "zstd", "zlib", ""]),
    "sync": st.one_of(st.booleans(), st.integers(-1, 2)), "disable_wal": st.booleans()})


@pytest.fixture
def bounded_files():
    """No file of the fuzz grows past 1 GiB (writes past it fail with EFBIG instead of SIGXFSZ): a huge
    RocksDB write_buffer_size is legal up to 1 TiB and its WAL preallocation (fallocate, 1.1 x the
    buffer) once filled this machine's disk."""
    import resource
    import signal
    old_limit, old_handler = resource.getrlimit(resource.RLIMIT_FSIZE), signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, old_limit[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)


@pytest.mark.parametrize("adapter", BUILT)
def test_engine_option_strings(adapter, bounded_files):
    """Options strings and generic settings as a run passes them: RunSpec's checks, then the real engine."""
    cfg = FIRST_CONFIG[adapter]
    table = adapter == "wiredtiger"

    @settings(max_examples=OPTION_CASES, deadline=None, database=None, derandomize=TOTAL <= 10000,
              suppress_health_check=list(HealthCheck))
    @given(options=option_strings(adapter, cfg.options_separator),
           table_options=option_strings("wiredtiger/table", ",") if table else st.just(""),
           generic=generic_settings)
    def case(options, table_options, generic):
        settings = {**{k: v for k, v in generic.items() if k in cfg.honours}, "options": options}
        if table:
            settings["table_options"] = table_options
        try:
            spec = make_spec(cfg.name, "fillseq", num=100, **settings)
        except Exception as exc:  # noqa: BLE001
            check_error(exc, *settings, *settings.values())
            return
        try:
            config = cfg.config(spec.engine_settings, max_threads=2)
            if adapter == "rocksdb":   # never preallocate (see bounded_files); the last setting wins
                config["options"] = (config.get("options") or "") + ";allow_fallocate=false"
            _open_and_use(adapter, config)
        except Exception as exc:  # noqa: BLE001
            assert isinstance(exc, errors.KvlabError), f"{type(exc).__name__}: {exc} (options {options!r})"
            assert str(exc).strip(), f"an empty message for options {options!r}"

    case()
