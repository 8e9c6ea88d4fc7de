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
