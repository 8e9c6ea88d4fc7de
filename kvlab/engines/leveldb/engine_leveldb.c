/* LevelDB adapter (leveldb/c.h).
 *
 * options (key=value list): write_buffer_size, block_size, max_open_files,
 * bloom_bits, max_file_size, paranoid_checks, verify_checksums, fill_cache.
 * LevelDB's C API returns a malloc'd copy from get(); that copy is part of what
 * a LevelDB get costs through its C API, so it is measured, then freed on the
 * thread's next call.
 *
 * Transactions: LevelDB has none.  A transaction here is a snapshot for its reads
 * (leveldb_create_snapshot) plus one WriteBatch for its writes, applied atomically at
 * commit.  Nothing detects conflicts: two read-modify-writes of one key may both
 * commit (a lost update), and a transaction's reads do not see its own writes.  The
 * result says so.
 */
#include <leveldb/c.h>
#include <limits.h>

#include "kv_util.h"

struct kv_db {
    leveldb_t *db;
    leveldb_options_t *opts;
    leveldb_cache_t *cache;
    leveldb_filterpolicy_t *filter;
    leveldb_writeoptions_t *wopts;
};

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    leveldb_readoptions_t *ropts;
    leveldb_writebatch_t *batch;
    leveldb_iterator_t *it;
    char *value;   /* last get()'s malloc'd value */
    const leveldb_snapshot_t *snap;   /* the open transaction's snapshot */
};

/* A Status string the C API handed over (malloc'd): the error, with its kind (kv_status_error); frees it. */
static int take_error(kv_failure *e, char *msg) {
    int code = kv_status_error(e, 0, "LevelDB", msg);
    leveldb_free(msg);
    return code;
}

static int apply_options(kv_db *d, const char *opts, kv_failure *err) {
    char tok[128];
    const char *s = opts;
    while ((s = kv_next_token(s, tok, sizeof tok)) != NULL) {
        char *eq = strchr(tok, '=');
        if (!eq) return kv_seterr(err, KV_E_CONFIG, "LevelDB option '%s' needs key=value", tok);
        *eq = '\0';
        const char *key = tok;
        char *end;
        long long v = strtoll(eq + 1, &end, 10);
        if (*end) return kv_seterr(err, KV_E_CONFIG, "LevelDB option %s=%s: value must be an integer", key, eq + 1);
        /* LevelDB trusts these: a negative or huge bloom_bits overflows its filter size (std::bad_alloc
           aborts the process), block_restart_interval < 1 fails an assertion */
        if (v < 0 || v > INT_MAX || (!strcmp(key, "bloom_bits") && v > 100) ||
            (!strcmp(key, "block_restart_interval") && v < 1))
            return kv_seterr(err, KV_E_CONFIG, "LevelDB option %s=%s is out of range; allowed: 0 to %d "
                             "(bloom_bits 0 to 100, block_restart_interval from 1)", key, eq + 1, INT_MAX);
        if (!strcmp(key, "write_buffer_size")) leveldb_options_set_write_buffer_size(d->opts, (size_t)v);
        else if (!strcmp(key, "block_size")) leveldb_options_set_block_size(d->opts, (size_t)v);
        else if (!strcmp(key, "max_open_files")) leveldb_options_set_max_open_files(d->opts, (int)v);
        else if (!strcmp(key, "max_file_size")) leveldb_options_set_max_file_size(d->opts, (size_t)v);
        else if (!strcmp(key, "paranoid_checks")) leveldb_options_set_paranoid_checks(d->opts, (uint8_t)v);
        else if (!strcmp(key, "block_restart_interval")) leveldb_options_set_block_restart_interval(d->opts, (int)v);
        else if (!strcmp(key, "bloom_bits")) {
            if (d->filter) leveldb_filterpolicy_destroy(d->filter);
            d->filter = leveldb_filterpolicy_create_bloom((int)v);
            leveldb_options_set_filter_policy(d->opts, d->filter);
        } else
            return kv_seterr(err, KV_E_CONFIG,
                             "LevelDB option '%s' is unknown; allowed: write_buffer_size, block_size, "
                             "max_open_files, max_file_size, paranoid_checks, block_restart_interval, bloom_bits",
                             key);
    }
    return KV_OK;
}

static void destroy(kv_db *d) {
    if (d->db) leveldb_close(d->db);
    if (d->opts) leveldb_options_destroy(d->opts);
    if (d->cache) leveldb_cache_destroy(d->cache);
    if (d->filter) leveldb_filterpolicy_destroy(d->filter);
    if (d->wopts) leveldb_writeoptions_destroy(d->wopts);
    free(d);
}

static int ldb_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    kv_db *d = calloc(1, sizeof *d);
    if (!d) return kv_seterr(err, KV_E_OTHER, "LevelDB: out of memory");
    d->opts = leveldb_options_create();
    leveldb_options_set_create_if_missing(d->opts, cfg->create ? 1 : 0);
    if (cfg->cache_size) {
        d->cache = leveldb_cache_create_lru(cfg->cache_size);
        leveldb_options_set_cache(d->opts, d->cache);
    }
    if (cfg->write_buffer_size) leveldb_options_set_write_buffer_size(d->opts, cfg->write_buffer_size);
    if (cfg->block_size) leveldb_options_set_block_size(d->opts, (size_t)cfg->block_size);
    if (cfg->max_open_files) leveldb_options_set_max_open_files(d->opts, cfg->max_open_files < 0 ? 1 << 20 : cfg->max_open_files);
    if (cfg->bloom_bits > 100) { destroy(d); return kv_seterr(err, KV_E_CONFIG, "LevelDB bloom_bits=%d is out of range; allowed: 0 to 100", cfg->bloom_bits); }
    if (cfg->bloom_bits > 0) {
        d->filter = leveldb_filterpolicy_create_bloom(cfg->bloom_bits);
        leveldb_options_set_filter_policy(d->opts, d->filter);
    }
    switch (cfg->compression) {
    case KV_COMP_NONE: leveldb_options_set_compression(d->opts, leveldb_no_compression); break;
    case KV_COMP_SNAPPY: leveldb_options_set_compression(d->opts, leveldb_snappy_compression); break;
    default: destroy(d); return kv_seterr(err, KV_E_CONFIG, "LevelDB supports compression none or snappy");
    }
    int rc = apply_options(d, cfg->options, err);
    if (rc) { destroy(d); return rc; }
    d->wopts = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(d->wopts, cfg->sync ? 1 : 0);
    char *msg = NULL;
    d->db = leveldb_open(d->opts, path, &msg);
    if (msg) { rc = take_error(err, msg); d->db = NULL; destroy(d); return rc; }
    *out = d;
    return KV_OK;
}

static int ldb_close(kv_db *d, kv_failure *err) { (void)err; destroy(d); return KV_OK; }

static int ldb_thread_open(kv_db *d, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "LevelDB: out of memory");
    t->db = d;
    t->ropts = leveldb_readoptions_create();
    *out = t;
    return KV_OK;
}

static void end_snapshot(kv_thread *t);

static void ldb_thread_close(kv_thread *t) {
    if (t->it) leveldb_iter_destroy(t->it);
    t->it = NULL;
    end_snapshot(t);
    if (t->batch) leveldb_writebatch_destroy(t->batch);
    if (t->value) leveldb_free(t->value);
    leveldb_readoptions_destroy(t->ropts);
    free(t);
}

static int ldb_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    if (t->batch) { leveldb_writebatch_put(t->batch, k, kl, v, vl); return KV_OK; }
    char *msg = NULL;
    leveldb_put(t->db->db, t->db->wopts, k, kl, v, vl, &msg);
    return msg ? take_error(&t->c.err, msg) : KV_OK;
}

static int ldb_del(kv_thread *t, const char *k, size_t kl) {
    if (t->batch) { leveldb_writebatch_delete(t->batch, k, kl); return KV_OK; }
    char *msg = NULL;
    leveldb_delete(t->db->db, t->db->wopts, k, kl, &msg);
    return msg ? take_error(&t->c.err, msg) : KV_OK;
}

static int ldb_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    if (t->value) { leveldb_free(t->value); t->value = NULL; }
    char *msg = NULL;
    size_t n = 0;
    char *val = leveldb_get(t->db->db, t->ropts, k, kl, &n, &msg);
    if (msg) return take_error(&t->c.err, msg);
    if (!val) return KV_NOTFOUND;
    t->value = val;
    *v = val;
    *vl = n;
    return KV_OK;
}

static int ldb_batch_begin(kv_thread *t) {
    if (t->batch) leveldb_writebatch_clear(t->batch);
    else t->batch = leveldb_writebatch_create();
    return KV_OK;
}

static int ldb_batch_commit(kv_thread *t) {
    char *msg = NULL;
    leveldb_write(t->db->db, t->db->wopts, t->batch, &msg);
    leveldb_writebatch_destroy(t->batch);
    t->batch = NULL;
    return msg ? take_error(&t->c.err, msg) : KV_OK;
}

static int ldb_batch_abort(kv_thread *t) {
    if (t->batch) leveldb_writebatch_destroy(t->batch);
    t->batch = NULL;
    return KV_OK;
}

static void end_snapshot(kv_thread *t) {
    if (!t->snap) return;
    leveldb_readoptions_set_snapshot(t->ropts, NULL);
    leveldb_release_snapshot(t->db->db, t->snap);
    t->snap = NULL;
}

static int ldb_txn_begin(kv_thread *t, int kind) {
    if (t->snap) return kv_seterr(&t->c.err, KV_E_OTHER, "LevelDB: transaction already open");
    t->snap = leveldb_create_snapshot(t->db->db);
    leveldb_readoptions_set_snapshot(t->ropts, t->snap);
    return kind == KV_TXN_WRITE ? ldb_batch_begin(t) : KV_OK;
}

static int ldb_txn_commit(kv_thread *t) {
    if (t->it) { leveldb_iter_destroy(t->it); t->it = NULL; }
    end_snapshot(t);
    return t->batch ? ldb_batch_commit(t) : KV_OK;
}

static void ldb_txn_abort(kv_thread *t) {
    if (t->it) { leveldb_iter_destroy(t->it); t->it = NULL; }
    end_snapshot(t);
    ldb_batch_abort(t);
}

static const char *ldb_isolation(const char *variant, int transactions) {
    (void)variant; (void)transactions;
    return "no transactions in LevelDB: reads of a transaction see one snapshot and its writes are one atomic "
           "WriteBatch, but nothing detects conflicts (concurrent read-modify-writes can lose updates) and "
           "reads do not see the transaction's own writes";
}

static int iter_out(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (!leveldb_iter_valid(t->it)) {
        char *msg = NULL;
        leveldb_iter_get_error(t->it, &msg);
        return msg ? take_error(&t->c.err, msg) : KV_NOTFOUND;
    }
    *ko = leveldb_iter_key(t->it, klo);
    *vo = leveldb_iter_value(t->it, vlo);
    return KV_OK;
}

static int ldb_iter_seek(kv_thread *t, const char *k, size_t kl,
                         const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (t->it) leveldb_iter_destroy(t->it);
    t->it = leveldb_create_iterator(t->db->db, t->ropts);
    if (kl) leveldb_iter_seek(t->it, k, kl);
    else leveldb_iter_seek_to_first(t->it);
    return iter_out(t, ko, klo, vo, vlo);
}

static int ldb_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    leveldb_iter_next(t->it);
    return iter_out(t, ko, klo, vo, vlo);
}

static void ldb_iter_close(kv_thread *t) {
    if (t->it) leveldb_iter_destroy(t->it);
    t->it = NULL;
}

static int ldb_compact(kv_db *d, kv_failure *err) {
    (void)err;
    leveldb_compact_range(d->db, NULL, 0, NULL, 0);
    return KV_OK;
}

static int ldb_stats(kv_db *d, char *buf, size_t len) {
    char *mem = leveldb_property_value(d->db, "leveldb.approximate-memory-usage");
    char *text = leveldb_property_value(d->db, "leveldb.stats");
    int n = snprintf(buf, len, "approximate_memory_usage=%s\n", mem ? mem : "0");
    for (int level = 0; level < 7 && (size_t)n < len; level++) {
        char prop[64];
        snprintf(prop, sizeof prop, "leveldb.num-files-at-level%d", level);
        char *v = leveldb_property_value(d->db, prop);
        n += snprintf(buf + n, len - n, "num_files_at_level%d=%s\n", level, v ? v : "0");
        if (v) leveldb_free(v);
    }
    if ((size_t)n < len) snprintf(buf + n, len - n, "#text\n%s", text ? text : "");
    if (mem) leveldb_free(mem);
    if (text) leveldb_free(text);
    return KV_OK;
}

static const char *ldb_version(void) {
    static char buf[32];
    snprintf(buf, sizeof buf, "%d.%d", leveldb_major_version(), leveldb_minor_version());
    return buf;
}

const kv_engine_ops kv_engine_leveldb = {
    .name = "leveldb",
    .open = ldb_open, .close = ldb_close,
    .thread_open = ldb_thread_open, .thread_close = ldb_thread_close,
    .put = ldb_put, .get = ldb_get, .del = ldb_del,
    .batch_begin = ldb_batch_begin, .batch_commit = ldb_batch_commit, .batch_abort = ldb_batch_abort,
    .txn_begin = ldb_txn_begin, .txn_commit = ldb_txn_commit, .txn_abort = ldb_txn_abort,
    .iter_seek = ldb_iter_seek, .iter_next = ldb_iter_next, .iter_close = ldb_iter_close,
    .compact = ldb_compact, .stats = ldb_stats, .version = ldb_version, .process_shutdown = NULL,
    .isolation = ldb_isolation,
};
