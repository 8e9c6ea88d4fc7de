# Part of kvlab._native, included by _native.pyx (one extension module; the C interfaces are the .pxd files beside the
# headers in cython_ext/include).  The keys the driver uses: make_key (the documented encoding), key hashing, and the
# key indices a distribution draws (kvlab.keys), from the same C as the hot loop.

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
         double exp_frac=0.8571428571, int thread=0, int threads=1, range_cum=None, double key_a=0.0,
         double key_b=0.0):
    """`n` key indices from the driver's own generator: thread `thread` of `threads`, the read
    stream of run seed `seed`, over `keyspace` keys.  Parameters are validated by kvlab.model;
    this only checks what would crash.  two-term-exp takes its key ranges' cumulative shares
    (`range_cum`, kvlab.model.workloads.distributions.key_ranges) and its power law (key_a, key_b)."""
    if distribution not in DISTRIBUTION_CODES:
        raise _errors.SpecError(f"distribution {distribution!r} is unknown; allowed: {', '.join(DISTRIBUTION_CODES)}")
    if keyspace < 1 or threads < 1 or not 0 <= thread < threads:
        raise _errors.SpecError("keys: keyspace >= 1 and 0 <= thread < threads are required")
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    cdef kv_rng rng
    cdef kv_dist dist
    cdef int code = DISTRIBUTION_CODES[distribution]
    cum = np.ascontiguousarray(range_cum if range_cum is not None else [1.0], dtype=np.float64)
    cdef double[::1] cum_view = cum
    cdef int nranges = len(cum)
    with nogil:
        kv_rng_seed(&rng, seed, KV_STREAM_READ, thread)
        kv_dist_init(&dist, code, keyspace, theta, modulus, hot_fraction, hot_ops, exp_percentile, exp_frac,
                     thread, threads)
        kv_dist_key_ranges(&dist, &cum_view[0], nranges, key_a, key_b)
        if n:
            kv_dist_fill(&dist, &rng, keyspace, &view[0], n)
    return out


def pareto_sizes(uint64_t n, uint64_t seed, double k, double sigma, double theta=0.0, uint64_t max=0,
                 uint64_t least=0, int thread=0):
    """`n` sizes from the generalized Pareto the mix loop draws value sizes and scan lengths from (kv_dist.h's
    kv_pareto_size: rounded up, wrapped past `max` as db_bench's mixgraph does, at least `least`), from thread
    `thread`'s read stream of run seed `seed`."""
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    cdef kv_rng rng
    cdef uint64_t i
    with nogil:
        kv_rng_seed(&rng, seed, KV_STREAM_READ, thread)
        for i in range(n):
            view[i] = kv_pareto_size(&rng, k, sigma, theta, max, least)
    return out


def rate_times(t_ns, per_ns, cum, double period_ns, double period_cum, work):
    """The intended starts (ns since the loop's start) the open loop computes for arrival counts `work` (in
    order), from a compiled rate schedule (kvlab.model.workloads.rate: RateSchedule.compile), by the hot
    loop's own kv_rate_time."""
    t = np.ascontiguousarray(t_ns, dtype=np.float64)
    r = np.ascontiguousarray(per_ns, dtype=np.float64)
    c = np.ascontiguousarray(cum, dtype=np.float64)
    w = np.ascontiguousarray(work, dtype=np.float64)
    if not (len(t) == len(r) == len(c) and len(t) > 0):
        raise _errors.SpecError("rate_times: t_ns, per_ns and cum are one segment each, at least one")
    out = np.empty(len(w), dtype=np.float64)
    cdef double[::1] tv = t, rv = r, cv = c, wv = w, ov = out
    cdef kv_rate rate
    rate.n, rate.t_ns, rate.per_ns, rate.cum = len(t), &tv[0], &rv[0], &cv[0]
    rate.period_ns, rate.period_cum = period_ns, period_cum
    cdef int cursor = 0
    cdef Py_ssize_t i
    with nogil:
        for i in range(wv.shape[0]):
            ov[i] = kv_rate_time(&rate, wv[i], &cursor)
    return out
