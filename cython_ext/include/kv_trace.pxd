# Cython's view of kv_trace.h: a run's trace (recording) and a replay's ops.
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t


cdef extern from "kv_trace.h":
    enum:
        KV_TRACE_BLOCK_TAG
        KV_TRACE_BUF_RECS
        KV_TRACE_BATCHED
        KV_TRACE_COMMIT
    ctypedef struct kv_trace_rec:
        uint64_t key
        uint64_t start, intended
        uint32_t size
        uint8_t op, flags
    ctypedef struct kv_trace:
        int fd
        uint32_t phase
        int err
    ctypedef struct kv_replay_op:
        uint64_t key
        int64_t at_ns
        uint32_t size
        uint8_t op, flags
    ctypedef struct kv_replay:
        const kv_replay_op **ops
        const uint64_t *count
        int paced
