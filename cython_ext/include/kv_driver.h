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
#include "kv_rate.h"
#include "kv_trace.h"

/* Op types: each has its own latency histogram, named as here in results.  A mix's ops are read (get),
   write (put), delete, insert, rmw, range, scan and clear_range; `txn` is a mix's whole transaction;
   response and lag are an open loop's (a transaction's end, and its actual start, minus its intended
   start); graph is a LinkBench operation (kv_graph.h), each kind a template of its own. */
#define KV_OPTYPES(X)                                                                                 \
    X(READ, "read") X(WRITE, "write") X(DELETE, "delete") X(SEEK, "seek") X(COMPACT, "compact")       \
    X(INSERT, "insert") X(RMW, "rmw") X(RANGE, "range") X(SCAN, "scan") X(CLEAR_RANGE, "clear_range") \
    X(TXN, "txn") X(RESPONSE, "response") X(LAG, "lag") X(GRAPH, "graph")

enum kv_optype {
#define KV_OP_ENUM(id, name) KV_OP_##id,
    KV_OPTYPES(KV_OP_ENUM)
#undef KV_OP_ENUM
    KV_NOPTYPES
};

/* The native loops (kvlab.model.workloads names which one a benchmark runs):
   X(id, name, the op type its progress counts, writes, ops_are_num, several).
   writes: its threads write (their generators draw from the write stream, kv_gen.h);
   ops_are_num: its threads split `num` keys, one op each, so a count-bounded run does num ops
   (the other loops do `reads` per thread, or are one call);
   several: its ops are of several op types (readrandomwriterandom's reads and writes), each timed into its own
   histogram and counted by the loop itself in ops[]; its progress counts them all. */
#define KV_WORKLOADS(X)                                                                               \
    X(FILLSEQ, "fillseq", KV_OP_WRITE, 1, 1, 0)                                                          \
    X(FILLRANDOM, "fillrandom", KV_OP_WRITE, 1, 1, 0)                                                    \
    X(OVERWRITE, "overwrite", KV_OP_WRITE, 1, 1, 0)                                                      \
    X(READRANDOM, "readrandom", KV_OP_READ, 0, 0, 0)                                                     \
    X(READSEQ, "readseq", KV_OP_READ, 0, 0, 0)                                                           \
    X(SEEKRANDOM, "seekrandom", KV_OP_SEEK, 0, 0, 0)                                                     \
    X(DELETERANDOM, "deleterandom", KV_OP_DELETE, 1, 1, 0)                                               \
    X(READWHILEWRITING, "readwhilewriting", KV_OP_READ, 0, 0, 0) /* its writer: kv_role */               \
    X(READMISSING, "readmissing", KV_OP_READ, 0, 0, 0)                                                   \
    X(READHOT, "readhot", KV_OP_READ, 0, 0, 0)                                                           \
    X(COMPACT, "compact", KV_OP_COMPACT, 0, 0, 0)                                                        \
    X(MIX, "mix", KV_OP_TXN, 0, 0, 0)                                                                    \
    X(CRASHWRITE, "crashwrite", KV_OP_WRITE, 1, 0, 0)                                                    \
    X(GRAPHLOAD, "graphload", KV_OP_WRITE, 1, 0, 0) /* splits num nodes; counts their writes */       \
    X(BULKLOAD, "bulkload", KV_OP_WRITE, 1, 1, 0)   /* fillseq through the engine's bulk path, one thread */   \
    X(READRANDOMWRITERANDOM, "readrandomwriterandom", KV_OP_READ, 1, 0, 1) /* reads, writes: several */      \
    X(UPDATERANDOM, "updaterandom", KV_OP_RMW, 1, 0, 0)                                             \
    X(MULTIREADRANDOM, "multireadrandom", KV_OP_READ, 0, 0, 0) /* counts keys; one entry per batch */  \
    X(FILLSEQDETERMINISTIC, "fillseqdeterministic", KV_OP_WRITE, 1, 1, 0) /* one thread, then compacts */   \
    X(REPLAY, "replay", KV_OP_READ, 1, 0, 1) /* a trace's ops, each thread its list (kv_trace.h) */

enum kv_workload {
#define KV_W_ENUM(id, name, optype, writes, ops_are_num, several) KV_W_##id,
    KV_WORKLOADS(KV_W_ENUM)
#undef KV_W_ENUM
    KV_W__COUNT
};

typedef struct kv_workload_info {
    const char *name;
    int optype;         /* enum kv_optype */
    int writes, ops_are_num, several;
} kv_workload_info;

/* KV_WORKLOADS, indexed by enum kv_workload (src/names.c). */
extern const kv_workload_info kv_workload_table[KV_W__COUNT];

/* A workload mix compiled from kvlab.model.workloads.Mix (kvlab/execution/mixplan.py): weighted
   transaction templates, each a run of ops; every op draws its key from one of the distributions. */
#define KV_MIX_MAX_TXNS 32
#define KV_MIX_MAX_OPS 128
#define KV_MIX_MAX_DISTS 16
/* How a range, scan or clear_range op draws its length: X(id, name as kvlab.model.workloads.mix writes it). */
#define KV_LENGTH_DISTS(X) X(CONSTANT, "constant") X(UNIFORM, "uniform") X(ZIPFIAN, "zipfian") X(PARETO, "pareto")

enum kv_length_dist {
#define KV_LEN_ENUM(id, name) KV_LEN_##id,
    KV_LENGTH_DISTS(KV_LEN_ENUM)
#undef KV_LEN_ENUM
};

typedef struct {
    int optype, count, dist, length, min_length, length_dist, graph_op;   /* graph_op: enum kv_graph_op */
    double len_k, len_sigma, len_theta;   /* KV_LEN_PARETO: the generalized Pareto's shape, scale and location */
} kv_mix_op;
/* txn: the enum kv_txn_kind the template runs in: KV_TXN_NONE (one op that is atomic by itself: a get, a
   blind put), KV_TXN_READ (reads of one snapshot) or KV_TXN_WRITE. */
/* simple: one op once (in the transaction `txn` it needs alone, if any), and no other template has that
   op type: the loop then records only the op's histogram (begin and commit included) and derives the
   template's and the transactions' from it. */
typedef struct { int first, nops, txn, simple; double cum; } kv_mix_txn;
typedef struct {
    int kind;
    double theta, hot_fraction, hot_ops, percentile, frac;
    uint64_t expected_inserts;
    const double *range_cum;    /* two-term-exp: the key ranges' cumulative shares (kv_dist_key_ranges) */
    int nranges;
    double key_a, key_b;
} kv_mix_dist;
typedef struct kv_mix {
    int ntxns, nops, ndists;
    kv_mix_txn txns[KV_MIX_MAX_TXNS];
    kv_mix_op ops[KV_MIX_MAX_OPS];
    kv_mix_dist dists[KV_MIX_MAX_DISTS];
    int value_min, value_max;       /* bytes, drawn uniformly per write */
    int max_retries;                /* a conflicted transaction is retried from its start */
    double interval_ns;             /* open loop: each client's mean gap between intended starts; 0 = closed */
    int poisson;                    /* open loop: exponential gaps (Poisson arrivals), else even ones */
    int value_pareto;               /* value sizes from a generalized Pareto (db_bench's mixgraph), bounded by
                                       value_min and value_max; else uniform */
    double value_k, value_sigma, value_theta;
    kv_rate rate;                   /* open loop: the target rate over time (kv_rate.h); rate.n 0: constant */
} kv_mix;

/* kvlab crashtest's writer: records of 64-bit words down ack_fd, each written whole (under PIPE_BUF):
   intent  KV_CRASH_INTENT, seq, n, n x (key index << 1 | is_delete)   before the transaction starts
   ack     KV_CRASH_ACK, seq                                          once the engine acknowledged it
   With after_error, the first transaction the engine fails is told, read back, and the writer goes on:
   failed    KV_CRASH_FAILED, seq, kvlab's code, n, n bytes of the engine's message (zero-padded to 8)
   readback  KV_CRASH_READBACK, seq, puts a get returns with its stamp, its puts, gets that failed
   A value written by transaction seq at position j begins with seq and j (little-endian u64, u32). */
#define KV_CRASH_INTENT 1
#define KV_CRASH_ACK 2
#define KV_CRASH_FAILED 5
#define KV_CRASH_READBACK 6
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
    int after_error;            /* KV_W_CRASHWRITE: transactions to go on with after the first one the engine
                                   failed (told and read back first); 0: that error ends the run */
    int key_hash;               /* YCSB's insertorder=hashed: record i is stored under key kv_key_hash(i), so
                                   loads and inserts land all over the key space (fillseq/fillrandom loads
                                   and the mix loop; db_bench's other loops ignore it) */
    const kv_graph *graph;      /* KV_W_GRAPHLOAD, and a mix with graph ops: LinkBench's graph (num = its nodes) */
    uint64_t first_key;         /* fillseq, bulkload: the load starts at this index (a resumed load), the
                                   threads splitting [first_key, num) */
    int no_pipeline;            /* KV_W_MIX: always the general loop, never the one-op-template loop that draws ahead (tests compare the two) */
    int no_own_loop;            /* the driver's loops even where the engine runs its own (kv_engine.h's own_loop):
                                   benchmarks/go_crossing.py measures what a call into the engine costs so */
    int read_percent;           /* readrandomwriterandom: reads in each 100 ops, the rest writes (db_bench's
                                   --readwritepercent) */
    const kv_replay *replay;    /* KV_W_REPLAY: each thread's ops (kv_trace.h) */
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
    kv_failure err;                     /* the error that ended this thread's loop (rc) */
    uint64_t retries, aborts;       /* mix: transactions retried after a conflict / given up */
    uint64_t *txn_count;            /* mix: per template, transactions done (ntxns entries) */
    kv_hist *txn_hist;              /* mix: per template, service time, then response time (2 x ntxns) */
    uint64_t graph_nodes, graph_links, graph_listed;   /* graph: nodes and links loaded, links listed */
    int own_loop;                   /* the engine's own loop ran this thread's ops (kv_engine.h's own_loop) */
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
    kv_trace *trace;                /* NULL, or where every op is recorded (kv_trace.h) */
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
