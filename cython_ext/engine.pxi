# Part of kvlab._native, included by _native.pyx (one extension module; the C interfaces are the .pxd files beside the
# headers in cython_ext/include).  Engine: an open database and its one thread context, for Python's own calls (put,
# get, delete, scan, transactions, stats, compact); the direct operations on a thread context that Engine and Session
# share.

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
        cfg.engine_counters = 1 if config.get("engine_counters") else 0
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
