/* kvgo.h - the C face of kvlab's Go shim (a Go package built with -buildmode=c-shared into one object, libkvgo.so,
 * that holds both Go engines: Pebble (github.com/cockroachdb/pebble/v2) and Badger (github.com/dgraph-io/badger/v4);
 * a process hosts one Go runtime, so both engines live in one object and their adapters link it).
 *
 * One database per open, a context per thread (its value and key buffers, its batch, its range iterator), used by
 * one thread at a time.  Handles are small integers (0: none).  Every call returns KVGO_OK, KVGO_NOTFOUND or
 * KVGO_ERROR; on KVGO_ERROR it has filled the kvgo_error it was given (a panic inside the engine is caught at this
 * boundary and reported as kind KVGO_E_PANIC).  A key or value a call hands back points into the context's buffers
 * (C memory): valid until the context's next call.
 *
 * A call from C into Go costs a few hundred nanoseconds, more than a whole in-memory get: the measured loops that
 * matter run inside Go (kvgo_loop), handed the phase once, with the same key generator, clock and histogram layout
 * as kvlab's C loops (cython_ext/src/loop.h); the per-call entry points serve every other loop. */
#ifndef KVGO_H
#define KVGO_H

#include <stddef.h>
#include <stdint.h>

#define KVGO_OK 0
#define KVGO_NOTFOUND 1
#define KVGO_ERROR (-1)

#define KVGO_PEBBLE 1
#define KVGO_BADGER 2

enum kvgo_kind {
    KVGO_E_OTHER = 1,
    KVGO_E_IO = 2,       /* an *os.PathError / syscall.Errno from the file layer (errno in os_errno) */
    KVGO_E_FULL = 3,     /* ENOSPC or EDQUOT */
    KVGO_E_CONFIG = 4,   /* an option out of range, a call out of order, a batch too big (Badger's ErrTxnTooBig) */
    KVGO_E_CORRUPT = 5,  /* the engine's corruption errors (Pebble's base.ErrCorruption, Badger's checksum errors) */
    KVGO_E_BUSY = 6,     /* the directory's lock is held (Pebble's "lock held", Badger's "Cannot acquire directory lock") */
    KVGO_E_PANIC = 7,    /* the engine panicked (Badger and Pebble panic on some I/O failures); the message is its */
    KVGO_E_CONFLICT = 8, /* Badger's ErrConflict */
};

typedef struct kvgo_error {
    int kind;       /* enum kvgo_kind */
    int os_errno;   /* the OS's errno under an I/O error; 0: none */
    const char *name; /* the error's Go type or sentinel ("badger.ErrConflict", "*fs.PathError", "panic"): static */
    char text[400]; /* its message, cut to fit */
} kvgo_error;

typedef struct kvgo_options {
    int engine;             /* KVGO_PEBBLE or KVGO_BADGER */
    int create;             /* make the database where none is; 0: fail (ENOENT) */
    int sync;               /* every commit made durable before it returns (Pebble: WAL fsync; Badger: SyncWrites) */
    uint64_t cache_size;    /* the block cache, bytes; 0: the engine's default */
    uint64_t memtable_size; /* bytes; 0: the engine's default */
    int block_size;         /* table data blocks, bytes; 0: the engine's default */
    const char *options;    /* a comma list of the engine's own options (kvgo_open's error lists them) */
} kvgo_options;

/* The calls (declared for the adapters; the Go side, which includes this header for its types, cannot declare them
   with const: cgo writes its own prototypes). */
#ifndef KVGO_INSIDE_GO
int kvgo_open(const char *path, const kvgo_options *o, uint64_t *db, kvgo_error *err);
int kvgo_close(uint64_t db, kvgo_error *err); /* every context closed first; the handle is freed even on error */

uint64_t kvgo_thread_open(uint64_t db);
void kvgo_thread_close(uint64_t t); /* drops a batch and an iterator left open */

int kvgo_put(uint64_t t, const char *k, size_t kl, const char *v, size_t vl, kvgo_error *err);
int kvgo_del(uint64_t t, const char *k, size_t kl, kvgo_error *err); /* blind: KVGO_OK found or not */
int kvgo_get(uint64_t t, const char *k, size_t kl, const char **v, size_t *vl, kvgo_error *err);

/* A batch: its writes applied together, atomically, at commit (Pebble: a Batch; Badger: an update transaction). */
int kvgo_batch_begin(uint64_t t, kvgo_error *err);
int kvgo_batch_commit(uint64_t t, kvgo_error *err);
void kvgo_batch_abort(uint64_t t);

/* Transactions: kind 1 read (every read until its end sees one snapshot: Pebble's Snapshot, Badger's read
   transaction), 2 write (Pebble: an indexed batch, its reads seeing its own writes, no conflict detection; Badger:
   an update transaction, serializable snapshot isolation, a conflict at commit KVGO_E_CONFLICT). */
int kvgo_txn_begin(uint64_t t, int kind, kvgo_error *err);
int kvgo_txn_commit(uint64_t t, kvgo_error *err);
void kvgo_txn_abort(uint64_t t);

int kvgo_seek(uint64_t t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo, size_t *vlo,
              kvgo_error *err);
int kvgo_next(uint64_t t, const char **ko, size_t *klo, const char **vo, size_t *vlo, kvgo_error *err);
void kvgo_iter_close(uint64_t t);

int kvgo_compact(uint64_t db, kvgo_error *err); /* the whole key range (Pebble: Compact; Badger: Flatten) */
void kvgo_stats(uint64_t db, char *buf, size_t len); /* key=value lines of the engine's own counters */
const char *kvgo_version(int engine);               /* the module's version the build resolved ("v2.1.7") */
const char *kvgo_go_version(void);                  /* the Go toolchain that built the object ("go1.26.8") */
#endif

/* The measured loop inside Go: db_bench's write loop (fillseq, fillrandom, overwrite; batches) and read loop
 * (readrandom, readmissing, readhot), as cython_ext/src/loops_dbbench.c's kv_loop_write and kv_loop_read: the same
 * keys (xoshiro256** from the thread's state, Lemire's bound, key_size decimal digits), values taken in turn from
 * the run's buffer, one reading of the same clock ending each op (the TSC or CLOCK_MONOTONIC) into the same
 * histogram layout (kv_hist.h), the progress counter published, the deadline and stop read. */
#define KVGO_LOOP_WRITE 1
#define KVGO_LOOP_READ 2

typedef struct kvgo_loop {
    int kind;       /* KVGO_LOOP_* */
    int tsc;        /* the latency clock: 1 the TSC, 0 CLOCK_MONOTONIC in ns */
    int key_size;
    int value_size;
    int batch;      /* writes a batch (1: each its own) */
    int sequential; /* write: keys first, first+1, ... (mod num); else random below num */
    int by_time;    /* the run ends at `until`, not after `count` */
    int pad_;
    uint64_t first, count, num; /* write: the first index and this thread's count; num: the key space */
    uint64_t offset, span;      /* read: index = offset + a random number below span */
    uint64_t *rng;              /* the thread's xoshiro256** state, 4 words, advanced */
    const char *values;
    size_t values_len;
    size_t *value_pos;          /* the thread's position in the values, advanced */
    uint64_t *hist_buckets;     /* the op's kv_hist: its buckets and its max */
    uint64_t *hist_max;
    uint64_t *last;             /* the latency clock's last reading, advanced */
    uint64_t *progress;         /* the thread's ops so far, published after each op */
    const uint64_t *until;      /* the deadline on the latency clock; 0 once a stop is asked */
    /* out */
    uint64_t bytes, found, not_found;
    uint64_t key_sum;           /* a checksum of every key the loop made (kvgo_key_sum's), for the tests */
} kvgo_loop;

#ifndef KVGO_INSIDE_GO
int kvgo_loop_run(uint64_t t, kvgo_loop *l, kvgo_error *err);
/* The checksum kvgo_loop_run keeps of its keys, over keys of `n` indices drawn as a read loop draws them from `rng`
   (advanced), so that a test can check the Go generator against the C one. */
uint64_t kvgo_key_sum(uint64_t *rng, uint64_t n, uint64_t offset, uint64_t span, int key_size);
#endif

#endif
