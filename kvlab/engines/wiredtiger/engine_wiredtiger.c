/* WiredTiger adapter (wiredtiger.h), variants "btree" (table: URI) and "lsm" (lsm: URI).
 *
 * One connection per run; each thread context is a session with one cursor on
 * the table, raw byte keys and values (key_format=u,value_format=u).
 * `options` is appended to the wiredtiger_open() config and `table_options` to
 * the create() config, so either can override what the generic fields set.
 * Logging is on only when sync is asked for (the log is what WiredTiger syncs);
 * db_bench_wiredtiger also runs without a log by default.
 * WT_ROLLBACK on an autocommit write is retried; a batch keeps a replay log and
 * is re-run from the start on WT_ROLLBACK, up to KV_WT_RETRIES times.
 *
 * Transactions: a session transaction at snapshot isolation.  Reads (and the scan
 * cursor) see the snapshot taken at its first operation plus its own writes; an update
 * of a key that another transaction changed since (or is changing) fails at once with
 * WT_ROLLBACK, which is KV_E_CONFLICT here, and the driver rolls back and re-runs the
 * template.  Nothing is replayed inside the adapter: the reads would be stale.  WT's
 * snapshot isolation does not track reads, so a read-only key may change under a
 * writer (write skew); first-writer-wins covers read-modify-writes of one key.
 */
#include <errno.h>
#include <wiredtiger.h>

#include "kv_util.h"

#ifndef KV_WT_EXTDIR
#define KV_WT_EXTDIR "/usr/lib/x86_64-linux-gnu"
#endif
#define KV_WT_RETRIES 1000

struct kv_db {
    WT_CONNECTION *conn;
    char uri[32];
};

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    WT_SESSION *s;
    WT_CURSOR *cur;     /* point operations */
    WT_CURSOR *scan;    /* iteration */
    int positioned;     /* cur holds a value from the last get */
    int in_batch;
    int doomed;         /* the batch's transaction hit WT_ROLLBACK */
    int in_txn;         /* a transaction (not a batch) is open */
    uint64_t jitter;    /* backoff RNG state */
    WT_CURSOR *bulk;    /* a bulk load's bulk cursor, open from its first chunk to its last */
    int bulk_tried;     /* the load asked for one (an object that holds records already gets none) */
    uint64_t bulk_puts; /* without one: the chunk's puts so far (a transaction every KV_WT_BULK_TXN) */
    kv_oplog log;
};

static int wt_code(int rc) {
    switch (rc) {
    case 0: return KV_OK;
    case WT_NOTFOUND: return KV_NOTFOUND;
    case WT_ROLLBACK: return KV_E_CONFLICT;
    case WT_CACHE_FULL: case ENOSPC: return KV_E_FULL;
    case EIO: return KV_E_IO;
    case EBUSY: return KV_E_BUSY;
    case EINVAL: case ENOTSUP: return KV_E_CONFIG;
    case WT_PANIC: return KV_E_CORRUPT;
    default: return KV_E_OTHER;
    }
}

/* WiredTiger reports details through its event handler; keep the last one per
   OS thread and append it to the error, instead of letting it print to stderr. */
static __thread char wt_lastmsg[KV_ERRMSG_MAX];

static int on_error(WT_EVENT_HANDLER *h, WT_SESSION *s, int error, const char *message) {
    (void)h; (void)s; (void)error;
    snprintf(wt_lastmsg, sizeof wt_lastmsg, "%s", message);
    return 0;
}

static WT_EVENT_HANDLER event_handler = {.handle_error = on_error};

/* Once WiredTiger panics (a full disk under its log, for one) it must not be called again in this
   process: closing a panicked connection can hang.  The latch makes every later call an error. */
static volatile int wt_panicked;
#define KV_WT_PANIC_NOTE "; WiredTiger has panicked: it needs a new process, where the database reopens with recovery"

/* WiredTiger's own codes by name; any other code it returns is an errno. */
static const char *wt_name(int rc) {
    switch (rc) {
#define WT_CASE(name) case name: return #name;
    WT_CASE(WT_ROLLBACK) WT_CASE(WT_DUPLICATE_KEY) WT_CASE(WT_ERROR) WT_CASE(WT_NOTFOUND) WT_CASE(WT_PANIC)
    WT_CASE(WT_RUN_RECOVERY) WT_CASE(WT_CACHE_FULL)
#ifdef WT_PREPARE_CONFLICT
    WT_CASE(WT_PREPARE_CONFLICT)
#endif
#ifdef WT_TRY_SALVAGE
    WT_CASE(WT_TRY_SALVAGE)
#endif
#undef WT_CASE
    default: return rc > 0 ? kv_errno_name(rc) : NULL;
    }
}

static int fail(kv_failure *e, int rc, const char *what) {
    if (rc == WT_PANIC) wt_panicked = 1;
    char where[64];
    snprintf(where, sizeof where, "WiredTiger %s", what);
    int code = kv_engine_error(e, wt_code(rc), rc, wt_name(rc), rc > 0 ? rc : 0, where, wiredtiger_strerror(rc),
                               "%s%s%s", wt_lastmsg[0] ? " | " : "", wt_lastmsg,
                               rc == WT_PANIC ? KV_WT_PANIC_NOTE : "");
    wt_lastmsg[0] = '\0';
    return code;
}

static int wt_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    if (wt_panicked) return kv_seterr(err, KV_E_CORRUPT, "WiredTiger open refused" KV_WT_PANIC_NOTE);
    int lsm = cfg->variant && strcmp(cfg->variant, "lsm") == 0;
    if (cfg->variant && !lsm && strcmp(cfg->variant, "btree") != 0)
        return kv_seterr(err, KV_E_CONFIG, "WiredTiger variant '%s' is unknown; allowed: btree, lsm", cfg->variant);
    if (cfg->compression != KV_COMP_NONE && cfg->compression != KV_COMP_SNAPPY)
        return kv_seterr(err, KV_E_CONFIG, "WiredTiger here supports compression none or snappy");
    /* the adapter reads and writes WT_ITEMs (format u): another format makes it read garbage lengths */
    if (cfg->table_options && (strstr(cfg->table_options, "key_format") || strstr(cfg->table_options, "value_format")))
        return kv_seterr(err, KV_E_CONFIG, "WiredTiger table_options '%s': key_format and value_format are "
                         "kvlab's (u, raw bytes); allowed: any other table setting", cfg->table_options);
    kv_db *d = calloc(1, sizeof *d);
    if (!d) return kv_seterr(err, KV_E_OTHER, "WiredTiger: out of memory");
    snprintf(d->uri, sizeof d->uri, "%s:kvlab", lsm ? "lsm" : "table");

    char conf[4096];
    /* statistics=(fast) costs every operation (its counters: 17% of a 2-thread readrandom, measured by
       benchmarks/instrument_cost.py), so it is on only when the run asks for the engine's counters */
    int n = snprintf(conf, sizeof conf, "%sstatistics=(%s),session_max=%d", cfg->create ? "create," : "",
                     cfg->engine_counters ? "fast" : "none", (cfg->max_threads > 0 ? cfg->max_threads : 1) + 20);
    if (cfg->cache_size) n += snprintf(conf + n, sizeof conf - n, ",cache_size=%llu", (unsigned long long)cfg->cache_size);
    if (cfg->sync && !cfg->disable_wal)
        n += snprintf(conf + n, sizeof conf - n, ",log=(enabled=true),transaction_sync=(enabled=true,method=fsync)");
    else
        n += snprintf(conf + n, sizeof conf - n, ",log=(enabled=false)");
    if (cfg->compression == KV_COMP_SNAPPY)
        n += snprintf(conf + n, sizeof conf - n, ",extensions=[%s/libwiredtiger_snappy.so]", KV_WT_EXTDIR);
    if (cfg->options && *cfg->options) n += snprintf(conf + n, sizeof conf - n, ",%s", cfg->options);
    if ((size_t)n >= sizeof conf) { free(d); return kv_seterr(err, KV_E_CONFIG, "WiredTiger: connection config too long"); }

    wt_lastmsg[0] = '\0';
    int rc = wiredtiger_open(path, &event_handler, conf, &d->conn);
    if (rc) { fail(err, rc, "open"); free(d); return wt_code(rc); }

    char tconf[4096];
    n = snprintf(tconf, sizeof tconf, "key_format=u,value_format=u");
    if (cfg->compression == KV_COMP_SNAPPY) n += snprintf(tconf + n, sizeof tconf - n, ",block_compressor=snappy");
    if (cfg->block_size) n += snprintf(tconf + n, sizeof tconf - n, ",leaf_page_max=%d", cfg->block_size);
    if (lsm && cfg->write_buffer_size)
        n += snprintf(tconf + n, sizeof tconf - n, ",lsm=(chunk_size=%llu)", (unsigned long long)cfg->write_buffer_size);
    if (lsm && cfg->bloom_bits > 0)
        n += snprintf(tconf + n, sizeof tconf - n, ",lsm=(bloom_bit_count=%d)", cfg->bloom_bits);
    if (cfg->table_options && *cfg->table_options) n += snprintf(tconf + n, sizeof tconf - n, ",%s", cfg->table_options);
    if ((size_t)n >= sizeof tconf) { d->conn->close(d->conn, NULL); free(d); return kv_seterr(err, KV_E_CONFIG, "WiredTiger: table config too long"); }

    WT_SESSION *s;
    if ((rc = d->conn->open_session(d->conn, NULL, NULL, &s)) == 0) {
        rc = s->create(s, d->uri, tconf);
        s->close(s, NULL);
    }
    if (rc) { fail(err, rc, "create table"); d->conn->close(d->conn, NULL); free(d); return wt_code(rc); }
    *out = d;
    return KV_OK;
}

static int wt_close(kv_db *d, kv_failure *err) {
    if (wt_panicked) {   /* left open: the process is expected to exit */
        free(d);
        return kv_seterr(err, KV_E_CORRUPT, "WiredTiger close skipped" KV_WT_PANIC_NOTE);
    }
    int rc = d->conn->close(d->conn, NULL);
    free(d);
    return rc ? fail(err, rc, "close") : KV_OK;
}

static int wt_thread_open(kv_db *d, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "WiredTiger: out of memory");
    t->db = d;
    t->jitter = (uint64_t)(uintptr_t)t;
    int rc = d->conn->open_session(d->conn, NULL, NULL, &t->s);
    if (rc) { free(t); return fail(err, rc, "open_session"); }
    *out = t;   /* the point cursor opens at the first point operation (point_cursor) */
    return KV_OK;
}

static void wt_thread_close(kv_thread *t) {
    if (wt_panicked) { kv_oplog_free(&t->log); free(t); return; }
    if (t->in_batch || t->in_txn) t->s->rollback_transaction(t->s, NULL);
    t->s->close(t->s, NULL);  /* closes its cursors */
    kv_oplog_free(&t->log);
    free(t);
}

static inline void unposition(kv_thread *t) {
    if (t->positioned) { t->cur->reset(t->cur); t->positioned = 0; }
}

/* The thread's point cursor, opened at its first point operation rather than at thread_open: a cursor open on
   the object keeps a bulk cursor from opening, and every kvlab Engine holds a thread context of its own. */
static int point_cursor(kv_thread *t, WT_CURSOR **c) {
    int rc = t->cur ? 0 : t->s->open_cursor(t->s, t->db->uri, NULL, NULL, &t->cur);
    if (rc) t->cur = NULL;
    *c = t->cur;
    return rc;
}

static int apply(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl, int is_del) {
    WT_CURSOR *c;
    int rc = point_cursor(t, &c);
    if (rc) return rc;
    WT_ITEM key = {.data = k, .size = kl}, val = {.data = v, .size = vl};
    c->set_key(c, &key);
    if (is_del) return c->remove(c);
    c->set_value(c, &val);
    return c->insert(c);
}

/* WiredTiger 11 panics the whole library (WT_PANIC, "the process must exit") when a cursor is
   given an empty key, so empty keys are refused here, before they reach set_key. */
static int empty_key(kv_thread *t) {
    return kv_seterr(&t->c.err, KV_E_CONFIG, "WiredTiger: empty keys are not allowed (key length 0)");
}

static int write_op(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl, int is_del) {
    if (!kl) return empty_key(t);
    unposition(t);
    if (t->in_txn) {   /* a conflict surfaces to the driver, which re-runs the whole transaction */
        int rc = apply(t, k, kl, v, vl, is_del);
        if (rc == WT_NOTFOUND) return KV_NOTFOUND;
        return rc ? fail(&t->c.err, rc, is_del ? "remove" : "insert") : KV_OK;
    }
    if (t->in_batch) {
        if (kv_oplog_add(&t->log, k, kl, v, vl, is_del)) return kv_seterr(&t->c.err, KV_E_OTHER, "WiredTiger: out of memory");
        if (t->doomed) return KV_OK;  /* batch_commit replays the whole log */
        int rc = apply(t, k, kl, v, vl, is_del);
        if (rc == WT_ROLLBACK) { t->doomed = 1; return KV_OK; }
        if (rc == WT_NOTFOUND) return KV_NOTFOUND;
        return rc ? fail(&t->c.err, rc, is_del ? "remove" : "insert") : KV_OK;
    }
    int rc;
    for (int i = 0; (rc = apply(t, k, kl, v, vl, is_del)) == WT_ROLLBACK && i < KV_WT_RETRIES; i++)
        ;
    if (rc == WT_NOTFOUND) return KV_NOTFOUND;
    return rc ? fail(&t->c.err, rc, is_del ? "remove" : "insert") : KV_OK;
}

static int wt_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return write_op(t, k, kl, v, vl, 0);
}

static int wt_del(kv_thread *t, const char *k, size_t kl) { return write_op(t, k, kl, NULL, 0, 1); }

static int wt_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    if (!kl) return empty_key(t);
    unposition(t);
    WT_CURSOR *c;
    int rc = point_cursor(t, &c);
    if (rc) return fail(&t->c.err, rc, "open_cursor");
    WT_ITEM key = {.data = k, .size = kl}, val;
    c->set_key(c, &key);
    rc = c->search(c);
    if (rc == WT_NOTFOUND) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "search");
    if ((rc = c->get_value(c, &val))) return fail(&t->c.err, rc, "get_value");
    t->positioned = 1;  /* the value lives in the cursor until reset */
    *v = val.data;
    *vl = val.size;
    return KV_OK;
}

static int wt_batch_begin(kv_thread *t) {
    unposition(t);
    t->log.len = 0;
    int rc = t->s->begin_transaction(t->s, NULL);
    if (rc) return fail(&t->c.err, rc, "begin_transaction");
    t->in_batch = 1;
    return KV_OK;
}

/* Re-run the logged batch in a fresh transaction. */
static int replay(kv_thread *t) {
    int rc = t->s->begin_transaction(t->s, NULL);
    size_t pos = 0, kl, vl;
    const char *k, *v;
    int is_del;
    while (!rc && kv_oplog_next(&t->log, &pos, &k, &kl, &v, &vl, &is_del))
        if ((rc = apply(t, k, kl, v, vl, is_del)) == WT_NOTFOUND) rc = 0;
    return rc;
}

static int wt_batch_commit(kv_thread *t) {
    /* a failed commit has already rolled its transaction back; a doomed or replayed one has not */
    int active = t->doomed;
    int rc = t->doomed ? WT_ROLLBACK : t->s->commit_transaction(t->s, NULL);
    for (int attempt = 0; rc == WT_ROLLBACK && attempt < KV_WT_RETRIES; attempt++) {
        if (active) t->s->rollback_transaction(t->s, NULL);  /* release its updates before waiting */
        kv_backoff(&t->jitter, attempt);
        rc = replay(t);
        active = 1;
        if (!rc) {
            rc = t->s->commit_transaction(t->s, NULL);
            active = 0;
        }
    }
    if (rc && active) t->s->rollback_transaction(t->s, NULL);
    t->in_batch = 0;
    t->doomed = 0;
    t->log.len = 0;
    return rc ? fail(&t->c.err, rc, "commit_transaction") : KV_OK;
}

static int wt_batch_abort(kv_thread *t) {
    if (t->in_batch) t->s->rollback_transaction(t->s, NULL);
    t->in_batch = 0;
    t->doomed = 0;
    t->log.len = 0;
    return KV_OK;
}

static int wt_txn_begin(kv_thread *t, int kind) {
    (void)kind;
    if (t->in_txn || t->in_batch) return kv_seterr(&t->c.err, KV_E_OTHER, "WiredTiger: transaction already open");
    unposition(t);
    int rc = t->s->begin_transaction(t->s, "isolation=snapshot");
    if (rc) return fail(&t->c.err, rc, "begin_transaction");
    t->in_txn = 1;
    return KV_OK;
}

static int wt_txn_commit(kv_thread *t) {
    t->positioned = 0;   /* the commit resets the session's cursors */
    t->in_txn = 0;
    int rc = t->s->commit_transaction(t->s, NULL);   /* a failed commit rolls itself back */
    return rc ? fail(&t->c.err, rc, "commit_transaction") : KV_OK;
}

static void wt_txn_abort(kv_thread *t) {
    t->positioned = 0;
    if (t->in_txn) t->s->rollback_transaction(t->s, NULL);
    t->in_txn = 0;
}

/* Bulk load: a "bulk" cursor on the empty object, which writes leaf pages in order without searching and
   without cache pressure, open from the load's first chunk to its last, whose close writes the records; an
   object that holds records already (a resumed load) cannot have one, and gets its chunks as transactions of
   KV_WT_BULK_TXN ordered inserts (a whole chunk in one would overflow the cache and roll back).  The bulk
   cursor needs the object to itself: the session's point cursor, if it had one, closes first. */
#define KV_WT_BULK_TXN 1000

static int wt_bulk_begin(kv_thread *t) {
    unposition(t);
    if (!t->bulk_tried) {
        t->bulk_tried = 1;
        if (t->cur) {
            int rc = t->cur->close(t->cur);
            t->cur = NULL;
            if (rc) return fail(&t->c.err, rc, "cursor close");
        }
        int rc = t->s->open_cursor(t->s, t->db->uri, NULL, "bulk", &t->bulk);
        if (rc) t->bulk = NULL;
        if (rc && rc != EINVAL) return fail(&t->c.err, rc, "open bulk cursor");
        if (rc) wt_lastmsg[0] = 0;   /* EINVAL: the object holds records (a resumed load); the fallback serves */
    }
    t->bulk_puts = 0;
    return t->bulk ? KV_OK : wt_batch_begin(t);
}

static int wt_bulk_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    if (!kl) return empty_key(t);
    if (!t->bulk) {
        int rc = KV_OK;
        if (t->bulk_puts && t->bulk_puts % KV_WT_BULK_TXN == 0 && !(rc = wt_batch_commit(t))) rc = wt_batch_begin(t);
        t->bulk_puts++;
        return rc ? rc : wt_put(t, k, kl, v, vl);
    }
    WT_ITEM key = {.data = k, .size = kl}, val = {.data = v, .size = vl};
    t->bulk->set_key(t->bulk, &key);
    t->bulk->set_value(t->bulk, &val);
    int rc = t->bulk->insert(t->bulk);
    return rc ? fail(&t->c.err, rc, "bulk insert") : KV_OK;
}

/* The bulk cursor's close writes what it holds. */
static int end_bulk(kv_thread *t) {
    int rc = t->bulk->close(t->bulk);
    t->bulk = NULL;
    return rc ? fail(&t->c.err, rc, "bulk cursor close") : KV_OK;
}

static int wt_bulk_commit(kv_thread *t, int last) {
    if (!t->bulk) return wt_batch_commit(t);
    return last ? end_bulk(t) : KV_OK;
}

static void wt_bulk_abort(kv_thread *t) {
    if (t->bulk) end_bulk(t);   /* a bulk cursor cannot take back what it was given */
    else wt_batch_abort(t);
}

static const char *wt_isolation(const char *variant, int transactions) {
    (void)variant; (void)transactions;
    return "snapshot isolation: a session transaction (isolation=snapshot); an update of a key another "
           "transaction changed since its snapshot fails (WT_ROLLBACK: counted as a conflict, retried from the "
           "start); reads are not tracked, so write skew is possible";
}

static int scan_out(kv_thread *t, int rc, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (rc == WT_NOTFOUND) return KV_NOTFOUND;
    if (rc) return fail(&t->c.err, rc, "cursor");
    WT_ITEM key, val;
    WT_CURSOR *c = t->scan;
    if ((rc = c->get_key(c, &key)) || (rc = c->get_value(c, &val))) return fail(&t->c.err, rc, "cursor get");
    *ko = key.data; *klo = key.size;
    *vo = val.data; *vlo = val.size;
    return KV_OK;
}

static int wt_iter_seek(kv_thread *t, const char *k, size_t kl,
                        const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    unposition(t);
    int rc;
    if (!t->scan && (rc = t->s->open_cursor(t->s, t->db->uri, NULL, NULL, &t->scan)))
        return fail(&t->c.err, rc, "open_cursor");
    WT_CURSOR *c = t->scan;
    c->reset(c);
    if (!kl) return scan_out(t, c->next(c), ko, klo, vo, vlo);
    WT_ITEM key = {.data = k, .size = kl};
    c->set_key(c, &key);
    int exact;
    rc = c->search_near(c, &exact);
    if (rc == 0 && exact < 0) rc = c->next(c);  /* landed before the key: step to the first >= */
    return scan_out(t, rc, ko, klo, vo, vlo);
}

static int wt_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    return scan_out(t, t->scan->next(t->scan), ko, klo, vo, vlo);
}

static void wt_iter_close(kv_thread *t) {
    if (t->scan) t->scan->reset(t->scan);
}

static int wt_compact(kv_db *d, kv_failure *err) {
    WT_SESSION *s;
    int rc = d->conn->open_session(d->conn, NULL, NULL, &s);
    if (rc) return fail(err, rc, "open_session");
    rc = s->compact(s, d->uri, NULL);
    s->close(s, NULL);
    return rc ? fail(err, rc, "compact") : KV_OK;
}

/* Every connection statistic.  With statistics off (no engine counters asked for) the connection turns them on
   for the one reading and off again: the settings they report (the cache's size) are right, the counters are
   not (they counted nothing), and kvlab reads only the settings then (the descriptor's `counter_cost`). */
static int wt_stats(kv_db *d, char *buf, size_t len) {
    WT_SESSION *s;
    WT_CURSOR *c;
    int rc = d->conn->open_session(d->conn, NULL, NULL, &s);
    if (rc) return wt_code(rc);
    int toggled = 0;
    if ((rc = s->open_cursor(s, "statistics:", NULL, NULL, &c))) {
        if (d->conn->reconfigure(d->conn, "statistics=(fast)") != 0) { s->close(s, NULL); return KV_E_NOTSUP; }
        toggled = 1;
        if (s->open_cursor(s, "statistics:", NULL, NULL, &c)) {
            d->conn->reconfigure(d->conn, "statistics=(none)");
            s->close(s, NULL);
            return KV_E_NOTSUP;
        }
    }
    size_t n = 0;
    const char *desc, *pvalue;
    int64_t value;
    while (c->next(c) == 0 && n < len) {
        if (c->get_value(c, &desc, &pvalue, &value)) break;
        n += (size_t)snprintf(buf + n, len - n, "%s=%lld\n", desc, (long long)value);
    }
    s->close(s, NULL);
    if (toggled) d->conn->reconfigure(d->conn, "statistics=(none)");
    return KV_OK;
}

static const char *wt_version(void) {
    static char buf[32];
    int a, b, c;
    wiredtiger_version(&a, &b, &c);
    snprintf(buf, sizeof buf, "%d.%d.%d", a, b, c);
    return buf;
}

const kv_engine_ops kv_engine_wiredtiger = {
    .name = "wiredtiger",
    .open = wt_open, .close = wt_close,
    .thread_open = wt_thread_open, .thread_close = wt_thread_close,
    .put = wt_put, .get = wt_get, .del = wt_del,
    .batch_begin = wt_batch_begin, .batch_commit = wt_batch_commit, .batch_abort = wt_batch_abort,
    .txn_begin = wt_txn_begin, .txn_commit = wt_txn_commit, .txn_abort = wt_txn_abort,
    .iter_seek = wt_iter_seek, .iter_next = wt_iter_next, .iter_close = wt_iter_close,
    .compact = wt_compact, .stats = wt_stats, .version = wt_version, .process_shutdown = NULL,
    .isolation = wt_isolation,
    .bulk_begin = wt_bulk_begin, .bulk_put = wt_bulk_put, .bulk_commit = wt_bulk_commit,
    .bulk_abort = wt_bulk_abort,
    .bulk_how = "a bulk cursor on the empty object (leaf pages written in order, no search, no cache "
                "pressure), whose records are written when it closes at the load's last chunk; an object "
                "that holds records already (a resumed load) takes each chunk as transactions of 1,000 ordered inserts",
};
