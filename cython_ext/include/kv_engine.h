/* kv_engine.h - the one contract every engine adapter fills.
 *
 * An adapter is one C file (kvlab/engines/<name>/engine_<name>.c, beside its engine's descriptor) that
 * exports a single `const kv_engine_ops kv_engine_<name>` table and nothing else.  The driver only
 * talks to engines through this table.
 *
 * Handles:
 *   kv_db      one open database (environment / connection) per run.
 *   kv_thread  per-thread context, created by the thread that uses it.  It owns
 *              whatever the engine needs per thread: an LMDB read txn, a
 *              WiredTiger session + cursor, RocksDB read options.  A thread
 *              context is never shared between threads.
 *
 * Return codes: KV_OK, KV_NOTFOUND (a counted outcome, not an error), or a
 * negative KV_E_* code.  On error the adapter fills a kv_failure: the thread's
 * (kv_thread_error) or, for a call without a thread context (open, close,
 * thread_open, compact), the one it is given.  A kv_failure keeps the engine's own
 * message, its own code and the code's name (MDB_MAP_FULL, WT_ROLLBACK,
 * DB_LOCK_DEADLOCK, a RocksDB Status kind) and errno where the OS failed; the
 * Cython driver's check() turns the KV_E_* code and the kv_failure into one Python
 * exception (kvlab.errors.from_code).
 *
 * Batches (db_bench's batched writes): between batch_begin() and batch_commit()
 * a thread's put/del calls are buffered in one atomic unit (WriteBatch, LMDB write
 * txn, WT/BDB txn).  The writes are blind, so an adapter whose commit may conflict
 * replays the buffered operations itself and only returns KV_E_CONFLICT when its
 * retry budget is exhausted.
 *
 * Transactions (the generic loop's templates) follow FoundationDB's model, which the
 * embedded engines fill as far as each can:
 *   txn_begin(t, KV_TXN_READ)   every get and cursor until txn_commit/txn_abort
 *                               reads one snapshot.
 *   txn_begin(t, KV_TXN_WRITE)  reads see one snapshot (and, where the engine can,
 *                               this transaction's own writes); puts/dels are buffered
 *                               or applied under the transaction and become visible
 *                               together at txn_commit, or not at all.
 * Any call inside may return KV_E_CONFLICT (another transaction committed a key this
 * one read or wrote, a deadlock victim).  The adapter does NOT retry a transaction (its
 * reads would be stale): the driver calls txn_abort and runs the template again from
 * its start; retries and give-ups are counted by the driver.  `isolation` states, in
 * one sentence for the result, what this engine's transaction gives.  txn_begin may be
 * NULL (no transactions): the driver then brackets a template's writes with
 * batch_begin/batch_commit.
 *
 * A FoundationDB adapter is planned (kvlab/engines/fdb), not written.
 */
#ifndef KV_ENGINE_H
#define KV_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#define KV_OK 0
#define KV_NOTFOUND 1

/* The error codes, each with the name kvlab.errors gives its exception class (py-lmdb's table of
   MDB_* names): X(name, value, meaning).  kvlab._native reads them from kv_error_table (kv_names.h). */
#define KV_ERRORS(X)                                                                                  \
    X(KV_E_OTHER, -1, "any other failure")                                                         \
    X(KV_E_IO, -2, "I/O error from the OS or the engine's file layer")                            \
    X(KV_E_FULL, -3, "out of space: LMDB map full, ENOSPC")                                       \
    X(KV_E_CONFIG, -4, "invalid option / unsupported setting")                                    \
    X(KV_E_CORRUPT, -5, "checksum or format corruption")                                           \
    X(KV_E_CONFLICT, -6, "transaction conflict / rollback that retries did not clear")            \
    X(KV_E_BUSY, -7, "lock held by another process")                                               \
    X(KV_E_NOTSUP, -8, "operation not supported by this engine")

enum kv_error {
#define KV_ERROR_ENUM(name, value, meaning) name = (value),
    KV_ERRORS(KV_ERROR_ENUM)
#undef KV_ERROR_ENUM
};

#define KV_ERRMSG_MAX 512

/* An engine failure as it crosses the contract, whole: what kvlab.errors' exception carries. */
typedef struct kv_failure {
    char msg[KV_ERRMSG_MAX];    /* the message, with the engine's own text */
    int code;                   /* the engine's own code: MDB_MAP_FULL's -30792, WT_ROLLBACK's -31800, a RocksDB
                                   or LevelDB Status::Code, an errno an engine returns as its code; 0: none (a
                                   refusal of kvlab's own, such as an unknown option) */
    int sys_errno;              /* errno where the OS failed (ENOSPC, EIO, EACCES, ...); 0: none */
    const char *code_name;      /* `code` as the engine's headers spell it ("MDB_MAP_FULL", "DB_LOCK_DEADLOCK",
                                   "IOError", "ENOSPC"): a string with static storage; NULL: none */
} kv_failure;

/* X(id, name as kvlab settings write it) */
#define KV_COMPRESSIONS(X) X(NONE, "none") X(SNAPPY, "snappy") X(LZ4, "lz4") X(ZSTD, "zstd")

enum kv_compression {
#define KV_COMP_ENUM(id, name) KV_COMP_##id,
    KV_COMPRESSIONS(KV_COMP_ENUM)
#undef KV_COMP_ENUM
};

typedef struct kv_config {
    const char *variant;        /* adapter-specific variant, e.g. "btree" / "lsm" for WiredTiger */
    uint64_t cache_size;        /* bytes; 0 = engine default */
    uint64_t map_size;          /* LMDB map size in bytes; 0 = adapter default */
    uint64_t write_buffer_size; /* memtable size in bytes for LSM engines; 0 = default */
    int sync;                   /* fsync / flush the log on every commit */
    int disable_wal;            /* no write-ahead log where the engine allows it */
    int compression;            /* enum kv_compression */
    int max_threads;            /* threads that will open contexts (sessions, readers) */
    int create;                 /* create the database if missing */
    int block_size;             /* bytes; 0 = default */
    int bloom_bits;             /* bits per key; 0 = no bloom filter */
    int max_open_files;         /* 0 = default, -1 = unlimited */
    const char *options;        /* engine-native option string: RocksDB options string,
                                   WiredTiger connection config, LMDB flag list,
                                   LevelDB key=value list */
    const char *table_options;  /* WiredTiger table config string; ignored elsewhere */
    int transactions;           /* the run will use txn_begin(KV_TXN_WRITE): open in the engine's
                                   transactional mode where that costs something otherwise
                                   (RocksDB: an OptimisticTransactionDB) */
    int engine_counters;        /* keep the statistics an engine maintains at a cost on every op
                                   (WiredTiger's statistics=(fast)); 0 = off, the engine's fastest path */
} kv_config;

/* X(id, name, value).  NONE is no transaction (a mix template whose one op is atomic by itself, kv_mix_txn):
   never passed to txn_begin. */
#define KV_TXN_KINDS(X) X(NONE, "none", 0) X(READ, "read", 1) X(WRITE, "write", 2)

enum kv_txn_kind {
#define KV_TXN_ENUM(id, name, value) KV_TXN_##id = (value),
    KV_TXN_KINDS(KV_TXN_ENUM)
#undef KV_TXN_ENUM
};

typedef struct kv_db kv_db;
typedef struct kv_thread kv_thread;

/* A measured loop the engine runs itself (kv_engine_ops.own_loop): db_bench's write loop (fillseq, fillrandom,
   overwrite, batches) or its read loop (readrandom, readmissing, readhot), handed over whole by the driver's
   (cython_ext/src/loops_dbbench.c) with the thread's state, which the engine's loop must treat exactly as the
   driver's does: the keys drawn from `rng` (kv_rng_below, kv_make_key), the values taken in turn from `values`
   at `*value_pos`, each op (a batch: its puts) ended by one reading of the latency clock (the TSC where `tsc`,
   else CLOCK_MONOTONIC ns) recorded into `hist_buckets`/`hist_max` as kv_hist_record does and kept in `*last`,
   `*progress` published after each op, the thread's end when the reading reaches `*until` (read atomically:
   0 once a stop is asked).  The driver checks the engine's keys against its own before it hands a loop over
   (key_sum). */
enum kv_own_loop_kind { KV_OWN_WRITE = 1, KV_OWN_READ = 2 };

typedef struct kv_own_loop {
    int kind;       /* enum kv_own_loop_kind */
    int tsc;
    int key_size;
    int value_size;
    int batch;      /* writes a batch, 1: each its own */
    int sequential; /* write: first, first+1, ... (mod num); else random below num */
    int by_time;    /* ends at *until only, not after count */
    int pad_;
    uint64_t first, count, num;
    uint64_t offset, span; /* read: index = offset + kv_rng_below(span) */
    uint64_t *rng;         /* kv_rng's four words, advanced */
    const char *values;
    size_t values_len;
    size_t *value_pos;
    uint64_t *hist_buckets;
    uint64_t *hist_max;
    uint64_t *last;
    uint64_t *progress;
    const uint64_t *until;
    uint64_t bytes, found, not_found; /* out: as the driver's loop counts them */
} kv_own_loop;

/* Every adapter's thread struct begins with this, so the driver can read its last error. */
typedef struct kv_thread_common {
    kv_failure err;
} kv_thread_common;

typedef struct kv_engine_ops {
    const char *name;

    /* Open or create the database at `path`.  On failure returns KV_E_* and fills err
       (as close, thread_open and compact do; err may be NULL: nothing is kept). */
    int (*open)(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err);
    int (*close)(kv_db *db, kv_failure *err);

    int (*thread_open)(kv_db *db, kv_thread **out, kv_failure *err);
    void (*thread_close)(kv_thread *t);

    int (*put)(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl);
    /* On KV_OK *v / *vl point at the value, valid until the thread's next call. */
    int (*get)(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl);
    int (*del)(kv_thread *t, const char *k, size_t kl);

    int (*batch_begin)(kv_thread *t);
    int (*batch_commit)(kv_thread *t);
    int (*batch_abort)(kv_thread *t);

    /* Transactions: see above.  txn_commit ends a KV_TXN_READ one too (KV_OK). */
    int (*txn_begin)(kv_thread *t, int kind);
    int (*txn_commit)(kv_thread *t);
    void (*txn_abort)(kv_thread *t);

    /* Cursor: seek to the first key >= k (KV_NOTFOUND past the end), then next().
       Outputs are valid until the next cursor call; iter_close ends the snapshot. */
    int (*iter_seek)(kv_thread *t, const char *k, size_t kl,
                     const char **ko, size_t *klo, const char **vo, size_t *vlo);
    int (*iter_next)(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo);
    void (*iter_close)(kv_thread *t);

    /* Full-range compaction (db_bench "compact"); KV_E_NOTSUP where meaningless. */
    int (*compact)(kv_db *db, kv_failure *err);

    /* Engine-internal statistics into buf: "name=number" lines, then optionally a
       line "#text" followed by the engine's own free-text report.  May be NULL. */
    int (*stats)(kv_db *db, char *buf, size_t len);

    /* Library version as linked, e.g. "0.9.24". */
    const char *(*version)(void);

    /* Optional: release process-wide resources (a client library's network thread). */
    void (*process_shutdown)(void);

    /* What a transaction gives here, one sentence (NULL: "none"); `variant` picks among
       an adapter's variants, as kv_config.variant does. */
    const char *(*isolation)(const char *variant, int transactions);

    /* Bulk load (kvlab's load="bulk", the bulkload loop): one thread puts keys in ascending order, each
       above every key the database holds, in chunks.  bulk_begin, bulk_put..., bulk_commit is one chunk;
       when bulk_commit returns KV_OK the chunk is in the database as a committed batch is, except where
       `bulk_how` says the engine writes it later (WiredTiger's bulk cursor: at the load's last chunk,
       `last`).  bulk_abort drops an unfinished chunk.  bulk_begin may be NULL: the engine has no bulk
       path, and kvlab refuses load="bulk" on it.  bulk_how says in one sentence what the path is, for the
       result. */
    int (*bulk_begin)(kv_thread *t);
    int (*bulk_put)(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl);
    int (*bulk_commit)(kv_thread *t, int last);
    void (*bulk_abort)(kv_thread *t);
    const char *bulk_how;

    /* Batched point reads (db_bench's multireadrandom, RocksDB's MultiGet): the n keys keys[i] (kls[i] bytes) in
       one call.  rcs[i] is KV_OK, with vs[i] / vls[i] its value (valid until the thread's next call), or
       KV_NOTFOUND.  Returns KV_OK, or an error for the whole call.  May be NULL: the engine has no batched read,
       and multireadrandom makes n get calls instead (the result says which).  multi_get_how says in one sentence
       what the call is, for the result. */
    int (*multi_get)(kv_thread *t, size_t n, const char *const *keys, const size_t *kls, const char **vs,
                     size_t *vls, int *rcs);
    const char *multi_get_how;

    /* The engine's own measured loop (kv_own_loop above), for an engine whose calls from C cost more than a fast
       op (one in Go: a call from C into Go costs a few hundred ns).  Returns KV_OK, an error (the thread's err
       filled), or KV_E_NOTSUP where it runs no such loop (the driver's runs).  key_sum: the engine's checksum
       of `n` keys drawn as a read loop draws them from `rng` (advanced), which the driver compares with its own
       before each hand-over.  own_loop_how says in one sentence what runs, for the result.  May be NULL.
       Appended to the table: an adapter built before it has a shorter table, and kvlab reads these as NULL. */
    int (*own_loop)(kv_thread *t, kv_own_loop *l);
    uint64_t (*own_key_sum)(uint64_t *rng, uint64_t n, uint64_t offset, uint64_t span, int key_size);
    const char *own_loop_how;
} kv_engine_ops;

/* The size of the table before own_loop: an adapter built then is loaded with the fields after it NULL. */
#define KV_ENGINE_OPS_MIN_SIZE offsetof(kv_engine_ops, own_loop)

/* The thread context's last error (its message: kv_thread_errmsg). */
static inline kv_failure *kv_thread_error(kv_thread *t) { return &((kv_thread_common *)t)->err; }

static inline const char *kv_thread_errmsg(kv_thread *t) { return kv_thread_error(t)->msg; }

/* The registry: NULL-terminated list of adapters compiled into this build. */
extern const kv_engine_ops *const kv_engines[];

/* This contract's version: a loadable adapter (kv_plugin.h) built against another is refused when loaded.  Raise
   it with any change to kv_config, kv_failure or kv_thread_common, and to kv_engine_ops other than a field
   appended at its end (read as NULL from a shorter table: KV_ENGINE_OPS_MIN_SIZE). */
#define KV_ENGINE_ABI 1

#endif
