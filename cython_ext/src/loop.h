/* loop.h - what the driver's loop files share (driver.c, loops_dbbench.c, loop_mix.c, loop_crash.c):
 * the per-thread context, the one clock and op recording every loop uses, the instantiation macros
 * that keep the clock and key-size choices out of the hot loops, and the loops' entry points.
 * Private to cython_ext/src: the contract with Python is kv_driver.h.
 */
#ifndef KV_LOOP_H
#define KV_LOOP_H

#define _GNU_SOURCE   /* RUSAGE_THREAD */
#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kv_driver.h"
#include "kv_dist.h"
#include "kv_gen.h"
#include "kv_util.h"

typedef struct ctx {
    kv_run *run;
    kv_thread_result *res;
    kv_thread *t;
    kv_rng rng;
    char key[KV_KEY_MAX] __attribute__((aligned(64)));   /* a key never straddles a cache line (the engine's memcmp loads it whole) */
    size_t value_pos;
    uint64_t last;      /* latency clock at the end of the previous op */
    uint64_t deadline;  /* on the latency clock; UINT64_MAX when the run is bounded by count */
    kv_trace_buf *trace;    /* NULL unless the run records its ops (kv_trace.h) */
    uint64_t intended;      /* recording an open loop: the template's intended start (ticks; 0 = none) */
} ctx;

static inline int stopped(ctx *c) { return kv_run_stopped(c->run); }

static inline const char *next_value(ctx *c) {
    size_t vs = (size_t)c->run->p.value_size;
    if (c->value_pos + vs > c->run->values_len) c->value_pos = 0;
    const char *v = c->run->values + c->value_pos;
    c->value_pos += vs;
    return v;
}

#define KV_ALWAYS_INLINE static inline __attribute__((always_inline))

KV_ALWAYS_INLINE uint64_t clock_read(int tsc) { return tsc ? kv_tsc() : (uint64_t)kv_now_ns(); }

static inline uint64_t latency_clock(const kv_run *run) { return clock_read(run->p.use_tsc); }

/* The thread's ops so far: its progress counter, which only this thread writes. */
static inline uint64_t done_ops(const ctx *c) { return __atomic_load_n(&c->res->progress, __ATOMIC_RELAXED); }

/* The one timing path: every loop times its ops here (YCSB's DBWrapper times every call in one place).  An op
   ends at one reading of the latency clock, which is also the next op's start: the ticks since `*last` go into
   `hist` and `*last` moves on.  Returns the reading.  The hot loops pass `tsc` as a constant (KV_DISPATCH), and
   pointers to their own locals where they keep the last reading or the histogram in registers (loop_read_on),
   so after inlining this is the code they would write out in place. */
KV_ALWAYS_INLINE uint64_t time_op(kv_hist *hist, uint64_t *last, int tsc) {
    uint64_t now = clock_read(tsc);
    kv_hist_record(hist, now - *last);
    *last = now;
    return now;
}

/* Whether the run ends for this thread at latency-clock reading `now`: the deadline passed, or a stop was asked
   (`until` is 0 then: kv_driver.h). */
KV_ALWAYS_INLINE int past_until(const uint64_t *until, uint64_t now) {
    return now >= __atomic_load_n(until, __ATOMIC_RELAXED);
}

/* The thread's ops so far published as `done` (its progress counter, which only this thread writes and
   monitors read), then past_until. */
KV_ALWAYS_INLINE int publish_op(volatile uint64_t *progress, uint64_t done, const uint64_t *until, uint64_t now) {
    __atomic_store_n(progress, done, __ATOMIC_RELAXED);
    return past_until(until, now);
}

/* One finished op, counted: time_op, then publish_op.  Nonzero: the run ends for this thread. */
KV_ALWAYS_INLINE int end_op(kv_hist *hist, uint64_t *last, volatile uint64_t *progress, uint64_t done,
                            const uint64_t *until, int tsc) {
    return publish_op(progress, done, until, time_op(hist, last, tsc));
}

/* end_op on the thread's own state: `nops` more ops of type `optype`. */
KV_ALWAYS_INLINE int finish_op_on(ctx *c, int optype, uint64_t nops, int tsc) {
    return end_op(&c->res->hist[optype], &c->last, &c->res->progress, done_ops(c) + nops, &c->run->until, tsc);
}

static inline int finish_op(ctx *c, int optype, uint64_t nops) {
    return finish_op_on(c, optype, nops, c->run->p.use_tsc);
}

/* Instantiate a hot loop four times, for the clock (TSC or CLOCK_MONOTONIC) and for the default
   16-byte key against any other size, so neither choice is a branch in the loop.  `impl` takes
   (ctx *c, args..., int tsc, int key16).  KV_DISPATCH_IF: key16 where `key16` holds, for a loop whose
   caller also knows every index it makes a key of is below 10^16 (kv_make_key16: no range check). */
#define KV_DISPATCH_IF(key16, impl, c, ...)                                                 \
    ((c)->run->p.use_tsc                                                                    \
         ? ((key16) ? impl(c, __VA_ARGS__, 1, 1) : impl(c, __VA_ARGS__, 1, 0))             \
         : ((key16) ? impl(c, __VA_ARGS__, 0, 1) : impl(c, __VA_ARGS__, 0, 0)))
#define KV_DISPATCH(impl, c, ...) KV_DISPATCH_IF((c)->run->p.key_size == 16, impl, c, __VA_ARGS__)
#define KV_KEY16(c, below) ((c)->run->p.key_size == 16 && (below) <= KV_KEY16_LIMIT)

/* The key of `index`: kv_make_key16 where the loop is instantiated for key16 (KV_DISPATCH_IF). */
KV_ALWAYS_INLINE void make_key_on(char *key, int ks, uint64_t index, int key16) {
    if (key16) kv_make_key16(key, index);
    else kv_make_key(key, ks, index);
}

/* Recording: one op started at clock reading `start`, the loop's variable that its latency is timed from
   (intended: an open loop's intended start, or 0); a block written meanwhile moves `start` on by the write's
   time, which is the recorder's, not the op's.  Off: one predictable branch.  KV_TRACE_IF, for the hot loops
   instantiated with `rec` a constant (recording's own instantiations, so that the others carry no check at all),
   with the op's flags (kv_trace.h). */
#define KV_TRACE(c, op, key, size, start, intended_at)                                             \
    do {                                                                                         \
        if (__builtin_expect((c)->trace != NULL, 0))                                             \
            (start) += kv_trace_put((c)->trace, (op), (key), (size), (start), (intended_at), 0); \
    } while (0)
#define KV_TRACE_IF(rec, c, op, key, size, start, flags)                                 \
    do {                                                                               \
        if (rec) (start) += kv_trace_put((c)->trace, (op), (key), (size), (start), 0, (flags)); \
    } while (0)
/* trace.c: a thread's buffer (NULL off; on, an allocation failure stops the run), and its last block */
int kv_trace_thread_open(ctx *c, int index);
void kv_trace_thread_close(ctx *c);
/* loop_mix.c's wait for an open loop's intended start (nonzero: stopped while waiting) */
int kv_wait_until(ctx *c, uint64_t intended, int tsc);

/* An error ends the run: the code and the engine's error on the thread's result, and a stop for all. */
static inline int fail(ctx *c, int rc) {
    c->res->rc = rc;
    c->res->err = *kv_thread_error(c->t);
    kv_run_request_stop(c->run);
    return rc;
}

/* Transactions through the engine's txn_* calls, or, where an engine has none, its writes as one batch. */
static inline int txn_begin(const kv_engine_ops *e, kv_thread *t, int kind) {
    return e->txn_begin ? e->txn_begin(t, kind) : kind == KV_TXN_WRITE ? e->batch_begin(t) : KV_OK;
}
static inline int txn_commit(const kv_engine_ops *e, kv_thread *t, int kind) {
    return e->txn_begin ? e->txn_commit(t) : kind == KV_TXN_WRITE ? e->batch_commit(t) : KV_OK;
}
static inline void txn_abort(const kv_engine_ops *e, kv_thread *t, int kind) {
    if (e->txn_begin) e->txn_abort(t);
    else if (kind == KV_TXN_WRITE) e->batch_abort(t);
}

/* The loops, one per kind of run; each returns 0 or the error it recorded (fail). */
/* loops_dbbench.c: db_bench's fixed loops, readwhilewriting's writer, LinkBench's load */
int kv_loop_write(ctx *c, uint64_t first, uint64_t count, int sequential);
int kv_loop_delete(ctx *c, uint64_t count);
int kv_loop_read(ctx *c, uint64_t count, uint64_t offset, uint64_t span);
int kv_loop_readseq(ctx *c, uint64_t count);
int kv_loop_seek(ctx *c, uint64_t count);
int kv_loop_writer(ctx *c);
int kv_loop_compact(ctx *c);
int kv_loop_graphload(ctx *c, uint64_t first, uint64_t count);
int kv_loop_bulkload(ctx *c, uint64_t first, uint64_t count);
int kv_loop_readwrite(ctx *c, uint64_t count);
int kv_loop_update(ctx *c, uint64_t count);
int kv_loop_multiread(ctx *c, uint64_t count);
int kv_loop_fillseqdet(ctx *c, uint64_t first, uint64_t count);
/* loop_mix.c: the generic loop, a mix of transaction templates */
int kv_loop_mix(ctx *c);
/* loop_crash.c: kvlab crashtest's writer */
int kv_loop_crashwrite(ctx *c);
/* loop_replay.c: a trace's ops, each thread its own list */
int kv_loop_replay(ctx *c, int index);

#endif
