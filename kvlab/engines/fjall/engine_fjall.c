/* fjall adapter (fjall 3.x, an LSM-tree in pure Rust): never compiled into kvlab; `kvlab engines build
 * fjall@VERSION` builds the project's shim crate (shim/: fjall behind a few extern "C" calls, declared in
 * shim/kvfjall.h) as a static library and links it into this adapter's shared object, which kvlab loads.
 *
 * One fjall database in the run's directory (its journals, its keyspace's tables), one keyspace "kv" of byte-string
 * keys ordered bytewise.  fjall locks the directory for one handle and admits one write transaction at a time
 * (SingleWriterTxDatabase: begin waits for the one in progress); readers never wait.
 *
 * Reads: a get outside a transaction reads the keyspace (every commit published before it); the value is copied
 * into the thread's buffer in the shim.  Writes outside a batch are one write transaction each; a batch is one
 * write transaction, committed as one journal batch (atomic).  A delete is a blind tombstone.
 *
 * Transactions: a read transaction keeps one snapshot from txn_begin to its end; a write transaction is one fjall
 * write transaction: serializable, never a conflict.
 *
 * Durability (fjall's PersistMode, for each commit's journal write before commit returns): sync on is SyncAll
 * (fsync), `sync_data` SyncData (fdatasync), sync off Buffer (written to the OS: survives a process crash, not a
 * power loss).  Settings: cache_size (the block cache), write_buffer_size (the keyspace's max memtable size),
 * block_size; options (kvfjall.h): sync_data, compression, bloom_bits, kv_separation, max_journaling_size,
 * worker_threads.  The keyspace's settings (memtable, block size, compression, filters, kv separation) are fixed
 * when it is made: fjall stores them and a reopen reads them back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kv_util.h"
#include "kvfjall.h"

struct kv_db {
    kvfjall_db *db;
};

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    kvfjall_thread *rt;
    kvfjall_error rerr; /* the shim's last error, turned into c.err by fail() */
    int snap;           /* in a read transaction */
};

static int kv_code(const kvfjall_error *e) {
    switch (e->kind) {
    case KVFJALL_E_IO: return KV_E_IO;
    case KVFJALL_E_FULL: return KV_E_FULL;
    case KVFJALL_E_CONFIG: return KV_E_CONFIG;
    case KVFJALL_E_CORRUPT: return KV_E_CORRUPT;
    case KVFJALL_E_BUSY: return KV_E_BUSY;
    default: return KV_E_OTHER;
    }
}

/* The shim's error as kvlab's: fjall's variant as the code's name, the shim's kind as the code, errno where the OS
   failed.  Returns kvlab's code. */
static int fail(kv_failure *out, const kvfjall_error *e, const char *what) {
    char where[64];
    snprintf(where, sizeof where, "fjall %s", what);
    return kv_engine_error(out, kv_code(e), e->kind, e->name, e->os_errno, where, e->text, "%s", "");
}

static int tfail(kv_thread *t, const char *what) { return fail(&t->c.err, &t->rerr, what); }

/* options: a comma list of sync_data, compression=default|none|lz4, bloom_bits=N, kv_separation=BYTES,
   max_journaling_size=BYTES, worker_threads=N (kvfjall.h's kvfjall_options) */
static int parse_options(const char *opts, kvfjall_options *o, kv_failure *err) {
    static const char allowed[] = "sync_data, compression=default|none|lz4, bloom_bits=N (-1: none), "
                                  "kv_separation=BYTES, max_journaling_size=BYTES (64 MiB or more), worker_threads=N";
    char tok[96];
    const char *s = opts;
    while ((s = kv_next_token(s, tok, sizeof tok)) != NULL) {
        char *eq = strchr(tok, '=');
        const char *val = eq ? eq + 1 : NULL;
        if (eq) *eq = 0;
        char *end = NULL;
        long long n = val ? strtoll(val, &end, 10) : 0;
        int number = val && *val && end && *end == 0;
        if (!val && strcmp(tok, "sync_data") == 0) {
            if (o->durability == KVFJALL_DURABILITY_SYNC_ALL) o->durability = KVFJALL_DURABILITY_SYNC_DATA;
        } else if (val && strcmp(tok, "compression") == 0) {
            if (strcmp(val, "default") == 0) o->compression = KVFJALL_COMPRESSION_DEFAULT;
            else if (strcmp(val, "none") == 0) o->compression = KVFJALL_COMPRESSION_NONE;
            else if (strcmp(val, "lz4") == 0) o->compression = KVFJALL_COMPRESSION_LZ4;
            else return kv_seterr(err, KV_E_CONFIG, "fjall compression '%s' is unknown; allowed: default, none, lz4", val);
        } else if (number && strcmp(tok, "bloom_bits") == 0 && n >= -1 && n <= 64) {
            o->bloom_bits_per_key = n == 0 ? -1 : (int)n;
        } else if (number && strcmp(tok, "kv_separation") == 0 && n >= 0 && n <= UINT32_MAX) {
            o->kv_separation = (uint32_t)n;
        } else if (number && strcmp(tok, "max_journaling_size") == 0 && n >= 0) {
            o->max_journaling_size = (uint64_t)n;
        } else if (number && strcmp(tok, "worker_threads") == 0 && n >= 1 && n <= 256) {
            o->worker_threads = (int)n;
        } else {
            return kv_seterr(err, KV_E_CONFIG, "fjall option '%s%s%s' is unknown or out of range; allowed: %s", tok,
                             val ? "=" : "", val ? val : "", allowed);
        }
    }
    return KV_OK;
}

static int fj_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    kvfjall_options o = {.cache_size = cfg->cache_size,
                         .create = cfg->create,
                         .durability = cfg->sync ? KVFJALL_DURABILITY_SYNC_ALL : KVFJALL_DURABILITY_NONE,
                         .max_memtable_size = cfg->write_buffer_size,
                         .block_size = cfg->block_size > 0 ? (uint32_t)cfg->block_size : 0};
    int rc = parse_options(cfg->options, &o, err);
    if (rc) return rc;
    kv_db *db = calloc(1, sizeof *db);
    if (!db) return kv_seterr(err, KV_E_OTHER, "fjall: out of memory");
    kvfjall_error e;
    if (kvfjall_open(path, &o, &db->db, &e) != KVFJALL_OK) {
        free(db);
        return fail(err, &e, "open");
    }
    *out = db;
    return KV_OK;
}

static int fj_close(kv_db *db, kv_failure *err) {
    kvfjall_error e;
    int rc = kvfjall_close(db->db, &e); /* fsyncs the journal; the next open replays it into memtables */
    free(db);
    return rc == KVFJALL_OK ? KV_OK : fail(err, &e, "close");
}

static int fj_thread_open(kv_db *db, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "fjall: out of memory");
    t->db = db;
    t->rt = kvfjall_thread_open(db->db);
    *out = t;
    return KV_OK;
}

static void fj_thread_close(kv_thread *t) {
    kvfjall_thread_close(t->rt); /* aborts a write transaction left open */
    free(t);
}

/* One write outside a transaction is a write transaction of its own. */
static int write_one(kv_thread *t, int is_put, const char *k, size_t kl, const char *v, size_t vl) {
    int own = !kvfjall_in_write(t->rt);
    if (own && kvfjall_write_begin(t->rt, &t->rerr) != KVFJALL_OK) return tfail(t, "write begin");
    int rc = is_put ? kvfjall_put(t->rt, k, kl, v, vl, &t->rerr) : kvfjall_del(t->rt, k, kl, &t->rerr);
    if (rc == KVFJALL_ERROR) {
        kvfjall_write_abort(t->rt); /* a batch is dropped whole */
        return tfail(t, is_put ? "put" : "delete");
    }
    if (!own) return KV_OK; /* a delete is a blind tombstone (kvfjall_del): never KV_NOTFOUND */
    return kvfjall_write_commit(t->rt, &t->rerr) == KVFJALL_OK ? KV_OK : tfail(t, "commit");
}

static int fj_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return write_one(t, 1, k, kl, v, vl);
}

static int fj_del(kv_thread *t, const char *k, size_t kl) { return write_one(t, 0, k, kl, NULL, 0); }

static int fj_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    int rc = kvfjall_get(t->rt, k, kl, v, vl, &t->rerr);
    if (rc == KVFJALL_OK) return KV_OK;
    return rc == KVFJALL_NOTFOUND ? KV_NOTFOUND : tfail(t, "get");
}

static int fj_batch_begin(kv_thread *t) {
    if (kvfjall_in_write(t->rt)) return kv_seterr(&t->c.err, KV_E_OTHER, "fjall: a batch is already open");
    return kvfjall_write_begin(t->rt, &t->rerr) == KVFJALL_OK ? KV_OK : tfail(t, "write begin");
}

static int fj_batch_commit(kv_thread *t) {
    if (!kvfjall_in_write(t->rt))
        return kv_seterr(&t->c.err, KV_E_OTHER, "fjall: the batch was aborted by an earlier error");
    return kvfjall_write_commit(t->rt, &t->rerr) == KVFJALL_OK ? KV_OK : tfail(t, "commit");
}

static int fj_batch_abort(kv_thread *t) {
    kvfjall_write_abort(t->rt);
    return KV_OK;
}

static int fj_txn_begin(kv_thread *t, int kind) {
    if (kind == KV_TXN_WRITE) return fj_batch_begin(t);
    if (t->snap || kvfjall_in_write(t->rt))
        return kv_seterr(&t->c.err, KV_E_OTHER, "fjall: a transaction is already open");
    if (kvfjall_read_begin(t->rt, &t->rerr) != KVFJALL_OK) return tfail(t, "read begin");
    t->snap = 1;
    return KV_OK;
}

static int fj_txn_commit(kv_thread *t) {
    if (t->snap) {
        kvfjall_read_end(t->rt);
        t->snap = 0;
        return KV_OK;
    }
    return fj_batch_commit(t);
}

static void fj_txn_abort(kv_thread *t) {
    if (t->snap) {
        kvfjall_read_end(t->rt);
        t->snap = 0;
    } else {
        kvfjall_write_abort(t->rt);
    }
}

static const char *fj_isolation(const char *variant, int transactions) {
    (void)variant;
    (void)transactions;
    return "serializable: a write transaction is one fjall single-writer transaction (one writer at a time, so no "
           "conflicts and no retries), committed as one journal batch; a read-only transaction reads one snapshot";
}

static int cursor_rc(kv_thread *t, int rc) {
    if (rc == KVFJALL_OK) return KV_OK;
    return rc == KVFJALL_NOTFOUND ? KV_NOTFOUND : tfail(t, "range");
}

static int fj_iter_seek(kv_thread *t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo,
                        size_t *vlo) {
    return cursor_rc(t, kvfjall_seek(t->rt, k, kl, ko, klo, vo, vlo, &t->rerr));
}

static int fj_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    return cursor_rc(t, kvfjall_next(t->rt, ko, klo, vo, vlo, &t->rerr));
}

static void fj_iter_close(kv_thread *t) { kvfjall_iter_close(t->rt); }

static int fj_compact(kv_db *db, kv_failure *err) {
    (void)db;
    return kv_seterr(err, KV_E_NOTSUP,
                     "fjall: the shim offers no manual compaction; fjall compacts in its own worker threads "
                     "(leveled, its default strategy)");
}

static int fj_stats(kv_db *db, char *buf, size_t len) {
    kvfjall_stats s;
    kvfjall_get_stats(db->db, &s);
    snprintf(buf, len,
             "disk_space=%llu\njournal_disk_space=%llu\njournal_count=%llu\ntable_count=%llu\nl0_table_count=%llu\n"
             "blob_file_count=%llu\napproximate_len=%llu\nwrite_buffer_size=%llu\noutstanding_flushes=%llu\n"
             "active_compactions=%llu\ncompactions_completed=%llu\ncache_capacity=%llu\ncache_used=%llu\n"
             "commits=%llu\ndurable_commits=%llu\n",
             (unsigned long long)s.disk_space, (unsigned long long)s.journal_disk_space,
             (unsigned long long)s.journal_count, (unsigned long long)s.table_count,
             (unsigned long long)s.l0_table_count, (unsigned long long)s.blob_file_count,
             (unsigned long long)s.approximate_len, (unsigned long long)s.write_buffer_size,
             (unsigned long long)s.outstanding_flushes, (unsigned long long)s.active_compactions,
             (unsigned long long)s.compactions_completed, (unsigned long long)s.cache_capacity,
             (unsigned long long)s.cache_used, (unsigned long long)s.commits, (unsigned long long)s.durable_commits);
    return KV_OK;
}

static const char *fj_version(void) { return kvfjall_version(); }

const kv_engine_ops kv_engine_fjall = {
    .name = "fjall",
    .open = fj_open,
    .close = fj_close,
    .thread_open = fj_thread_open,
    .thread_close = fj_thread_close,
    .put = fj_put,
    .get = fj_get,
    .del = fj_del,
    .batch_begin = fj_batch_begin,
    .batch_commit = fj_batch_commit,
    .batch_abort = fj_batch_abort,
    .txn_begin = fj_txn_begin,
    .txn_commit = fj_txn_commit,
    .txn_abort = fj_txn_abort,
    .iter_seek = fj_iter_seek,
    .iter_next = fj_iter_next,
    .iter_close = fj_iter_close,
    .compact = fj_compact,
    .stats = fj_stats,
    .version = fj_version,
    .process_shutdown = NULL,
    .isolation = fj_isolation,
};
