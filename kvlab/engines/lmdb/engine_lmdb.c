/* LMDB adapter.
 *
 * One environment per run, MDB_NOTLS so read transactions belong to our thread
 * contexts rather than to OS threads.  Each get renews the thread's read txn, so a
 * reader sees writes committed before it (what readwhilewriting measures), then
 * resets it so a long run never pins old pages.  Writes outside a batch are one
 * write txn each; a batch is one write txn.
 *
 * Transactions: a read transaction keeps the thread's read txn live from txn_begin to
 * its end, so every get and cursor in it reads one MVCC snapshot.  A write transaction
 * is one LMDB write txn: LMDB admits one writer at a time, so its reads (and cursors,
 * opened in the write txn) see its own writes and nothing else can commit meanwhile:
 * serializable, never a conflict.
 *
 * options (comma list): nosync, nometasync, writemap, mapasync, nordahead, nomeminit.
 */
#include <errno.h>
#include <lmdb.h>
#include <sys/stat.h>

#include "kv_util.h"

struct kv_db {
    MDB_env *env;
    MDB_dbi dbi;
};

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    MDB_txn *rtxn;   /* reset when idle */
    MDB_txn *wtxn;   /* open while a batch is in progress */
    MDB_cursor *cur;
    MDB_cursor *wcur;  /* a cursor inside the write txn (a write transaction's range read) */
    int rtxn_live;
    int snap;          /* in a read transaction: rtxn stays live until its end */
};

static int lmdb_code(int rc) {
    switch (rc) {
    case 0: return KV_OK;
    case MDB_NOTFOUND: return KV_NOTFOUND;
    case MDB_MAP_FULL: case MDB_DBS_FULL: case MDB_READERS_FULL: case MDB_TXN_FULL:
    case ENOSPC: return KV_E_FULL;
    case MDB_CORRUPTED: case MDB_PAGE_NOTFOUND: case MDB_INVALID: case MDB_VERSION_MISMATCH:
        return KV_E_CORRUPT;
    case EIO: return KV_E_IO;
    case EAGAIN: case EBUSY: return KV_E_BUSY;
    case EINVAL: return KV_E_CONFIG;
    default: return KV_E_OTHER;
    }
}

/* LMDB's own codes by name (py-lmdb's table); any other code LMDB returns is an errno. */
#define LMDB_CODES(X)                                                                                      \
    X(MDB_KEYEXIST) X(MDB_NOTFOUND) X(MDB_PAGE_NOTFOUND) X(MDB_CORRUPTED) X(MDB_PANIC) X(MDB_VERSION_MISMATCH) \
    X(MDB_INVALID) X(MDB_MAP_FULL) X(MDB_DBS_FULL) X(MDB_READERS_FULL) X(MDB_TLS_FULL) X(MDB_TXN_FULL)        \
    X(MDB_CURSOR_FULL) X(MDB_PAGE_FULL) X(MDB_MAP_RESIZED) X(MDB_INCOMPATIBLE) X(MDB_BAD_RSLOT) X(MDB_BAD_TXN) \
    X(MDB_BAD_VALSIZE) X(MDB_BAD_DBI)

static const char *lmdb_name(int rc) {
    switch (rc) {
#define LMDB_CASE(name) case name: return #name;
    LMDB_CODES(LMDB_CASE)
#undef LMDB_CASE
    default: return rc > 0 ? kv_errno_name(rc) : NULL;
    }
}

static int fail(kv_failure *e, int rc, const char *what) {
    char where[64];
    snprintf(where, sizeof where, "LMDB %s", what);
    return kv_engine_error(e, lmdb_code(rc), rc, lmdb_name(rc), rc > 0 ? rc : 0, where, mdb_strerror(rc), "%s", "");
}

static int parse_flags(const char *opts, unsigned *flags, kv_failure *err) {
    static const struct { const char *name; unsigned flag; } table[] = {
        {"nosync", MDB_NOSYNC}, {"nometasync", MDB_NOMETASYNC}, {"writemap", MDB_WRITEMAP},
        {"mapasync", MDB_MAPASYNC}, {"nordahead", MDB_NORDAHEAD}, {"nomeminit", MDB_NOMEMINIT},
    };
    char tok[64];
    const char *s = opts;
    while ((s = kv_next_token(s, tok, sizeof tok)) != NULL) {
        size_t i;
        for (i = 0; i < sizeof table / sizeof table[0]; i++)
            if (strcmp(tok, table[i].name) == 0) { *flags |= table[i].flag; break; }
        if (i == sizeof table / sizeof table[0])
            return kv_seterr(err, KV_E_CONFIG,
                             "LMDB option '%s' is unknown; allowed: nosync, nometasync, writemap, "
                             "mapasync, nordahead, nomeminit", tok);
    }
    return KV_OK;
}

static int lm_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    unsigned flags = MDB_NOTLS;
    int rc = parse_flags(cfg->options, &flags, err);
    if (rc) return rc;
    if (!cfg->sync) flags |= MDB_NOSYNC;
    kv_db *db = calloc(1, sizeof *db);
    if (!db) return kv_seterr(err, KV_E_OTHER, "LMDB: out of memory");
    if ((rc = mdb_env_create(&db->env))) { free(db); return fail(err, rc, "env_create"); }
    /* Sparse file: a large map costs nothing until written. */
    size_t map = cfg->map_size ? cfg->map_size : ((size_t)64 << 30);
    if ((rc = mdb_env_set_mapsize(db->env, map))) goto bad;
    if ((rc = mdb_env_set_maxreaders(db->env, (unsigned)(cfg->max_threads > 0 ? cfg->max_threads + 8 : 126))))
        goto bad;
    if ((rc = mdb_env_open(db->env, path, flags, 0664))) goto bad;
    MDB_txn *txn;
    if ((rc = mdb_txn_begin(db->env, NULL, 0, &txn))) goto bad;
    if ((rc = mdb_dbi_open(txn, NULL, 0, &db->dbi))) { mdb_txn_abort(txn); goto bad; }
    if ((rc = mdb_txn_commit(txn))) goto bad;
    *out = db;
    return KV_OK;
bad:
    fail(err, rc, "open");
    mdb_env_close(db->env);
    free(db);
    return lmdb_code(rc);
}

static int lm_close(kv_db *db, kv_failure *err) {
    (void)err;
    mdb_env_close(db->env);
    free(db);
    return KV_OK;
}

static int lm_thread_open(kv_db *db, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "LMDB: out of memory");
    t->db = db;
    int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &t->rtxn);
    if (rc) { free(t); return fail(err, rc, "read txn_begin"); }
    mdb_txn_reset(t->rtxn);
    *out = t;
    return KV_OK;
}

static void lm_thread_close(kv_thread *t) {
    if (t->cur) mdb_cursor_close(t->cur);
    if (t->wcur) mdb_cursor_close(t->wcur);
    if (t->wtxn) mdb_txn_abort(t->wtxn);
    mdb_txn_abort(t->rtxn);
    free(t);
}

static int write_one(kv_thread *t, int is_put, const char *k, size_t kl, const char *v, size_t vl) {
    MDB_val key = {kl, (void *)k}, val = {vl, (void *)v};
    MDB_txn *txn = t->wtxn;
    int rc;
    if (!txn && (rc = mdb_txn_begin(t->db->env, NULL, 0, &txn))) return fail(&t->c.err, rc, "txn_begin");
    rc = is_put ? mdb_put(txn, t->db->dbi, &key, &val, 0) : mdb_del(txn, t->db->dbi, &key, NULL);
    if (t->wtxn) {
        if (rc && rc != MDB_NOTFOUND) {   /* LMDB marks the txn failed; drop the batch */
            if (t->wcur) { mdb_cursor_close(t->wcur); t->wcur = NULL; }
            mdb_txn_abort(t->wtxn);
            t->wtxn = NULL;
        }
    } else if (rc) {
        mdb_txn_abort(txn);
    } else if ((rc = mdb_txn_commit(txn))) {
        return fail(&t->c.err, rc, "commit");
    }
    if (rc == MDB_NOTFOUND) return KV_NOTFOUND;
    return rc ? fail(&t->c.err, rc, is_put ? "put" : "del") : KV_OK;
}

static int lm_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return write_one(t, 1, k, kl, v, vl);
}

static int lm_del(kv_thread *t, const char *k, size_t kl) { return write_one(t, 0, k, kl, NULL, 0); }

static int lm_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    MDB_val key = {kl, (void *)k}, val;
    int rc;
    if (t->wtxn) {  /* read-your-writes inside a batch */
        rc = mdb_get(t->wtxn, t->db->dbi, &key, &val);
    } else if (t->snap) {   /* a read transaction: its one snapshot */
        rc = mdb_get(t->rtxn, t->db->dbi, &key, &val);
    } else {
        if (t->rtxn_live) { mdb_txn_reset(t->rtxn); t->rtxn_live = 0; }
        if ((rc = mdb_txn_renew(t->rtxn))) return fail(&t->c.err, rc, "txn_renew");
        rc = mdb_get(t->rtxn, t->db->dbi, &key, &val);
        t->rtxn_live = 1;  /* the value points into the map; reset on the next call */
    }
    if (rc == MDB_NOTFOUND) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "get");
    *v = val.mv_data;
    *vl = val.mv_size;
    return KV_OK;
}

static int lm_batch_begin(kv_thread *t) {
    if (t->wtxn) return kv_seterr(&t->c.err, KV_E_OTHER, "LMDB: batch already open");
    if (t->rtxn_live) { mdb_txn_reset(t->rtxn); t->rtxn_live = 0; }
    int rc = mdb_txn_begin(t->db->env, NULL, 0, &t->wtxn);
    return rc ? fail(&t->c.err, rc, "txn_begin") : KV_OK;
}

static int lm_batch_commit(kv_thread *t) {
    if (!t->wtxn) return kv_seterr(&t->c.err, KV_E_OTHER, "LMDB: batch was aborted by an earlier error");
    if (t->wcur) { mdb_cursor_close(t->wcur); t->wcur = NULL; }
    int rc = mdb_txn_commit(t->wtxn);
    t->wtxn = NULL;
    return rc ? fail(&t->c.err, rc, "commit") : KV_OK;
}

static int lm_batch_abort(kv_thread *t) {
    if (t->wcur) { mdb_cursor_close(t->wcur); t->wcur = NULL; }
    if (t->wtxn) mdb_txn_abort(t->wtxn);
    t->wtxn = NULL;
    return KV_OK;
}

static int lm_txn_begin(kv_thread *t, int kind) {
    if (kind == KV_TXN_WRITE) return lm_batch_begin(t);
    if (t->snap || t->wtxn) return kv_seterr(&t->c.err, KV_E_OTHER, "LMDB: transaction already open");
    if (t->rtxn_live) { mdb_txn_reset(t->rtxn); t->rtxn_live = 0; }
    int rc = mdb_txn_renew(t->rtxn);
    if (rc) return fail(&t->c.err, rc, "txn_renew");
    t->rtxn_live = t->snap = 1;
    return KV_OK;
}

static void end_snapshot(kv_thread *t) {
    if (t->rtxn_live) { mdb_txn_reset(t->rtxn); t->rtxn_live = 0; }
    t->snap = 0;
}

static int lm_txn_commit(kv_thread *t) {
    if (t->snap) { end_snapshot(t); return KV_OK; }
    return lm_batch_commit(t);
}

static void lm_txn_abort(kv_thread *t) {
    if (t->snap) end_snapshot(t);
    else lm_batch_abort(t);
}

/* Bulk load: MDB_APPEND puts (each key above the last: no search, pages filled whole instead of split
   in half) through one cursor of the chunk's write txn, which stays at the end of the tree (after the
   first, an append does not walk down from the root as mdb_put's fresh cursor would), one txn a chunk. */
static int lm_bulk_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    MDB_val key = {kl, (void *)k}, val = {vl, (void *)v};
    int rc;
    if (!t->wcur && (rc = mdb_cursor_open(t->wtxn, t->db->dbi, &t->wcur))) return fail(&t->c.err, rc, "cursor_open");
    rc = mdb_cursor_put(t->wcur, &key, &val, MDB_APPEND);
    if (rc == MDB_KEYEXIST)
        return kv_seterr(&t->c.err, KV_E_CONFIG, "LMDB append: key %.*s is not above the database's last key "
                         "(a bulk load takes keys in ascending order into a database that holds only smaller ones)",
                         (int)kl, k);
    return rc ? fail(&t->c.err, rc, "append put") : KV_OK;
}

static int lm_bulk_commit(kv_thread *t, int last) {
    (void)last;
    return lm_batch_commit(t);
}

static void lm_bulk_abort(kv_thread *t) { lm_batch_abort(t); }

static const char *lm_isolation(const char *variant, int transactions) {
    (void)variant; (void)transactions;
    return "serializable: a write transaction is one LMDB write txn (one writer at a time, so no conflicts "
           "and no retries); a read-only transaction reads one MVCC snapshot";
}

static int cursor_out(kv_thread *t, int rc, MDB_val *key, MDB_val *val,
                      const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (rc == MDB_NOTFOUND) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "cursor_get");
    *ko = key->mv_data; *klo = key->mv_size;
    *vo = val->mv_data; *vlo = val->mv_size;
    return KV_OK;
}

static int lm_iter_seek(kv_thread *t, const char *k, size_t kl,
                        const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    int rc;
    MDB_cursor *cur;
    if (t->wtxn) {   /* a range read inside a write transaction sees its writes */
        if (!t->wcur && (rc = mdb_cursor_open(t->wtxn, t->db->dbi, &t->wcur))) return fail(&t->c.err, rc, "cursor_open");
        cur = t->wcur;
    } else {
        if (!t->snap) {
            if (t->rtxn_live) mdb_txn_reset(t->rtxn);
            if ((rc = mdb_txn_renew(t->rtxn))) return fail(&t->c.err, rc, "txn_renew");
            t->rtxn_live = 1;
        }
        if (t->cur) rc = mdb_cursor_renew(t->rtxn, t->cur);
        else rc = mdb_cursor_open(t->rtxn, t->db->dbi, &t->cur);
        if (rc) return fail(&t->c.err, rc, "cursor_open");
        cur = t->cur;
    }
    MDB_val key = {kl, (void *)k}, val;
    rc = mdb_cursor_get(cur, &key, &val, kl ? MDB_SET_RANGE : MDB_FIRST);
    return cursor_out(t, rc, &key, &val, ko, klo, vo, vlo);
}

static int lm_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    MDB_val key, val;
    int rc = mdb_cursor_get(t->wtxn ? t->wcur : t->cur, &key, &val, MDB_NEXT);
    return cursor_out(t, rc, &key, &val, ko, klo, vo, vlo);
}

static void lm_iter_close(kv_thread *t) {
    if (t->wtxn || t->snap) return;   /* the transaction's end closes it */
    if (t->rtxn_live) { mdb_txn_reset(t->rtxn); t->rtxn_live = 0; }
}

static int lm_compact(kv_db *db, kv_failure *err) {
    (void)db;
    return kv_seterr(err, KV_E_NOTSUP, "LMDB is a B+tree with no compaction step");
}

static int lm_stats(kv_db *db, char *buf, size_t len) {
    MDB_envinfo info;
    MDB_stat st;
    mdb_env_info(db->env, &info);
    mdb_env_stat(db->env, &st);
    snprintf(buf, len,
             "map_size=%zu\nlast_pgno=%zu\nlast_txnid=%zu\nmax_readers=%u\nnum_readers=%u\n"
             "page_size=%u\ndepth=%u\nbranch_pages=%zu\nleaf_pages=%zu\noverflow_pages=%zu\nentries=%zu\n",
             info.me_mapsize, info.me_last_pgno, info.me_last_txnid, info.me_maxreaders, info.me_numreaders,
             st.ms_psize, st.ms_depth, st.ms_branch_pages, st.ms_leaf_pages, st.ms_overflow_pages, st.ms_entries);
    return KV_OK;
}

static const char *lm_version(void) {
    static char buf[32];
    int a, b, c;
    mdb_version(&a, &b, &c);
    snprintf(buf, sizeof buf, "%d.%d.%d", a, b, c);
    return buf;
}

const kv_engine_ops kv_engine_lmdb = {
    .name = "lmdb",
    .open = lm_open, .close = lm_close,
    .thread_open = lm_thread_open, .thread_close = lm_thread_close,
    .put = lm_put, .get = lm_get, .del = lm_del,
    .batch_begin = lm_batch_begin, .batch_commit = lm_batch_commit, .batch_abort = lm_batch_abort,
    .txn_begin = lm_txn_begin, .txn_commit = lm_txn_commit, .txn_abort = lm_txn_abort,
    .iter_seek = lm_iter_seek, .iter_next = lm_iter_next, .iter_close = lm_iter_close,
    .compact = lm_compact, .stats = lm_stats, .version = lm_version, .process_shutdown = NULL,
    .isolation = lm_isolation,
    .bulk_begin = lm_batch_begin, .bulk_put = lm_bulk_put, .bulk_commit = lm_bulk_commit,
    .bulk_abort = lm_bulk_abort,
    .bulk_how = "MDB_APPEND puts through one cursor (no search; leaf pages filled whole, not split in half), "
                "one write txn a chunk",
};
