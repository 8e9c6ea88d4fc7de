# Part of kvlab._native, included by _native.pyx (one extension module; the C interfaces are the .pxd files beside the
# headers in cython_ext/include).  Run: one native run (a workload's threads, GIL released once for the whole run),
# its parameters checked against the C core's buffers before anything is copied, and its progress and results.

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
    rate = m.get("rate")
    if rate and not (0 < len(rate["t_ns"]) == len(rate["per_ns"]) == len(rate["cum"]) <= _C_INT_MAX):
        raise _errors.SpecError("the mix's rate schedule: t_ns, per_ns and cum are one entry per segment, at least one")
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
    cdef object arrays             # what the mix's pointers point into (key ranges, the rate schedule): kept alive
    cdef bint several              # the loop's ops are of several types (KV_WORKLOADS' several)
    cdef kv_trace *trace           # recording: where the ops go (kv_trace.h); NULL off
    cdef kv_replay *replay         # workload replay: each thread's ops
    cdef object replay_arrays      # ... whose memory these arrays hold

    def __cinit__(self, Engine engine, str workload, dict params, dict mix=None, dict graph=None, trace=None,
                  dict replay=None):
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
        p.after_error = _in_range("after_error", params.get("after_error", 0), 0, _C_INT_MAX, f"0 to {_C_INT_MAX}")
        p.key_hash = 1 if params.get("key_hash") else 0
        p.no_pipeline = 0 if params.get("pipeline", True) else 1
        p.no_own_loop = 0 if params.get("own_loop", True) else 1
        p.first_key = params.get("first_key", 0)
        p.read_percent = _in_range("read_percent", params.get("read_percent", 90), 0, 100, "0 to 100")
        self.several = kv_workload_table[p.workload].several
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
        if workload == "replay":
            self._set_replay(replay)
        if trace is not None:   # (the open file's descriptor, the phase's index in the trace)
            self.trace = <kv_trace *> calloc(1, sizeof(kv_trace))
            if self.trace == NULL:
                raise MemoryError()
            self.trace.fd, self.trace.phase = trace
            self.run.trace = self.trace

    cdef _set_replay(self, dict replay):
        """Each replay thread's ops: one array of REPLAY_DTYPE a thread (kvlab.execution.run.tracing)."""
        if replay is None or len(replay["threads"]) != self.run.p.threads:
            raise _errors.SpecError(f"workload 'replay' needs one array of ops per thread ({self.run.p.threads})")
        arrays = [np.ascontiguousarray(a, dtype=REPLAY_DTYPE) for a in replay["threads"]]
        for a in arrays:
            top = 10 ** min(self.run.p.key_size, 19)
            if len(a) and (int(a["op"].max()) >= KV_NOPTYPES or int(a["key"].max()) >= top):
                raise _errors.SpecError("a replay op's type or key index is out of range (op types 0 to "
                                        f"{KV_NOPTYPES - 1}; key indices below 10^key_size)")
        self.replay_arrays = arrays
        self.replay = <kv_replay *> calloc(1, sizeof(kv_replay))
        if self.replay == NULL:
            raise MemoryError()
        self.replay.ops = <const kv_replay_op **> calloc(len(arrays), sizeof(kv_replay_op *))
        self.replay.count = <const uint64_t *> calloc(len(arrays), sizeof(uint64_t))
        if self.replay.ops == NULL or self.replay.count == NULL:
            raise MemoryError()
        cdef const unsigned char[::1] view
        cdef int i
        for i, a in enumerate(arrays):
            if len(a):
                view = a.view(np.uint8).reshape(-1)
                self.replay.ops[i] = <const kv_replay_op *> &view[0]
            (<uint64_t *> self.replay.count)[i] = len(a)
        self.replay.paced = 1 if replay.get("paced") else 0
        self.run.p.replay = self.replay

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
            self.mix.ops[i].len_k, self.mix.ops[i].len_sigma = op.len_k, op.len_sigma
            self.mix.ops[i].len_theta = op.len_theta
        for i, d in enumerate(dists):
            self.mix.dists[i].kind, self.mix.dists[i].theta = d.kind, d.theta
            self.mix.dists[i].hot_fraction, self.mix.dists[i].hot_ops = d.hot_fraction, d.hot_ops
            self.mix.dists[i].percentile, self.mix.dists[i].frac = d.percentile, d.frac
            self.mix.dists[i].expected_inserts = d.expected_inserts
            if d.range_cum:
                self.mix.dists[i].range_cum = self._keep(d.range_cum)
                self.mix.dists[i].nranges = len(d.range_cum)
            self.mix.dists[i].key_a, self.mix.dists[i].key_b = d.key_a, d.key_b
        self.mix.value_min, self.mix.value_max, self.mix.max_retries = m["value_min"], m["value_max"], m["max_retries"]
        self.mix.interval_ns, self.mix.poisson = m.get("interval_ns", 0.0), m.get("poisson", 0)
        if m.get("value_pareto"):
            self.mix.value_pareto = 1
            self.mix.value_k, self.mix.value_sigma, self.mix.value_theta = m["value_pareto"]
        rate = m.get("rate")
        if rate:
            self.mix.rate.n = len(rate["t_ns"])
            self.mix.rate.t_ns, self.mix.rate.per_ns = self._keep(rate["t_ns"]), self._keep(rate["per_ns"])
            self.mix.rate.cum = self._keep(rate["cum"])
            self.mix.rate.period_ns, self.mix.rate.period_cum = rate["period_ns"], rate["period_cum"]
        self.run.p.mix = self.mix
        self.template_names = list(m["template_names"])
        cdef size_t n = <size_t> self.nthreads * len(txns) * 2     # service, then response, per template
        cdef void *mem = NULL
        if posix_memalign(&mem, 64, sizeof(kv_hist) * n) != 0:
            raise MemoryError()
        self.txn_hists = <kv_hist *> mem
        memset(mem, 0, sizeof(kv_hist) * n)   # kv_hist_init leaves the buckets to the allocator
        # each thread's per-template counters (every op increments one) on cache lines of their own: packed,
        # 2-4 threads would share a line and every increment would move it between their cores
        cdef size_t stride = (<size_t> len(txns) * 2 + 7) & ~(<size_t> 7)
        mem = NULL
        if posix_memalign(&mem, 64, sizeof(uint64_t) * stride * <size_t> self.nthreads) != 0:
            raise MemoryError()
        memset(mem, 0, sizeof(uint64_t) * stride * <size_t> self.nthreads)
        self.txn_counts = <uint64_t *> mem
        for i in range(<int> n):
            kv_hist_init(&self.txn_hists[i])
        for i in range(self.nthreads):
            self.run.results[i].txn_hist = &self.txn_hists[i * len(txns) * 2]
            self.run.results[i].txn_count = &self.txn_counts[i * stride]

    cdef const double *_keep(self, values) except NULL:
        """A C array of `values` that lives as long as this Run."""
        a = np.ascontiguousarray(values, dtype=np.float64)
        if len(a) == 0:
            raise _errors.SpecError("an empty table in a compiled mix (key ranges, rate schedule)")
        if self.arrays is None:
            self.arrays = []
        self.arrays.append(a)
        cdef double[::1] view = a
        return &view[0]

    def __dealloc__(self):
        free(self.trace)
        if self.replay != NULL:
            free(<void *> self.replay.ops)
            free(<void *> self.replay.count)
            free(self.replay)
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
        if self.trace != NULL and self.trace.err:
            raise _errors.KvlabError(f"the trace's records could not be written: {os.strerror(self.trace.err)} "
                                     f"(errno {self.trace.err}); the run itself finished")
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
                # a mix (or a loop of several op types) records into several, whose counts are known only at the end
                if j != r.optype and r.hist[j].count == 0 and self.mix == NULL and not self.several:
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
                "nvcsw": r.nvcsw, "nivcsw": r.nivcsw, "own_loop": bool(r.own_loop),
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
