/* The replay loop: each thread runs its own list of a trace's ops in order (kv_trace.h's kv_replay, made by
 * kvlab/execution/traces/replay.py), each op on its recorded key index with a value of its recorded size.  Paced,
 * each op starts at its intended time, and its response time is measured from that time as the open loop does
 * (no coordinated omission: an op that starts late counts the wait), its lag apart; else back to back.
 * A recorded batch (kv_trace.h's KV_TRACE_BATCHED ops, the last KV_TRACE_COMMIT) is replayed as one: the engine's
 * batch opens before its first op and commits after its last, whose time includes the commit.
 */
#include "loop.h"

/* A value of `n` bytes, a slice of the shared buffer (the phase's value size is the trace's largest). */
static inline const char *replay_value(ctx *c, size_t n) {
    if (c->value_pos + n > c->run->values_len) c->value_pos = 0;
    const char *v = c->run->values + c->value_pos;
    c->value_pos += n;
    return v;
}

typedef struct { uint64_t found, missing, bytes; } replay_counts;

static int replay_get(ctx *c, int ks, replay_counts *n) {
    const char *v;
    size_t vl;
    int rc = c->run->ops->get(c->t, c->key, ks, &v, &vl);
    if (rc == KV_OK) { n->found++; n->bytes += (uint64_t)ks + vl; }
    else if (rc == KV_NOTFOUND) { n->missing++; rc = KV_OK; }
    return rc;
}

static int replay_put(ctx *c, int ks, uint32_t size, replay_counts *n) {
    n->bytes += (uint64_t)ks + size;
    return c->run->ops->put(c->t, c->key, ks, replay_value(c, size), size);
}

/* Seek to the op's key and read on: `len` entries, below key + len for a range (a seek reads its own). */
static int replay_iter(ctx *c, const kv_replay_op *o, int ks, uint64_t len, int bounded, replay_counts *n) {
    const kv_engine_ops *e = c->run->ops;
    const char *k, *v;
    size_t kl, vl;
    char end[KV_KEY_MAX];
    uint64_t got = 0;
    if (bounded) kv_make_key(end, ks, o->key + len);
    int rc = e->iter_seek(c->t, c->key, ks, &k, &kl, &v, &vl);
    if (rc == KV_NOTFOUND) n->missing++;
    while (rc == KV_OK && got <= len) {
        if (bounded && (kl != (size_t)ks || memcmp(k, end, (size_t)ks) >= 0)) break;
        got++;
        n->bytes += kl + vl;
        if (got > len) break;
        rc = e->iter_next(c->t, &k, &kl, &v, &vl);
    }
    e->iter_close(c->t);
    n->found += got;
    return rc == KV_NOTFOUND ? KV_OK : rc;
}

static int replay_op(ctx *c, const kv_replay_op *o, int ks, replay_counts *n) {
    const kv_engine_ops *e = c->run->ops;
    int rc;
    kv_make_key(c->key, ks, o->key);
    switch (o->op) {
    case KV_OP_READ: return replay_get(c, ks, n);
    case KV_OP_WRITE: case KV_OP_INSERT: return replay_put(c, ks, o->size, n);
    case KV_OP_DELETE:
        rc = e->del(c->t, c->key, ks);
        return rc == KV_NOTFOUND ? KV_OK : rc;
    case KV_OP_RMW:
        rc = replay_get(c, ks, n);
        return rc == KV_OK ? replay_put(c, ks, o->size, n) : rc;
    case KV_OP_SEEK: return replay_iter(c, o, ks, o->size, 0, n);
    case KV_OP_SCAN: return replay_iter(c, o, ks, o->size ? o->size - 1 : 0, 0, n);
    case KV_OP_RANGE: return replay_iter(c, o, ks, o->size ? o->size - 1 : 0, 1, n);
    case KV_OP_CLEAR_RANGE:
        rc = KV_OK;
        for (uint32_t j = 0; j < o->size && rc == KV_OK; j++) {
            kv_make_key(c->key, ks, o->key + j);
            rc = e->del(c->t, c->key, ks);
            if (rc == KV_NOTFOUND) rc = KV_OK;
        }
        return rc;
    default:
        kv_seterr(&c->res->err, KV_E_CONFIG, "a replay op of type %d, which replay does not run", o->op);
        return KV_E_CONFIG;
    }
}

KV_ALWAYS_INLINE int replay_on(ctx *c, const kv_replay_op *ops, uint64_t count, int paced, int tsc) {
    const int ks = c->run->p.key_size;
    const double ticks_per_ns = 1.0 / c->run->ns_per_tick;
    kv_thread_result *res = c->res;
    const uint64_t t0 = c->last;
    const kv_engine_ops *e = c->run->ops;
    replay_counts n = {0, 0, 0};
    int rc = KV_OK, in_batch = 0;
    for (uint64_t i = 0; i < count; i++) {
        const kv_replay_op *o = &ops[i];
        uint64_t intended = 0;
        if (paced) {
            intended = t0 + (uint64_t)((double)(o->at_ns > 0 ? o->at_ns : 0) * ticks_per_ns);
            if (kv_wait_until(c, intended, tsc)) break;   /* stopped while waiting */
            c->last = clock_read(tsc);
            kv_hist_record(&res->hist[KV_OP_LAG], c->last > intended ? c->last - intended : 0);
        }
        if (__builtin_expect(c->trace != NULL, 0))   /* recording the replay: its batches as they ran */
            c->last += kv_trace_put(c->trace, o->op, o->key, o->size, c->last, intended, o->flags);
        if ((o->flags & KV_TRACE_BATCHED) && !in_batch) {
            if ((rc = e->batch_begin(c->t)) != KV_OK) break;
            in_batch = 1;
        }
        rc = replay_op(c, o, ks, &n);
        if (rc == KV_OK && in_batch && (o->flags & KV_TRACE_COMMIT)) {
            in_batch = 0;
            rc = e->batch_commit(c->t);
        }
        if (rc != KV_OK) break;
        res->ops[o->op]++;
        uint64_t end = time_op(&res->hist[o->op], &c->last, tsc);
        if (paced) kv_hist_record(&res->hist[KV_OP_RESPONSE], end - intended);
        if (publish_op(&res->progress, i + 1, &c->run->until, end)) break;   /* deadline or stop */
    }
    if (in_batch) {   /* a batch left open: by a stop (its ops so far, counted, commit), the list's end, an error */
        if (rc == KV_OK) rc = e->batch_commit(c->t);
        else e->batch_abort(c->t);
    }
    if (paced) { kv_hist_finish(&res->hist[KV_OP_RESPONSE]); kv_hist_finish(&res->hist[KV_OP_LAG]); }
    res->found += n.found;
    res->not_found += n.missing;
    res->bytes += n.bytes;
    return rc;
}

int kv_loop_replay(ctx *c, int index) {
    const kv_replay *rp = c->run->p.replay;
    if (!rp) {
        kv_seterr(&c->res->err, KV_E_CONFIG, "workload replay needs a trace's ops (kvlab replay)");
        return fail(c, KV_E_CONFIG);
    }
    int paced = rp->paced;
    if (paced) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* wake as asked, not up to 50 us later */
    int rc = c->run->p.use_tsc ? replay_on(c, rp->ops[index], rp->count[index], paced, 1)
                               : replay_on(c, rp->ops[index], rp->count[index], paced, 0);
    return rc ? fail(c, rc) : 0;
}
