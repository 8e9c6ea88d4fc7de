# Part of kvlab._native, included by _native.pyx (one extension module; the C interfaces are the .pxd files beside the
# headers in cython_ext/include).  Session: a second client context of an open Engine (GIL released in each call), so
# transactions can be interleaved by hand; the transaction helpers.

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
