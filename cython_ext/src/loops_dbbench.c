/* db_bench's fixed loops (docs/workloads.md): write workloads split `num` keys across the
 * threads (a bulk load too, through the engine's bulk path); read workloads do `reads` operations in every thread; readwhilewriting runs `threads`
 * readers plus one writer, whose stats are returned apart (role KV_ROLE_WRITER).  And LinkBench's
 * load, the other fixed loop.  The hot ones (loop_read_on, loop_write_on) are instantiated per clock
 * and key size (loop.h: KV_DISPATCH).
 */
#include "loop.h"

KV_ALWAYS_INLINE int loop_write_on(ctx *c, uint64_t first, uint64_t count, int sequential, int rec, int tsc,
                                   int key16) {
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
            KV_TRACE_IF(rec, c, KV_OP_WRITE, idx, (uint64_t)vs, c->last,   /* a batch's puts start with it */
                        batch > 1 ? KV_TRACE_BATCHED | (j == n - 1 ? KV_TRACE_COMMIT : 0) : 0);
            bytes += ks + vs;
        }
        if (err) break;
        if (batch > 1 && (rc = e->batch_commit(c->t))) { err = rc; break; }
        if (finish_op_on(c, KV_OP_WRITE, n, tsc)) break;
    }
    c->res->bytes += bytes;
    return err ? fail(c, err) : 0;
}

/* The engine's own loop (kv_engine.h's own_loop), where it has one: not while recording (the trace is the
   driver's) nor under hashed keys (kv_key_hash is the driver's).  First the engine's keys are checked against the
   driver's: KEY_CHECK keys drawn from a copy of the thread's generator, made by both, folded by the same FNV-1a.
   KV_E_NOTSUP: the driver's loop runs. */
#define KEY_CHECK 256
static int own_loop(ctx *c, int kind, uint64_t first, uint64_t count, int sequential, uint64_t offset,
                    uint64_t span) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    if (!e->own_loop || c->trace || p->key_hash || p->no_own_loop) return KV_E_NOTSUP;
    kv_rng mine = c->rng, theirs = c->rng;
    uint64_t sum = 0xcbf29ce484222325ull;
    for (int i = 0; i < KEY_CHECK; i++) {
        kv_make_key(c->key, p->key_size, offset + kv_rng_below(&mine, span));
        for (int j = 0; j < p->key_size; j++) sum = (sum ^ (uint8_t)c->key[j]) * 0x100000001b3ull;
    }
    if (!e->own_key_sum || e->own_key_sum(theirs.s, KEY_CHECK, offset, span, p->key_size) != sum) {
        c->res->rc = KV_E_OTHER;
        kv_seterr(&c->res->err, KV_E_OTHER, "%s's own loop makes other keys than kvlab's generator (its checksum "
                  "of %d keys differs): its loop is not run", e->name, KEY_CHECK);
        kv_run_request_stop(c->run);
        return KV_E_OTHER;
    }
    int optype = kind == KV_OWN_WRITE ? KV_OP_WRITE : KV_OP_READ;
    kv_own_loop l = {.kind = kind, .tsc = p->use_tsc, .key_size = p->key_size, .value_size = p->value_size,
                     .batch = p->batch > 1 ? p->batch : 1, .sequential = sequential, .by_time = p->duration_s > 0,
                     .first = first, .count = count, .num = p->num, .offset = offset, .span = span,
                     .rng = c->rng.s, .values = c->run->values, .values_len = c->run->values_len,
                     .value_pos = &c->value_pos, .hist_buckets = c->res->hist[optype].buckets,
                     .hist_max = &c->res->hist[optype].max, .last = &c->last,
                     .progress = (uint64_t *)&c->res->progress, .until = &c->run->until};
    c->res->own_loop = 1;
    int rc = e->own_loop(c->t, &l);
    c->res->bytes += l.bytes;
    c->res->found += l.found;
    c->res->not_found += l.not_found;
    return rc ? fail(c, rc) : 0;
}

int kv_loop_write(ctx *c, uint64_t first, uint64_t count, int sequential) {
    int own = own_loop(c, KV_OWN_WRITE, first, count, sequential, 0, c->run->p.num);
    if (own != KV_E_NOTSUP) return own;
    if (c->trace) return KV_DISPATCH_IF(0, loop_write_on, c, first, count, sequential, 1);   /* recording */
    return KV_DISPATCH(loop_write_on, c, first, count, sequential, 0);
}

int kv_loop_delete(ctx *c, uint64_t count) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int by_time = p->duration_s > 0;
    for (uint64_t i = 0; by_time || i < count; i++) {
        uint64_t idx = kv_rng_below(&c->rng, p->num);
        kv_make_key(c->key, p->key_size, idx);
        int rc = e->del(c->t, c->key, p->key_size);
        if (rc < 0) return fail(c, rc);
        KV_TRACE(c, KV_OP_DELETE, idx, 0, c->last, 0);
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
KV_ALWAYS_INLINE int loop_read_on(ctx *c, uint64_t count, uint64_t offset, uint64_t span, int rec, int tsc,
                                  int key16) {
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
        uint64_t idx = offset + kv_rng_below(&rng, span);
        make_key_on(key, ks, idx, key16);
        rc = e->get(t, key, ks, &v, &vl);
        if (rc == KV_OK) value_bytes += vl;
        else if (rc == KV_NOTFOUND) missing++;
        else { err = rc; break; }
        KV_TRACE_IF(rec, c, KV_OP_READ, idx, 0, c->last, 0);
        /* c->last in memory: one register more for the generator */
        if (end_op(hist, &c->last, &res->progress, ++done, until, tsc)) break;   /* deadline or stop */
    }
    uint64_t found = done - start - missing;
    c->rng = rng;
    res->found += found;
    res->not_found += missing;
    res->bytes += found * (uint64_t)ks + value_bytes;
    return err ? fail(c, err) : 0;
}

int kv_loop_read(ctx *c, uint64_t count, uint64_t offset, uint64_t span) {
    int own = own_loop(c, KV_OWN_READ, 0, count, 0, offset, span);
    if (own != KV_E_NOTSUP) return own;
    if (c->trace) return KV_DISPATCH_IF(0, loop_read_on, c, count, offset, span, 1);   /* recording */
    if (!offset)   /* readrandom, readhot: their own instantiations, without the add */
        return KV_DISPATCH_IF(KV_KEY16(c, span), loop_read_on, c, count, 0, span, 0);
    return KV_DISPATCH_IF(KV_KEY16(c, span) && offset <= KV_KEY16_LIMIT - span, loop_read_on, c, count, offset, span,
                          0);
}

int kv_loop_readseq(ctx *c, uint64_t count) {
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

int kv_loop_seek(ctx *c, uint64_t count) {
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
int kv_loop_writer(ctx *c) {
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

int kv_loop_compact(ctx *c) {
    int rc = c->run->ops->compact(c->run->db, &c->res->err);
    if (rc == KV_E_NOTSUP) rc = KV_OK;  /* nothing to compact: a zero-cost op, as db_bench on LMDB */
    if (rc) {
        c->res->rc = rc;
        return rc;
    }
    finish_op(c, KV_OP_COMPACT, 1);
    return 0;
}

/* LinkBench's load: this thread's share of the node ids, each node with its links and counts, in
   batches (kv_graph_load); one histogram entry and one progress step per batch, counting its writes. */
static int graph_load_progress(void *arg, uint64_t writes) {
    ctx *c = arg;
    return finish_op(c, KV_OP_WRITE, writes);
}

int kv_loop_graphload(ctx *c, uint64_t first, uint64_t count) {
    const kv_graph *g = c->run->p.graph;
    kv_graph_state *s = malloc(sizeof *s);
    if (!g || !s) {
        free(s);
        kv_seterr(&c->res->err, KV_E_CONFIG, "graphload needs a graph (kvlab.model.workloads.linkbench)");
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

/* A bulk load: keys first .. first + count - 1 in ascending order through the engine's bulk path
   (kv_engine.h), `batch` puts a chunk; one histogram entry per chunk, progress every KV_BULK_CHECK puts (the
   records handed to the engine so far).  The driver runs it on one thread (the keys must arrive in order).  A
   stop or the deadline, looked at every KV_BULK_CHECK puts, ends the load after committing the chunk so far as
   its last (a WiredTiger bulk cursor writes its records then, inside the measured time). */
#define KV_BULK_CHECK 1024

int kv_loop_bulkload(ctx *c, uint64_t first, uint64_t count) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = p->key_size, vs = p->value_size;
    uint64_t chunk = p->batch > 1 ? (uint64_t)p->batch : 1, i = 0;
    if (!e->bulk_begin) {
        kv_seterr(&c->res->err, KV_E_NOTSUP, "%s has no bulk load path; load it in batches", e->name);
        c->res->rc = KV_E_NOTSUP;
        kv_run_request_stop(c->run);
        return KV_E_NOTSUP;
    }
    int rc = KV_OK, end = 0;
    const uint64_t base = done_ops(c);
    while (i < count && !end) {
        uint64_t n = count - i < chunk ? count - i : chunk, j = 0;
        if ((rc = e->bulk_begin(c->t))) break;
        for (; j < n; j++) {
            uint64_t idx = first + i + j;
            kv_make_key(c->key, ks, p->key_hash ? kv_key_hash(idx) : idx);
            if ((rc = e->bulk_put(c->t, c->key, ks, next_value(c), vs)) < 0) break;
            if ((j & (KV_BULK_CHECK - 1)) == KV_BULK_CHECK - 1) {
                if (publish_op(&c->res->progress, base + i + j + 1, &c->run->until, latency_clock(c->run))) {
                    end = 1;   /* stopped, or past the deadline: this chunk so far is the last */
                    j++;
                    break;
                }
            }
        }
        if (rc >= 0) rc = e->bulk_commit(c->t, end || i + j == count);
        else e->bulk_abort(c->t);
        if (rc) {   /* the chunk is not in: progress back to what was committed */
            __atomic_store_n(&c->res->progress, base + i, __ATOMIC_RELAXED);
            break;
        }
        __atomic_store_n(&c->res->progress, base + i, __ATOMIC_RELAXED);   /* finish_op adds the chunk */
        i += j;
        c->res->bytes += j * (uint64_t)(ks + vs);
        if (finish_op(c, KV_OP_WRITE, j)) end = 1;
    }
    return rc < 0 ? fail(c, rc) : 0;
}

/* readrandomwriterandom: `count` ops per thread on keys uniform over the key space, in db_bench's order: of
   each 100, first read_percent gets, then the rest puts.  Each op is timed into its own type's histogram (the
   one timing path, finish_op) and the progress counts both; the loop counts them apart in ops[] (several). */
int kv_loop_readwrite(ctx *c, uint64_t count) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = p->key_size, vs = p->value_size, by_time = p->duration_s > 0;
    int gets_left = 0, puts_left = 0;
    uint64_t reads = 0, writes = 0;
    const char *v;
    size_t vl;
    int rc = KV_OK;
    for (uint64_t i = 0; by_time || i < count; i++) {
        kv_make_key(c->key, ks, kv_rng_below(&c->rng, p->num));
        if (gets_left == 0 && puts_left == 0) {
            gets_left = p->read_percent;
            puts_left = 100 - p->read_percent;
        }
        int optype;
        if (gets_left > 0) {
            gets_left--;
            reads++;
            optype = KV_OP_READ;
            rc = e->get(c->t, c->key, ks, &v, &vl);
            if (rc == KV_OK) { c->res->found++; c->res->bytes += ks + vl; }
            else if (rc == KV_NOTFOUND) { c->res->not_found++; rc = KV_OK; }
        } else {
            puts_left--;
            writes++;
            optype = KV_OP_WRITE;
            rc = e->put(c->t, c->key, ks, next_value(c), vs);
            c->res->bytes += ks + vs;
        }
        if (rc < 0) { reads -= optype == KV_OP_READ; writes -= optype == KV_OP_WRITE; break; }
        if (finish_op(c, optype, 1)) break;
    }
    c->res->ops[KV_OP_READ] = reads;
    c->res->ops[KV_OP_WRITE] = writes;
    return rc < 0 ? fail(c, rc) : 0;
}

/* updaterandom: `count` read-modify-writes per thread of keys uniform over the key space, as db_bench's: a get,
   then a put of a new value (db_bench writes a fresh value, not one made from what it read); one op each (rmw). */
int kv_loop_update(ctx *c, uint64_t count) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = p->key_size, vs = p->value_size, by_time = p->duration_s > 0;
    const char *v;
    size_t vl;
    for (uint64_t i = 0; by_time || i < count; i++) {
        kv_make_key(c->key, ks, kv_rng_below(&c->rng, p->num));
        int rc = e->get(c->t, c->key, ks, &v, &vl);
        if (rc == KV_OK) { c->res->found++; c->res->bytes += ks + vl; }
        else if (rc == KV_NOTFOUND) c->res->not_found++;
        else return fail(c, rc);
        if ((rc = e->put(c->t, c->key, ks, next_value(c), vs)) < 0) return fail(c, rc);
        c->res->bytes += ks + vs;
        if (finish_op(c, KV_OP_RMW, 1)) break;
    }
    return 0;
}

/* multireadrandom: `count` keys per thread, uniform over the key space, read `batch` a call through the engine's
   batched read (kv_engine.h multi_get) where it has one, else `batch` gets; one histogram entry per batch (its
   latency), progress counting the keys, as db_bench counts them. */
int kv_loop_multiread(ctx *c, uint64_t count) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = p->key_size, by_time = p->duration_s > 0;
    size_t batch = p->batch > 1 ? (size_t)p->batch : 1;
    char *keys = malloc(batch * (size_t)ks);
    const char **kp = malloc(batch * sizeof *kp), **vs = malloc(batch * sizeof *vs);
    size_t *kls = malloc(batch * sizeof *kls), *vls = malloc(batch * sizeof *vls);
    int *rcs = malloc(batch * sizeof *rcs);
    int rc = KV_OK;
    if (!keys || !kp || !vs || !kls || !vls || !rcs) {
        kv_seterr(&c->res->err, KV_E_OTHER, "multireadrandom: no memory for a batch of %zu keys", batch);
        rc = KV_E_OTHER;
        c->res->rc = rc;
        kv_run_request_stop(c->run);
    }
    for (uint64_t i = 0; rc == KV_OK && (by_time || i < count);) {
        size_t n = batch;
        if (!by_time && count - i < n) n = (size_t)(count - i);
        for (size_t j = 0; j < n; j++) {
            kp[j] = keys + j * (size_t)ks;
            kls[j] = (size_t)ks;
            kv_make_key(keys + j * (size_t)ks, ks, kv_rng_below(&c->rng, p->num));
        }
        if (e->multi_get) {
            rc = e->multi_get(c->t, n, kp, kls, vs, vls, rcs);
        } else {
            for (size_t j = 0; j < n && rc == KV_OK; j++) {
                rcs[j] = e->get(c->t, kp[j], kls[j], &vs[j], &vls[j]);
                if (rcs[j] < 0) rc = rcs[j];
            }
        }
        if (rc < 0) break;
        for (size_t j = 0; j < n; j++) {
            if (rcs[j] == KV_OK) { c->res->found++; c->res->bytes += (uint64_t)ks + vls[j]; }
            else c->res->not_found++;
        }
        i += n;
        if (finish_op(c, KV_OP_READ, n)) break;
    }
    free(keys); free(kp); free(vs); free(kls); free(vls); free(rcs);
    return rc < 0 && !c->res->rc ? fail(c, rc) : 0;
}

/* fillseqdeterministic: on one thread, keys first .. first + count - 1 in order (the fillseq loop), then the
   whole key range compacted (the engine's compact, as the compact workload), so what the fill leaves on disk is
   the same every time rather than wherever background compactions stood.  The compaction is inside the phase's
   time but no op: the histogram holds the writes. */
int kv_loop_fillseqdet(ctx *c, uint64_t first, uint64_t count) {
    int rc = kv_loop_write(c, first, count, 1);
    if (rc || stopped(c)) return rc;
    rc = c->run->ops->compact(c->run->db, &c->res->err);
    if (rc == KV_E_NOTSUP) return 0;   /* nothing to compact: the fill's shape is already its own */
    if (rc) {
        c->res->rc = rc;
        kv_run_request_stop(c->run);
    }
    return rc;
}
