/* Berkeley DB adapter (db.h, 5.3), btree access method.
 *
 * Variants:
 *   "txn"   (default) a transactional environment with the log on, as Symas ran
 *           BDB in seed 001: autocommit writes, a batch is one transaction.
 *           Without sync, commits do not flush the log (DB_TXN_NOSYNC).
 *   "notxn" no transactions or log (Concurrent Data Store locking); a batch is
 *           buffered and applied at commit, so abort discards it, but a crash
 *           mid-commit is not atomic.
 * Deadlocks (DB_LOCK_DEADLOCK) are detected by BDB and retried here; a batch
 * keeps a replay log.  Reads use DB_DBT_REALLOC into a per-thread buffer, as
 * DB_THREAD requires.  cache_size defaults to 64 MiB (BDB's own is 256 KiB).  The txn variant checkpoints
 * (a thread: 64 MiB of log or a minute) and removes the log files a checkpoint freed (DB_LOG_AUTO_REMOVE).
 *
 * Transactions (txn variant): one DB_TXN at BDB's default degree 3, i.e. strict
 * two-phase locking: reads take read locks and writes write locks, all held to the
 * end, so a transaction is serializable; a lock wait that closes a cycle makes one
 * transaction the deadlock victim (DB_LOCK_DEADLOCK, KV_E_CONFLICT here), which the
 * driver aborts and re-runs from its start.  Cursors of a transaction run in it.
 * The notxn variant has no transactions: a transaction's writes are buffered and
 * applied at commit (not atomic against a crash), its reads see the latest data.
 */
#include <db.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "kv_util.h"

#define KV_BDB_RETRIES 1000

/* The txn variant checkpoints as a BerkeleyDB application is expected to (db_checkpoint -p, or the
   application's own txn_checkpoint): a thread asks every second for a checkpoint once KV_BDB_CKP_KB of log
   was written or KV_BDB_CKP_MIN minutes passed since the last, and DB_LOG_AUTO_REMOVE then drops the log files
   no longer needed.  Without it the log only grows: seed 002's fillrandom + overwrite at 10M x 800 B left
   39 GiB (logs) for 5 GiB of live data. */
#define KV_BDB_CKP_KB (64u * 1024u)
#define KV_BDB_CKP_MIN 1u

struct kv_db {
    DB_ENV *env;
    DB *db;
    int txn;
    pthread_t ckp;
    int ckp_running, ckp_stop;
    pthread_mutex_t ckp_mu;
    pthread_cond_t ckp_cv;
};

static void *checkpointer(void *arg) {
    kv_db *d = arg;
    pthread_mutex_lock(&d->ckp_mu);
    while (!d->ckp_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&d->ckp_cv, &d->ckp_mu, &ts);
        if (d->ckp_stop) break;
        pthread_mutex_unlock(&d->ckp_mu);
        d->env->txn_checkpoint(d->env, KV_BDB_CKP_KB, KV_BDB_CKP_MIN, 0);   /* a failure: the next second tries */
        pthread_mutex_lock(&d->ckp_mu);
    }
    pthread_mutex_unlock(&d->ckp_mu);
    return NULL;
}

static void stop_checkpointer(kv_db *d) {
    if (!d->ckp_running) return;
    pthread_mutex_lock(&d->ckp_mu);
    d->ckp_stop = 1;
    pthread_cond_signal(&d->ckp_cv);
    pthread_mutex_unlock(&d->ckp_mu);
    pthread_join(d->ckp, NULL);
    d->ckp_running = 0;
    pthread_cond_destroy(&d->ckp_cv);
    pthread_mutex_destroy(&d->ckp_mu);
}

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    DB_TXN *batch;       /* txn variant: the open batch transaction */
    int in_batch;
    int doomed;          /* the batch transaction deadlocked: replay at commit */
    kv_oplog log;
    uint64_t jitter;     /* backoff RNG state */
    DBT val, ckey, cval; /* DB_DBT_REALLOC buffers */
    DBC *cur;
    DB_TXN *txn;         /* the open transaction (txn variant) */
    int txn_kind;        /* 0, KV_TXN_READ or KV_TXN_WRITE */
    DBT bulk;            /* a bulk load's DB_MULTIPLE_KEY buffer */
    void *bulk_at;       /* where its next pair goes (DB_MULTIPLE_KEY_WRITE_NEXT) */
    size_t bulk_pairs;
};

static __thread char bdb_lastmsg[KV_ERRMSG_MAX];

static void on_error(const DB_ENV *env, const char *prefix, const char *msg) {
    (void)env; (void)prefix;
    snprintf(bdb_lastmsg, sizeof bdb_lastmsg, "%s", msg);
}

static int bdb_code(int rc) {
    switch (rc) {
    case 0: return KV_OK;
    case DB_NOTFOUND: case DB_KEYEMPTY: return KV_NOTFOUND;
    case DB_LOCK_DEADLOCK: case DB_LOCK_NOTGRANTED: return KV_E_CONFLICT;
    case ENOSPC: return KV_E_FULL;
    case DB_RUNRECOVERY: case DB_VERIFY_BAD: return KV_E_CORRUPT;
    case EIO: return KV_E_IO;
    case EINVAL: return KV_E_CONFIG;
    case EAGAIN: case EBUSY: return KV_E_BUSY;
    default: return KV_E_OTHER;
    }
}

/* Berkeley DB's own codes by name (db.h); any other code it returns is an errno. */
static const char *bdb_name(int rc) {
    switch (rc) {
#define BDB_CASE(name) case name: return #name;
    BDB_CASE(DB_BUFFER_SMALL) BDB_CASE(DB_FOREIGN_CONFLICT) BDB_CASE(DB_HEAP_FULL) BDB_CASE(DB_KEYEMPTY)
    BDB_CASE(DB_KEYEXIST) BDB_CASE(DB_LOCK_DEADLOCK) BDB_CASE(DB_LOCK_NOTGRANTED) BDB_CASE(DB_LOG_BUFFER_FULL)
    BDB_CASE(DB_LOG_VERIFY_BAD) BDB_CASE(DB_NOSERVER) BDB_CASE(DB_NOTFOUND) BDB_CASE(DB_OLD_VERSION)
    BDB_CASE(DB_PAGE_NOTFOUND) BDB_CASE(DB_REP_HANDLE_DEAD) BDB_CASE(DB_RUNRECOVERY) BDB_CASE(DB_SECONDARY_BAD)
    BDB_CASE(DB_TIMEOUT) BDB_CASE(DB_VERIFY_BAD) BDB_CASE(DB_VERSION_MISMATCH)
#undef BDB_CASE
    default: return rc > 0 ? kv_errno_name(rc) : NULL;
    }
}

static int fail(kv_failure *e, int rc, const char *what) {
    char where[64];
    snprintf(where, sizeof where, "BerkeleyDB %s", what);
    int code = kv_engine_error(e, bdb_code(rc), rc, bdb_name(rc), rc > 0 ? rc : 0, where, db_strerror(rc),
                               "%s%s", bdb_lastmsg[0] ? " | " : "", bdb_lastmsg);
    bdb_lastmsg[0] = '\0';
    return code;
}

static int bdb_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    int txn = !cfg->variant || strcmp(cfg->variant, "txn") == 0;
    if (!txn && strcmp(cfg->variant, "notxn") != 0)
        return kv_seterr(err, KV_E_CONFIG, "BerkeleyDB variant '%s' is unknown; allowed: txn, notxn", cfg->variant);
    if (cfg->options && *cfg->options)
        return kv_seterr(err, KV_E_CONFIG, "BerkeleyDB takes no options string; settings: cache_size, sync");
    kv_db *d = calloc(1, sizeof *d);
    if (!d) return kv_seterr(err, KV_E_OTHER, "BerkeleyDB: out of memory");
    d->txn = txn;
    int rc;
    bdb_lastmsg[0] = '\0';
    if ((rc = db_env_create(&d->env, 0))) { free(d); return fail(err, rc, "env_create"); }
    d->env->set_errcall(d->env, on_error);
    uint64_t cache = cfg->cache_size ? cfg->cache_size : (64u << 20);
    d->env->set_cachesize(d->env, (u_int32_t)(cache >> 30), (u_int32_t)(cache & ((1u << 30) - 1)), 1);
    u_int32_t flags = DB_CREATE | DB_INIT_MPOOL | DB_THREAD;
    if (txn) {
        /* shared region files, touched in full when made (DB_REGION_INIT): on a full disk the open fails
           instead of a later SIGBUS in the mmap'ed region.  Not DB_PRIVATE: BDB 5.3's recovery in a private
           environment failed now and then ("process-private: unable to find environment") */
        d->env->set_flags(d->env, DB_REGION_INIT, 1);
        flags |= DB_INIT_TXN | DB_INIT_LOG | DB_INIT_LOCK | DB_RECOVER;
        d->env->set_lk_detect(d->env, DB_LOCK_DEFAULT);
        d->env->set_lk_max_locks(d->env, 1000000);
        d->env->set_lk_max_objects(d->env, 1000000);
        d->env->set_lk_max_lockers(d->env, 10000);
        d->env->set_lg_bsize(d->env, 8u << 20);
        d->env->log_set_config(d->env, DB_LOG_AUTO_REMOVE, 1);
        if (!cfg->sync) d->env->set_flags(d->env, DB_TXN_NOSYNC, 1);
    } else {
        /* private regions: a process killed while holding a Concurrent Data Store lock would leave it
           in the shared region files, and the next open would wait on it forever (there is no
           recovery without transactions); kvlab opens a database from one process at a time */
        flags |= DB_INIT_CDB | DB_PRIVATE;
    }
    if ((rc = d->env->open(d->env, path, flags, 0664))) goto bad;
    if ((rc = db_create(&d->db, d->env, 0))) goto bad;
    if ((rc = d->db->open(d->db, NULL, "kvlab.db", NULL, DB_BTREE,
                          DB_CREATE | DB_THREAD | (txn ? DB_AUTO_COMMIT : 0), 0664))) {
        d->db->close(d->db, 0);
        d->db = NULL;
        goto bad;
    }
    if (txn) {
        pthread_mutex_init(&d->ckp_mu, NULL);
        pthread_cond_init(&d->ckp_cv, NULL);
        d->ckp_running = pthread_create(&d->ckp, NULL, checkpointer, d) == 0;
        if (!d->ckp_running) {
            pthread_cond_destroy(&d->ckp_cv);
            pthread_mutex_destroy(&d->ckp_mu);
        }
    }
    *out = d;
    return KV_OK;
bad:
    fail(err, rc, "open");
    d->env->close(d->env, 0);
    free(d);
    return bdb_code(rc);
}

static int bdb_close(kv_db *d, kv_failure *err) {
    stop_checkpointer(d);
    int rc = d->db->close(d->db, 0);
    int rc2 = d->env->close(d->env, 0);
    free(d);
    if (rc || rc2) return fail(err, rc ? rc : rc2, "close");
    return KV_OK;
}

static int bdb_thread_open(kv_db *d, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "BerkeleyDB: out of memory");
    t->db = d;
    t->jitter = (uint64_t)(uintptr_t)t;
    t->val.flags = t->ckey.flags = t->cval.flags = DB_DBT_REALLOC;
    *out = t;
    return KV_OK;
}

static void bdb_iter_close(kv_thread *t) {
    if (t->cur) t->cur->close(t->cur);
    t->cur = NULL;
}

static void bdb_thread_close(kv_thread *t) {
    bdb_iter_close(t);
    if (t->txn) t->txn->abort(t->txn);
    if (t->batch) t->batch->abort(t->batch);
    free(t->val.data);
    free(t->ckey.data);
    free(t->cval.data);
    free(t->bulk.data);
    kv_oplog_free(&t->log);
    free(t);
}

static int apply(kv_thread *t, DB_TXN *txn, const char *k, size_t kl, const char *v, size_t vl, int is_del) {
    DBT key, val;
    memset(&key, 0, sizeof key);
    memset(&val, 0, sizeof val);
    key.data = (void *)k; key.size = (u_int32_t)kl;
    if (is_del) return t->db->db->del(t->db->db, txn, &key, 0);
    val.data = (void *)v; val.size = (u_int32_t)vl;
    return t->db->db->put(t->db->db, txn, &key, &val, 0);
}

static int write_op(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl, int is_del) {
    bdb_iter_close(t);
    if (t->txn) {   /* a deadlock surfaces to the driver, which re-runs the whole transaction */
        int rc = apply(t, t->txn, k, kl, v, vl, is_del);
        if (rc == DB_NOTFOUND) return KV_NOTFOUND;
        return rc ? fail(&t->c.err, rc, is_del ? "del" : "put") : KV_OK;
    }
    if (t->in_batch) {
        if (kv_oplog_add(&t->log, k, kl, v, vl, is_del)) return kv_seterr(&t->c.err, KV_E_OTHER, "BerkeleyDB: out of memory");
        if (!t->db->txn || t->doomed) return KV_OK;   /* applied (or replayed) at commit */
        int rc = apply(t, t->batch, k, kl, v, vl, is_del);
        if (rc == DB_LOCK_DEADLOCK) { t->doomed = 1; return KV_OK; }
        if (rc == DB_NOTFOUND) return KV_NOTFOUND;
        return rc ? fail(&t->c.err, rc, is_del ? "del" : "put") : KV_OK;
    }
    int rc;
    for (int i = 0; (rc = apply(t, NULL, k, kl, v, vl, is_del)) == DB_LOCK_DEADLOCK && i < KV_BDB_RETRIES; i++)
        kv_backoff(&t->jitter, i);
    if (rc == DB_NOTFOUND) return KV_NOTFOUND;
    return rc ? fail(&t->c.err, rc, is_del ? "del" : "put") : KV_OK;
}

static int bdb_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return write_op(t, k, kl, v, vl, 0);
}

static int bdb_del(kv_thread *t, const char *k, size_t kl) { return write_op(t, k, kl, NULL, 0, 1); }

static int bdb_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    bdb_iter_close(t);
    DBT key;
    memset(&key, 0, sizeof key);
    key.data = (void *)k; key.size = (u_int32_t)kl;
    DB_TXN *txn = t->txn ? t->txn : t->in_batch && t->db->txn && !t->doomed ? t->batch : NULL;
    int rc;
    for (int i = 0; (rc = t->db->db->get(t->db->db, txn, &key, &t->val, 0)) == DB_LOCK_DEADLOCK && !txn &&
                    i < KV_BDB_RETRIES; i++)
        ;
    if (rc == DB_NOTFOUND || rc == DB_KEYEMPTY) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "get");
    *v = t->val.data;
    *vl = t->val.size;
    return KV_OK;
}

/* Bulk load: the chunk's pairs go into a DB_MULTIPLE_KEY buffer, handed to DB->put a buffer at a time (one
   call for many pairs), in one transaction a chunk (txn variant). */
#define KV_BDB_BULK_BUFFER (8u << 20)

static void bulk_reset(kv_thread *t) {
    t->bulk.ulen = KV_BDB_BULK_BUFFER;
    t->bulk.flags = DB_DBT_USERMEM;
    DB_MULTIPLE_WRITE_INIT(t->bulk_at, &t->bulk);
    t->bulk_pairs = 0;
}

static int bdb_bulk_begin(kv_thread *t) {
    if (!t->bulk.data && !(t->bulk.data = malloc(KV_BDB_BULK_BUFFER)))
        return kv_seterr(&t->c.err, KV_E_OTHER, "BerkeleyDB: out of memory");
    bulk_reset(t);
    bdb_iter_close(t);
    int rc = t->db->txn ? t->db->env->txn_begin(t->db->env, NULL, &t->batch, 0) : 0;
    return rc ? fail(&t->c.err, rc, "txn_begin") : KV_OK;
}

static int bulk_flush(kv_thread *t) {
    if (!t->bulk_pairs) return KV_OK;
    DBT none;
    memset(&none, 0, sizeof none);
    int rc = t->db->db->put(t->db->db, t->batch, &t->bulk, &none, DB_MULTIPLE_KEY);
    bulk_reset(t);
    return rc ? fail(&t->c.err, rc, "bulk put") : KV_OK;
}

static int bdb_bulk_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    if (kl + vl + 64 > KV_BDB_BULK_BUFFER) {   /* a pair larger than the buffer: alone, in the chunk's txn */
        int rc = bulk_flush(t);
        if (!rc && (rc = apply(t, t->batch, k, kl, v, vl, 0))) rc = fail(&t->c.err, rc, "put");
        return rc;
    }
    DB_MULTIPLE_KEY_WRITE_NEXT(t->bulk_at, &t->bulk, k, kl, v, vl);
    if (!t->bulk_at) {   /* full: put what it holds, then this pair into the fresh buffer */
        int rc = bulk_flush(t);
        if (rc) return rc;
        DB_MULTIPLE_KEY_WRITE_NEXT(t->bulk_at, &t->bulk, k, kl, v, vl);
    }
    t->bulk_pairs++;
    return KV_OK;
}

static void bdb_bulk_abort(kv_thread *t) {
    if (t->batch) t->batch->abort(t->batch);
    t->batch = NULL;
    t->bulk_pairs = 0;
}

static int bdb_bulk_commit(kv_thread *t, int last) {
    (void)last;
    int rc = bulk_flush(t);
    if (rc) { bdb_bulk_abort(t); return rc; }
    if (t->batch) {
        rc = t->batch->commit(t->batch, 0);
        t->batch = NULL;
        if (rc) return fail(&t->c.err, rc, "commit");
    }
    return KV_OK;
}

static int bdb_batch_begin(kv_thread *t) {
    bdb_iter_close(t);
    t->log.len = 0;
    t->doomed = 0;
    if (t->db->txn) {
        int rc = t->db->env->txn_begin(t->db->env, NULL, &t->batch, 0);
        if (rc) return fail(&t->c.err, rc, "txn_begin");
    }
    t->in_batch = 1;
    return KV_OK;
}

/* Apply the whole log in a fresh transaction (or directly, notxn). */
static int replay(kv_thread *t) {
    DB_TXN *txn = NULL;
    int rc = 0;
    if (t->db->txn && (rc = t->db->env->txn_begin(t->db->env, NULL, &txn, 0))) return rc;
    size_t pos = 0, kl, vl;
    const char *k, *v;
    int is_del;
    while (!rc && kv_oplog_next(&t->log, &pos, &k, &kl, &v, &vl, &is_del))
        if ((rc = apply(t, txn, k, kl, v, vl, is_del)) == DB_NOTFOUND) rc = 0;
    if (txn) {
        if (rc) txn->abort(txn);
        else rc = txn->commit(txn, 0);
    }
    return rc;
}

static int bdb_batch_commit(kv_thread *t) {
    int rc;
    if (!t->db->txn) {
        rc = replay(t);
    } else {
        if (t->doomed) { t->batch->abort(t->batch); rc = DB_LOCK_DEADLOCK; }
        else rc = t->batch->commit(t->batch, 0);
        t->batch = NULL;
        for (int i = 0; rc == DB_LOCK_DEADLOCK && i < KV_BDB_RETRIES; i++) {
            kv_backoff(&t->jitter, i);
            rc = replay(t);
        }
    }
    t->in_batch = 0;
    t->doomed = 0;
    t->log.len = 0;
    return rc ? fail(&t->c.err, rc, "commit") : KV_OK;
}

static int bdb_batch_abort(kv_thread *t) {
    if (t->batch) t->batch->abort(t->batch);
    t->batch = NULL;
    t->in_batch = 0;
    t->doomed = 0;
    t->log.len = 0;
    return KV_OK;
}

static int bdb_txn_begin(kv_thread *t, int kind) {
    if (t->txn_kind) return kv_seterr(&t->c.err, KV_E_OTHER, "BerkeleyDB: transaction already open");
    bdb_iter_close(t);
    t->txn_kind = kind;
    if (!t->db->txn) return kind == KV_TXN_WRITE ? bdb_batch_begin(t) : KV_OK;
    int rc = t->db->env->txn_begin(t->db->env, NULL, &t->txn, 0);
    if (rc) { t->txn = NULL; t->txn_kind = 0; return fail(&t->c.err, rc, "txn_begin"); }
    return KV_OK;
}

static int bdb_txn_commit(kv_thread *t) {
    int kind = t->txn_kind;
    bdb_iter_close(t);   /* a transaction's cursors close before it ends */
    t->txn_kind = 0;
    if (!t->txn) return kind == KV_TXN_WRITE ? bdb_batch_commit(t) : KV_OK;
    DB_TXN *txn = t->txn;
    t->txn = NULL;
    int rc = txn->commit(txn, 0);   /* a failed commit has ended the transaction too */
    return rc ? fail(&t->c.err, rc, "commit") : KV_OK;
}

static void bdb_txn_abort(kv_thread *t) {
    bdb_iter_close(t);
    if (t->txn) t->txn->abort(t->txn);
    else if (t->txn_kind == KV_TXN_WRITE) bdb_batch_abort(t);
    t->txn = NULL;
    t->txn_kind = 0;
}

static const char *bdb_isolation(const char *variant, int transactions) {
    (void)transactions;
    if (variant && strcmp(variant, "notxn") == 0)
        return "none: the notxn variant runs without transactions; a transaction's writes are applied together "
               "at commit but not atomically against a crash, and its reads see the latest data";
    return "serializable: a DB_TXN at degree 3 (strict two-phase locking); a deadlock victim is counted as a "
           "conflict and retried from the start";
}

static int cursor_out(kv_thread *t, int rc, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (rc == DB_NOTFOUND) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "cursor get");
    *ko = t->ckey.data; *klo = t->ckey.size;
    *vo = t->cval.data; *vlo = t->cval.size;
    return KV_OK;
}

static int bdb_iter_seek(kv_thread *t, const char *k, size_t kl,
                         const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    bdb_iter_close(t);
    int rc = t->db->db->cursor(t->db->db, t->txn, &t->cur, 0);
    if (rc) return fail(&t->c.err, rc, "cursor");
    if (!kl) return cursor_out(t, t->cur->get(t->cur, &t->ckey, &t->cval, DB_FIRST), ko, klo, vo, vlo);
    /* DB_SET_RANGE reads the search key from ckey and returns the found key in it */
    void *buf = realloc(t->ckey.data, kl > t->ckey.ulen ? kl : t->ckey.ulen);
    if (!buf) return kv_seterr(&t->c.err, KV_E_OTHER, "BerkeleyDB: out of memory");
    t->ckey.data = buf;
    if (kl > t->ckey.ulen) t->ckey.ulen = (u_int32_t)kl;
    memcpy(buf, k, kl);
    t->ckey.size = (u_int32_t)kl;
    return cursor_out(t, t->cur->get(t->cur, &t->ckey, &t->cval, DB_SET_RANGE), ko, klo, vo, vlo);
}

static int bdb_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    return cursor_out(t, t->cur->get(t->cur, &t->ckey, &t->cval, DB_NEXT), ko, klo, vo, vlo);
}

static int bdb_compact(kv_db *d, kv_failure *err) {
    int rc = d->db->compact(d->db, NULL, NULL, NULL, NULL, DB_FREE_SPACE, NULL);
    return rc ? fail(err, rc, "compact") : KV_OK;
}

static int bdb_stats(kv_db *d, char *buf, size_t len) {
    DB_BTREE_STAT *bs = NULL;
    DB_MPOOL_STAT *ms = NULL;
    int n = 0;
    if (d->db->stat(d->db, NULL, &bs, DB_FAST_STAT) == 0 && bs) {
        n += snprintf(buf + n, len - n, "btree_keys=%lu\nbtree_levels=%lu\nbtree_pagesize=%lu\n",
                      (unsigned long)bs->bt_nkeys, (unsigned long)bs->bt_levels, (unsigned long)bs->bt_pagesize);
        free(bs);
    }
    if ((size_t)n < len && d->env->memp_stat(d->env, &ms, NULL, 0) == 0 && ms) {
        n += snprintf(buf + n, len - n, "cache_hit=%lu\ncache_miss=%lu\npages_read=%lu\npages_written=%lu\n",
                      (unsigned long)ms->st_cache_hit, (unsigned long)ms->st_cache_miss,
                      (unsigned long)ms->st_page_in, (unsigned long)ms->st_page_out);
        free(ms);
    }
    DB_LOG_STAT *ls = NULL;
    if ((size_t)n < len && d->txn && d->env->log_stat(d->env, &ls, 0) == 0 && ls) {
        n += snprintf(buf + n, len - n, "log_bytes=%llu\nlog_bytes_since_checkpoint=%llu\n",
                      (unsigned long long)ls->st_w_mbytes * 1048576ull + ls->st_w_bytes,
                      (unsigned long long)ls->st_wc_mbytes * 1048576ull + ls->st_wc_bytes);
        free(ls);
    }
    DB_TXN_STAT *ts = NULL;
    if ((size_t)n < len && d->txn && d->env->txn_stat(d->env, &ts, 0) == 0 && ts) {
        n += snprintf(buf + n, len - n, "txn_commits=%llu\nlast_checkpoint_time=%lld\n",
                      (unsigned long long)ts->st_ncommits, (long long)ts->st_time_ckp);
        free(ts);
    }
    return KV_OK;
}

static const char *bdb_version(void) {
    static char buf[32];
    int a, b, c;
    db_version(&a, &b, &c);
    snprintf(buf, sizeof buf, "%d.%d.%d", a, b, c);
    return buf;
}

const kv_engine_ops kv_engine_bdb = {
    .name = "bdb",
    .open = bdb_open, .close = bdb_close,
    .thread_open = bdb_thread_open, .thread_close = bdb_thread_close,
    .put = bdb_put, .get = bdb_get, .del = bdb_del,
    .batch_begin = bdb_batch_begin, .batch_commit = bdb_batch_commit, .batch_abort = bdb_batch_abort,
    .txn_begin = bdb_txn_begin, .txn_commit = bdb_txn_commit, .txn_abort = bdb_txn_abort,
    .iter_seek = bdb_iter_seek, .iter_next = bdb_iter_next, .iter_close = bdb_iter_close,
    .compact = bdb_compact, .stats = bdb_stats, .version = bdb_version, .process_shutdown = NULL,
    .isolation = bdb_isolation,
    .bulk_begin = bdb_bulk_begin, .bulk_put = bdb_bulk_put, .bulk_commit = bdb_bulk_commit,
    .bulk_abort = bdb_bulk_abort,
    .bulk_how = "DB_MULTIPLE_KEY puts (one DB->put call for each 8 MB buffer of pairs), one transaction a chunk "
                "(txn variant)",
};
