/* The null engine: no storage, as YCSB's BasicDB.  Every get finds a value, writes and deletes
 * are accepted and dropped, a cursor yields the key it was asked for and then ends (as BasicDB's scan
 * reads nothing, so a scan costs the harness, not a pretend engine, its entries).  It
 * exists to measure the harness alone (kvlab's loop, generators, clock and histograms) and is
 * never a claim about any storage engine.  It needs no library, so every build has it.
 */
#include "kv_util.h"

#define NULL_VALUE_MAX 4096

struct kv_db { int unused; };

struct kv_thread {
    kv_thread_common c;
    char key[1024];
    size_t keylen;
};

static const char null_value[NULL_VALUE_MAX] = {0};

static int nl_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    (void)path; (void)cfg;
    kv_db *db = calloc(1, sizeof *db);
    if (!db) return kv_seterr(err, KV_E_OTHER, "null engine: out of memory");
    *out = db;
    return KV_OK;
}

static int nl_close(kv_db *db, kv_failure *err) { (void)err; free(db); return KV_OK; }

static int nl_thread_open(kv_db *db, kv_thread **out, kv_failure *err) {
    (void)db;
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "null engine: out of memory");
    *out = t;
    return KV_OK;
}

static void nl_thread_close(kv_thread *t) { free(t); }

static int nl_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    (void)t; (void)k; (void)kl; (void)v; (void)vl;
    return KV_OK;
}

static int nl_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    (void)t; (void)k; (void)kl;
    *v = null_value;
    *vl = 100;
    return KV_OK;
}

static int nl_del(kv_thread *t, const char *k, size_t kl) { (void)t; (void)k; (void)kl; return KV_OK; }

static int nl_batch(kv_thread *t) { (void)t; return KV_OK; }

static int nl_txn_begin(kv_thread *t, int kind) { (void)t; (void)kind; return KV_OK; }
static void nl_txn_abort(kv_thread *t) { (void)t; }
static const char *nl_isolation(const char *variant, int transactions) {
    (void)variant; (void)transactions;
    return "none: the null engine stores nothing (it measures the harness alone)";
}

static int nl_iter_seek(kv_thread *t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo,
                        size_t *vlo) {
    t->keylen = kl < sizeof t->key ? kl : sizeof t->key;
    memcpy(t->key, k, t->keylen);
    *ko = t->key; *klo = t->keylen; *vo = null_value; *vlo = 100;
    return KV_OK;
}

static int nl_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    (void)t; (void)ko; (void)klo; (void)vo; (void)vlo;
    return KV_NOTFOUND;
}

static void nl_iter_close(kv_thread *t) { (void)t; }

static int nl_compact(kv_db *db, kv_failure *err) { (void)db; (void)err; return KV_E_NOTSUP; }

static const char *nl_version(void) { return "1.0";  /* the null adapter's own version: there is no library */ }

const kv_engine_ops kv_engine_null = {
    .name = "null",
    .open = nl_open, .close = nl_close,
    .thread_open = nl_thread_open, .thread_close = nl_thread_close,
    .put = nl_put, .get = nl_get, .del = nl_del,
    .batch_begin = nl_batch, .batch_commit = nl_batch, .batch_abort = nl_batch,
    .txn_begin = nl_txn_begin, .txn_commit = nl_batch, .txn_abort = nl_txn_abort,
    .iter_seek = nl_iter_seek, .iter_next = nl_iter_next, .iter_close = nl_iter_close,
    .compact = nl_compact, .stats = NULL, .version = nl_version, .process_shutdown = NULL,
    .isolation = nl_isolation,
};
