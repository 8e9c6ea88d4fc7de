/* The native workload loops.  Each thread owns its engine context, RNG,
 * key buffer and histograms; nothing is shared in the hot loop but the
 * read-only value buffer and `until` (deadline and stop in one word).  Time comes from CLOCK_MONOTONIC,
 * read once per operation (the end of one op is the start of the next).
 *
 * Meanings follow db_bench (see README "Workloads"):
 *  - write workloads split `num` keys across the threads;
 *  - read workloads do `reads` operations in every thread;
 *  - readwhilewriting runs `threads` readers plus one writer; the writer's
 *    stats are returned apart (role KV_ROLE_WRITER).
 */
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

typedef struct worker_arg {
    kv_run *run;
    int index;
} worker_arg;

typedef struct ctx {
    kv_run *run;
    kv_thread_result *res;
    kv_thread *t;
    kv_rng rng;
    char key[1024] __attribute__((aligned(64)));   /* a key never straddles a cache line (the engine's memcmp loads it whole) */
    size_t value_pos;
    uint64_t last;      /* latency clock at the end of the previous op */
    uint64_t deadline;  /* on the latency clock; UINT64_MAX when the run is bounded by count */
} ctx;

int kv_run_thread_count(const kv_run_params *p) {
    return p->threads + (p->workload == KV_W_READWHILEWRITING ? 1 : 0);
}

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

/* Record one finished op; returns nonzero when the run should end for this thread.  The hot
   loops pass `tsc` as a constant (see loop_read), so the clock choice costs nothing per op. */
KV_ALWAYS_INLINE int finish_op_on(ctx *c, int optype, uint64_t nops, int tsc) {
    uint64_t now = clock_read(tsc);
    kv_hist_record(&c->res->hist[optype], now - c->last);
    c->last = now;
    __atomic_store_n(&c->res->progress, done_ops(c) + nops, __ATOMIC_RELAXED);
    return now >= __atomic_load_n(&c->run->until, __ATOMIC_RELAXED);  /* deadline or stop */
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

static int fail(ctx *c, int rc) {
    c->res->rc = rc;
    memcpy(c->res->errmsg, kv_thread_errmsg(c->t), KV_ERRMSG_MAX);
    kv_run_request_stop(c->run);
    return rc;
}

/* --- the loops ---------------------------------------------------------- */

KV_ALWAYS_INLINE int loop_write_on(ctx *c, uint64_t first, uint64_t count, int sequential, int tsc, int key16) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = key16 ? 16 : p->key_size, vs = p->value_size, batch = p->batch > 1 ? p->batch : 1;
    int by_time = p->duration_s > 0;
    uint64_t i = 0, bytes = 0;
    int rc, err = 0;
    while (!err && (by_time || i < count)) {
        int n = batch;
        if (!by_time && count - i < (uint64_t)n) n = (int)(count - i);
        if (batch > 1 && (rc = e->batch_begin(c->t))) { err = rc; break; }
        for (int j = 0; j < n; j++, i++) {
            uint64_t idx = sequential ? (first + i) % p->num : kv_rng_below(&c->rng, p->num);
            if (p->key_hash) idx = kv_key_hash(idx);
            kv_make_key(c->key, ks, idx);
            if ((rc = e->put(c->t, c->key, ks, next_value(c), vs)) < 0) {
                if (batch > 1) e->batch_abort(c->t);
                err = rc;
                break;
            }
            bytes += ks + vs;
        }
        if (err) break;
        if (batch > 1 && (rc = e->batch_commit(c->t))) { err = rc; break; }
        if (finish_op_on(c, KV_OP_WRITE, n, tsc)) break;
    }
    c->res->bytes += bytes;
    return err ? fail(c, err) : 0;
}

static int loop_write(ctx *c, uint64_t first, uint64_t count, int sequential) {
    return KV_DISPATCH(loop_write_on, c, first, count, sequential);
}

static int loop_delete(ctx *c, uint64_t count) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int by_time = p->duration_s > 0;
    for (uint64_t i = 0; by_time || i < count; i++) {
        kv_make_key(c->key, p->key_size, kv_rng_below(&c->rng, p->num));
        int rc = e->del(c->t, c->key, p->key_size);
        if (rc < 0) return fail(c, rc);
        if (rc == KV_NOTFOUND) c->res->not_found++;
        else c->res->found++;
        if (finish_op(c, KV_OP_DELETE, 1)) break;
    }
    return 0;
}

/* readrandom / readmissing / readhot: `offset` shifts indices out of the key space
   (missing keys), `span` limits them (the hot 1%); key16: indices below offset + span <= 10^16.
   What the engine call cannot change is kept in
   locals (the generator, the clock's last reading, the counters, the pointers the loop stores through),
   so nothing is reloaded after the call; they go back to the thread's state at the end. */
KV_ALWAYS_INLINE int loop_read_on(ctx *c, uint64_t count, uint64_t offset, uint64_t span, int tsc, int key16) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    kv_thread *t = c->t;
    kv_thread_result *res = c->res;
    kv_hist *hist = &res->hist[KV_OP_READ];
    const uint64_t *until = &c->run->until;
    char *key = c->key;
    const int ks = key16 ? 16 : p->key_size;
    kv_rng rng = c->rng;
    const char *v;
    size_t vl;
    /* the progress counter is the loop's counter; gets found and their bytes follow from what was missed
       and the values' lengths */
    uint64_t missing = 0, value_bytes = 0, start = done_ops(c), done = start;
    const uint64_t end = p->duration_s > 0 ? UINT64_MAX : start + count;
    int rc, err = 0;
    while (done != end) {
        make_key_on(key, ks, offset + kv_rng_below(&rng, span), key16);
        rc = e->get(t, key, ks, &v, &vl);
        if (rc == KV_OK) value_bytes += vl;
        else if (rc == KV_NOTFOUND) missing++;
        else { err = rc; break; }
        uint64_t now = clock_read(tsc);   /* finish_op_on's recording, on the locals */
        kv_hist_record(hist, now - c->last);   /* c->last in memory: one register more for the generator */
        c->last = now;
        __atomic_store_n(&res->progress, ++done, __ATOMIC_RELAXED);
        if (now >= __atomic_load_n(until, __ATOMIC_RELAXED)) break;   /* deadline or stop */
    }
    uint64_t found = done - start - missing;
    c->rng = rng;
    res->found += found;
    res->not_found += missing;
    res->bytes += found * (uint64_t)ks + value_bytes;
    return err ? fail(c, err) : 0;
}

static int loop_read(ctx *c, uint64_t count, uint64_t offset, uint64_t span) {
    if (!offset)   /* readrandom, readhot: their own instantiations, without the add */
        return KV_DISPATCH_IF(KV_KEY16(c, span), loop_read_on, c, count, 0, span);
    return KV_DISPATCH_IF(KV_KEY16(c, span) && offset <= KV_KEY16_LIMIT - span, loop_read_on, c, count, offset, span);
}

static int loop_readseq(ctx *c, uint64_t count) {
    const kv_engine_ops *e = c->run->ops;
    int by_time = c->run->p.duration_s > 0;
    const char *k, *v;
    size_t kl, vl;
    int rc = e->iter_seek(c->t, NULL, 0, &k, &kl, &v, &vl);
    for (uint64_t i = 0; rc == KV_OK && (by_time || i < count); i++) {
        c->res->found++;
        c->res->bytes += kl + vl;
        if (finish_op(c, KV_OP_READ, 1)) break;
        rc = e->iter_next(c->t, &k, &kl, &v, &vl);
        if (rc == KV_NOTFOUND && by_time) rc = e->iter_seek(c->t, NULL, 0, &k, &kl, &v, &vl);  /* wrap */
    }
    e->iter_close(c->t);
    return rc < 0 ? fail(c, rc) : 0;
}

static int loop_seek(ctx *c, uint64_t count) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int by_time = p->duration_s > 0, ks = p->key_size;
    const char *k, *v;
    size_t kl, vl;
    for (uint64_t i = 0; by_time || i < count; i++) {
        kv_make_key(c->key, ks, kv_rng_below(&c->rng, p->num));
        int rc = e->iter_seek(c->t, c->key, ks, &k, &kl, &v, &vl);
        if (rc == KV_OK) {
            c->res->found++;
            c->res->bytes += kl + vl;
            for (int j = 0; j < p->seek_nexts && (rc = e->iter_next(c->t, &k, &kl, &v, &vl)) == KV_OK; j++)
                c->res->bytes += kl + vl;
        } else if (rc == KV_NOTFOUND) {
            c->res->not_found++;
        }
        e->iter_close(c->t);
        if (rc < 0) return fail(c, rc);
        if (finish_op(c, KV_OP_SEEK, 1)) break;
    }
    return 0;
}

/* readwhilewriting's writer: random overwrites until the readers finish, paced
   to writes_per_second by sleeping in slices of at most 100 ms. */
static int loop_writer(ctx *c) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = p->key_size, vs = p->value_size;
    int64_t start = kv_now_ns();
    while (__atomic_load_n(&c->run->workers_left, __ATOMIC_ACQUIRE) > 0 && !stopped(c)) {
        if (p->writes_per_second > 0) {
            int64_t now = kv_now_ns();
            double allowed = p->writes_per_second * (double)(now - start) / 1e9 + 1;
            if ((double)done_ops(c) >= allowed) {
                int64_t wait = (int64_t)(((double)done_ops(c) + 1 - allowed) / p->writes_per_second * 1e9);
                if (wait > 100000000) wait = 100000000;
                struct timespec ts = {wait / 1000000000, wait % 1000000000};
                nanosleep(&ts, NULL);
                c->last = latency_clock(c->run);  /* time spent throttled is not write latency */
                if (c->last >= c->deadline) break;
                continue;
            }
        }
        kv_make_key(c->key, ks, kv_rng_below(&c->rng, p->num));
        int rc = e->put(c->t, c->key, ks, next_value(c), vs);
        if (rc < 0) return fail(c, rc);
        c->res->bytes += ks + vs;
        if (finish_op(c, KV_OP_WRITE, 1)) break;
    }
    return 0;
}

static int loop_compact(ctx *c) {
    char err[KV_ERRMSG_MAX] = "";
    int rc = c->run->ops->compact(c->run->db, err);
    if (rc == KV_E_NOTSUP) rc = KV_OK;  /* nothing to compact: a zero-cost op, as db_bench on LMDB */
    if (rc) {
        c->res->rc = rc;
        memcpy(c->res->errmsg, err, KV_ERRMSG_MAX);
        return rc;
    }
    finish_op(c, KV_OP_COMPACT, 1);
    return 0;
}

/* --- the generic loop: a mix of transaction templates ---------------------------------------- */

/* A value of a size drawn in [value_min, value_max], a slice of the shared buffer. */
static inline const char *mix_value(ctx *c, const kv_mix *m, int *vs) {
    int n = m->value_min == m->value_max ? m->value_max
          : m->value_min + (int)kv_rng_below(&c->rng, (uint64_t)(m->value_max - m->value_min + 1));
    if (c->value_pos + (size_t)n > c->run->values_len) c->value_pos = 0;
    const char *v = c->run->values + c->value_pos;
    c->value_pos += (size_t)n;
    *vs = n;
    return v;
}

typedef struct {
    kv_dist dist[KV_MIX_MAX_DISTS];
    kv_dist len_zipf[KV_MIX_MAX_OPS];    /* per op with a zipfian length */
    uint64_t inserted;                  /* keys this thread inserted */
    uint64_t count;                     /* keys this thread takes the key space to hold */
    uint64_t op_count[KV_NOPTYPES];
    uint64_t found, missing, bytes;
    kv_graph_state *graph;              /* a mix of LinkBench operations: the graph's per-thread state */
} mix_state;

static inline int mix_length(ctx *c, mix_state *s, const kv_mix_op *op, int i) {
    switch (op->length_dist) {
    case KV_LEN_UNIFORM:
        return op->min_length + (int)kv_rng_below(&c->rng, (uint64_t)(op->length - op->min_length + 1));
    case KV_LEN_ZIPFIAN:
        return op->min_length + (int)kv_dist_next(&s->len_zipf[i], &c->rng, (uint64_t)(op->length - op->min_length + 1));
    default: return op->length;
    }
}

/* New keys (inserts) and nodes (add_node): thread t of T makes base + t, base + t + T, ..., so no two
   threads make the same one; each one made grows the key space the thread draws from by T. */
static inline uint64_t mix_new_id(const ctx *c, const mix_state *s, uint64_t base) {
    return base + (uint64_t)(c->res - c->run->results) + (uint64_t)c->run->p.threads * s->inserted;
}
static inline void mix_made_one(const ctx *c, mix_state *s) {
    s->inserted++;
    s->count = c->run->p.num + s->inserted * (uint64_t)c->run->p.threads;
}
/* A transaction that did not commit made nothing: its inserts (and new nodes) are not in the key space, and
   the next one makes the same ids again, so the ids a run makes stay contiguous per thread. */
static inline void mix_unmake(const ctx *c, mix_state *s, uint64_t inserted) {
    s->inserted = inserted;
    s->count = c->run->p.num + inserted * (uint64_t)c->run->p.threads;
}

/* A LinkBench operation on a node drawn from the op's distribution (shuffled over the loaded ids, as
   LinkBench shuffles its zipfian), or, for add_node, on a new node: thread t of T adds nodes + t,
   nodes + t + T, ... (as inserts do). */
static int graph_op(ctx *c, mix_state *s, const kv_mix_op *op) {
    const kv_run_params *p = &c->run->p;
    const kv_graph *g = p->graph;
    int rc;
    if (op->graph_op == KV_G_ADD_NODE) {
        rc = kv_graph_op(c->run->ops, c->t, g, s->graph, op->graph_op, mix_new_id(c, s, g->nodes),
                         &c->rng, c->run->values, c->run->values_len);
        if (rc == KV_OK) mix_made_one(c, s);
        return rc;
    }
    uint64_t i = kv_graph_shuffle(s->graph, g, kv_dist_next(&s->dist[op->dist], &c->rng, s->count));
    return kv_graph_op(c->run->ops, c->t, g, s->graph, op->graph_op, i, &c->rng, c->run->values,
                       c->run->values_len);
}

/* The key index an op draws from its distribution (YCSB's hashed insert order applied); inserts
   make theirs from the insert counter when they run. */
static inline uint64_t mix_index(ctx *c, mix_state *s, const kv_mix_op *op) {
    if (op->optype == KV_OP_INSERT) return 0;
    uint64_t idx = kv_dist_next(&s->dist[op->dist], &c->rng, s->count);
    return c->run->p.key_hash && op->optype != KV_OP_CLEAR_RANGE ? kv_key_hash(idx) : idx;
}

/* A get, an update and a delete of the key in c->key: the general loop's and the one-op loop's. */
KV_ALWAYS_INLINE int mix_get(ctx *c, mix_state *s, int ks) {
    const char *v;
    size_t vl;
    int rc = c->run->ops->get(c->t, c->key, ks, &v, &vl);
    if (rc == KV_OK) { s->found++; s->bytes += ks + vl; }
    else if (rc == KV_NOTFOUND) { s->missing++; rc = KV_OK; }
    return rc;
}
KV_ALWAYS_INLINE int mix_put(ctx *c, mix_state *s, const kv_mix *m, int ks) {
    int vs;
    const char *v = mix_value(c, m, &vs);
    s->bytes += ks + vs;
    return c->run->ops->put(c->t, c->key, ks, v, vs);
}
KV_ALWAYS_INLINE int mix_del(ctx *c, int ks) {
    int rc = c->run->ops->del(c->t, c->key, ks);
    return rc == KV_NOTFOUND ? KV_OK : rc;
}

/* One op of a transaction on key index idx; returns KV_OK or an error code. */
static int mix_op_at(ctx *c, mix_state *s, const kv_mix *m, const kv_mix_op *op, int i, uint64_t idx) {
    const kv_engine_ops *e = c->run->ops;
    int ks = c->run->p.key_size, vs, rc = KV_OK;
    const char *v, *k;
    size_t vl, kl;
    int hashed = c->run->p.key_hash;
    switch (op->optype) {
    case KV_OP_READ:
        kv_make_key(c->key, ks, idx);
        rc = mix_get(c, s, ks);
        break;
    case KV_OP_WRITE:
        kv_make_key(c->key, ks, idx);
        rc = mix_put(c, s, m, ks);
        break;
    case KV_OP_INSERT:
        idx = mix_new_id(c, s, c->run->p.num);
        kv_make_key(c->key, ks, hashed ? kv_key_hash(idx) : idx);
        v = mix_value(c, m, &vs);
        rc = e->put(c->t, c->key, ks, v, vs);
        if (rc == KV_OK) mix_made_one(c, s);
        s->bytes += ks + vs;
        break;
    case KV_OP_DELETE:
        kv_make_key(c->key, ks, idx);
        rc = mix_del(c, ks);
        break;
    case KV_OP_RMW:
        kv_make_key(c->key, ks, idx);
        rc = e->get(c->t, c->key, ks, &v, &vl);
        if (rc == KV_OK) { s->found++; s->bytes += ks + vl; }
        else if (rc == KV_NOTFOUND) { s->missing++; rc = KV_OK; }
        if (rc == KV_OK) {
            v = mix_value(c, m, &vs);
            rc = e->put(c->t, c->key, ks, v, vs);
            s->bytes += ks + vs;
        }
        break;
    case KV_OP_RANGE: case KV_OP_SCAN: {
        int len = mix_length(c, s, op, i), n = 0;
        char end[1024];
        int bounded = op->optype == KV_OP_RANGE && !hashed;   /* hashed keys: N keys on from the start, as a scan */
        if (bounded) kv_make_key(end, ks, idx + (uint64_t)len);
        kv_make_key(c->key, ks, idx);
        rc = e->iter_seek(c->t, c->key, ks, &k, &kl, &v, &vl);
        while (rc == KV_OK && n < len) {
            if (bounded && (kl != (size_t)ks || memcmp(k, end, (size_t)ks) >= 0)) break;
            n++;
            s->bytes += kl + vl;
            rc = e->iter_next(c->t, &k, &kl, &v, &vl);
        }
        e->iter_close(c->t);
        if (rc == KV_NOTFOUND) rc = KV_OK;
        s->found += (uint64_t)n;
        break;
    }
    case KV_OP_CLEAR_RANGE: {
        int len = mix_length(c, s, op, i);
        for (int j = 0; j < len && rc == KV_OK; j++) {
            kv_make_key(c->key, ks, hashed ? kv_key_hash(idx + (uint64_t)j) : idx + (uint64_t)j);
            rc = e->del(c->t, c->key, ks);
            if (rc == KV_NOTFOUND) rc = KV_OK;
        }
        break;
    }
    }
    return rc;
}

/* One op of a transaction, its key drawn now. */
static int mix_op(ctx *c, mix_state *s, const kv_mix *m, const kv_mix_op *op, int i) {
    if (op->optype == KV_OP_GRAPH) return graph_op(c, s, op);
    return mix_op_at(c, s, m, op, i, mix_index(c, s, op));
}

/* A template, by weight, from generator r (the thread's, or the draw-ahead loop's own copy of it). */
KV_ALWAYS_INLINE int pick_from(kv_rng *r, const kv_mix *m) {
    int ti = 0;
    if (m->ntxns > 1) {
        double u = kv_unit(r);
        while (ti < m->ntxns - 1 && u >= m->txns[ti].cum) ti++;
    }
    return ti;
}
static inline int mix_pick(ctx *c, const kv_mix *m) { return pick_from(&c->rng, m); }

static inline int retryable(int rc) { return rc == KV_E_CONFLICT || rc == KV_E_BUSY; }

/* Open loop: wait for `intended` (latency-clock ticks): sleep while it is far (in slices of at most
   100 ms, so a stop is seen), then spin the last KV_SPIN_NS: a wake-up from nanosleep comes tens to
   hundreds of microseconds late on a VM, which would show up as start lag.  Returns nonzero if the
   run was stopped while waiting. */
#define KV_SPIN_NS 250000.0
static int wait_until(ctx *c, uint64_t intended, int tsc) {
    double ns_per_tick = c->run->ns_per_tick;
    for (;;) {
        uint64_t now = clock_read(tsc);
        if (now >= intended) return 0;
        if (now >= __atomic_load_n(&c->run->until, __ATOMIC_RELAXED)) return 1;
        double left_ns = (double)(intended - now) * ns_per_tick;
        if (left_ns > KV_SPIN_NS + 50000) {
            double nap = left_ns - KV_SPIN_NS < 1e8 ? left_ns - KV_SPIN_NS : 1e8;
            struct timespec ts = {(time_t)(nap / 1e9), (long)((int64_t)nap % 1000000000)};
            nanosleep(&ts, NULL);
        } else {
            __builtin_ia32_pause();
        }
    }
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

/* A key index from distribution d (kind: as simple_draw), YCSB's hashed insert order applied. */
KV_ALWAYS_INLINE uint64_t kv_key_index_drawn(kv_dist *d, kv_rng *r, uint64_t count, int kind, int hashed) {
    uint64_t idx = kind == KV_DIST_ZIPFIAN ? kv_dist_zipfian(d, r, count)
                 : kind == KV_DIST_UNIFORM ? kv_rng_below(r, count) : kv_dist_next(d, r, count);
    return hashed ? kv_key_hash(idx) : idx;
}
KV_ALWAYS_INLINE uint64_t simple_draw(mix_state *s, kv_rng *r, const kv_mix_op *op, int kind, int hashed) {
    if (op->optype == KV_OP_INSERT) return 0;   /* an insert makes its key from the insert counter */
    return kv_key_index_drawn(kind >= 0 ? &s->dist[0] : &s->dist[op->dist], r, s->count, kind, hashed);
}

/* A one-op template in the transaction it needs: begin, the op, commit; a conflict runs it again from its
   start (its key drawn again), after a backoff.  `kind`: the distribution kind the caller is instantiated
   for (simple_draw), or KV_ANY_KIND for the general loop's draw (mix_op, the op's own distribution). */
#define KV_ANY_KIND (-2)
KV_ALWAYS_INLINE int one_op_in_txn(ctx *c, mix_state *s, const kv_mix *m, const kv_mix_txn *tx, uint64_t n, int kind) {
    const kv_engine_ops *e = c->run->ops;
    const kv_mix_op *op = &m->ops[tx->first];
    uint64_t jitter = (uint64_t)(uintptr_t)s ^ n, inserted = s->inserted;
    int rc;
    for (int attempt = 0;; attempt++) {
        rc = txn_begin(e, c->t, tx->txn);
        if (rc == KV_OK) {
            rc = kind == KV_ANY_KIND ? mix_op(c, s, m, op, tx->first)
               : mix_op_at(c, s, m, op, tx->first, simple_draw(s, &c->rng, op, kind, c->run->p.key_hash));
            s->op_count[op->optype]++;
        }
        if (rc == KV_OK) rc = txn_commit(e, c->t, tx->txn);
        else txn_abort(e, c->t, tx->txn);
        if (rc == KV_OK) return rc;
        mix_unmake(c, s, inserted);
        if (!retryable(rc) || attempt >= m->max_retries) return rc;
        c->res->retries++;
        kv_backoff(&jitter, attempt + 1);
    }
}

/* A one-op template done (closed loop: one clock read, its op's histogram, started when the last one
   ended): returns KV_OK to go on, KV_MIX_STOP to stop (deadline or stop asked), or the code of the error
   that ends the run (any code other than KV_OK and a retryable one, as the general loop treats it). */
#define KV_MIX_STOP 0x7fff   /* no engine returns it */
KV_ALWAYS_INLINE int one_op_done(ctx *c, int optype, int ti, int rc, int tsc) {
    if (rc != KV_OK) {
        if (!retryable(rc)) return rc;
        c->res->aborts++;   /* given up after max_retries (or the adapter's own retries) */
    }
    uint64_t t1 = clock_read(tsc);
    kv_hist_record(&c->res->hist[optype], t1 - c->last);
    c->res->txn_count[ti]++;
    c->last = t1;
    __atomic_store_n(&c->res->progress, done_ops(c) + 1, __ATOMIC_RELAXED);
    return t1 >= __atomic_load_n(&c->run->until, __ATOMIC_RELAXED) ? KV_MIX_STOP : KV_OK;
}

/* The closed loop of a mix whose templates are each one op (alone or in the transaction it needs): YCSB
   A-F.  The same draws in the same order, so the same stream and the same results, as the general loop
   below; it exists because it is measurably faster (benchmarks/mix_loop.py): it is instantiated per
   distribution kind where the mix has one distribution (the draw's switch folded into the loop) and per
   clock.  Where it can, it draws ahead (loop_mix_ahead_on). */
KV_ALWAYS_INLINE int loop_mix_simple_on(ctx *c, mix_state *s, int kind, int tsc) {
    const kv_run_params *p = &c->run->p;
    const kv_mix *m = p->mix;
    int by_time = p->duration_s > 0, hashed = p->key_hash;
    for (uint64_t n = 0; by_time || n < p->reads; n++) {
        int ti = mix_pick(c, m), rc;
        const kv_mix_txn *tx = &m->txns[ti];
        const kv_mix_op *op = &m->ops[tx->first];
        if (!tx->txn) {
            rc = mix_op_at(c, s, m, op, tx->first, simple_draw(s, &c->rng, op, kind, hashed));
            s->op_count[op->optype]++;
        } else {
            rc = one_op_in_txn(c, s, m, tx, n, kind);
        }
        if ((rc = one_op_done(c, op->optype, ti, rc, tsc)) != KV_OK) return rc == KV_MIX_STOP ? KV_OK : rc;
    }
    return KV_OK;
}

/* The one-op loop drawing ahead: every template a read, a delete or a write of the one value size, none in
   a transaction, so nothing draws but the template pick and the key, and the key count never changes.  The
   next template and key are drawn before this op runs, so the CPU overlaps the draw (a chain of dependent
   arithmetic: a zipfian is a power, an FNV hash and a modulo, YCSB's key one more hash) with the op.  The
   same draws in the same order as the general loop.  What the engine call cannot change is kept in locals
   (the generator, the counters, each template's op and distribution), so the loop reloads nothing after
   the call; the counters go back to the thread's state at the end.  `only_read`: the mix is one template,
   a read (YCSB-C), so the loop has no pick and no branch on the op. */
KV_ALWAYS_INLINE int loop_mix_ahead_on(ctx *c, mix_state *s, int kind, int only_read, int tsc, int key16) {
    const kv_run_params *p = &c->run->p;
    const kv_mix *m = p->mix;
    const kv_engine_ops *e = c->run->ops;
    kv_thread *t = c->t;
    kv_thread_result *res = c->res;
    const uint64_t *until = &c->run->until;
    uint64_t *txn_count = res->txn_count;
    char *key = c->key;
    const int ks = key16 ? 16 : p->key_size, hashed = p->key_hash, ntxns = m->ntxns;
    const uint64_t limit = p->duration_s > 0 ? UINT64_MAX : p->reads, count = s->count;
    int optype[KV_MIX_MAX_TXNS];
    kv_dist *dist[KV_MIX_MAX_TXNS];
    for (int ti = 0; ti < ntxns; ti++) {
        const kv_mix_op *op = &m->ops[m->txns[ti].first];
        optype[ti] = op->optype;
        dist[ti] = &s->dist[kind >= 0 ? 0 : op->dist];   /* kind >= 0: the mix's one distribution */
    }
    kv_rng rng = c->rng;
    uint64_t found = 0, missing = 0, bytes = 0, last = c->last, progress = done_ops(c);
    int rc = KV_OK;
#define KV_AHEAD_DRAW(ti) kv_key_index_drawn(dist[ti], &rng, count, kind, hashed)
    int ti = only_read ? 0 : pick_from(&rng, m);
    uint64_t idx = KV_AHEAD_DRAW(ti);
    for (uint64_t n = 0; n < limit; n++) {
        int op = only_read ? KV_OP_READ : optype[ti], next_ti = only_read ? 0 : pick_from(&rng, m);
        uint64_t next_idx = KV_AHEAD_DRAW(next_ti);
        make_key_on(key, ks, idx, key16);
        if (op == KV_OP_READ) {
            const char *v;
            size_t vl;
            rc = e->get(t, key, ks, &v, &vl);
            if (rc == KV_OK) { found++; bytes += ks + vl; }
            else if (rc == KV_NOTFOUND) { missing++; rc = KV_OK; }
        } else if (op == KV_OP_WRITE) {
            int vs;
            const char *v = mix_value(c, m, &vs);   /* one value size: draws nothing */
            bytes += ks + vs;
            rc = e->put(t, key, ks, v, vs);
        } else {
            rc = mix_del(c, ks);
        }
        if (rc != KV_OK) {
            if (!retryable(rc)) { s->op_count[op]++; break; }   /* the op that ended the run, counted as the general loop does */
            res->aborts++;
            rc = KV_OK;
        }
        uint64_t t1 = clock_read(tsc);
        kv_hist_record(&res->hist[op], t1 - last);
        txn_count[ti]++;
        last = t1;
        __atomic_store_n(&res->progress, progress + n + 1, __ATOMIC_RELAXED);
        if (t1 >= __atomic_load_n(until, __ATOMIC_RELAXED)) break;   /* deadline or stop */
        ti = next_ti;
        idx = next_idx;
    }
#undef KV_AHEAD_DRAW
    for (int i = 0; i < ntxns; i++) s->op_count[optype[i]] += txn_count[i];
    c->rng = rng;
    c->last = last;
    s->found += found;
    s->missing += missing;
    s->bytes += bytes;
    return rc;
}

/* The one-op loop, instantiated for the clock; drawing ahead, for the clock and the key size (KV_DISPATCH),
   and for YCSB-C's one read where its distribution is YCSB's zipfian or uniform. */
#define KV_SIMPLE_KIND(c, s, kind, ahead)                                                      \
    ((ahead) ? KV_DISPATCH_IF(AHEAD_KEY16(c, s), loop_mix_ahead_on, c, s, kind, 0)            \
             : (c)->run->p.use_tsc ? loop_mix_simple_on(c, s, kind, 1) : loop_mix_simple_on(c, s, kind, 0))
#define KV_ONLY_READ(c, s, kind, ahead)                                                        \
    ((ahead) && only_read(c->run->p.mix) ? KV_DISPATCH_IF(AHEAD_KEY16(c, s), loop_mix_ahead_on, c, s, kind, 1) \
                                         : KV_SIMPLE_KIND(c, s, kind, ahead))
/* Drawing ahead, no op changes the key count: every index is below it, or hashed below 10^16. */
#define AHEAD_KEY16(c, s) KV_KEY16(c, (c)->run->p.key_hash ? 0 : (s)->count)

static inline int only_read(const kv_mix *m) { return m->ntxns == 1 && m->ops[m->txns[0].first].optype == KV_OP_READ; }

static int loop_mix_simple(ctx *c, mix_state *s, int ahead) {
    const kv_mix *m = c->run->p.mix;
    switch (m->ndists == 1 ? m->dists[0].kind : -1) {   /* -1: kv_dist_next, from each op's own distribution */
    case KV_DIST_ZIPFIAN: return KV_ONLY_READ(c, s, KV_DIST_ZIPFIAN, ahead);
    case KV_DIST_UNIFORM: return KV_ONLY_READ(c, s, KV_DIST_UNIFORM, ahead);
    default: return KV_SIMPLE_KIND(c, s, -1, ahead);
    }
}

/* Closed loop: each thread (client) runs transactions back to back, picking a template by weight.
   A template runs in one engine transaction (kv_engine.h: a snapshot for its reads, its writes
   atomic at commit); a conflict aborts it and runs it again from its start, after a backoff. */
static int loop_mix(ctx *c) {
    const kv_run_params *p = &c->run->p;
    const kv_mix *m = p->mix;
    const kv_engine_ops *e = c->run->ops;
    int tsc = p->use_tsc, by_time = p->duration_s > 0;
    int index = (int)(c->res - c->run->results);
    mix_state *s = calloc(1, sizeof *s);
    if (!s) return fail(c, KV_E_OTHER);
    if (p->graph) {
        if (!(s->graph = malloc(sizeof *s->graph))) { free(s); return fail(c, KV_E_OTHER); }
        kv_graph_state_init(s->graph, p->graph);
    }
    s->count = p->num;
    for (int d = 0; d < m->ndists; d++) {
        const kv_mix_dist *md = &m->dists[d];
        uint64_t modulus = md->kind == KV_DIST_ZIPFIAN ? p->num + md->expected_inserts + 1 : 0;
        kv_dist_init(&s->dist[d], md->kind, p->num, md->theta, modulus, md->hot_fraction, md->hot_ops,
                     md->percentile, md->frac, index, p->threads);
    }
    for (int i = 0; i < m->nops; i++)
        if (m->ops[i].length_dist == KV_LEN_ZIPFIAN)
            kv_dist_init(&s->len_zipf[i], KV_DIST_ZIPFIAN_PLAIN, (uint64_t)(m->ops[i].length - m->ops[i].min_length + 1),
                         0.99, 0, 0, 0, 0, 0, 0, 1);
    int err = 0, open = m->interval_ns > 0;
    if (open) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* wake as asked, not up to 50 us later */
    double gap_ticks = m->interval_ns / c->run->ns_per_tick;
    /* clients start a random fraction of a gap apart, so they do not arrive in step */
    uint64_t next_start = c->last + (open ? (uint64_t)(kv_unit(&c->rng) * gap_ticks) : 0);
    /* one clock read per op: the end of one op is the start of the next, and the end of one
       transaction the start of the next (closed loop); a commit adds one */
    /* Every template one op (YCSB A-F): the one-op loop, which also draws ahead where it can, unless the
       run is open-loop or asks for this loop (no_pipeline: tests compare the two). */
    int simple = !open && !p->no_pipeline;
    for (int ti = 0; ti < m->ntxns && simple; ti++) simple = m->txns[ti].simple;
    for (int i = 0; i < m->nops && simple; i++)
        simple = m->ops[i].optype != KV_OP_GRAPH && m->ops[i].optype != KV_OP_CLEAR_RANGE;
    if (simple) {
        /* ahead: the ops draw nothing but their key and none changes the key count (reads, deletes, writes
           of one value size, no transaction), so drawing the next key first keeps the draws in order */
        int ahead = 1;
        for (int ti = 0; ti < m->ntxns && ahead; ti++) {
            const kv_mix_op *op = &m->ops[m->txns[ti].first];
            ahead = !m->txns[ti].txn && (op->optype == KV_OP_READ || op->optype == KV_OP_DELETE ||
                                         (op->optype == KV_OP_WRITE && m->value_min == m->value_max));
        }
        err = loop_mix_simple(c, s, ahead);
    }
    for (uint64_t n = 0; !simple && (by_time || n < p->reads); n++) {
        int ti = mix_pick(c, m);
        const kv_mix_txn *tx = &m->txns[ti];
        uint64_t t0 = c->last, intended = 0;
        if (tx->simple && !open) {   /* one op, in the transaction it needs alone if any: one clock read, one histogram */
            const kv_mix_op *op = &m->ops[tx->first];
            int rc;
            if (!tx->txn) {
                rc = mix_op(c, s, m, op, tx->first);
                s->op_count[op->optype]++;
            } else {
                rc = one_op_in_txn(c, s, m, tx, n, KV_ANY_KIND);
            }
            if ((rc = one_op_done(c, op->optype, ti, rc, tsc)) != KV_OK) {
                if (rc != KV_MIX_STOP) err = rc;
                break;
            }
            continue;
        }
        if (open) {   /* start on the schedule fixed in advance, not when the last one ended */
            intended = next_start;
            double gap = m->poisson ? -log(1.0 - kv_unit(&c->rng)) * gap_ticks : gap_ticks;
            next_start += (uint64_t)gap;
            if (wait_until(c, intended, tsc)) break;   /* stopped while waiting */
            t0 = clock_read(tsc);
            kv_hist_record(&c->res->hist[KV_OP_LAG], t0 > intended ? t0 - intended : 0);
        }
        uint64_t before = t0;
        int attempt = 0, rc;
        uint64_t jitter = (uint64_t)(uintptr_t)s ^ n, inserted = s->inserted;
        for (;;) {
            rc = tx->txn ? txn_begin(e, c->t, tx->txn) : KV_OK;
            for (int i = tx->first; rc == KV_OK && i < tx->first + tx->nops; i++) {
                const kv_mix_op *op = &m->ops[i];
                for (int r = 0; r < op->count && rc == KV_OK; r++) {
                    rc = mix_op(c, s, m, op, i);
                    uint64_t after = clock_read(tsc);
                    kv_hist_record(&c->res->hist[op->optype], after - before);
                    s->op_count[op->optype]++;
                    before = after;
                }
            }
            if (tx->txn) {
                if (rc == KV_OK) rc = txn_commit(e, c->t, tx->txn);
                else txn_abort(e, c->t, tx->txn);
                before = clock_read(tsc);
            }
            if (rc == KV_OK) break;
            mix_unmake(c, s, inserted);
            if (!retryable(rc) || attempt >= m->max_retries) break;
            attempt++;
            c->res->retries++;
            kv_backoff(&jitter, attempt);
            before = clock_read(tsc);
        }
        if (rc != KV_OK) {
            if (retryable(rc)) { c->res->aborts++; rc = KV_OK; }   /* given up after max_retries: counted */
            else { err = rc; break; }
        }
        uint64_t t1 = before;
        c->res->txn_count[ti]++;
        kv_hist_record(&c->res->txn_hist[ti], t1 - t0);
        kv_hist_record(&c->res->hist[KV_OP_TXN], t1 - t0);
        if (open) {
            kv_hist_record(&c->res->txn_hist[m->ntxns + ti], t1 - intended);
            kv_hist_record(&c->res->hist[KV_OP_RESPONSE], t1 - intended);
        }
        c->last = t1;
        __atomic_store_n(&c->res->progress, done_ops(c) + 1, __ATOMIC_RELAXED);
        if (t1 >= __atomic_load_n(&c->run->until, __ATOMIC_RELAXED)) break;   /* deadline or stop */
    }
    for (int j = 0; j < KV_NOPTYPES; j++)
        if (j != KV_OP_TXN) c->res->ops[j] = s->op_count[j];
    if (!open)   /* a simple template's transactions are its op: the same histogram */
        for (int ti = 0; ti < m->ntxns; ti++) {
            if (!m->txns[ti].simple) continue;
            const kv_hist *h = &c->res->hist[m->ops[m->txns[ti].first].optype];
            kv_hist *th = &c->res->txn_hist[ti], *all = &c->res->hist[KV_OP_TXN];
            memcpy(th->buckets, h->buckets, sizeof h->buckets);
            th->max = h->max;
            for (int i = 0; i < KV_HIST_BUCKETS; i++) all->buckets[i] += h->buckets[i];
            if (h->max > all->max) all->max = h->max;
        }
    for (int ti = 0; ti < 2 * m->ntxns; ti++) kv_hist_finish(&c->res->txn_hist[ti]);
    if (open) { kv_hist_finish(&c->res->hist[KV_OP_RESPONSE]); kv_hist_finish(&c->res->hist[KV_OP_LAG]); }
    if (s->graph) {
        s->found += s->graph->found;
        s->missing += s->graph->missing;
        s->bytes += s->graph->bytes;
        c->res->graph_listed = s->graph->links_listed;
        free(s->graph);
    }
    c->res->found += s->found;
    c->res->not_found += s->missing;
    c->res->bytes += s->bytes;
    free(s);
    return err ? fail(c, err) : 0;
}

/* LinkBench's load: this thread's share of the node ids, each node with its links and counts, in
   batches (kv_graph_load); one histogram entry and one progress step per batch, counting its writes. */
static int graph_load_progress(void *arg, uint64_t writes) {
    ctx *c = arg;
    return finish_op(c, KV_OP_WRITE, writes);
}

static int loop_graphload(ctx *c, uint64_t first, uint64_t count) {
    const kv_graph *g = c->run->p.graph;
    kv_graph_state *s = malloc(sizeof *s);
    if (!g || !s) {
        free(s);
        snprintf(c->res->errmsg, KV_ERRMSG_MAX, "graphload needs a graph (kvlab.model.workloads.linkbench)");
        c->res->rc = KV_E_CONFIG;
        kv_run_request_stop(c->run);
        return KV_E_CONFIG;
    }
    kv_graph_state_init(s, g);
    int rc = kv_graph_load(c->run->ops, c->t, g, s, first, count, &c->rng, c->run->values, c->run->values_len,
                           graph_load_progress, c);
    c->res->graph_nodes = s->nodes_loaded;
    c->res->graph_links = s->links_loaded;
    c->res->bytes += s->bytes;
    free(s);
    return rc ? fail(c, rc) : 0;
}

/* kvlab crashtest's child: transactions of `batch` puts and deletes (one in ten) of random keys in
   [0, num), values stamped with (seq, position); each transaction's content goes down ack_fd before
   it starts and its sequence number after the engine acknowledged the commit (kv_driver.h).  One op
   (batch 1) is a plain put or delete; more are one write transaction. */
static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int loop_crashwrite(ctx *c) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = p->key_size, vs = p->value_size, batch = p->batch > 1 ? p->batch : 1, tsc = p->use_tsc;
    if (batch > KV_CRASH_MAX_BATCH || vs < 12 || p->num < 1) {
        snprintf(c->res->errmsg, KV_ERRMSG_MAX, "crashwrite: batch must be 1..%d, value_size >= 12, num >= 1",
                 KV_CRASH_MAX_BATCH);
        c->res->rc = KV_E_CONFIG;
        return KV_E_CONFIG;
    }
    uint64_t rec[3 + KV_CRASH_MAX_BATCH];
    char *val = malloc((size_t)vs);
    if (!val) return fail(c, KV_E_OTHER);
    memcpy(val, next_value(c), (size_t)vs);
    int err = 0, by_time = p->duration_s > 0;
    for (uint64_t n = 0; !err && (by_time || n < p->reads); n++) {
        uint64_t seq = p->first_seq + n;
        rec[0] = KV_CRASH_INTENT; rec[1] = seq; rec[2] = (uint64_t)batch;
        for (int j = 0; j < batch; j++)
            rec[3 + j] = kv_rng_below(&c->rng, p->num) << 1 | (kv_rng_below(&c->rng, 10) == 0);
        if (write_all(p->ack_fd, rec, (size_t)(3 + batch) * 8)) { err = KV_E_IO; break; }
        int rc = batch > 1 ? txn_begin(e, c->t, KV_TXN_WRITE) : KV_OK;
        for (int j = 0; rc == KV_OK && j < batch; j++) {
            kv_make_key(c->key, ks, rec[3 + j] >> 1);
            if (rec[3 + j] & 1) {
                rc = e->del(c->t, c->key, ks);
                if (rc == KV_NOTFOUND) rc = KV_OK;
            } else {
                uint32_t pos = (uint32_t)j;
                memcpy(val, &seq, 8);
                memcpy(val + 8, &pos, 4);
                rc = e->put(c->t, c->key, ks, val, vs);
            }
        }
        if (batch > 1) {
            if (rc == KV_OK) rc = txn_commit(e, c->t, KV_TXN_WRITE);
            else txn_abort(e, c->t, KV_TXN_WRITE);
        }
        if (rc) { err = rc; break; }
        rec[0] = KV_CRASH_ACK; rec[1] = seq;
        if (write_all(p->ack_fd, rec, 16)) { err = KV_E_IO; break; }
        if (finish_op_on(c, KV_OP_WRITE, (uint64_t)batch, tsc)) break;
    }
    free(val);
    if (err == KV_E_IO && !c->res->rc) {
        snprintf(c->res->errmsg, KV_ERRMSG_MAX, "crashwrite: writing to the acknowledgement pipe failed: %s",
                 strerror(errno));
        c->res->rc = KV_E_IO;
        return KV_E_IO;
    }
    return err ? fail(c, err) : 0;
}

static void *worker(void *arg) {
    worker_arg *a = arg;
    kv_run *run = a->run;
    const kv_run_params *p = &run->p;
    ctx c;
    memset(&c, 0, sizeof c);
    c.run = run;
    c.res = &run->results[a->index];
    int writer = a->index >= p->threads;
    c.res->role = writer ? KV_ROLE_WRITER : KV_ROLE_WORKER;
    char err[KV_ERRMSG_MAX] = "";
    int rc = run->ops->thread_open(run->db, &c.t, err);
    if (rc) {
        c.res->rc = rc;
        memcpy(c.res->errmsg, err, KV_ERRMSG_MAX);
        kv_run_request_stop(run);
    }
    int is_write = p->workload == KV_W_FILLSEQ || p->workload == KV_W_FILLRANDOM ||
                   p->workload == KV_W_OVERWRITE || p->workload == KV_W_DELETERANDOM ||
                   p->workload == KV_W_CRASHWRITE || p->workload == KV_W_GRAPHLOAD;
    kv_rng_seed(&c.rng, p->seed, writer ? KV_STREAM_WRITER : is_write ? KV_STREAM_WRITE : KV_STREAM_READ, a->index);
    for (int j = 0; j < KV_NOPTYPES; j++) kv_hist_init(&c.res->hist[j]);
    static const int optype_of[KV_W__COUNT] = {
        [KV_W_FILLSEQ] = KV_OP_WRITE, [KV_W_FILLRANDOM] = KV_OP_WRITE, [KV_W_OVERWRITE] = KV_OP_WRITE,
        [KV_W_READRANDOM] = KV_OP_READ, [KV_W_READSEQ] = KV_OP_READ, [KV_W_SEEKRANDOM] = KV_OP_SEEK,
        [KV_W_DELETERANDOM] = KV_OP_DELETE, [KV_W_READWHILEWRITING] = KV_OP_READ,
        [KV_W_READMISSING] = KV_OP_READ, [KV_W_READHOT] = KV_OP_READ, [KV_W_COMPACT] = KV_OP_COMPACT,
        [KV_W_MIX] = KV_OP_TXN, [KV_W_CRASHWRITE] = KV_OP_WRITE, [KV_W_GRAPHLOAD] = KV_OP_WRITE,
    };
    c.res->optype = writer ? KV_OP_WRITE : optype_of[p->workload];
    c.value_pos = ((size_t)a->index * 7919u * (size_t)p->value_size) % (run->values_len - p->value_size);

    /* this thread's share of the key space for write workloads */
    uint64_t first = p->num * (uint64_t)a->index / (uint64_t)p->threads;
    uint64_t share = p->num * (uint64_t)(a->index + 1) / (uint64_t)p->threads - first;

    pthread_mutex_lock(&run->gate);
    run->ready++;
    pthread_cond_broadcast(&run->gate_cond);
    while (!run->go) pthread_cond_wait(&run->gate_cond, &run->gate);
    pthread_mutex_unlock(&run->gate);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_THREAD, &ru0);
    c.res->t_start_ns = kv_now_ns();
    c.last = latency_clock(run);
    c.deadline = run->deadline_ticks ? run->deadline_ticks : UINT64_MAX;
    if (!rc && !stopped(&c)) {
        switch (writer ? -1 : p->workload) {
        case -1: loop_writer(&c); break;
        case KV_W_FILLSEQ: loop_write(&c, first, share, 1); break;
        case KV_W_FILLRANDOM: case KV_W_OVERWRITE: loop_write(&c, first, share, 0); break;
        case KV_W_DELETERANDOM: loop_delete(&c, share); break;
        case KV_W_READRANDOM: case KV_W_READWHILEWRITING: loop_read(&c, p->reads, 0, p->num); break;
        case KV_W_READMISSING: loop_read(&c, p->reads, p->num, p->num); break;
        case KV_W_READHOT: loop_read(&c, p->reads, 0, p->num / 100 ? p->num / 100 : 1); break;
        case KV_W_READSEQ: loop_readseq(&c, p->reads); break;
        case KV_W_SEEKRANDOM: loop_seek(&c, p->reads); break;
        case KV_W_COMPACT: if (a->index == 0) loop_compact(&c); break;
        case KV_W_MIX: loop_mix(&c); break;
        case KV_W_CRASHWRITE: if (a->index == 0) loop_crashwrite(&c); break;
        case KV_W_GRAPHLOAD: loop_graphload(&c, first, share); break;
        }
    }
    c.res->t_end_ns = kv_now_ns();
    c.res->ops[c.res->optype] = done_ops(&c);
    /* only the histograms this thread recorded into (a scan of 4,864 buckets each otherwise) */
    for (int j = 0; j < KV_NOPTYPES; j++)
        if (j == c.res->optype || c.res->ops[j]) kv_hist_finish(&c.res->hist[j]);
    getrusage(RUSAGE_THREAD, &ru1);
    c.res->cpu_user_ns = (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) * 1000000000ll +
                         (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) * 1000ll;
    c.res->cpu_sys_ns = (ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) * 1000000000ll +
                        (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) * 1000ll;
    c.res->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
    c.res->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
    if (!writer) __atomic_sub_fetch(&run->workers_left, 1, __ATOMIC_RELEASE);
    if (c.t) run->ops->thread_close(c.t);
    return NULL;
}

int kv_run_execute(kv_run *run) {
    const kv_run_params *p = &run->p;
    int n = kv_run_thread_count(p);
    run->nthreads = n;
    run->workers_left = p->threads;
    run->values_len = KV_VALUE_BUFFER > (size_t)p->value_size * 4 ? KV_VALUE_BUFFER : (size_t)p->value_size * 4;
    run->values = malloc(run->values_len);
    pthread_t *tids = calloc((size_t)n, sizeof *tids);
    worker_arg *args = calloc((size_t)n, sizeof *args);
    if (!run->values || !tids || !args) { free(run->values); free(tids); free(args); return KV_E_OTHER; }
    kv_fill_values(run->values, run->values_len, p->compression_ratio, p->seed);
    if (!KV_HAVE_TSC) run->p.use_tsc = 0;
    run->ns_per_tick = 1.0;
    if (run->p.use_tsc) {  /* calibrate the TSC against CLOCK_MONOTONIC over 20 ms */
        int64_t n0 = kv_now_ns();
        uint64_t t0 = kv_tsc();
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        int64_t n1 = kv_now_ns();
        uint64_t t1 = kv_tsc();
        run->ns_per_tick = t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0;
    }
    pthread_mutex_init(&run->gate, NULL);
    pthread_cond_init(&run->gate_cond, NULL);
    run->ready = run->go = 0;

    int started = 0, rc = 0;
    for (; started < n; started++) {
        args[started].run = run;
        args[started].index = started;
        if (pthread_create(&tids[started], NULL, worker, &args[started])) {
            rc = KV_E_OTHER;
            kv_run_request_stop(run);  /* the threads already started exit at once */
            break;
        }
    }
    /* all threads open their engine contexts first, then start together */
    pthread_mutex_lock(&run->gate);
    while (run->ready < started) pthread_cond_wait(&run->gate_cond, &run->gate);
    run->deadline_ticks = p->duration_s > 0 ? latency_clock(run) + (uint64_t)(p->duration_s * 1e9 / run->ns_per_tick) : 0;
    uint64_t unset = KV_UNTIL_UNSET;  /* fails, leaving 0, if a stop came first */
    __atomic_compare_exchange_n(&run->until, &unset, run->deadline_ticks ? run->deadline_ticks : UINT64_MAX, 0,
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    run->go = 1;
    pthread_cond_broadcast(&run->gate_cond);
    pthread_mutex_unlock(&run->gate);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    pthread_cond_destroy(&run->gate_cond);
    pthread_mutex_destroy(&run->gate);
    free(tids);
    free(args);
    free(run->values);
    run->values = NULL;
    return rc;
}
