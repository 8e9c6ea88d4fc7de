/* libmdbx adapter (mdbx.h, libmdbx 0.14): never compiled into kvlab; `kvlab engines build mdbx@VERSION` links it
 * with the libmdbx the mdbx-sys crate compiles, as a shared object kvlab loads.
 *
 * One environment per run, opened with MDBX_NOSTICKYTHREADS: read transactions belong to our thread contexts, not
 * to OS threads (a context is only ever used by one thread at a time; libmdbx then keeps no thread-local reader
 * slot), and a write transaction is begun and ended by the one thread that owns its context, as libmdbx requires.
 * The geometry is dynamic: the file starts small and grows in steps up to `map_size` (64 GiB by default), which
 * libmdbx reserves as address space, not as disk.
 *
 * Reads: each get outside a transaction renews the thread's read transaction (mdbx_txn_renew, a reader slot
 * claimed, the newest snapshot), so a reader sees every write committed before it, and the next call resets it
 * (mdbx_txn_reset) so that an idle thread never holds old pages from reuse.  Writes outside a batch are one write
 * transaction each; a batch is one write transaction.
 *
 * Transactions: a read transaction keeps the read transaction live from txn_begin to its end (one MVCC snapshot for
 * every get and cursor in it).  A write transaction is one libmdbx write transaction: libmdbx admits one writer at
 * a time (a process-shared lock), so its reads see its own writes and nothing else commits meanwhile: serializable,
 * never a conflict.
 *
 * Durability (libmdbx's sync modes): sync on is MDBX_SYNC_DURABLE (data flushed, then the meta page, at every
 * commit); sync off is MDBX_SAFE_NOSYNC (no flush at commit, but the last flushed "steady" commit is kept intact, so
 * a system crash rolls back to it instead of corrupting the database); `options` picks MDBX_NOMETASYNC or
 * MDBX_UTTERLY_NOSYNC (LMDB's MDB_NOSYNC) instead.
 *
 * options (comma list): nometasync, safe_nosync, utterly_nosync, writemap, liforeclaim, nordahead, nomeminit.
 */
#include <errno.h>
#include <mdbx.h>

#include "kv_util.h"

#define MDBX_DEFAULT_MAP ((size_t)64 << 30)
#define MDBX_GROWTH_STEP ((intptr_t)16 << 20)   /* the file grows 16 MiB at a time */

struct kv_db {
    MDBX_env *env;
    MDBX_dbi dbi;
};

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    MDBX_txn *rtxn;      /* this thread's read transaction: reset when idle */
    MDBX_txn *wtxn;      /* open while a batch or a write transaction is in progress */
    MDBX_cursor *cur;    /* a cursor for range reads, rebound to whichever transaction reads */
    int rtxn_live;
    int snap;            /* in a read transaction: rtxn stays live until its end */
    int cur_in_wtxn;     /* `cur` is bound to wtxn (unbound at its end) */
};

static int mdbx_kv_code(int rc) {
    switch (rc) {
    case MDBX_SUCCESS: return KV_OK;
    case MDBX_NOTFOUND: return KV_NOTFOUND;
    case MDBX_MAP_FULL: case MDBX_DBS_FULL: case MDBX_READERS_FULL: case MDBX_TXN_FULL: case MDBX_PAGE_FULL:
    case MDBX_UNABLE_EXTEND_MAPSIZE: case MDBX_TOO_LARGE: case ENOSPC:
        return KV_E_FULL;
    case MDBX_CORRUPTED: case MDBX_PAGE_NOTFOUND: case MDBX_INVALID: case MDBX_VERSION_MISMATCH: case MDBX_PANIC:
    case MDBX_WANNA_RECOVERY: case MDBX_EBADSIGN:
        return KV_E_CORRUPT;
    case EIO: return KV_E_IO;
    case MDBX_BUSY: case EAGAIN: case EBUSY: return KV_E_BUSY;
    case EINVAL: case MDBX_INCOMPATIBLE: case MDBX_BAD_VALSIZE: return KV_E_CONFIG;
    default: return KV_E_OTHER;
    }
}

/* libmdbx's own codes by name (mdbx.h's MDBX_error_t); any other code it returns is an errno. */
#define MDBX_CODES(X)                                                                                              \
    X(MDBX_KEYEXIST) X(MDBX_NOTFOUND) X(MDBX_PAGE_NOTFOUND) X(MDBX_CORRUPTED) X(MDBX_PANIC)                        \
    X(MDBX_VERSION_MISMATCH) X(MDBX_INVALID) X(MDBX_MAP_FULL) X(MDBX_DBS_FULL) X(MDBX_READERS_FULL)                \
    X(MDBX_TXN_FULL) X(MDBX_CURSOR_FULL) X(MDBX_PAGE_FULL) X(MDBX_UNABLE_EXTEND_MAPSIZE) X(MDBX_INCOMPATIBLE)      \
    X(MDBX_BAD_RSLOT) X(MDBX_BAD_TXN) X(MDBX_BAD_VALSIZE) X(MDBX_BAD_DBI) X(MDBX_PROBLEM) X(MDBX_BUSY)            \
    X(MDBX_EMULTIVAL) X(MDBX_EBADSIGN) X(MDBX_WANNA_RECOVERY) X(MDBX_EKEYMISMATCH) X(MDBX_TOO_LARGE)              \
    X(MDBX_THREAD_MISMATCH) X(MDBX_TXN_OVERLAPPING) X(MDBX_BACKLOG_DEPLETED) X(MDBX_DUPLICATED_LCK)              \
    X(MDBX_DANGLING_DBI) X(MDBX_OUSTED) X(MDBX_MVCC_RETARDED) X(MDBX_LAGGARD_READER)

static const char *mdbx_code_name(int rc) {
    switch (rc) {
#define MDBX_CASE(name) case name: return #name;
    MDBX_CODES(MDBX_CASE)
#undef MDBX_CASE
    default: return rc > 0 ? kv_errno_name(rc) : NULL;
    }
}

static int fail(kv_failure *e, int rc, const char *what) {
    char where[64];
    snprintf(where, sizeof where, "libmdbx %s", what);
    /* mdbx_liberr2str: libmdbx's own codes; an errno's text is the OS's (mdbx_strerror) */
    const char *text = mdbx_liberr2str(rc);
    return kv_engine_error(e, mdbx_kv_code(rc), rc, mdbx_code_name(rc), rc > 0 ? rc : 0, where,
                           text ? text : mdbx_strerror(rc), "%s", "");
}

/* `log_notice`: libmdbx's own log at NOTICE for this open, to stderr: its recovery after an unclean shutdown (which
   meta page it keeps or purges, and whether the boot id matched), what a crash test's reader prints. */
static int log_notice;

static int parse_flags(const char *opts, MDBX_env_flags_t *flags, kv_failure *err) {
    static const struct { const char *name; MDBX_env_flags_t flag; int sync_mode; } table[] = {
        {"nometasync", MDBX_NOMETASYNC, 1}, {"safe_nosync", MDBX_SAFE_NOSYNC, 1},
        {"utterly_nosync", MDBX_UTTERLY_NOSYNC, 1}, {"writemap", MDBX_WRITEMAP, 0},
        {"liforeclaim", MDBX_LIFORECLAIM, 0}, {"nordahead", MDBX_NORDAHEAD, 0}, {"nomeminit", MDBX_NOMEMINIT, 0},
    };
    char tok[64];
    const char *s = opts;
    const char *mode = NULL;
    log_notice = 0;
    while ((s = kv_next_token(s, tok, sizeof tok)) != NULL) {
        if (strcmp(tok, "log_notice") == 0) {
            log_notice = 1;
            continue;
        }
        size_t i;
        for (i = 0; i < sizeof table / sizeof table[0]; i++)
            if (strcmp(tok, table[i].name) == 0) break;
        if (i == sizeof table / sizeof table[0])
            return kv_seterr(err, KV_E_CONFIG,
                             "libmdbx option '%s' is unknown; allowed: nometasync, safe_nosync, utterly_nosync, "
                             "writemap, liforeclaim, nordahead, nomeminit, log_notice", tok);
        if (table[i].sync_mode) {   /* one sync mode replaces the one `sync` picked */
            if (mode && strcmp(mode, table[i].name) != 0)
                return kv_seterr(err, KV_E_CONFIG, "libmdbx options '%s' and '%s' are two sync modes; give one",
                                 mode, table[i].name);
            mode = table[i].name;
            *flags = (*flags & ~(MDBX_env_flags_t)(MDBX_UTTERLY_NOSYNC | MDBX_NOMETASYNC)) | table[i].flag;
        } else {
            *flags |= table[i].flag;
        }
    }
    return KV_OK;
}

/* libmdbx logs at NOTICE by default, to stderr: every open's readahead and meta choices, its file's growth, and, from
   its fork handler, "rthc_afterfork: drown 0 rthc entries" in each child a process forks once the library is loaded
   (a memory-bounded run's child, before any open there): warnings only.  Set as the adapter loads, and again at
   each open: libmdbx's own constructor (mdbx_init) sets NOTICE, and the order of the two constructors is the
   linker's. */
static void mx_quiet(void) { mdbx_setup_debug(MDBX_LOG_WARN, MDBX_DBG_DONTCHANGE, MDBX_LOGGER_DONTCHANGE); }
__attribute__((constructor(65535))) static void mx_quiet_at_load(void) { mx_quiet(); }

static int mx_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    MDBX_env_flags_t flags = MDBX_NOSTICKYTHREADS | (cfg->sync ? MDBX_SYNC_DURABLE : MDBX_SAFE_NOSYNC);
    int rc = parse_flags(cfg->options, &flags, err);
    if (rc) return rc;
    if (log_notice)
        mdbx_setup_debug(MDBX_LOG_NOTICE, MDBX_DBG_DONTCHANGE, MDBX_LOGGER_DONTCHANGE);
    else
        mx_quiet();
    kv_db *db = calloc(1, sizeof *db);
    if (!db) return kv_seterr(err, KV_E_OTHER, "libmdbx: out of memory");
    if ((rc = mdbx_env_create(&db->env))) { free(db); return fail(err, rc, "env_create"); }
    size_t map = cfg->map_size ? cfg->map_size : MDBX_DEFAULT_MAP;
    /* lower bound: libmdbx's minimum; the file starts at one growth step; upper: the map; page size: default */
    if ((rc = mdbx_env_set_geometry(db->env, -1, MDBX_GROWTH_STEP, (intptr_t)map, MDBX_GROWTH_STEP, -1, -1)))
        goto bad;
    if ((rc = mdbx_env_set_maxreaders(db->env, (unsigned)(cfg->max_threads > 0 ? cfg->max_threads + 8 : 126))))
        goto bad;
    /* mode 0: open an existing database only (libmdbx creates none) */
    if ((rc = mdbx_env_open(db->env, path, flags, cfg->create ? 0664 : 0))) goto bad;
    MDBX_txn *txn;
    if ((rc = mdbx_txn_begin(db->env, NULL, MDBX_TXN_READWRITE, &txn))) goto bad;
    if ((rc = mdbx_dbi_open(txn, NULL, MDBX_DB_DEFAULTS, &db->dbi))) { mdbx_txn_abort(txn); goto bad; }
    if ((rc = mdbx_txn_commit(txn))) goto bad;
    *out = db;
    return KV_OK;
bad:
    fail(err, rc, "open");
    mdbx_env_close(db->env);
    free(db);
    return mdbx_kv_code(rc);
}

static int mx_close(kv_db *db, kv_failure *err) {
    int rc = mdbx_env_close_ex(db->env, false);   /* flushes what a no-sync mode left unflushed */
    free(db);
    return rc ? fail(err, rc, "env_close") : KV_OK;
}

static int mx_thread_open(kv_db *db, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "libmdbx: out of memory");
    t->db = db;
    int rc = mdbx_txn_begin(db->env, NULL, MDBX_TXN_RDONLY, &t->rtxn);
    if (rc) { free(t); return fail(err, rc, "read txn_begin"); }
    mdbx_txn_reset(t->rtxn);
    if (!(t->cur = mdbx_cursor_create(NULL))) {
        mdbx_txn_abort(t->rtxn);
        free(t);
        return kv_seterr(err, KV_E_OTHER, "libmdbx: out of memory (cursor_create)");
    }
    *out = t;
    return KV_OK;
}

static void idle(kv_thread *t) {
    if (t->rtxn_live) { mdbx_txn_reset(t->rtxn); t->rtxn_live = 0; }
}

/* Unbind the cursor from the write transaction before that transaction ends (it would close it otherwise). */
static void unbind_write_cursor(kv_thread *t) {
    if (t->cur_in_wtxn) { mdbx_cursor_unbind(t->cur); t->cur_in_wtxn = 0; }
}

static void end_write(kv_thread *t) {
    unbind_write_cursor(t);
    if (t->wtxn) mdbx_txn_abort(t->wtxn);
    t->wtxn = NULL;
}

static void mx_thread_close(kv_thread *t) {
    end_write(t);
    mdbx_cursor_close(t->cur);
    mdbx_txn_abort(t->rtxn);
    free(t);
}

static int write_one(kv_thread *t, int is_put, const char *k, size_t kl, const char *v, size_t vl) {
    MDBX_val key = {(void *)k, kl}, val = {(void *)v, vl};
    MDBX_txn *txn = t->wtxn;
    int rc;
    if (!txn) {
        idle(t);
        if ((rc = mdbx_txn_begin(t->db->env, NULL, MDBX_TXN_READWRITE, &txn))) return fail(&t->c.err, rc, "txn_begin");
    }
    rc = is_put ? mdbx_put(txn, t->db->dbi, &key, &val, MDBX_UPSERT) : mdbx_del(txn, t->db->dbi, &key, NULL);
    if (t->wtxn) {
        if (rc && rc != MDBX_NOTFOUND) end_write(t);   /* libmdbx marks the txn failed: the batch is dropped */
    } else if (rc && rc != MDBX_NOTFOUND) {
        mdbx_txn_abort(txn);
    } else if (rc == MDBX_NOTFOUND) {
        mdbx_txn_abort(txn);   /* nothing changed */
    } else if ((rc = mdbx_txn_commit(txn))) {
        return fail(&t->c.err, rc, "commit");
    }
    if (rc == MDBX_NOTFOUND) return KV_NOTFOUND;
    return rc ? fail(&t->c.err, rc, is_put ? "put" : "del") : KV_OK;
}

static int mx_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return write_one(t, 1, k, kl, v, vl);
}

static int mx_del(kv_thread *t, const char *k, size_t kl) { return write_one(t, 0, k, kl, NULL, 0); }

/* The read transaction a read outside any transaction uses: renewed, so it sees the newest commit. */
static int fresh_snapshot(kv_thread *t) {
    idle(t);
    int rc = mdbx_txn_renew(t->rtxn);
    if (rc) return fail(&t->c.err, rc, "txn_renew");
    t->rtxn_live = 1;   /* values point into the map: reset at the next call */
    return KV_OK;
}

static int mx_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    MDBX_val key = {(void *)k, kl}, val;
    int rc;
    if (t->wtxn) {           /* read-your-writes inside a batch or write transaction */
        rc = mdbx_get(t->wtxn, t->db->dbi, &key, &val);
    } else {
        if (!t->snap && (rc = fresh_snapshot(t))) return rc;
        rc = mdbx_get(t->rtxn, t->db->dbi, &key, &val);
    }
    if (rc == MDBX_NOTFOUND) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "get");
    *v = val.iov_base;
    *vl = val.iov_len;
    return KV_OK;
}

static int mx_batch_begin(kv_thread *t) {
    if (t->wtxn) return kv_seterr(&t->c.err, KV_E_OTHER, "libmdbx: a batch is already open");
    idle(t);
    int rc = mdbx_txn_begin(t->db->env, NULL, MDBX_TXN_READWRITE, &t->wtxn);
    return rc ? fail(&t->c.err, rc, "txn_begin") : KV_OK;
}

static int mx_batch_commit(kv_thread *t) {
    if (!t->wtxn) return kv_seterr(&t->c.err, KV_E_OTHER, "libmdbx: the batch was aborted by an earlier error");
    unbind_write_cursor(t);
    int rc = mdbx_txn_commit(t->wtxn);   /* ends the transaction, committed or (on failure) aborted */
    t->wtxn = NULL;
    return rc ? fail(&t->c.err, rc, "commit") : KV_OK;
}

static int mx_batch_abort(kv_thread *t) {
    end_write(t);
    return KV_OK;
}

static int mx_txn_begin(kv_thread *t, int kind) {
    if (kind == KV_TXN_WRITE) return mx_batch_begin(t);
    if (t->snap || t->wtxn) return kv_seterr(&t->c.err, KV_E_OTHER, "libmdbx: a transaction is already open");
    int rc = fresh_snapshot(t);
    if (rc) return rc;
    t->snap = 1;
    return KV_OK;
}

static void end_snapshot(kv_thread *t) {
    idle(t);
    t->snap = 0;
}

static int mx_txn_commit(kv_thread *t) {
    if (t->snap) { end_snapshot(t); return KV_OK; }
    return mx_batch_commit(t);
}

static void mx_txn_abort(kv_thread *t) {
    if (t->snap) end_snapshot(t);
    else end_write(t);
}

/* Bulk load: MDBX_APPEND puts (each key above the last: no search, leaf pages filled whole) through the thread's
   cursor bound to the chunk's write transaction, one transaction a chunk. */
static int mx_bulk_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    MDBX_val key = {(void *)k, kl}, val = {(void *)v, vl};
    int rc;
    if (!t->cur_in_wtxn) {
        if ((rc = mdbx_cursor_bind(t->wtxn, t->cur, t->db->dbi))) return fail(&t->c.err, rc, "cursor_bind");
        t->cur_in_wtxn = 1;
    }
    rc = mdbx_cursor_put(t->cur, &key, &val, MDBX_APPEND);
    if (rc == MDBX_EKEYMISMATCH || rc == MDBX_KEYEXIST)
        return kv_seterr(&t->c.err, KV_E_CONFIG, "libmdbx append: key %.*s is not above the database's last key "
                         "(a bulk load takes keys in ascending order into a database that holds only smaller ones)",
                         (int)kl, k);
    return rc ? fail(&t->c.err, rc, "append put") : KV_OK;
}

static int mx_bulk_commit(kv_thread *t, int last) {
    (void)last;
    return mx_batch_commit(t);
}

static void mx_bulk_abort(kv_thread *t) { end_write(t); }

static const char *mx_isolation(const char *variant, int transactions) {
    (void)variant; (void)transactions;
    return "serializable: a write transaction is one libmdbx write transaction (one writer at a time, so no "
           "conflicts and no retries); a read-only transaction reads one MVCC snapshot";
}

static int cursor_out(kv_thread *t, int rc, MDBX_val *key, MDBX_val *val,
                      const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (rc == MDBX_NOTFOUND) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "cursor_get");
    *ko = key->iov_base; *klo = key->iov_len;
    *vo = val->iov_base; *vlo = val->iov_len;
    return KV_OK;
}

static int mx_iter_seek(kv_thread *t, const char *k, size_t kl,
                        const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    int rc;
    if (t->wtxn) {   /* a range read inside a write transaction sees its writes */
        if (!t->cur_in_wtxn) {
            if ((rc = mdbx_cursor_bind(t->wtxn, t->cur, t->db->dbi))) return fail(&t->c.err, rc, "cursor_bind");
            t->cur_in_wtxn = 1;
        }
    } else {
        if (!t->snap && (rc = fresh_snapshot(t))) return rc;
        if ((rc = mdbx_cursor_bind(t->rtxn, t->cur, t->db->dbi))) return fail(&t->c.err, rc, "cursor_bind");
    }
    MDBX_val key = {(void *)k, kl}, val;
    rc = mdbx_cursor_get(t->cur, &key, &val, kl ? MDBX_SET_RANGE : MDBX_FIRST);
    return cursor_out(t, rc, &key, &val, ko, klo, vo, vlo);
}

static int mx_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    MDBX_val key, val;
    int rc = mdbx_cursor_get(t->cur, &key, &val, MDBX_NEXT);
    return cursor_out(t, rc, &key, &val, ko, klo, vo, vlo);
}

static void mx_iter_close(kv_thread *t) {
    if (t->wtxn || t->snap) return;   /* the transaction's end ends it */
    idle(t);
}

static int mx_compact(kv_db *db, kv_failure *err) {
    (void)db;
    return kv_seterr(err, KV_E_NOTSUP, "libmdbx is a B+tree that merges and reuses pages in place: no compaction "
                                       "step (mdbx_env_copy with MDBX_CP_COMPACT makes a compacted copy)");
}

static int mx_stats(kv_db *db, char *buf, size_t len) {
    MDBX_envinfo info;
    MDBX_stat st;
    if (mdbx_env_info_ex(db->env, NULL, &info, sizeof info) || mdbx_env_stat_ex(db->env, NULL, &st, sizeof st))
        return KV_E_OTHER;
    snprintf(buf, len,
             "map_size=%llu\nfile_size=%llu\nlast_pgno=%llu\nlast_txnid=%llu\nmax_readers=%u\nnum_readers=%u\n"
             "page_size=%u\ndepth=%u\nbranch_pages=%llu\nleaf_pages=%llu\noverflow_pages=%llu\nentries=%llu\n"
             "unsync_bytes=%llu\npages_new=%llu\npages_cow=%llu\npage_splits=%llu\npage_merges=%llu\n"
             "pages_spilled=%llu\nwrite_ops=%llu\nmsyncs=%llu\nfsyncs=%llu\n",
             (unsigned long long)info.mi_mapsize, (unsigned long long)info.mi_dxb_fsize,
             (unsigned long long)info.mi_last_pgno, (unsigned long long)info.mi_recent_txnid, info.mi_maxreaders,
             info.mi_numreaders, st.ms_psize, st.ms_depth, (unsigned long long)st.ms_branch_pages,
             (unsigned long long)st.ms_leaf_pages, (unsigned long long)st.ms_overflow_pages,
             (unsigned long long)st.ms_entries, (unsigned long long)info.mi_unsync_volume,
             (unsigned long long)info.mi_pgop_stat.newly, (unsigned long long)info.mi_pgop_stat.cow,
             (unsigned long long)info.mi_pgop_stat.split, (unsigned long long)info.mi_pgop_stat.merge,
             (unsigned long long)info.mi_pgop_stat.spill, (unsigned long long)info.mi_pgop_stat.wops,
             (unsigned long long)info.mi_pgop_stat.msync, (unsigned long long)info.mi_pgop_stat.fsync);
    return KV_OK;
}

static const char *mx_version(void) {
    static char buf[32];
    snprintf(buf, sizeof buf, "%u.%u.%u", mdbx_version.major, mdbx_version.minor, mdbx_version.patch);
    return buf;
}

const kv_engine_ops kv_engine_mdbx = {
    .name = "mdbx",
    .open = mx_open, .close = mx_close,
    .thread_open = mx_thread_open, .thread_close = mx_thread_close,
    .put = mx_put, .get = mx_get, .del = mx_del,
    .batch_begin = mx_batch_begin, .batch_commit = mx_batch_commit, .batch_abort = mx_batch_abort,
    .txn_begin = mx_txn_begin, .txn_commit = mx_txn_commit, .txn_abort = mx_txn_abort,
    .iter_seek = mx_iter_seek, .iter_next = mx_iter_next, .iter_close = mx_iter_close,
    .compact = mx_compact, .stats = mx_stats, .version = mx_version, .process_shutdown = NULL,
    .isolation = mx_isolation,
    .bulk_begin = mx_batch_begin, .bulk_put = mx_bulk_put, .bulk_commit = mx_bulk_commit,
    .bulk_abort = mx_bulk_abort,
    .bulk_how = "MDBX_APPEND puts through one cursor (no search; leaf pages filled whole, not split in half), "
                "one write transaction a chunk",
};
