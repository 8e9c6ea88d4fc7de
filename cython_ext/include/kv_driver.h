/* kv_driver.h - the native workload driver: N real threads over one engine.
 * Called by the Cython module with the GIL released for the whole run.
 */
#ifndef KV_DRIVER_H
#define KV_DRIVER_H

#include <pthread.h>
#include <stdint.h>

#include "kv_engine.h"
#include "kv_graph.h"
#include "kv_hist.h"

enum kv_workload {
    KV_W_FILLSEQ = 0, KV_W_FILLRANDOM, KV_W_OVERWRITE, KV_W_READRANDOM, KV_W_READSEQ,
    KV_W_SEEKRANDOM, KV_W_DELETERANDOM, KV_W_READWHILEWRITING, KV_W_READMISSING,
    KV_W_READHOT, KV_W_COMPACT, KV_W_MIX, KV_W_CRASHWRITE, KV_W_GRAPHLOAD, KV_W__COUNT
};

/* Op types: each has its own latency histogram.  A mix's ops are read (get), write (put), delete,
   insert, rmw, range, scan and clear_range; `txn` is a mix's whole transaction. */
enum kv_optype {
    KV_OP_READ = 0, KV_OP_WRITE, KV_OP_DELETE, KV_OP_SEEK, KV_OP_COMPACT,
    KV_OP_INSERT, KV_OP_RMW, KV_OP_RANGE, KV_OP_SCAN, KV_OP_CLEAR_RANGE, KV_OP_TXN,
    KV_OP_RESPONSE,     /* open loop: a transaction's end minus its intended start */
    KV_OP_LAG,          /* open loop: its actual start minus its intended start */
    KV_OP_GRAPH,        /* a LinkBench operation (kv_graph.h); each kind is a template of its own */
    KV_NOPTYPES
};

/* A workload mix compiled from kvlab.model.workloads.Mix (kvlab/execution/mixplan.py): weighted
   transaction templates, each a run of ops; every op draws its key from one of the distributions. */
#define KV_MIX_MAX_TXNS 32
#define KV_MIX_MAX_OPS 128
#define KV_MIX_MAX_DISTS 16
enum { KV_LEN_CONSTANT = 0, KV_LEN_UNIFORM, KV_LEN_ZIPFIAN };

typedef struct { int optype, count, dist, length, min_length, length_dist, graph_op; } kv_mix_op;  /* graph_op: enum kv_graph_op */
/* txn: 0 = no transaction (one op that is atomic by itself: a get, a blind put), else the
   enum kv_txn_kind the template runs in (KV_TXN_READ: reads of one snapshot; KV_TXN_WRITE). */
/* simple: one op once (in the transaction `txn` it needs alone, if any), and no other template has that
   op type: the loop then records only the op's histogram (begin and commit included) and derives the
   template's and the transactions' from it. */
typedef struct { int first, nops, txn, simple; double cum; } kv_mix_txn;
typedef struct { int kind; double theta, hot_fraction, hot_ops, percentile, frac; uint64_t expected_inserts; } kv_mix_dist;
typedef struct kv_mix {
    int ntxns, nops, ndists;
    kv_mix_txn txns[KV_MIX_MAX_TXNS];
    kv_mix_op ops[KV_MIX_MAX_OPS];
    kv_mix_dist dists[KV_MIX_MAX_DISTS];
    int value_min, value_max;       /* bytes, drawn uniformly per write */
    int max_retries;                /* a conflicted transaction is retried from its start */
    double interval_ns;             /* open loop: each client's mean gap between intended starts; 0 = closed */
    int poisson;                    /* open loop: exponential gaps (Poisson arrivals), else even ones */
} kv_mix;

/* kvlab crashtest's writer: records of 64-bit words down ack_fd, each written whole (under PIPE_BUF):
   intent  KV_CRASH_INTENT, seq, n, n x (key index << 1 | is_delete)   before the transaction starts
   ack     KV_CRASH_ACK, seq                                          once the engine acknowledged it
   A value written by transaction seq at position j begins with seq and j (little-endian u64, u32). */
#define KV_CRASH_INTENT 1
#define KV_CRASH_ACK 2
#define KV_CRASH_MAX_BATCH 256

enum kv_role { KV_ROLE_WORKER = 0, KV_ROLE_WRITER = 1 };

typedef struct kv_run_params {
    int workload;               /* enum kv_workload */
    uint64_t num;               /* key space; writes split num across threads */
    uint64_t reads;             /* reads per thread */
    int threads;                /* worker threads (readers in readwhilewriting) */
    double duration_s;          /* > 0: run by time instead of by count */
    int key_size, value_size;
    int batch;                  /* puts per batch/transaction; 1 = no batch */
    uint64_t seed;
    double compression_ratio;
    int seek_nexts;             /* entries read after each seek in seekrandom */
    double writes_per_second;   /* readwhilewriting writer limit; 0 = unlimited */
    int use_tsc;                /* latency clock: 1 = TSC (kernel clocksource is tsc), 0 = CLOCK_MONOTONIC */
    const kv_mix *mix;          /* KV_W_MIX: the mix; `reads` is then transactions per thread */
    int ack_fd;                 /* KV_W_CRASHWRITE: where each transaction's intent and acknowledgement go */
    uint64_t first_seq;         /* KV_W_CRASHWRITE: the first transaction's sequence number */
    int key_hash;               /* YCSB's insertorder=hashed: record i is stored under key kv_key_hash(i), so
                                   loads and inserts land all over the key space (fillseq/fillrandom loads
                                   and the mix loop; db_bench's other loops ignore it) */
    const kv_graph *graph;      /* KV_W_GRAPHLOAD, and a mix with graph ops: LinkBench's graph (num = its nodes) */
    int no_pipeline;            /* KV_W_MIX: always the general loop, never the one-op-template loop that draws ahead (tests compare the two) */
} kv_run_params;

/* One per thread, cache-line aligned; the driver writes only its own. */
typedef struct kv_thread_result {
    volatile uint64_t progress;     /* ops done so far, published relaxed for monitors */
    int optype;                     /* the op type this thread's loop counts in progress */
    int role;
    int rc;
    uint64_t ops[KV_NOPTYPES];
    uint64_t found, not_found;
    uint64_t bytes;                 /* key + value bytes moved */
    int64_t t_start_ns, t_end_ns;
    int64_t cpu_user_ns, cpu_sys_ns;    /* this thread's CPU over the run (RUSAGE_THREAD) */
    int64_t nvcsw, nivcsw;              /* its voluntary / involuntary context switches */
    char errmsg[KV_ERRMSG_MAX];
    uint64_t retries, aborts;       /* mix: transactions retried after a conflict / given up */
    uint64_t *txn_count;            /* mix: per template, transactions done (ntxns entries) */
    kv_hist *txn_hist;              /* mix: per template, service time, then response time (2 x ntxns) */
    uint64_t graph_nodes, graph_links, graph_listed;   /* graph: nodes and links loaded, links listed */
    kv_hist hist[KV_NOPTYPES];
} __attribute__((aligned(64))) kv_thread_result;

typedef struct kv_run {
    const kv_engine_ops *ops;
    kv_db *db;
    kv_run_params p;
    int nthreads;                   /* worker threads + writer if any */
    kv_thread_result *results;      /* nthreads entries */
    volatile int workers_left;      /* readwhilewriting: the writer runs until this is 0 */
    char *values;                   /* shared read-only value buffer */
    size_t values_len;
    pthread_mutex_t gate;           /* start gate: threads open contexts, then go together */
    pthread_cond_t gate_cond;
    int ready, go;
    uint64_t deadline_ticks;        /* the deadline on the latency clock */
    uint64_t until;                 /* the run's one stop mechanism: workers end after an op at latency
                                       clock >= until.  KV_UNTIL_UNSET before the run starts, then the
                                       deadline (UINT64_MAX for a count-bounded run); 0 once a stop is
                                       requested (by the caller or by a thread's error), for good */
    double ns_per_tick;             /* latency clock rate: histograms hold ticks */
} kv_run;

/* Number of threads the run will start (readwhilewriting adds the writer). */
int kv_run_thread_count(const kv_run_params *p);

/* Run to completion on the calling thread's behalf; results[] must hold
   kv_run_thread_count() zeroed entries.  Returns 0, or KV_E_* if threads could not start. */
int kv_run_execute(kv_run *run);

#define KV_UNTIL_UNSET UINT64_MAX

/* Before kv_run_execute: nothing is stopped yet and no deadline is set. */
static inline void kv_run_init(kv_run *run) { run->until = KV_UNTIL_UNSET; }

/* A stop is `until` = 0.  kv_run_execute sets the deadline by compare-and-swap from
   KV_UNTIL_UNSET, so a stop requested while the run starts is never overwritten. */
static inline void kv_run_request_stop(kv_run *run) { __atomic_store_n(&run->until, 0, __ATOMIC_SEQ_CST); }

static inline int kv_run_stopped(const kv_run *run) { return __atomic_load_n(&run->until, __ATOMIC_RELAXED) == 0; }

#endif
