/* The generic loop: a mix of transaction templates (kv_mix, compiled by kvlab/execution/run/mixplan.py).
 * kv_loop_mix sets up the thread's draw state, chooses a loop (the one-op loop for a mix whose templates
 * are each one op, drawing ahead where it can; else the general loop, closed or open), and at the end
 * merges the histograms.  Every loop draws the same stream in the same order, so all give the same
 * results; the one-op loops exist because they are measurably faster (benchmarks/mix_loop.py).
 */
#include "loop.h"

/* A value of a size drawn in [value_min, value_max] (uniformly, or from the mix's Pareto), a slice of the
   shared buffer. */
static inline const char *mix_value(ctx *c, const kv_mix *m, int *vs) {
    int n = m->value_pareto ? (int)kv_pareto_size(&c->rng, m->value_k, m->value_sigma, m->value_theta,
                                                  (uint64_t)m->value_max, (uint64_t)m->value_min)
          : m->value_min == m->value_max ? m->value_max
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
    case KV_LEN_PARETO:
        return (int)kv_pareto_size(&c->rng, op->len_k, op->len_sigma, op->len_theta, (uint64_t)op->length,
                                   (uint64_t)op->min_length);
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

/* A get and a delete of the key in c->key: the general loop's and the one-op loop's. */
KV_ALWAYS_INLINE int mix_get(ctx *c, mix_state *s, int ks) {
    const char *v;
    size_t vl;
    int rc = c->run->ops->get(c->t, c->key, ks, &v, &vl);
    if (rc == KV_OK) { s->found++; s->bytes += ks + vl; }
    else if (rc == KV_NOTFOUND) { s->missing++; rc = KV_OK; }
    return rc;
}
KV_ALWAYS_INLINE int mix_del(ctx *c, int ks) {
    int rc = c->run->ops->del(c->t, c->key, ks);
    return rc == KV_NOTFOUND ? KV_OK : rc;
}

/* One op of a transaction on key index idx; returns KV_OK or an error code.  Recording, the op as run (its
   start: c->last, which the general loop keeps at each op's start then). */
static int mix_op_at(ctx *c, mix_state *s, const kv_mix *m, const kv_mix_op *op, int i, uint64_t idx) {
    const kv_engine_ops *e = c->run->ops;
    int ks = c->run->p.key_size, vs = 0, rc = KV_OK, len = 0;
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
        v = mix_value(c, m, &vs);
        s->bytes += ks + vs;
        rc = e->put(c->t, c->key, ks, v, vs);
        break;
    case KV_OP_INSERT:
        idx = mix_new_id(c, s, c->run->p.num);
        if (hashed) idx = kv_key_hash(idx);
        kv_make_key(c->key, ks, idx);
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
        int n = 0;
        len = mix_length(c, s, op, i);
        char end[KV_KEY_MAX];
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
        len = mix_length(c, s, op, i);
        for (int j = 0; j < len && rc == KV_OK; j++) {
            kv_make_key(c->key, ks, hashed ? kv_key_hash(idx + (uint64_t)j) : idx + (uint64_t)j);
            rc = e->del(c->t, c->key, ks);
            if (rc == KV_NOTFOUND) rc = KV_OK;
        }
        break;
    }
    }
    KV_TRACE(c, op->optype, idx, (uint64_t)(op->optype == KV_OP_RANGE || op->optype == KV_OP_SCAN ||
                                            op->optype == KV_OP_CLEAR_RANGE ? len : vs), c->last, c->intended);
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
        if (past_until(&c->run->until, now)) return 1;
        double left_ns = (double)(intended - now) * ns_per_tick;
        if (left_ns > KV_SPIN_NS + 50000) {
            double nap = left_ns - KV_SPIN_NS < 1e8 ? left_ns - KV_SPIN_NS : 1e8;
            struct timespec ts = {(time_t)(nap / 1e9), (long)((int64_t)nap % 1000000000)};
            nanosleep(&ts, NULL);
        } else {
            kv_cpu_relax();
        }
    }
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
    c->res->txn_count[ti]++;
    return finish_op_on(c, optype, 1, tsc) ? KV_MIX_STOP : KV_OK;
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
        KV_TRACE(c, op, idx, op == KV_OP_WRITE ? (uint64_t)m->value_max : 0, last, 0);
        if (rc != KV_OK) {
            if (!retryable(rc)) { s->op_count[op]++; break; }   /* the op that ended the run, counted as the general loop does */
            res->aborts++;
            rc = KV_OK;
        }
        txn_count[ti]++;
        if (end_op(&res->hist[op], &last, &res->progress, progress + n + 1, until, tsc)) break;   /* deadline, stop */
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

/* --- set-up, loop choice, the general loop, the merge --------------------------------------- */

/* This thread's draw state: its key distributions (a zipfian over num plus the inserts the mix expects),
   one per zipfian range length, and LinkBench's per-thread graph state.  NULL: out of memory. */
static mix_state *mix_state_new(ctx *c) {
    const kv_run_params *p = &c->run->p;
    const kv_mix *m = p->mix;
    int index = (int)(c->res - c->run->results);
    mix_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (p->graph) {
        if (!(s->graph = malloc(sizeof *s->graph))) { free(s); return NULL; }
        kv_graph_state_init(s->graph, p->graph);
    }
    s->count = p->num;
    for (int d = 0; d < m->ndists; d++) {
        const kv_mix_dist *md = &m->dists[d];
        uint64_t modulus = md->kind == KV_DIST_ZIPFIAN ? p->num + md->expected_inserts + 1 : 0;
        kv_dist_init(&s->dist[d], md->kind, p->num, md->theta, modulus, md->hot_fraction, md->hot_ops,
                     md->percentile, md->frac, index, p->threads);
        if (md->kind == KV_DIST_TWO_TERM_EXP) kv_dist_key_ranges(&s->dist[d], md->range_cum, md->nranges, md->key_a, md->key_b);
    }
    for (int i = 0; i < m->nops; i++)
        if (m->ops[i].length_dist == KV_LEN_ZIPFIAN)
            kv_dist_init(&s->len_zipf[i], KV_DIST_ZIPFIAN_PLAIN, (uint64_t)(m->ops[i].length - m->ops[i].min_length + 1),
                         0.99, 0, 0, 0, 0, 0, 0, 1);
    return s;
}

/* Every template one op (YCSB A-F): the one-op loop runs the mix, unless the run is open-loop or asks
   for the general loop (no_pipeline: tests compare the two). */
static int mix_all_one_op(const kv_run_params *p, int open) {
    const kv_mix *m = p->mix;
    int simple = !open && !p->no_pipeline;
    for (int ti = 0; ti < m->ntxns && simple; ti++) simple = m->txns[ti].simple;
    for (int i = 0; i < m->nops && simple; i++)
        simple = m->ops[i].optype != KV_OP_GRAPH && m->ops[i].optype != KV_OP_CLEAR_RANGE;
    return simple;
}

/* The one-op loop may draw ahead: the ops draw nothing but their key and none changes the key count
   (reads, deletes, writes of one value size, no transaction), so drawing the next key first keeps the
   draws in order. */
static int mix_draws_ahead(const kv_mix *m) {
    int ahead = 1;
    for (int ti = 0; ti < m->ntxns && ahead; ti++) {
        const kv_mix_op *op = &m->ops[m->txns[ti].first];
        ahead = !m->txns[ti].txn && (op->optype == KV_OP_READ || op->optype == KV_OP_DELETE ||
                                     (op->optype == KV_OP_WRITE && m->value_min == m->value_max && !m->value_pareto));
    }
    return ahead;
}

/* One template from its start, in its transaction if it has one, until it commits, fails, or has been
   retried max_retries times after conflicts (each retry after a backoff).  One clock read per op: the end
   of one op is the start of the next, and the end of one transaction the start of the next (closed loop);
   a commit adds one.  `*t`: the latency clock at the template's start on entry, at its end on return. */
static int mix_template(ctx *c, mix_state *s, const kv_mix_txn *tx, uint64_t n, int tsc, uint64_t *t) {
    const kv_mix *m = c->run->p.mix;
    const kv_engine_ops *e = c->run->ops;
    uint64_t before = *t;
    int attempt = 0, rc;
    uint64_t jitter = (uint64_t)(uintptr_t)s ^ n, inserted = s->inserted;
    for (;;) {
        rc = tx->txn ? txn_begin(e, c->t, tx->txn) : KV_OK;
        for (int i = tx->first; rc == KV_OK && i < tx->first + tx->nops; i++) {
            const kv_mix_op *op = &m->ops[i];
            for (int r = 0; r < op->count && rc == KV_OK; r++) {
                if (c->trace) c->last = before;   /* recording: each op's start (mix_record sets it after) */
                rc = mix_op(c, s, m, op, i);
                if (c->trace) before = c->last;   /* moved on by a trace block's write (KV_TRACE) */
                time_op(&c->res->hist[op->optype], &before, tsc);   /* progress counts templates, not ops */
                s->op_count[op->optype]++;
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
    *t = before;
    return rc;
}

/* A simple template (one op, in the transaction it needs alone if any) in the general closed loop: one
   clock read, its op's histogram.  Returns as one_op_done. */
static int mix_one_op_template(ctx *c, mix_state *s, const kv_mix_txn *tx, int ti, uint64_t n, int tsc) {
    const kv_mix *m = c->run->p.mix;
    const kv_mix_op *op = &m->ops[tx->first];
    int rc;
    if (!tx->txn) {
        rc = mix_op(c, s, m, op, tx->first);
        s->op_count[op->optype]++;
    } else {
        rc = one_op_in_txn(c, s, m, tx, n, KV_ANY_KIND);
    }
    return one_op_done(c, op->optype, ti, rc, tsc);
}

/* A template's transaction done, from t0 to t1: its count and service time, and in an open loop its
   response time from its intended start; nonzero: the run ends for this thread (publish_op). */
static inline int mix_record(ctx *c, int ti, uint64_t t0, uint64_t t1, int open, uint64_t intended) {
    int ntxns = c->run->p.mix->ntxns;
    c->res->txn_count[ti]++;
    kv_hist_record(&c->res->txn_hist[ti], t1 - t0);
    kv_hist_record(&c->res->hist[KV_OP_TXN], t1 - t0);
    if (open) {
        kv_hist_record(&c->res->txn_hist[ntxns + ti], t1 - intended);
        kv_hist_record(&c->res->hist[KV_OP_RESPONSE], t1 - intended);
    }
    c->last = t1;
    return publish_op(&c->res->progress, done_ops(c) + 1, &c->run->until, t1);
}

/* The general loop.  Closed: each thread (client) runs transactions back to back, picking a template by
   weight.  Open (interval_ns > 0): each starts on a schedule fixed in advance, not when the last one
   ended, and its lag behind that schedule is recorded.  A template runs in one engine transaction
   (kv_engine.h: a snapshot for its reads, its writes atomic at commit); a conflict aborts it and runs it
   again from its start, after a backoff; one given up after max_retries is counted, not an error. */
static int loop_mix_general(ctx *c, mix_state *s, int open, int tsc) {
    const kv_run_params *p = &c->run->p;
    const kv_mix *m = p->mix;
    int by_time = p->duration_s > 0;
    double gap_ticks = m->interval_ns / c->run->ns_per_tick;
    /* clients start a random fraction of a gap apart, so they do not arrive in step */
    double phase = open ? kv_unit(&c->rng) : 0;
    uint64_t next_start = c->last + (uint64_t)(phase * gap_ticks);
    /* a rate schedule (kv_rate.h): arrivals counted from the loop's start, each start from the count */
    uint64_t t_zero = c->last;
    double work = phase;
    int segment = 0;
    for (uint64_t n = 0; by_time || n < p->reads; n++) {
        int ti = mix_pick(c, m), rc;
        const kv_mix_txn *tx = &m->txns[ti];
        uint64_t t0 = c->last, intended = 0;
        if (tx->simple && !open) {
            if ((rc = mix_one_op_template(c, s, tx, ti, n, tsc)) != KV_OK) return rc == KV_MIX_STOP ? KV_OK : rc;
            continue;
        }
        if (open && m->rate.n) {
            double at = kv_rate_time(&m->rate, work, &segment) / c->run->ns_per_tick;
            intended = at < 1.8e19 - (double)t_zero ? t_zero + (uint64_t)at : UINT64_MAX;
            work += m->poisson ? -log(1.0 - kv_unit(&c->rng)) : 1.0;
        } else if (open) {
            intended = next_start;
            double gap = m->poisson ? -log(1.0 - kv_unit(&c->rng)) * gap_ticks : gap_ticks;
            next_start += (uint64_t)gap;
        }
        if (open) {
            if (wait_until(c, intended, tsc)) break;   /* stopped while waiting */
            t0 = clock_read(tsc);
            c->intended = intended;   /* recording: the ops' intended start */
            kv_hist_record(&c->res->hist[KV_OP_LAG], t0 > intended ? t0 - intended : 0);
        }
        uint64_t t1 = t0;
        rc = mix_template(c, s, tx, n, tsc, &t1);
        if (rc != KV_OK) {
            if (!retryable(rc)) return rc;
            c->res->aborts++;   /* given up after max_retries: counted */
        }
        if (mix_record(c, ti, t0, t1, open, intended)) break;   /* deadline or stop */
    }
    return KV_OK;
}

/* The end of a thread's mix: ops per type into its result; in a closed loop a simple template's
   transactions are its op, so its template histogram is a copy of the op's and the op's count goes into
   the transactions' histogram; the histograms finished; what the draws found and moved. */
static void mix_merge(ctx *c, mix_state *s, int open) {
    const kv_mix *m = c->run->p.mix;
    for (int j = 0; j < KV_NOPTYPES; j++)
        if (j != KV_OP_TXN) c->res->ops[j] = s->op_count[j];
    if (!open)
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
    }
    c->res->found += s->found;
    c->res->not_found += s->missing;
    c->res->bytes += s->bytes;
}

int kv_loop_mix(ctx *c) {
    const kv_run_params *p = &c->run->p;
    int open = p->mix->interval_ns > 0, err;
    mix_state *s = mix_state_new(c);
    if (!s) return fail(c, KV_E_OTHER);
    if (open) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* wake as asked, not up to 50 us later */
    if (mix_all_one_op(p, open)) err = loop_mix_simple(c, s, mix_draws_ahead(p->mix));
    else err = loop_mix_general(c, s, open, p->use_tsc);
    mix_merge(c, s, open);
    free(s->graph);
    free(s);
    return err ? fail(c, err) : 0;
}

/* The open loop's wait, for the replay loop (loop_replay.c). */
int kv_wait_until(ctx *c, uint64_t intended, int tsc) { return wait_until(c, intended, tsc); }
