/* redb adapter (redb 4.x, a copy-on-write B-tree in pure Rust): never compiled into kvlab; `kvlab engines build
 * redb@VERSION` builds the project's shim crate (shim/: redb behind a few extern "C" calls, declared in
 * shim/kvredb.h) as a static library and links it into this adapter's shared object, which kvlab loads.
 *
 * One database file, data.redb in the run's directory, one table of byte-string keys (redb orders &[u8] keys
 * bytewise, as memcmp).  redb locks the file for one process (ConcurrencyMode::ExclusiveWriter) and admits one
 * write transaction at a time (begin waits for the one in progress); readers never wait.
 *
 * Reads: a get outside a transaction sees every write committed before it (the shim renews the thread's snapshot
 * when a commit has happened since, else reuses it); the value is copied into the thread's buffer in the shim.
 * Writes outside a batch are one write transaction each; a batch is one write transaction.
 *
 * Transactions: a read transaction keeps one snapshot from txn_begin to its end.  A write transaction is one redb
 * write transaction: one writer at a time, so its reads see its own writes and nothing else commits meanwhile:
 * serializable, never a conflict (as LMDB's).
 *
 * Durability (redb's Durability, which 4.x has two of): sync on is Durability::Immediate (the commit is fsynced
 * before commit returns); sync off is Durability::None (the commit is visible at once but not persisted unless a
 * later Immediate commit, or the close, persists it: any crash, a SIGKILL too, rolls back to the last persisted
 * commit).  options (comma list): two_phase_commit, quick_repair, check_integrity (redb's settings of the same
 * names).
 */
#include <errno.h>
#include <stdio.h>

#include "kv_util.h"
#include "kvredb.h"

#define REDB_FILE "data.redb"

struct kv_db {
    kvredb_db *db;
};

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    kvredb_thread *rt;
    kvredb_error rerr; /* the shim's last error, turned into c.err by fail() */
    int snap;          /* in a read transaction */
};

static int kv_code(const kvredb_error *e) {
    switch (e->kind) {
    case KVREDB_E_IO: return KV_E_IO;
    case KVREDB_E_FULL: return KV_E_FULL;
    case KVREDB_E_CONFIG: return KV_E_CONFIG;
    case KVREDB_E_CORRUPT: return KV_E_CORRUPT;
    case KVREDB_E_BUSY: return KV_E_BUSY;
    default: return KV_E_OTHER;
    }
}

/* The shim's error as kvlab's: redb's variant as the code's name, the shim's kind as the code, errno where the OS
   failed.  Returns kvlab's code. */
static int fail(kv_failure *out, const kvredb_error *e, const char *what) {
    char where[64];
    snprintf(where, sizeof where, "redb %s", what);
    return kv_engine_error(out, kv_code(e), e->kind, e->name, e->os_errno, where, e->text, "%s", "");
}

static int tfail(kv_thread *t, const char *what) { return fail(&t->c.err, &t->rerr, what); }

static int parse_options(const char *opts, kvredb_options *o, kv_failure *err) {
    static const struct {
        const char *name;
        size_t offset;
    } table[] = {
        {"two_phase_commit", offsetof(kvredb_options, two_phase_commit)},
        {"quick_repair", offsetof(kvredb_options, quick_repair)},
        {"check_integrity", offsetof(kvredb_options, check_integrity)},
    };
    char tok[64];
    const char *s = opts;
    while ((s = kv_next_token(s, tok, sizeof tok)) != NULL) {
        size_t i;
        for (i = 0; i < sizeof table / sizeof table[0]; i++)
            if (strcmp(tok, table[i].name) == 0) break;
        if (i == sizeof table / sizeof table[0])
            return kv_seterr(err, KV_E_CONFIG,
                             "redb option '%s' is unknown; allowed: two_phase_commit, quick_repair, check_integrity",
                             tok);
        *(int *)((char *)o + table[i].offset) = 1;
    }
    return KV_OK;
}

static int rd_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    kvredb_options o = {.cache_size = cfg->cache_size,
                        .create = cfg->create,
                        .durability = cfg->sync ? KVREDB_DURABILITY_IMMEDIATE : KVREDB_DURABILITY_NONE};
    int rc = parse_options(cfg->options, &o, err);
    if (rc) return rc;
    char file[4096];
    if (snprintf(file, sizeof file, "%s/%s", path, REDB_FILE) >= (int)sizeof file)
        return kv_seterr(err, KV_E_CONFIG, "redb: the path %s is too long", path);
    kv_db *db = calloc(1, sizeof *db);
    if (!db) return kv_seterr(err, KV_E_OTHER, "redb: out of memory");
    kvredb_error e;
    if (kvredb_open(file, &o, &db->db, &e) != KVREDB_OK) {
        free(db);
        return fail(err, &e, "open");
    }
    *out = db;
    return KV_OK;
}

static int rd_close(kv_db *db, kv_failure *err) {
    kvredb_error e;
    int rc = kvredb_close(db->db, &e); /* persists a pending non-durable commit */
    free(db);
    return rc == KVREDB_OK ? KV_OK : fail(err, &e, "close");
}

static int rd_thread_open(kv_db *db, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "redb: out of memory");
    t->db = db;
    t->rt = kvredb_thread_open(db->db);
    *out = t;
    return KV_OK;
}

static void rd_thread_close(kv_thread *t) {
    kvredb_thread_close(t->rt); /* aborts a write transaction left open */
    free(t);
}

/* One write outside a transaction is a write transaction of its own. */
static int write_one(kv_thread *t, int is_put, const char *k, size_t kl, const char *v, size_t vl) {
    int own = !kvredb_in_write(t->rt);
    if (own && kvredb_write_begin(t->rt, &t->rerr) != KVREDB_OK) return tfail(t, "write begin");
    int rc = is_put ? kvredb_put(t->rt, k, kl, v, vl, &t->rerr) : kvredb_del(t->rt, k, kl, &t->rerr);
    if (rc == KVREDB_ERROR) {
        kvredb_write_abort(t->rt); /* redb may have poisoned the transaction: a batch is dropped */
        return tfail(t, is_put ? "put" : "delete");
    }
    if (!own) return rc == KVREDB_NOTFOUND ? KV_NOTFOUND : KV_OK;
    if (rc == KVREDB_NOTFOUND) { /* nothing changed */
        kvredb_write_abort(t->rt);
        return KV_NOTFOUND;
    }
    return kvredb_write_commit(t->rt, &t->rerr) == KVREDB_OK ? KV_OK : tfail(t, "commit");
}

static int rd_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return write_one(t, 1, k, kl, v, vl);
}

static int rd_del(kv_thread *t, const char *k, size_t kl) { return write_one(t, 0, k, kl, NULL, 0); }

static int rd_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    int rc = kvredb_get(t->rt, k, kl, v, vl, &t->rerr);
    if (rc == KVREDB_OK) return KV_OK;
    return rc == KVREDB_NOTFOUND ? KV_NOTFOUND : tfail(t, "get");
}

static int rd_batch_begin(kv_thread *t) {
    if (kvredb_in_write(t->rt)) return kv_seterr(&t->c.err, KV_E_OTHER, "redb: a batch is already open");
    return kvredb_write_begin(t->rt, &t->rerr) == KVREDB_OK ? KV_OK : tfail(t, "write begin");
}

static int rd_batch_commit(kv_thread *t) {
    if (!kvredb_in_write(t->rt))
        return kv_seterr(&t->c.err, KV_E_OTHER, "redb: the batch was aborted by an earlier error");
    return kvredb_write_commit(t->rt, &t->rerr) == KVREDB_OK ? KV_OK : tfail(t, "commit");
}

static int rd_batch_abort(kv_thread *t) {
    kvredb_write_abort(t->rt);
    return KV_OK;
}

static int rd_txn_begin(kv_thread *t, int kind) {
    if (kind == KV_TXN_WRITE) return rd_batch_begin(t);
    if (t->snap || kvredb_in_write(t->rt))
        return kv_seterr(&t->c.err, KV_E_OTHER, "redb: a transaction is already open");
    if (kvredb_read_begin(t->rt, &t->rerr) != KVREDB_OK) return tfail(t, "read begin");
    t->snap = 1;
    return KV_OK;
}

static int rd_txn_commit(kv_thread *t) {
    if (t->snap) {
        kvredb_read_end(t->rt);
        t->snap = 0;
        return KV_OK;
    }
    return rd_batch_commit(t);
}

static void rd_txn_abort(kv_thread *t) {
    if (t->snap) {
        kvredb_read_end(t->rt);
        t->snap = 0;
    } else {
        kvredb_write_abort(t->rt);
    }
}

static const char *rd_isolation(const char *variant, int transactions) {
    (void)variant;
    (void)transactions;
    return "serializable: a write transaction is one redb write transaction (one writer at a time, so no "
           "conflicts and no retries); a read-only transaction reads one MVCC snapshot";
}

static int cursor_rc(kv_thread *t, int rc) {
    if (rc == KVREDB_OK) return KV_OK;
    return rc == KVREDB_NOTFOUND ? KV_NOTFOUND : tfail(t, "range");
}

static int rd_iter_seek(kv_thread *t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo,
                        size_t *vlo) {
    return cursor_rc(t, kvredb_seek(t->rt, k, kl, ko, klo, vo, vlo, &t->rerr));
}

static int rd_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    return cursor_rc(t, kvredb_next(t->rt, ko, klo, vo, vlo, &t->rerr));
}

static void rd_iter_close(kv_thread *t) { kvredb_iter_close(t->rt); }

static int rd_compact(kv_db *db, kv_failure *err) {
    (void)db;
    return kv_seterr(err, KV_E_NOTSUP,
                     "redb is a B-tree that reuses freed pages in place: no compaction step "
                     "(Database::compact, which moves pages to shrink the file, needs the database "
                     "with no transaction open in any thread)");
}

static int rd_stats(kv_db *db, char *buf, size_t len) {
    kvredb_stats s;
    kvredb_get_stats(db->db, &s);
    snprintf(buf, len, "file_size=%llu\ncommits=%llu\ndurable_commits=%llu\ncache_size=%llu\npage_size=%llu\n",
             (unsigned long long)s.file_size, (unsigned long long)s.commits, (unsigned long long)s.durable_commits,
             (unsigned long long)s.cache_size, (unsigned long long)s.page_size);
    return KV_OK;
}

static const char *rd_version(void) { return kvredb_version(); }

const kv_engine_ops kv_engine_redb = {
    .name = "redb",
    .open = rd_open,
    .close = rd_close,
    .thread_open = rd_thread_open,
    .thread_close = rd_thread_close,
    .put = rd_put,
    .get = rd_get,
    .del = rd_del,
    .batch_begin = rd_batch_begin,
    .batch_commit = rd_batch_commit,
    .batch_abort = rd_batch_abort,
    .txn_begin = rd_txn_begin,
    .txn_commit = rd_txn_commit,
    .txn_abort = rd_txn_abort,
    .iter_seek = rd_iter_seek,
    .iter_next = rd_iter_next,
    .iter_close = rd_iter_close,
    .compact = rd_compact,
    .stats = rd_stats,
    .version = rd_version,
    .process_shutdown = NULL,
    .isolation = rd_isolation,
};
