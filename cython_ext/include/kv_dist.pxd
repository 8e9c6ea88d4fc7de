# Cython's view of kv_dist.h: the generator and the key distributions.
from libc.stdint cimport uint64_t


cdef extern from "kv_dist.h":
    ctypedef struct kv_rng:
        pass
    ctypedef struct kv_dist:
        pass
    enum:
        KV_STREAM_READ
    void kv_rng_seed(kv_rng *r, uint64_t seed, uint64_t stream, uint64_t index) nogil
    void kv_dist_init(kv_dist *d, int kind, uint64_t count, double theta, uint64_t modulus,
                      double hot_fraction, double hot_ops, double exp_percentile, double exp_frac,
                      int thread, int threads) nogil
    uint64_t kv_dist_next(kv_dist *d, kv_rng *r, uint64_t count) nogil
    void kv_dist_fill(kv_dist *d, kv_rng *r, uint64_t count, uint64_t *out, uint64_t n) nogil
    void kv_dist_key_ranges(kv_dist *d, const double *range_cum, int nranges, double key_a, double key_b) nogil
    uint64_t kv_pareto_size(kv_rng *r, double k, double sigma, double theta, uint64_t max, uint64_t least) nogil
    uint64_t kv_key_hash(uint64_t record) nogil
    uint64_t kv_fnv_abs(uint64_t v) nogil
