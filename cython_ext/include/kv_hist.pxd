# Cython's view of kv_hist.h: the latency histogram.
from libc.stdint cimport uint64_t


cdef extern from "kv_hist.h":
    enum:
        KV_HIST_BUCKETS
        KV_HIST_SUB_BITS
        KV_HIST_MAX_EXP
    ctypedef struct kv_hist:
        uint64_t count, min, max
        uint64_t buckets[KV_HIST_BUCKETS]
    void kv_hist_init(kv_hist *h) nogil
    void kv_hist_record(kv_hist *h, uint64_t v) nogil
    void kv_hist_finish(kv_hist *h) nogil
