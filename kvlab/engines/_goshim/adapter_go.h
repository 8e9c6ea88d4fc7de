/* adapter_go.h - the C adapter of an engine in kvlab's Go shim (kvgo.h): Pebble's and Badger's adapters are this
 * file, each included once by its engine_<name>.c with KVGO_ENGINE (KVGO_PEBBLE, KVGO_BADGER), KVGO_NAME and
 * KVGO_ISOLATION defined.  Every call crosses into Go once; db_bench's write and read loops run inside Go
 * (own_loop), so that a measured op pays no crossing.
 *
 * Settings: sync (every commit durable before it returns), cache_size (the block cache), write_buffer_size (the
 * memtable), block_size; options: the engine's own comma list, checked in Go (its error lists what is allowed). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kv_util.h"
#include "kvgo.h"

struct kv_db {
    uint64_t h;
};

struct kv_thread {
    kv_thread_common c;
    uint64_t h;
    kvgo_error e; /* the shim's last error, turned into c.err by tfail() */
};

static int go_code(const kvgo_error *e) {
    switch (e->kind) {
    case KVGO_E_IO: return KV_E_IO;
    case KVGO_E_FULL: return KV_E_FULL;
    case KVGO_E_CONFIG: return KV_E_CONFIG;
    case KVGO_E_CORRUPT: return KV_E_CORRUPT;
    case KVGO_E_BUSY: return KV_E_BUSY;
    case KVGO_E_CONFLICT: return KV_E_CONFLICT;
    default: return KV_E_OTHER;
    }
}

static int go_fail(kv_failure *out, const kvgo_error *e, const char *what) {
    char where[64];
    snprintf(where, sizeof where, KVGO_NAME " %s", what);
    return kv_engine_error(out, go_code(e), e->kind, e->name, e->os_errno, where, e->text, "%s", "");
}

static int tfail(kv_thread *t, const char *what) { return go_fail(&t->c.err, &t->e, what); }

static int go_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    kvgo_options o = {.engine = KVGO_ENGINE, .create = cfg->create, .sync = cfg->sync,
                      .cache_size = cfg->cache_size, .memtable_size = cfg->write_buffer_size,
                      .block_size = cfg->block_size > 0 ? cfg->block_size : 0, .options = cfg->options};
    kv_db *db = calloc(1, sizeof *db);
    if (!db) return kv_seterr(err, KV_E_OTHER, KVGO_NAME ": out of memory");
    kvgo_error e;
    if (kvgo_open(path, &o, &db->h, &e) != KVGO_OK) {
        free(db);
        return go_fail(err, &e, "open");
    }
    *out = db;
    return KV_OK;
}

static int go_close(kv_db *db, kv_failure *err) {
    kvgo_error e;
    int rc = kvgo_close(db->h, &e);
    free(db);
    return rc == KVGO_OK ? KV_OK : go_fail(err, &e, "close");
}

static int go_thread_open(kv_db *db, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, KVGO_NAME ": out of memory");
    t->h = kvgo_thread_open(db->h);
    if (!t->h) {
        free(t);
        return kv_seterr(err, KV_E_OTHER, KVGO_NAME ": the shim made no thread context");
    }
    *out = t;
    return KV_OK;
}

static void go_thread_close(kv_thread *t) {
    kvgo_thread_close(t->h);
    free(t);
}

static int go_rc(kv_thread *t, int rc, const char *what) {
    if (rc == KVGO_OK) return KV_OK;
    return rc == KVGO_NOTFOUND ? KV_NOTFOUND : tfail(t, what);
}

static int go_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return go_rc(t, kvgo_put(t->h, k, kl, v, vl, &t->e), "put");
}

static int go_del(kv_thread *t, const char *k, size_t kl) { return go_rc(t, kvgo_del(t->h, k, kl, &t->e), "delete"); }

static int go_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    return go_rc(t, kvgo_get(t->h, k, kl, v, vl, &t->e), "get");
}

static int go_batch_begin(kv_thread *t) { return go_rc(t, kvgo_batch_begin(t->h, &t->e), "batch"); }
static int go_batch_commit(kv_thread *t) { return go_rc(t, kvgo_batch_commit(t->h, &t->e), "commit"); }
static int go_batch_abort(kv_thread *t) {
    kvgo_batch_abort(t->h);
    return KV_OK;
}

static int go_txn_begin(kv_thread *t, int kind) { return go_rc(t, kvgo_txn_begin(t->h, kind, &t->e), "begin"); }
static int go_txn_commit(kv_thread *t) { return go_rc(t, kvgo_txn_commit(t->h, &t->e), "commit"); }
static void go_txn_abort(kv_thread *t) { kvgo_txn_abort(t->h); }

static int go_iter_seek(kv_thread *t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo,
                        size_t *vlo) {
    return go_rc(t, kvgo_seek(t->h, k, kl, ko, klo, vo, vlo, &t->e), "seek");
}

static int go_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    return go_rc(t, kvgo_next(t->h, ko, klo, vo, vlo, &t->e), "next");
}

static void go_iter_close(kv_thread *t) { kvgo_iter_close(t->h); }

static int go_compact(kv_db *db, kv_failure *err) {
    kvgo_error e;
    return kvgo_compact(db->h, &e) == KVGO_OK ? KV_OK : go_fail(err, &e, "compact");
}

static int go_stats(kv_db *db, char *buf, size_t len) {
    kvgo_stats(db->h, buf, len);
    return KV_OK;
}

static const char *go_version(void) { return kvgo_version(KVGO_ENGINE); }

static const char *go_isolation(const char *variant, int transactions) {
    (void)variant;
    (void)transactions;
    return KVGO_ISOLATION;
}

/* kv_own_loop and kvgo_loop hold the same fields: copied, so that kvgo.h needs nothing of kvlab's headers. */
static int go_own_loop(kv_thread *t, kv_own_loop *l) {
    kvgo_loop g = {.kind = l->kind == KV_OWN_WRITE ? KVGO_LOOP_WRITE : KVGO_LOOP_READ, .tsc = l->tsc,
                   .key_size = l->key_size, .value_size = l->value_size, .batch = l->batch,
                   .sequential = l->sequential, .by_time = l->by_time, .first = l->first, .count = l->count,
                   .num = l->num, .offset = l->offset, .span = l->span, .rng = l->rng, .values = l->values,
                   .values_len = l->values_len, .value_pos = l->value_pos, .hist_buckets = l->hist_buckets,
                   .hist_max = l->hist_max, .last = l->last, .progress = l->progress, .until = l->until};
    int rc = kvgo_loop_run(t->h, &g, &t->e);
    l->bytes = g.bytes;
    l->found = g.found;
    l->not_found = g.not_found;
    return rc == KVGO_OK ? KV_OK : tfail(t, l->kind == KV_OWN_WRITE ? "write loop" : "read loop");
}

static uint64_t go_key_sum(uint64_t *rng, uint64_t n, uint64_t offset, uint64_t span, int key_size) {
    return kvgo_key_sum(rng, n, offset, span, key_size);
}

/* The table's initializer: `const kv_engine_ops kv_engine_<name> = KVGO_OPS;` */
#define KVGO_OPS                                                                                              \
    {                                                                                                         \
        .name = KVGO_NAME, .open = go_open, .close = go_close, .thread_open = go_thread_open,                 \
        .thread_close = go_thread_close, .put = go_put, .get = go_get, .del = go_del,                        \
        .batch_begin = go_batch_begin, .batch_commit = go_batch_commit, .batch_abort = go_batch_abort,       \
        .txn_begin = go_txn_begin, .txn_commit = go_txn_commit, .txn_abort = go_txn_abort,                   \
        .iter_seek = go_iter_seek, .iter_next = go_iter_next, .iter_close = go_iter_close,                   \
        .compact = go_compact, .stats = go_stats, .version = go_version, .isolation = go_isolation,          \
        .own_loop = go_own_loop, .own_key_sum = go_key_sum,                                                   \
        .own_loop_how = "db_bench's write and read loops run inside Go (the shim's kvgo_loop_run, one call a "  \
                        "phase), the same keys, values, clock and histogram as kvlab's C loops; other loops "  \
                        "call the engine from C, a few hundred ns a call",                                   \
    }
