/* kv_trace.h - recording a run's operations, and the replay loop's input (docs/traces.md).
 *
 * Recording: each thread appends one kv_trace_rec per op to a buffer of its own (no lock, no Python); a full
 * buffer, and what is left when the thread ends, is written to the trace's file as one block under the trace's
 * lock (once per KV_TRACE_BUF_RECS ops).  The file's header and each phase's section are Python's
 * (kvlab/execution/run/tracing.py); the blocks are C's:
 *   block  u32 KV_TRACE_BLOCK_TAG, u32 phase, u32 thread, u32 count, u64 the latency clock at the phase's start
 *          (the gate's opening), f64 ns per tick of that clock; then count x kv_trace_rec
 * all little-endian.  A record's times are the latency clock's readings, as the loop read them (no pass over the
 * buffer to convert them: the reader does, with the block's clock start and rate).
 *
 * Replay: one array of kv_replay_op per replay thread, run in order (src/loop_replay.c).
 */
#ifndef KV_TRACE_H
#define KV_TRACE_H

#include <pthread.h>
#include <stdint.h>

#define KV_TRACE_BLOCK_TAG 0x314b4c42u   /* "BLK1" */
#define KV_TRACE_BUF_RECS 65536         /* records a thread buffers before it writes a block (2 MiB) */

/* One op as recorded (32 bytes).  key: the key index (kv_make_key's, YCSB's hash already applied); size: the
   value's bytes for a write, insert or rmw, the length for a range, scan or clear_range, else 0; op: enum
   kv_optype; flags: KV_TRACE_BATCHED for each put of a batch (applied together at its commit), KV_TRACE_COMMIT
   as well on its last (the commit follows it); 0 for an op on its own. */
#define KV_TRACE_BATCHED 0x1u
#define KV_TRACE_COMMIT 0x2u
typedef struct kv_trace_rec {
    uint64_t key;
    uint64_t start;         /* its actual start: the latency clock's reading */
    uint64_t intended;      /* an open loop's intended start, on the same clock; 0: none (a closed loop) */
    uint32_t size;
    uint8_t op;
    uint8_t flags;          /* KV_TRACE_BATCHED, KV_TRACE_COMMIT */
    uint16_t reserved;
} kv_trace_rec;

/* The run's trace: the file and what turns clock readings into ns from the phase start. */
typedef struct kv_trace {
    int fd;
    uint32_t phase;
    pthread_mutex_t lock;   /* held only while a block is written */
    int err;                /* the first write's errno, if one failed (the run goes on; Python raises) */
    uint64_t start_ticks;   /* the latency clock as the gate opened */
    double ns_per_tick;
    int use_tsc;            /* the latency clock (kv_run_params.use_tsc) */
} kv_trace;

/* A thread's buffer. */
typedef struct kv_trace_buf {
    kv_trace *trace;
    uint32_t thread, n;
    kv_trace_rec *recs;     /* KV_TRACE_BUF_RECS */
} kv_trace_buf;

/* Writes the buffer's records as one block (converting its clock readings to ns) and empties it; returns the
   latency clock's ticks that took. */
uint64_t kv_trace_flush(kv_trace_buf *b);

/* Appends one op; returns 0, or, where the buffer filled and was written, the ticks the write took (the caller
   moves its op's start on by them, so the write is not counted as the op's latency). */
static inline __attribute__((always_inline)) uint64_t kv_trace_put(kv_trace_buf *b, int op, uint64_t key,
                                                               uint64_t size, uint64_t start, uint64_t intended,
                                                               unsigned flags) {
    kv_trace_rec *r = &b->recs[b->n];
    r->key = key;
    r->start = start;
    r->intended = intended;
    r->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
    r->op = (uint8_t)op;
    r->flags = (uint8_t)flags;
    r->reserved = 0;
    return ++b->n == KV_TRACE_BUF_RECS ? kv_trace_flush(b) : 0;
}

/* One op to replay (24 bytes): key index, intended start in ns from the replay's start (already scaled by its
   speed; ignored at max speed), size and flags as kv_trace_rec's, op: enum kv_optype. */
typedef struct kv_replay_op {
    uint64_t key;
    int64_t at_ns;
    uint32_t size;
    uint8_t op;
    uint8_t flags;
    uint8_t pad[2];
} kv_replay_op;

typedef struct kv_replay {
    const kv_replay_op **ops;   /* per replay thread */
    const uint64_t *count;      /* per replay thread */
    int paced;                  /* 1: each op waits for its at_ns (latency from it too); 0: back to back */
} kv_replay;

#endif
