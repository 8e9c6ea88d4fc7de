# Cython's view of kv_driver.h: a run's parameters, the compiled mix, the per-thread results.
from libc.stdint cimport int64_t, uint64_t

from kv_engine cimport kv_db, kv_engine_ops, kv_failure
from kv_graph cimport kv_graph
from kv_hist cimport kv_hist
from kv_rate cimport kv_rate
from kv_trace cimport kv_replay, kv_trace


cdef extern from "kv_driver.h":
    enum:
        KV_NOPTYPES
        KV_W__COUNT
        KV_MIX_MAX_TXNS
        KV_MIX_MAX_OPS
        KV_MIX_MAX_DISTS
        KV_CRASH_MAX_BATCH
        KV_ROLE_WRITER
    ctypedef struct kv_workload_info:
        const char *name
        int optype, writes, ops_are_num, several
    const kv_workload_info kv_workload_table[]
    ctypedef struct kv_mix_op:
        int optype, count, dist, length, min_length, length_dist, graph_op
        double len_k, len_sigma, len_theta
    ctypedef struct kv_mix_txn:
        int first, nops, txn, simple
        double cum
    ctypedef struct kv_mix_dist:
        int kind
        double theta, hot_fraction, hot_ops, percentile, frac
        uint64_t expected_inserts
        const double *range_cum
        int nranges
        double key_a, key_b
    ctypedef struct kv_mix:
        int ntxns, nops, ndists
        kv_mix_txn txns[KV_MIX_MAX_TXNS]
        kv_mix_op ops[KV_MIX_MAX_OPS]
        kv_mix_dist dists[KV_MIX_MAX_DISTS]
        int value_min, value_max, max_retries
        double interval_ns
        int poisson
        int value_pareto
        double value_k, value_sigma, value_theta
        kv_rate rate
    ctypedef struct kv_run_params:
        int workload
        uint64_t num, reads
        int threads
        double duration_s
        int key_size, value_size, batch
        uint64_t seed
        double compression_ratio
        int seek_nexts
        double writes_per_second
        int use_tsc
        const kv_mix *mix
        int ack_fd
        uint64_t first_seq
        int after_error
        int key_hash
        const kv_graph *graph
        uint64_t first_key
        int no_pipeline
        int no_own_loop
        int read_percent
        const kv_replay *replay
    ctypedef struct kv_thread_result:
        uint64_t progress
        int optype, role, rc
        uint64_t ops[KV_NOPTYPES]
        uint64_t found, not_found, bytes
        int64_t t_start_ns, t_end_ns
        int64_t cpu_user_ns, cpu_sys_ns, nvcsw, nivcsw
        kv_failure err
        uint64_t retries, aborts
        uint64_t *txn_count
        kv_hist *txn_hist
        uint64_t graph_nodes, graph_links, graph_listed
        int own_loop
        kv_hist hist[KV_NOPTYPES]
    ctypedef struct kv_run:
        const kv_engine_ops *ops
        kv_db *db
        kv_run_params p
        int nthreads
        kv_thread_result *results
        double ns_per_tick
        kv_trace *trace
    int kv_run_thread_count(const kv_run_params *p) nogil
    int kv_run_execute(kv_run *run) nogil
    void kv_run_request_stop(kv_run *run) nogil
    void kv_run_init(kv_run *run) nogil
