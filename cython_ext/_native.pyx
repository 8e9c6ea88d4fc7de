# cython: language_level=3, boundscheck=False, wraparound=False
"""kvlab._native: the engine adapters and the workload driver.

Errors cross into Python in one place, `check()`, which hands an adapter's
code and the engine's own error (kv_failure: message, code, its name, errno) to
kvlab.errors.from_code, which picks the exception.  A workload run
releases the GIL once, for the whole run; other Python threads may call
`request_stop()` and `progress()` on the same Run meanwhile.
"""
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset, strlen
from posix.stdlib cimport posix_memalign

# the C core's declarations, one .pxd beside each header (cython_ext/include)
from kv_dist cimport KV_STREAM_READ, kv_dist, kv_dist_fill, kv_dist_init, kv_fnv_abs, kv_key_hash, kv_rng, kv_rng_seed
from kv_driver cimport (KV_CRASH_MAX_BATCH, KV_MIX_MAX_DISTS, KV_MIX_MAX_OPS, KV_MIX_MAX_TXNS, KV_NOPTYPES,
                        KV_ROLE_WRITER, KV_W__COUNT, kv_mix, kv_run, kv_run_execute, kv_run_init, kv_run_request_stop,
                        kv_run_thread_count, kv_thread_result, kv_workload_table)
from kv_engine cimport (KV_E_NOTSUP, KV_NOTFOUND, KV_OK, KV_TXN_WRITE, kv_config, kv_db, kv_engine_ops, kv_engines,
                        kv_failure, kv_thread, kv_thread_error)
from kv_gen cimport KV_KEY_ENCODING, KV_KEY_MAX, KV_VALUE_BUFFER, kv_make_key, kv_make_key_portable
from kv_graph cimport KV_G__COUNT, kv_graph, kv_graph_degree, kv_graph_state, kv_graph_state_init
from kv_hist cimport KV_HIST_BUCKETS, KV_HIST_SUB_BITS, kv_hist, kv_hist_finish, kv_hist_init, kv_hist_record
from kv_names cimport (kv_compression_names, kv_dist_names, kv_error_names, kv_graph_op_names, kv_length_dist_names,
                       kv_name, kv_optype_names, kv_txn_kind_names)

import operator
from collections import namedtuple

import numpy as np

from kvlab import errors as _errors


cdef dict _codes(const kv_name *table):
    """{name: code} from one of kv_names.h's tables, in the order of its X-macro list."""
    out = {}
    cdef int i = 0
    while table[i].name != NULL:
        out[table[i].name.decode()] = table[i].code
        i += 1
    return out


cdef tuple _in_code_order(const kv_name *table):
    """The names of an enum that counts from 0, each at its code's position."""
    codes = _codes(table)
    names = tuple(codes)
    if [codes[n] for n in names] != list(range(len(names))):
        raise ImportError(f"kvlab._native: a name table is not in its enum's order: {codes}")
    return names


# The facts the C core owns, read from its tables (kv_names.h) once, as the module loads.
KEY_ENCODING = KV_KEY_ENCODING.decode()
KEY_MAX = KV_KEY_MAX
HIST_BUCKETS = KV_HIST_BUCKETS
HIST_SUB_BITS = KV_HIST_SUB_BITS
MIX_MAX_TXNS, MIX_MAX_OPS, MIX_MAX_DISTS = KV_MIX_MAX_TXNS, KV_MIX_MAX_OPS, KV_MIX_MAX_DISTS
OP_TYPES = _in_code_order(kv_optype_names)          # enum kv_optype: histograms are named by these
GRAPH_OPS = _in_code_order(kv_graph_op_names)        # enum kv_graph_op: LinkBench's operations
DISTRIBUTION_CODES = _codes(kv_dist_names)
LENGTH_CODES = _codes(kv_length_dist_names)          # how a range op draws its length
COMPRESSION_CODES = _codes(kv_compression_names)
TEMPLATE_TXN_KINDS = _codes(kv_txn_kind_names)       # a mix template's: "none" (no transaction), "read", "write"
TXN_KINDS = {k: v for k, v in TEMPLATE_TXN_KINDS.items() if v}   # what txn_begin takes
ERROR_CODES = _codes(kv_error_names)                 # {"KV_E_IO": -2, ...}: kvlab.errors' classes by C name

# A native loop (enum kv_workload): its code, the op type its progress counts, whether its threads write,
# whether a count-bounded run of it does `num` ops (its threads split num keys) rather than `reads` each.
NativeLoop = namedtuple("NativeLoop", "code optype writes ops_are_num")
WORKLOADS = {kv_workload_table[i].name.decode(): NativeLoop(i, OP_TYPES[kv_workload_table[i].optype],
                                                            bool(kv_workload_table[i].writes),
                                                            bool(kv_workload_table[i].ops_are_num))
             for i in range(KV_W__COUNT)}
WORKLOAD_CODES = {name: w.code for name, w in WORKLOADS.items()}
_GRAPH_OPTYPE = OP_TYPES.index("graph")

_errors.bind_codes(ERROR_CODES)


cdef int check(int rc, kv_failure *e) except -1:
    """The one place an adapter's failure becomes a Python exception: kvlab's code and the engine's own error,
    whole, to kvlab.errors.from_code (which picks the class)."""
    if rc >= 0:
        return 0
    if e == NULL:
        raise _errors.from_code(rc, "no message")
    cdef const char *msg = e.msg
    text = msg.decode("utf-8", "replace") if msg[0] != 0 else "no message"
    raise _errors.from_code(rc, text, code=e.code or None,
                            code_name=e.code_name.decode() if e.code_name != NULL else None,
                            errno=e.sys_errno or None)


cdef inline void _no_failure(kv_failure *e) noexcept nogil:
    memset(e, 0, sizeof(kv_failure))


cdef const kv_engine_ops *find_adapter(str name) except NULL:
    cdef int i = 0
    while kv_engines[i] != NULL:
        if kv_engines[i].name.decode() == name:
            return kv_engines[i]
        i += 1
    raise _errors.EngineNotBuilt(name)


def adapters():
    """{adapter name: linked library version} for every adapter compiled in."""
    out = {}
    cdef int i = 0
    while kv_engines[i] != NULL:
        out[kv_engines[i].name.decode()] = kv_engines[i].version().decode()
        i += 1
    return out


def bulk_loads():
    """{adapter name: how its bulk load works, one sentence} for every adapter compiled in with a bulk path
    (kv_engine.h's bulk_* calls; kvlab's load="bulk")."""
    out = {}
    cdef int i = 0
    while kv_engines[i] != NULL:
        if kv_engines[i].bulk_begin != NULL:
            out[kv_engines[i].name.decode()] = kv_engines[i].bulk_how.decode() if kv_engines[i].bulk_how else ""
        i += 1
    return out


# Direct operations on one thread context, for Engine (GIL held: its one context may be reached from
# several Python threads) and Session (GIL released: sessions wait on each other's locks).
cdef int _ctx_put(const kv_engine_ops *ops, kv_thread *t, bytes key, bytes value, bint release) except -1:
    cdef const char *k = key
    cdef const char *v = value
    cdef size_t kl = len(key), vl = len(value)
    cdef int rc
    if release:
        with nogil:
            rc = ops.put(t, k, kl, v, vl)
    else:
        rc = ops.put(t, k, kl, v, vl)
    return check(rc, kv_thread_error(t))


cdef object _ctx_get(const kv_engine_ops *ops, kv_thread *t, bytes key, bint release):
    cdef const char *k = key
    cdef size_t kl = len(key), vl
    cdef const char *v
    cdef int rc
    if release:
        with nogil:
            rc = ops.get(t, k, kl, &v, &vl)
    else:
        rc = ops.get(t, k, kl, &v, &vl)
    if rc == KV_NOTFOUND:
        return None
    check(rc, kv_thread_error(t))
    return v[:vl]


cdef int _ctx_delete(const kv_engine_ops *ops, kv_thread *t, bytes key, bint release) except -1:
    cdef const char *k = key
    cdef size_t kl = len(key)
    cdef int rc
    if release:
        with nogil:
            rc = ops.delete(t, k, kl)
    else:
        rc = ops.delete(t, k, kl)
    check(rc, kv_thread_error(t))
    return rc


cdef list _ctx_scan(const kv_engine_ops *ops, kv_thread *t, bytes start, int limit, bint release):
    cdef const char *s = start
    cdef size_t sl = len(start), kl, vl
    cdef const char *k
    cdef const char *v
    cdef int rc
    out = []
    if limit == 0:
        return out
    if release:
        with nogil:
            rc = ops.iter_seek(t, s, sl, &k, &kl, &v, &vl)
    else:
        rc = ops.iter_seek(t, s, sl, &k, &kl, &v, &vl)
    try:
        while rc == KV_OK:
            out.append((k[:kl], v[:vl]))
            if limit > 0 and len(out) >= limit:
                break
            if release:
                with nogil:
                    rc = ops.iter_next(t, &k, &kl, &v, &vl)
            else:
                rc = ops.iter_next(t, &k, &kl, &v, &vl)
        check(rc, kv_thread_error(t))
    finally:
        ops.iter_close(t)
    return out


cdef class Engine:
    """One open database through one adapter.  Direct operations (put/get/...)
    hold the GIL and use one private thread context; workload runs use their own."""
    cdef const kv_engine_ops *ops
    cdef kv_db *db
    cdef kv_thread *t
    cdef readonly str adapter
    cdef readonly str path
    cdef bytes _variant, _options, _table_options
    cdef bint _in_batch
    cdef readonly bint transactions
    cdef list _sessions
    cdef int _runs   # Runs executing on it now (Run.execute): close is refused meanwhile

    def __cinit__(self, str adapter, str path, dict config=None):
        self.ops = find_adapter(adapter)
        self.adapter = adapter
        self.path = path
        config = config or {}
        cdef kv_config cfg
        cdef kv_failure err
        _no_failure(&err)
        self._variant = (config.get("variant") or "").encode()
        self._options = (config.get("options") or "").encode()
        self._table_options = (config.get("table_options") or "").encode()
        cfg.variant = NULL
        if self._variant:
            cfg.variant = self._variant
        cfg.cache_size = int(config.get("cache_size") or 0)
        cfg.map_size = int(config.get("map_size") or 0)
        cfg.write_buffer_size = int(config.get("write_buffer_size") or 0)
        cfg.sync = 1 if config.get("sync") else 0
        cfg.disable_wal = 1 if config.get("disable_wal") else 0
        compression = config.get("compression") or "none"
        if compression not in COMPRESSION_CODES:
            raise _errors.SpecError(f"compression {compression!r} is unknown; allowed: {', '.join(COMPRESSION_CODES)}")
        cfg.compression = COMPRESSION_CODES[compression]
        cfg.max_threads = int(config.get("max_threads") or 64)
        cfg.create = 0 if config.get("create") is False else 1
        cfg.block_size = int(config.get("block_size") or 0)
        cfg.bloom_bits = int(config.get("bloom_bits") or 0)
        cfg.max_open_files = int(config.get("max_open_files") or 0)
        cfg.options = self._options
        cfg.table_options = self._table_options
        self.transactions = bool(config.get("transactions"))
        cfg.transactions = 1 if self.transactions else 0
        self._sessions = []
        cdef bytes bpath = path.encode()
        cdef const char *cpath = bpath
        cdef int rc
        with nogil:
            rc = self.ops.open(cpath, &cfg, &self.db, &err)
        check(rc, &err)
        with nogil:
            rc = self.ops.thread_open(self.db, &self.t, &err)
        if rc:
            self.ops.close(self.db, NULL)
            self.db = NULL
            check(rc, &err)

    def __dealloc__(self):
        if self.db != NULL:
            if self.t != NULL:
                self.ops.thread_close(self.t)
            self.ops.close(self.db, NULL)

    cdef int _live(self) except -1:
        if self.db == NULL:
            raise _errors.EngineClosed(f"{self.adapter} database at {self.path} is closed")
        return 0

    @property
    def version(self):
        return self.ops.version().decode()

    @property
    def isolation(self):
        """What a transaction gives on this engine, as opened (one sentence)."""
        if self.ops.isolation == NULL:
            return "none: this engine has no transactions"
        cdef const char *variant = NULL
        if self._variant:
            variant = self._variant
        return self.ops.isolation(variant, 1 if self.transactions else 0).decode()

    def session(self):
        """A second thread context on this database (what one client of a run has), for
        interleaving transactions from Python: see Session."""
        self._live()
        s = Session(self)
        self._sessions.append(s)
        return s

    def close(self):
        """Close the database, its sessions first.  Refused (EngineInUse) while a Run executes on it: its
        threads use the database until they end."""
        if self._runs:
            raise _errors.EngineInUse(f"{self.adapter} database at {self.path}: a run is executing on it "
                                      f"({self._runs} now); close it after the run ends (request_stop() ends it "
                                      "early)")
        cdef kv_failure err
        _no_failure(&err)
        cdef int rc = 0
        for s in self._sessions:
            (<Session>s)._close()
        self._sessions = []
        if self.db != NULL:
            if self.t != NULL:
                self.ops.thread_close(self.t)
                self.t = NULL
            with nogil:
                rc = self.ops.close(self.db, &err)
            self.db = NULL
        check(rc, &err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def put(self, bytes key, bytes value):
        self._live()
        _ctx_put(self.ops, self.t, key, value, False)

    def get(self, bytes key):
        """The value, or None when the key is absent."""
        self._live()
        return _ctx_get(self.ops, self.t, key, False)

    def delete(self, bytes key):
        """True if the engine reports the key existed (LSM engines always say True)."""
        self._live()
        return _ctx_delete(self.ops, self.t, key, False) != KV_NOTFOUND

    def scan(self, bytes start=b"", int limit=-1):
        """[(key, value)] from the first key >= start, at most `limit` pairs (-1: all)."""
        self._live()
        return _ctx_scan(self.ops, self.t, start, limit, False)

    def batch_begin(self):
        self._live()
        check(self.ops.batch_begin(self.t), kv_thread_error(self.t))
        self._in_batch = True

    def batch_commit(self):
        self._live()
        self._in_batch = False
        check(self.ops.batch_commit(self.t), kv_thread_error(self.t))

    def batch_abort(self):
        self._live()
        self._in_batch = False
        check(self.ops.batch_abort(self.t), kv_thread_error(self.t))

    def txn_begin(self, str kind="write"):
        """Start a transaction: 'read' (one snapshot) or 'write' (snapshot reads, writes atomic
        at commit; a conflict raises kvlab.errors.EngineConflict)."""
        self._live()
        check(_txn_begin(self.ops, self.t, _txn_kind(kind)), kv_thread_error(self.t))

    def txn_commit(self):
        self._live()
        check(_txn_commit(self.ops, self.t), kv_thread_error(self.t))

    def txn_abort(self):
        self._live()
        _txn_abort(self.ops, self.t)

    def stats(self):
        """Engine-internal statistics: ({name: number}, free text), or None where the
        adapter has none."""
        self._live()
        if self.ops.stats == NULL:
            return None
        cdef size_t cap = 1 << 20
        cdef char *buf = <char *> calloc(cap, 1)
        if buf == NULL:
            raise MemoryError()
        cdef int rc
        try:
            with nogil:
                rc = self.ops.stats(self.db, buf, cap)
            if rc:
                return None
            raw = buf[:strlen(buf)].decode("utf-8", "replace")
        finally:
            free(buf)
        numbers, _, text = raw.partition("#text\n")
        out = {}
        for line in numbers.splitlines():
            name, eq, value = line.rpartition("=")
            if eq:
                try:
                    out[name] = int(value)
                except ValueError:
                    out[name] = value
        return out, text

    def compact(self):
        self._live()
        cdef kv_failure err
        _no_failure(&err)
        cdef int rc
        with nogil:
            rc = self.ops.compact(self.db, &err)
        if rc == KV_E_NOTSUP:
            return False
        check(rc, &err)
        return True


cdef int _txn_kind(str kind) except -1:
    if kind not in TXN_KINDS:
        raise _errors.SpecError(f"transaction kind {kind!r} is unknown; allowed: {', '.join(TXN_KINDS)}")
    return TXN_KINDS[kind]


cdef int _txn_begin(const kv_engine_ops *ops, kv_thread *t, int kind) noexcept nogil:
    if ops.txn_begin != NULL:
        return ops.txn_begin(t, kind)
    return ops.batch_begin(t) if kind == KV_TXN_WRITE else KV_OK


cdef int _txn_commit(const kv_engine_ops *ops, kv_thread *t) noexcept nogil:
    return ops.txn_commit(t) if ops.txn_begin != NULL else ops.batch_commit(t)


cdef void _txn_abort(const kv_engine_ops *ops, kv_thread *t) noexcept nogil:
    if ops.txn_begin != NULL:
        ops.txn_abort(t)
    else:
        ops.batch_abort(t)


cdef class Session:
    """One more thread context on an open Engine: what one client of a run holds.  Each call
    releases the GIL, so sessions used from different Python threads can wait on each other's
    locks (BerkeleyDB) without stalling the interpreter.  Closed with its engine."""
    cdef Engine engine
    cdef kv_thread *t

    def __cinit__(self, Engine engine):
        self.engine = engine
        cdef kv_failure err
        _no_failure(&err)
        cdef int rc
        with nogil:
            rc = engine.ops.thread_open(engine.db, &self.t, &err)
        check(rc, &err)

    cdef void _close(self):
        if self.t != NULL and self.engine.db != NULL:
            self.engine.ops.thread_close(self.t)
        self.t = NULL

    def close(self):
        self._close()

    def __dealloc__(self):
        self._close()

    cdef int _live(self) except -1:
        if self.t == NULL or self.engine.db == NULL:
            raise _errors.EngineClosed(f"session on {self.engine.adapter} at {self.engine.path} is closed")
        return 0

    def put(self, bytes key, bytes value):
        self._live()
        _ctx_put(self.engine.ops, self.t, key, value, True)

    def get(self, bytes key):
        """The value, or None when the key is absent."""
        self._live()
        return _ctx_get(self.engine.ops, self.t, key, True)

    def delete(self, bytes key):
        self._live()
        _ctx_delete(self.engine.ops, self.t, key, True)

    def scan(self, bytes start=b"", int limit=-1):
        """[(key, value)] from the first key >= start, at most `limit` pairs (-1: all)."""
        self._live()
        return _ctx_scan(self.engine.ops, self.t, start, limit, True)

    def txn_begin(self, str kind="write"):
        self._live()
        cdef int k = _txn_kind(kind), rc
        with nogil:
            rc = _txn_begin(self.engine.ops, self.t, k)
        check(rc, kv_thread_error(self.t))

    def txn_commit(self):
        self._live()
        cdef int rc
        with nogil:
            rc = _txn_commit(self.engine.ops, self.t)
        check(rc, kv_thread_error(self.t))

    def txn_abort(self):
        self._live()
        with nogil:
            _txn_abort(self.engine.ops, self.t)


def make_key(uint64_t index, int key_size=16, bint portable=False):
    """The key kvlab's driver uses for `index` (the documented encoding).  `portable`: through the
    conversion machines without SSE2 use (the same bytes; tests check both)."""
    if key_size < 1 or key_size > KV_KEY_MAX:
        raise _errors.SpecError(f"key_size must be between 1 and {KV_KEY_MAX}")
    cdef char buf[KV_KEY_MAX]
    if portable:
        kv_make_key_portable(buf, key_size, index)
    else:
        kv_make_key(buf, key_size, index)
    return buf[:key_size]


def key_hash(uint64_t record):
    """The key index YCSB's hashed insert order stores record `record` under (CoreWorkload.buildKeyName:
    fnvhash64, Math.abs, kept to 16 digits), as the driver computes it."""
    return kv_key_hash(record)


def fnv_abs(uint64_t v):
    """YCSB's Utils.fnvhash64 then Math.abs, as the driver's scrambled zipfian computes it."""
    return kv_fnv_abs(v)


def keys(str distribution, uint64_t n, uint64_t keyspace, uint64_t seed, double theta=0.99,
         uint64_t modulus=0, double hot_fraction=0.2, double hot_ops=0.8, double exp_percentile=95.0,
         double exp_frac=0.8571428571, int thread=0, int threads=1):
    """`n` key indices from the driver's own generator: thread `thread` of `threads`, the read
    stream of run seed `seed`, over `keyspace` keys.  Parameters are validated by kvlab.model;
    this only checks what would crash."""
    if distribution not in DISTRIBUTION_CODES:
        raise _errors.SpecError(f"distribution {distribution!r} is unknown; allowed: {', '.join(DISTRIBUTION_CODES)}")
    if keyspace < 1 or threads < 1 or not 0 <= thread < threads:
        raise _errors.SpecError("keys: keyspace >= 1 and 0 <= thread < threads are required")
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    cdef kv_rng rng
    cdef kv_dist dist
    cdef int code = DISTRIBUTION_CODES[distribution]
    with nogil:
        kv_rng_seed(&rng, seed, KV_STREAM_READ, thread)
        kv_dist_init(&dist, code, keyspace, theta, modulus, hot_fraction, hot_ops, exp_percentile, exp_frac,
                     thread, threads)
        if n:
            kv_dist_fill(&dist, &rng, keyspace, &view[0], n)
    return out


cdef kv_graph *_make_graph(dict g) except NULL:
    """A kv_graph from kvlab.model.workloads.linkbench's plan (validated there; this checks what would overrun)."""
    cdef kv_graph *out = <kv_graph *> calloc(1, sizeof(kv_graph))
    if out == NULL:
        raise MemoryError()
    cdef int i
    try:
        out.startid1, out.nodes = g["startid1"], g["nodes"]
        out.link_types, out.range_limit = g["link_types"], g["range_limit"]
        out.degree_shape, out.degree_max = g["degree_shape"], g["degree_max"]
        out.node_data_median, out.link_data_median = g["node_data_median"], g["link_data_median"]
        out.data_sigma, out.link_data_max = g["data_sigma"], g["link_data_max"]
        out.multiget_p, out.multiget_max = g["multiget_p"], g["multiget_max"]
        out.seed, out.load_writes = g["seed"], g["load_writes"]
        if not (out.nodes >= 1 and out.link_types >= 1 and out.range_limit >= 1 and out.degree_shape > 0
                and 1 <= out.link_data_max <= 255 and 2 <= out.multiget_max <= 128 and 0 < out.multiget_p <= 1
                and out.load_writes >= 1 and len(g["p_exists"]) == KV_G__COUNT
                and out.node_data_median >= 1 and out.link_data_median >= 1 and out.data_sigma >= 0):
            raise _errors.SpecError(f"graph parameters out of range: {g!r}")
        for i in range(KV_G__COUNT):
            out.p_exists[i] = g["p_exists"][i]
            if not 0 < out.p_exists[i] <= 1:
                raise _errors.SpecError("graph p_exists must be in (0, 1]")
    except BaseException:
        free(out)
        raise
    return out


def graph_degrees(dict graph, uint64_t first, uint64_t n):
    """Out-degrees at load of node indices [first, first + n), as the load writes them."""
    cdef kv_graph *g = _make_graph(graph)
    cdef kv_graph_state *s = <kv_graph_state *> calloc(1, sizeof(kv_graph_state))
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    cdef uint64_t i
    try:
        if s == NULL:
            raise MemoryError()
        with nogil:
            kv_graph_state_init(s, g)
            for i in range(n):
                view[i] = kv_graph_degree(g, s, first + i)
        return out
    finally:
        free(s)
        free(g)


_TSC = None


def _kernel_uses_tsc():
    """The TSC is used for latency only where the kernel's own clocksource is tsc."""
    global _TSC
    if _TSC is None:
        try:
            with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
                _TSC = f.read().strip() == "tsc"
        except OSError:
            _TSC = False
    return _TSC


def histogram_of(values):
    """Record `values` (ns, non-negative integers) in the driver's histogram; for tests
    and for checking the histogram against exact percentiles."""
    cdef uint64_t[::1] vals = np.ascontiguousarray(values, dtype=np.uint64)
    cdef kv_hist *h = <kv_hist *> calloc(1, sizeof(kv_hist))
    if h == NULL:
        raise MemoryError()
    cdef Py_ssize_t i
    cdef uint64_t[::1] view
    try:
        with nogil:
            kv_hist_init(h)
            for i in range(vals.shape[0]):
                kv_hist_record(h, vals[i])
            kv_hist_finish(h)
        counts = np.empty(KV_HIST_BUCKETS, dtype=np.uint64)
        view = counts
        memcpy(&view[0], h.buckets, KV_HIST_BUCKETS * 8)
        return {"counts": counts, "count": h.count, "min": h.min, "max": h.max}
    finally:
        free(h)


_C_INT_MAX = 2 ** 31 - 1
_U64_MAX = 2 ** 64 - 1


cdef object _in_range(str what, value, lo, hi, str allowed):
    """`value` as an int within [lo, hi], or a SpecError saying what was wrong and what is allowed."""
    try:
        v = operator.index(value)
    except TypeError:
        raise _errors.SpecError(f"{what}={value!r} is not an integer; allowed: {allowed}") from None
    if not lo <= v <= hi:
        raise _errors.SpecError(f"{what}={v} is out of range; allowed: {allowed}")
    return v


cdef int _check_run_params(str workload, dict params) except -1:
    """What Run copies into the driver's fixed-size fields and buffers, checked before anything is copied: a size
    out of range is a SpecError naming it and what is allowed.  (kvlab.model validates a spec long before; this
    keeps a direct caller of Run from overrunning a buffer or crashing the interpreter.)"""
    _in_range("key_size", params["key_size"], 1, KV_KEY_MAX,
              f"1 to {KV_KEY_MAX} bytes (the driver builds each key in a buffer of KV_KEY_MAX bytes)")
    _in_range("value_size", params["value_size"], 0, _C_INT_MAX, f"0 to {_C_INT_MAX} bytes")
    _in_range("threads", params["threads"], 1, _C_INT_MAX - 1, f"1 to {_C_INT_MAX - 1}")
    if workload == "crashwrite":
        _in_range("a crashwrite's batch", params["batch"], 0, KV_CRASH_MAX_BATCH,
                  f"at most {KV_CRASH_MAX_BATCH} (each transaction's intent record is a buffer of that many keys)")
    else:
        _in_range("batch", params["batch"], 0, _C_INT_MAX, f"0 to {_C_INT_MAX} (0 and 1: no batch)")
    _in_range("seek_nexts", params["seek_nexts"], 0, _C_INT_MAX, f"0 to {_C_INT_MAX}")
    for name in ("num", "reads", "seed"):
        _in_range(name, params[name], 0, _U64_MAX, "0 to 2**64 - 1")
    for name in ("first_seq", "first_key"):
        if name in params:
            _in_range(name, params[name], 0, _U64_MAX, "0 to 2**64 - 1")
    return 0


cdef int _check_mix(dict m, value_size) except -1:
    """A compiled mix (kvlab.execution.mixplan validates it from the model) against the C arrays it is copied
    into and indexes: the counts, each template's ops, each op's distribution, op type and lengths, and the
    value sizes against the run's value buffer."""
    if m is None:
        raise _errors.SpecError("workload 'mix' needs a compiled mix (kvlab.execution.mixplan)")
    txns, ops, dists = m["txns"], m["ops"], m["dists"]
    if not (0 < len(txns) <= KV_MIX_MAX_TXNS and 0 < len(ops) <= KV_MIX_MAX_OPS
            and 0 < len(dists) <= KV_MIX_MAX_DISTS):
        raise _errors.SpecError(f"a mix of {len(txns)} templates, {len(ops)} ops and {len(dists)} distributions; "
                                f"allowed: 1 to {KV_MIX_MAX_TXNS} templates, 1 to {KV_MIX_MAX_OPS} ops and 1 to "
                                f"{KV_MIX_MAX_DISTS} distributions")
    for i, t in enumerate(txns):
        _in_range(f"template {i}'s first op", t.first, 0, len(ops) - 1,
                  f"0 to {len(ops) - 1} (the mix has {len(ops)} ops)")
        _in_range(f"template {i}'s op count", t.nops, 1, len(ops) - t.first,
                  f"1 to {len(ops) - t.first} (its ops lie within the mix's {len(ops)})")
        if t.txn not in TEMPLATE_TXN_KINDS.values():
            raise _errors.SpecError(f"template {i}'s transaction kind {t.txn!r} is unknown; allowed: "
                                    f"{sorted(TEMPLATE_TXN_KINDS.values())} ({', '.join(TEMPLATE_TXN_KINDS)})")
    for i, op in enumerate(ops):
        _in_range(f"op {i}'s op type", op.optype, 0, KV_NOPTYPES - 1, f"0 to {KV_NOPTYPES - 1} ({', '.join(OP_TYPES)})")
        _in_range(f"op {i}'s distribution", op.dist, 0, len(dists) - 1,
                  f"0 to {len(dists) - 1} (the mix has {len(dists)} distributions)")
        _in_range(f"op {i}'s count", op.count, 0, _C_INT_MAX, f"0 to {_C_INT_MAX}")
        _in_range(f"op {i}'s min_length", op.min_length, 0, _C_INT_MAX - 1, f"0 to {_C_INT_MAX - 1}")
        _in_range(f"op {i}'s length", op.length, op.min_length, _C_INT_MAX - 1,
                  f"{op.min_length} (its min_length) to {_C_INT_MAX - 1}")
        if op.length_dist not in LENGTH_CODES.values():
            raise _errors.SpecError(f"op {i}'s length distribution {op.length_dist!r} is unknown; allowed: "
                                    f"{sorted(LENGTH_CODES.values())} ({', '.join(LENGTH_CODES)})")
    for i, d in enumerate(dists):
        if d.kind not in DISTRIBUTION_CODES.values():
            raise _errors.SpecError(f"distribution {i}'s kind {d.kind!r} is unknown; allowed: "
                                    f"{sorted(DISTRIBUTION_CODES.values())} ({', '.join(DISTRIBUTION_CODES)})")
    # each value is a slice of the run's value buffer: KV_VALUE_BUFFER bytes, or 4 values of value_size
    values = max(KV_VALUE_BUFFER, 4 * value_size)
    vmin = _in_range("the mix's value_min", m["value_min"], 0, values, f"0 to {values} bytes (the run's value buffer)")
    _in_range("the mix's value_max", m["value_max"], vmin, values,
              f"{vmin} (value_min) to {values} bytes (the run's value buffer: {KV_VALUE_BUFFER} bytes, or 4 values "
              f"of the run's value_size)")
    _in_range("the mix's max_retries", m["max_retries"], 0, _C_INT_MAX, f"0 to {_C_INT_MAX}")
    return 0


cdef class Run:
    """One native multi-threaded workload run over an open Engine."""
    cdef kv_run run
    cdef Engine engine
    cdef int nthreads
    cdef bint started, finished
    cdef kv_mix *mix
    cdef kv_graph *graph
    cdef kv_hist *txn_hists
    cdef uint64_t *txn_counts
    cdef object template_names

    def __cinit__(self, Engine engine, str workload, dict params, dict mix=None, dict graph=None):
        engine._live()
        if workload not in WORKLOAD_CODES:
            raise _errors.SpecError(f"workload {workload!r} is unknown; allowed: {', '.join(WORKLOAD_CODES)}")
        _check_run_params(workload, params)
        if workload == "mix":
            _check_mix(mix, params["value_size"])
        self.engine = engine
        kv_run_init(&self.run)
        self.run.ops = engine.ops
        self.run.db = engine.db
        p = &self.run.p
        p.workload = WORKLOAD_CODES[workload]
        p.num = params["num"]
        p.reads = params["reads"]
        p.threads = params["threads"]
        p.duration_s = params["duration"]
        p.key_size = params["key_size"]
        p.value_size = params["value_size"]
        p.batch = params["batch"]
        p.seed = params["seed"]
        p.compression_ratio = params["compression_ratio"]
        p.seek_nexts = params["seek_nexts"]
        p.writes_per_second = params["writes_per_second"]
        p.ack_fd = params.get("ack_fd", -1)
        p.first_seq = params.get("first_seq", 1)
        p.key_hash = 1 if params.get("key_hash") else 0
        p.no_pipeline = 0 if params.get("pipeline", True) else 1
        p.first_key = params.get("first_key", 0)
        p.use_tsc = 1 if params.get("latency_clock", "auto") != "monotonic" and _kernel_uses_tsc() else 0
        self.nthreads = kv_run_thread_count(p)
        cdef void *mem = NULL
        if posix_memalign(&mem, 64, sizeof(kv_thread_result) * self.nthreads) != 0:
            raise MemoryError()
        self.run.results = <kv_thread_result *> mem
        memset(mem, 0, sizeof(kv_thread_result) * self.nthreads)
        if graph is not None:
            self.graph = _make_graph(graph)
            self.run.p.graph = self.graph
            if self.graph.nodes != p.num:
                raise _errors.SpecError(f"a graph run's num ({p.num}) must be its node count ({self.graph.nodes})")
        elif workload == "graphload":
            raise _errors.SpecError("workload 'graphload' needs a graph (kvlab.model.workloads.linkbench)")
        if workload == "mix":
            self._set_mix(mix)

    cdef _set_mix(self, dict m):
        """Copy a mix compiled by kvlab.execution.mixplan (and checked by _check_mix) into C, with
        per-thread, per-template histograms."""
        txns, ops, dists = m["txns"], m["ops"], m["dists"]
        self.mix = <kv_mix *> calloc(1, sizeof(kv_mix))
        if self.mix == NULL:
            raise MemoryError()
        cdef int i
        self.mix.ntxns, self.mix.nops, self.mix.ndists = len(txns), len(ops), len(dists)
        for i, t in enumerate(txns):   # kvlab.execution.mixplan's records: MixTxn, MixOp, MixDist
            self.mix.txns[i].first, self.mix.txns[i].nops, self.mix.txns[i].txn = t.first, t.nops, t.txn
            self.mix.txns[i].simple, self.mix.txns[i].cum = t.simple, t.cum
        for i, op in enumerate(ops):
            if op.optype == _GRAPH_OPTYPE and (self.graph == NULL or not 0 <= op.graph_op < KV_G__COUNT):
                raise _errors.SpecError("a mix with LinkBench operations needs a graph "
                                        "(kvlab.model.workloads.linkbench)")
            self.mix.ops[i].optype, self.mix.ops[i].count, self.mix.ops[i].dist = op.optype, op.count, op.dist
            self.mix.ops[i].length, self.mix.ops[i].min_length = op.length, op.min_length
            self.mix.ops[i].length_dist, self.mix.ops[i].graph_op = op.length_dist, op.graph_op
        for i, d in enumerate(dists):
            self.mix.dists[i].kind, self.mix.dists[i].theta = d.kind, d.theta
            self.mix.dists[i].hot_fraction, self.mix.dists[i].hot_ops = d.hot_fraction, d.hot_ops
            self.mix.dists[i].percentile, self.mix.dists[i].frac = d.percentile, d.frac
            self.mix.dists[i].expected_inserts = d.expected_inserts
        self.mix.value_min, self.mix.value_max, self.mix.max_retries = m["value_min"], m["value_max"], m["max_retries"]
        self.mix.interval_ns, self.mix.poisson = m.get("interval_ns", 0.0), m.get("poisson", 0)
        self.run.p.mix = self.mix
        self.template_names = list(m["template_names"])
        cdef size_t n = <size_t> self.nthreads * len(txns) * 2     # service, then response, per template
        cdef void *mem = NULL
        if posix_memalign(&mem, 64, sizeof(kv_hist) * n) != 0:
            raise MemoryError()
        self.txn_hists = <kv_hist *> mem
        memset(mem, 0, sizeof(kv_hist) * n)   # kv_hist_init leaves the buckets to the allocator
        self.txn_counts = <uint64_t *> calloc(n, sizeof(uint64_t))
        if self.txn_counts == NULL:
            raise MemoryError()
        for i in range(<int> n):
            kv_hist_init(&self.txn_hists[i])
        for i in range(self.nthreads):
            self.run.results[i].txn_hist = &self.txn_hists[i * len(txns) * 2]
            self.run.results[i].txn_count = &self.txn_counts[i * len(txns) * 2]

    def __dealloc__(self):
        free(self.run.results)
        free(self.graph)
        free(self.mix)
        free(self.txn_hists)
        free(self.txn_counts)

    def execute(self):
        """Run to the end with the GIL released; returns per-thread raw results.  Its engine counts it as
        executing meanwhile, and refuses to close (EngineInUse)."""
        if self.started:
            raise _errors.KvlabError("a Run executes once")
        self.engine._live()   # not closed since this Run was made
        self.started = True
        self.run.db = self.engine.db
        cdef int rc
        self.engine._runs += 1
        try:
            with nogil:
                rc = kv_run_execute(&self.run)
        finally:
            self.engine._runs -= 1
        self.finished = True
        if rc:
            raise _errors.from_code(rc, "could not start the run's threads")
        return self._collect()

    @property
    def latency_clock(self):
        """(name, ns per tick) of the clock the run's histograms are in."""
        return ("tsc" if self.run.p.use_tsc else "CLOCK_MONOTONIC", self.run.ns_per_tick)

    def snapshot(self):
        """Counters of the running threads, read without pausing them: ops per op type,
        found, and per-op-type histogram counts, for workers and the writer apart.
        Values being incremented concurrently are read whole (aligned 64-bit)."""
        cdef int i, j
        cdef kv_thread_result *r
        cdef uint64_t[::1] acc
        cdef uint64_t *src
        cdef Py_ssize_t b
        out = {"workers": {"ops": [0] * KV_NOPTYPES, "found": 0, "hist": {}},
               "writer": {"ops": [0] * KV_NOPTYPES, "found": 0, "hist": {}}}
        for i in range(self.nthreads):
            r = &self.run.results[i]
            side = out["writer" if i >= self.run.p.threads else "workers"]
            side["found"] += r.found
            # a running loop counts in `progress` (its op type); ops[] is filled when it ends
            side["ops"][r.optype] += r.progress
            for j in range(KV_NOPTYPES):
                # a mix records into several op types, whose counts are known only at the end
                if j != r.optype and r.hist[j].count == 0 and self.mix == NULL:
                    continue
                name = OP_TYPES[j]
                if name not in side["hist"]:
                    side["hist"][name] = np.zeros(KV_HIST_BUCKETS, dtype=np.uint64)
                acc = side["hist"][name]
                src = r.hist[j].buckets
                for b in range(KV_HIST_BUCKETS):
                    acc[b] += src[b]
        for side in out.values():
            side["ops"] = {OP_TYPES[j]: v for j, v in enumerate(side["ops"]) if v}
        cdef int ti
        if self.mix != NULL and self.run.results[0].txn_count != NULL:
            # per template: transactions so far and their service-time histogram (a simple template's
            # is its op's, derived only at the end: the caller reads the op's histogram for it)
            counts = [0] * self.mix.ntxns
            # service time per template, then response time per template (open loop)
            hists = [np.zeros(KV_HIST_BUCKETS, dtype=np.uint64) for _ in range(2 * self.mix.ntxns)]
            for i in range(self.run.p.threads):
                r = &self.run.results[i]
                for ti in range(2 * self.mix.ntxns):
                    if ti < self.mix.ntxns:
                        counts[ti] += r.txn_count[ti]
                        if self.mix.txns[ti].simple:
                            continue
                    elif self.mix.interval_ns == 0:
                        break
                    acc = hists[ti]
                    src = r.txn_hist[ti].buckets
                    for b in range(KV_HIST_BUCKETS):
                        acc[b] += src[b]
            out["workers"]["templates"] = {"count": counts, "hist": hists[:self.mix.ntxns],
                                           "response_hist": hists[self.mix.ntxns:]}
        out["ns_per_tick"] = self.run.ns_per_tick
        return out

    def request_stop(self):
        kv_run_request_stop(&self.run)

    def progress_ops(self):
        """Ops done so far per op type, workers and writer apart: the cheap read the live
        progress display polls (one aligned 64-bit load per thread, no histograms)."""
        cdef int i
        cdef kv_thread_result *r
        workers, writer = {}, {}
        for i in range(self.nthreads):
            r = &self.run.results[i]
            side = writer if i >= self.run.p.threads else workers
            name = OP_TYPES[r.optype]
            side[name] = side.get(name, 0) + r.progress
        return workers, writer

    def progress(self):
        """Ops done per thread so far (read without pausing the threads)."""
        cdef int i
        return [self.run.results[i].progress for i in range(self.nthreads)]

    @property
    def thread_count(self):
        return self.nthreads

    cdef _collect(self):
        threads = []
        cdef int i, j
        cdef kv_thread_result *r
        cdef kv_hist *h
        cdef uint64_t[::1] view
        cdef int failed = -1   # the first thread that ended on an error
        for i in range(self.nthreads):
            r = &self.run.results[i]
            hists = {}
            for j in range(KV_NOPTYPES):
                h = &r.hist[j]
                if h.count:
                    counts = np.empty(KV_HIST_BUCKETS, dtype=np.uint64)
                    view = counts
                    memcpy(&view[0], h.buckets, KV_HIST_BUCKETS * 8)
                    hists[OP_TYPES[j]] = {"counts": counts, "count": h.count, "min": h.min,
                                          "max": h.max, "ns_per_tick": self.run.ns_per_tick}
            threads.append({
                "index": i, "role": "writer" if r.role == KV_ROLE_WRITER else "worker",
                "ops": {OP_TYPES[j]: r.ops[j] for j in range(KV_NOPTYPES) if r.ops[j]},
                "found": r.found, "not_found": r.not_found, "bytes": r.bytes,
                "t_start_ns": r.t_start_ns, "t_end_ns": r.t_end_ns, "hist": hists,
                "cpu_user_s": r.cpu_user_ns / 1e9, "cpu_sys_s": r.cpu_sys_ns / 1e9,
                "nvcsw": r.nvcsw, "nivcsw": r.nivcsw,
            })
            if self.graph != NULL:
                threads[i]["graph"] = {"nodes_loaded": r.graph_nodes, "links_loaded": r.graph_links,
                                       "links_listed": r.graph_listed}
            if self.mix != NULL:
                templates = {}
                for j in range(self.mix.ntxns):
                    rec = {"count": r.txn_count[j]}
                    for key, k in (("hist", j), ("response_hist", self.mix.ntxns + j)):
                        h = &r.txn_hist[k]
                        counts = np.empty(KV_HIST_BUCKETS, dtype=np.uint64)
                        view = counts
                        memcpy(&view[0], h.buckets, KV_HIST_BUCKETS * 8)
                        rec[key] = {"counts": counts, "count": h.count, "min": h.min, "max": h.max,
                                    "ns_per_tick": self.run.ns_per_tick}
                    templates[self.template_names[j]] = rec
                threads[i].update(retries=r.retries, aborts=r.aborts, templates=templates)  # no wraparound here
            if r.rc and failed < 0:
                failed = i
        if failed >= 0:
            check(self.run.results[failed].rc, &self.run.results[failed].err)
        return threads
