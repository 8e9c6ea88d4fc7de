/* RocksDB adapter (rocksdb/c.h).
 *
 * The generic config (cache, compression, bloom, block size, memtable size) is
 * applied first; then `options` is handed to RocksDB's own options-string parser
 * (GetOptionsFromString), so anything RocksDB can express that way, including
 * "block_based_table_factory={...}", overrides the generic fields.  Reads use
 * rocksdb_get_pinned so a get costs no copy, as in db_bench.
 *
 * Every thread that calls into RocksDB runs at perf level "disable", as db_bench
 * does by default (--perf_level=1, set per thread in its ThreadBody).  RocksDB's
 * own default is "enable_count", under which every key comparison, block read
 * and get bumps counters in a thread_local PerfContext; from a dlopen'ed
 * librocksdb each of those is an extra __tls_get_addr call, which made a
 * memtable get ~25% more instructions than db_bench's.  A run that asks for the engine's
 * counters (kv_config.engine_counters, --engine-counters) runs its threads at "enable_count"
 * instead: each thread's PerfContext is reset as it opens and added into the database's
 * totals as it closes, and stats() reports those totals as "op." lines (kvlab divides a
 * phase's by its operations: blocks read, bloom checks, memtable and SST gets per get).
 *
 * Each thread has one write batch, created once and cleared for reuse.  A single
 * put or delete is a one-entry batch written at once, as db_bench's DoWrite does
 * (rocksdb_put would build and malloc a fresh WriteBatch on every call); a kvlab
 * batch collects entries in it from batch_begin to batch_commit.
 *
 * Transactions.  A read transaction is a snapshot (rocksdb_create_snapshot) that every
 * get and iterator of it reads.  A write transaction, when the run asked for
 * transactions (kv_config.transactions), is an OptimisticTransactionDB transaction with
 * a snapshot taken at its start: reads are GetForUpdate (tracked) at that snapshot and
 * iterators see the transaction's own writes; commit validates that no key it read or
 * wrote was committed by anyone else since, and fails with Busy (KV_E_CONFLICT) if so:
 * snapshot isolation with read tracking, FoundationDB's model (snapshot reads, buffered
 * writes, a commit that may conflict and is retried from the start by the driver).
 * Optimistic rather than pessimistic (TransactionDB): no lock waits or deadlock
 * detection, the same conflict/retry semantics as FDB, and plain operations go to the
 * base DB untouched.  The database is opened as an OptimisticTransactionDB only then,
 * because that keeps flushed memtables for conflict checking (max_write_buffer_size_
 * to_maintain), which db_bench's workloads should not pay.  Without it a write
 * transaction is a snapshot plus one WriteBatch, as on LevelDB, and says so.
 */
#define _GNU_SOURCE   /* asprintf */
#include <rocksdb/c.h>
#include <stdio.h>
#include <unistd.h>

#include "kv_util.h"

#ifndef KV_ROCKSDB_VERSION
#define KV_ROCKSDB_VERSION "unknown"
#endif

struct kv_db {
    rocksdb_t *db;                 /* the base DB when otdb is open */
    rocksdb_optimistictransactiondb_t *otdb;
    rocksdb_optimistictransaction_options_t *otopts;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *table;
    rocksdb_cache_t *cache;
    rocksdb_writeoptions_t *wopts;
    char *bulk_file;               /* a bulk load's chunk file, in the database's folder (a name RocksDB
                                      does not take for its own) */
    int counters;                  /* engine_counters: threads at perf level enable_count */
    uint64_t perf[32];             /* the closed threads' PerfContext counts, summed (PERF_METRICS' order) */
};

/* iostats.cc: this thread's IOStatsContext, which RocksDB's C API cannot reach */
void kv_rocksdb_iostats_reset(void);
void kv_rocksdb_iostats_read(uint64_t *bytes_read, uint64_t *bytes_written);

/* The PerfContext counts kvlab reports per operation, by RocksDB's names (perf_context.h); then
   IOStatsContext's bytes read and written (iostats_context.h), the last two of kv_db.perf. */
static const struct { int metric; const char *name; } PERF_METRICS[] = {
    {rocksdb_user_key_comparison_count, "user_key_comparison_count"},
    {rocksdb_block_cache_hit_count, "block_cache_hit_count"},
    {rocksdb_block_read_count, "block_read_count"},
    {rocksdb_block_read_byte, "block_read_byte"},
    {rocksdb_get_read_bytes, "get_read_bytes"},
    {rocksdb_internal_key_skipped_count, "internal_key_skipped_count"},
    {rocksdb_internal_delete_skipped_count, "internal_delete_skipped_count"},
    {rocksdb_get_from_memtable_count, "get_from_memtable_count"},
    {rocksdb_seek_on_memtable_count, "seek_on_memtable_count"},
    {rocksdb_next_on_memtable_count, "next_on_memtable_count"},
    {rocksdb_bloom_memtable_hit_count, "bloom_memtable_hit_count"},
    {rocksdb_bloom_memtable_miss_count, "bloom_memtable_miss_count"},
    {rocksdb_bloom_sst_hit_count, "bloom_sst_hit_count"},
    {rocksdb_bloom_sst_miss_count, "bloom_sst_miss_count"},
};
#define N_PERF_METRICS (sizeof PERF_METRICS / sizeof PERF_METRICS[0])
#define IOSTATS_READ N_PERF_METRICS
#define IOSTATS_WRITTEN (N_PERF_METRICS + 1)
_Static_assert(N_PERF_METRICS + 2 <= sizeof ((kv_db *)0)->perf / sizeof(uint64_t), "kv_db.perf holds every metric");

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    rocksdb_readoptions_t *ropts;
    rocksdb_writebatch_t *wb;      /* the thread's write batch, reused */
    int in_batch;                  /* between batch_begin and batch_commit/abort */
    rocksdb_iterator_t *it;
    rocksdb_pinnableslice_t *pinned;
    rocksdb_transaction_t *txn;    /* reused from one transaction to the next */
    const rocksdb_snapshot_t *snap;   /* the open transaction's snapshot */
    rocksdb_perfcontext_t *perf;   /* engine_counters: this thread's PerfContext */
    int txn_kind;                  /* 0, KV_TXN_READ or KV_TXN_WRITE */
    int in_otxn;                   /* the open write transaction is txn */
    rocksdb_sstfilewriter_t *sst;  /* a bulk load's open chunk */
    size_t sst_entries;
    char **mg_values, **mg_errs;   /* the last multi_get's values (RocksDB's malloc'd copies) and errors */
    size_t mg_n, mg_cap;
};

/* A Status string the C API handed over (malloc'd): the error, with its kind (kv_status_error); frees it. */
static int take_error(kv_failure *e, char *msg) {
    int code = kv_status_error(e, 0, "RocksDB", msg);
    rocksdb_free(msg);
    return code;
}

static void destroy(kv_db *d) {
    if (d->otdb) {
        rocksdb_optimistictransactiondb_close_base_db(d->db);
        rocksdb_optimistictransactiondb_close(d->otdb);
    } else if (d->db) {
        rocksdb_close(d->db);
    }
    if (d->otopts) rocksdb_optimistictransaction_options_destroy(d->otopts);
    if (d->opts) rocksdb_options_destroy(d->opts);
    if (d->table) rocksdb_block_based_options_destroy(d->table);
    if (d->cache) rocksdb_cache_destroy(d->cache);
    if (d->wopts) rocksdb_writeoptions_destroy(d->wopts);
    free(d->bulk_file);
    free(d);
}

/* The kv_config's generic fields as RocksDB options in *base; the block table (and its cache) go on d,
   whose destroy() frees them.  *base is the caller's on KV_OK and already freed otherwise. */
static int options_from_config(kv_db *d, const kv_config *cfg, rocksdb_options_t **base_out, kv_failure *err) {
    static const int comp[] = {
        [KV_COMP_NONE] = rocksdb_no_compression, [KV_COMP_SNAPPY] = rocksdb_snappy_compression,
        [KV_COMP_LZ4] = rocksdb_lz4_compression, [KV_COMP_ZSTD] = rocksdb_zstd_compression,
    };
    rocksdb_options_t *base = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(base, cfg->create ? 1 : 0);
    if (cfg->compression < 0 || cfg->compression > KV_COMP_ZSTD) {
        rocksdb_options_destroy(base);
        return kv_seterr(err, KV_E_CONFIG, "RocksDB: unknown compression %d", cfg->compression);
    }
    rocksdb_options_set_compression(base, comp[cfg->compression]);
    if (cfg->write_buffer_size) rocksdb_options_set_write_buffer_size(base, cfg->write_buffer_size);
    if (cfg->max_open_files) rocksdb_options_set_max_open_files(base, cfg->max_open_files);
    d->table = rocksdb_block_based_options_create();
    if (cfg->cache_size) {
        d->cache = rocksdb_cache_create_lru(cfg->cache_size);
        rocksdb_block_based_options_set_block_cache(d->table, d->cache);
    }
    if (cfg->block_size) rocksdb_block_based_options_set_block_size(d->table, (size_t)cfg->block_size);
    if (cfg->bloom_bits > 0)  /* the table options take ownership of the policy */
        rocksdb_block_based_options_set_filter_policy(d->table, rocksdb_filterpolicy_create_bloom(cfg->bloom_bits));
    rocksdb_options_set_block_based_table_factory(base, d->table);
    *base_out = base;
    return KV_OK;
}

/* d->opts: base with the `options` string applied over it, or base itself when there is none.
   Takes base either way. */
static int apply_options_string(kv_db *d, const char *options, rocksdb_options_t *base, kv_failure *err) {
    if (!options || !*options) {
        d->opts = base;
        return KV_OK;
    }
    char *msg = NULL;
    d->opts = rocksdb_options_create();
    rocksdb_get_options_from_string(base, options, d->opts, &msg);
    rocksdb_options_destroy(base);
    if (msg) {
        int code = kv_code_from_status(msg) == KV_E_OTHER ? KV_E_CONFIG : kv_code_from_status(msg);
        kv_status_error(err, code, "RocksDB options string rejected by RocksDB's parser", msg);
        rocksdb_free(msg);
        return code;
    }
    return KV_OK;
}

/* RocksDB trusts these values: past these bounds it aborts the process (an assertion, std::length_error,
   std::bad_alloc) or starts that many threads.  Found by tests/test_fuzz.py. */
static int check_option_limits(rocksdb_options_t *o, kv_failure *err) {
    const struct { const char *name; long long v, lo, hi; } lim[] = {
        {"num_levels", rocksdb_options_get_num_levels(o), 1, 100},
        {"write_buffer_size", (long long)rocksdb_options_get_write_buffer_size(o), 0, 1LL << 40},
        {"arena_block_size", (long long)rocksdb_options_get_arena_block_size(o), 0, 1LL << 30},
        {"max_write_buffer_number", rocksdb_options_get_max_write_buffer_number(o), 0, 1024},
        {"max_background_jobs", rocksdb_options_get_max_background_jobs(o), -1, 1024},
        {"max_background_compactions", rocksdb_options_get_max_background_compactions(o), -1, 1024},
        {"max_background_flushes", rocksdb_options_get_max_background_flushes(o), -1, 1024},
        {"max_subcompactions", (long long)rocksdb_options_get_max_subcompactions(o), 0, 1024},
    };
    if (rocksdb_options_get_arena_block_size(o) > rocksdb_options_get_write_buffer_size(o) / 2) {
        /* a memtable whose first arena block outgrows it fails RocksDB's assertion !ShouldScheduleFlush() */
        return kv_seterr(err, KV_E_CONFIG, "RocksDB arena_block_size=%zu is out of range; allowed: at most half "
                         "of write_buffer_size (%zu), or 0", rocksdb_options_get_arena_block_size(o),
                         rocksdb_options_get_write_buffer_size(o));
    }
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i].v < lim[i].lo || lim[i].v > lim[i].hi)
            return kv_seterr(err, KV_E_CONFIG, "RocksDB %s=%lld is out of range; allowed: %lld to %lld",
                             lim[i].name, lim[i].v, lim[i].lo, lim[i].hi);
    return KV_OK;
}

/* The write options, then the database itself: an OptimisticTransactionDB when the run uses transactions. */
static int open_database(kv_db *d, const char *path, const kv_config *cfg, kv_failure *err) {
    char *msg = NULL;
    d->wopts = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(d->wopts, cfg->sync ? 1 : 0);
    rocksdb_writeoptions_disable_WAL(d->wopts, cfg->disable_wal ? 1 : 0);
    if (cfg->transactions) {
        d->otdb = rocksdb_optimistictransactiondb_open(d->opts, path, &msg);
        if (msg) { d->otdb = NULL; return take_error(err, msg); }
        d->db = rocksdb_optimistictransactiondb_get_base_db(d->otdb);
        d->otopts = rocksdb_optimistictransaction_options_create();
        rocksdb_optimistictransaction_options_set_set_snapshot(d->otopts, 1);
    } else {
        d->db = rocksdb_open(d->opts, path, &msg);
        if (msg) { d->db = NULL; return take_error(err, msg); }
    }
    return KV_OK;
}

static int rdb_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    kv_db *d = calloc(1, sizeof *d);
    if (!d) return kv_seterr(err, KV_E_OTHER, "RocksDB: out of memory");
    rocksdb_options_t *base = NULL;
    int rc = options_from_config(d, cfg, &base, err);
    if (rc != KV_OK) {
        free(d);    /* nothing on it yet */
        return rc;
    }
    rc = apply_options_string(d, cfg->options, base, err);
    if (rc == KV_OK) rc = check_option_limits(d->opts, err);
    if (rc == KV_OK) rc = open_database(d, path, cfg, err);
    d->counters = cfg->engine_counters;
    if (rc == KV_OK && asprintf(&d->bulk_file, "%s/kvlab-bulk.sst", path) < 0) {
        d->bulk_file = NULL;
        rc = kv_seterr(err, KV_E_OTHER, "RocksDB: out of memory");
    }
    if (rc == KV_OK) unlink(d->bulk_file);   /* a chunk a killed bulk load was writing: never ingested */
    if (rc != KV_OK) {
        destroy(d);
        return rc;
    }
    *out = d;
    return KV_OK;
}

static int rdb_close(kv_db *d, kv_failure *err) { (void)err; destroy(d); return KV_OK; }

static int rdb_thread_open(kv_db *d, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "RocksDB: out of memory");
    t->db = d;
    t->ropts = rocksdb_readoptions_create();
    t->wb = rocksdb_writebatch_create();
    /* per thread: thread_open runs on the calling thread */
    rocksdb_set_perf_level(d->counters ? rocksdb_enable_count : rocksdb_disable);
    if (d->counters) {
        t->perf = rocksdb_perfcontext_create();
        rocksdb_perfcontext_reset(t->perf);
        kv_rocksdb_iostats_reset();
    }
    *out = t;
    return KV_OK;
}

static void end_txn(kv_thread *t);
static void rdb_bulk_abort(kv_thread *t);

static void free_multi_get(kv_thread *t);

static void rdb_thread_close(kv_thread *t) {
    if (t->perf) {   /* this thread's counts into the database's totals (threads close on their own thread) */
        for (size_t i = 0; i < N_PERF_METRICS; i++)
            __atomic_add_fetch(&t->db->perf[i], rocksdb_perfcontext_metric(t->perf, PERF_METRICS[i].metric),
                               __ATOMIC_RELAXED);
        uint64_t read = 0, written = 0;
        kv_rocksdb_iostats_read(&read, &written);
        __atomic_add_fetch(&t->db->perf[IOSTATS_READ], read, __ATOMIC_RELAXED);
        __atomic_add_fetch(&t->db->perf[IOSTATS_WRITTEN], written, __ATOMIC_RELAXED);
        rocksdb_perfcontext_destroy(t->perf);
        rocksdb_set_perf_level(rocksdb_disable);
    }
    rdb_bulk_abort(t);
    free_multi_get(t);
    free(t->mg_values);
    free(t->mg_errs);
    if (t->it) rocksdb_iter_destroy(t->it);
    t->it = NULL;
    end_txn(t);
    if (t->txn) rocksdb_transaction_destroy(t->txn);
    rocksdb_writebatch_destroy(t->wb);
    if (t->pinned) rocksdb_pinnableslice_destroy(t->pinned);
    rocksdb_readoptions_destroy(t->ropts);
    free(t);
}

static int write_out(kv_thread *t) {
    char *msg = NULL;
    rocksdb_write(t->db->db, t->db->wopts, t->wb, &msg);
    return msg ? take_error(&t->c.err, msg) : KV_OK;
}

static int rdb_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    if (t->in_otxn) {
        char *msg = NULL;
        rocksdb_transaction_put(t->txn, k, kl, v, vl, &msg);
        return msg ? take_error(&t->c.err, msg) : KV_OK;
    }
    if (!t->in_batch) rocksdb_writebatch_clear(t->wb);
    rocksdb_writebatch_put(t->wb, k, kl, v, vl);
    return t->in_batch ? KV_OK : write_out(t);
}

static int rdb_del(kv_thread *t, const char *k, size_t kl) {
    if (t->in_otxn) {
        char *msg = NULL;
        rocksdb_transaction_delete(t->txn, k, kl, &msg);
        return msg ? take_error(&t->c.err, msg) : KV_OK;
    }
    if (!t->in_batch) rocksdb_writebatch_clear(t->wb);
    rocksdb_writebatch_delete(t->wb, k, kl);
    return t->in_batch ? KV_OK : write_out(t);
}

static int rdb_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    if (t->pinned) { rocksdb_pinnableslice_destroy(t->pinned); t->pinned = NULL; }
    char *msg = NULL;
    rocksdb_pinnableslice_t *p = t->in_otxn
        ? rocksdb_transaction_get_pinned_for_update(t->txn, t->ropts, k, kl, 1, &msg)
        : rocksdb_get_pinned(t->db->db, t->ropts, k, kl, &msg);
    if (msg) return take_error(&t->c.err, msg);
    if (!p) return KV_NOTFOUND;
    t->pinned = p;
    *v = rocksdb_pinnableslice_value(p, vl);
    return KV_OK;
}

/* multireadrandom's batched read: rocksdb_multi_get, RocksDB's DB::MultiGet over a vector of keys (db_bench's
   MultiGet without --multiread_batched), each value handed back as a malloc'd copy, kept until the next call. */
static void free_multi_get(kv_thread *t) {
    for (size_t i = 0; i < t->mg_n; i++) {
        if (t->mg_values[i]) rocksdb_free(t->mg_values[i]);
        if (t->mg_errs[i]) rocksdb_free(t->mg_errs[i]);
    }
    t->mg_n = 0;
}

static int rdb_multi_get(kv_thread *t, size_t n, const char *const *keys, const size_t *kls, const char **vs,
                         size_t *vls, int *rcs) {
    free_multi_get(t);
    if (n > t->mg_cap) {
        char **v = realloc(t->mg_values, n * sizeof *v), **e = v ? realloc(t->mg_errs, n * sizeof *e) : NULL;
        if (v) t->mg_values = v;
        if (e) t->mg_errs = e;
        if (!v || !e) return kv_seterr(&t->c.err, KV_E_OTHER, "RocksDB multi_get: out of memory");
        t->mg_cap = n;
    }
    rocksdb_multi_get(t->db->db, t->ropts, n, keys, kls, t->mg_values, vls, t->mg_errs);
    t->mg_n = n;
    int rc = KV_OK;
    for (size_t i = 0; i < n; i++) {
        vs[i] = t->mg_values[i];
        if (t->mg_errs[i]) {
            if (rc == KV_OK) rc = kv_status_error(&t->c.err, 0, "RocksDB multi_get", t->mg_errs[i]);
            rcs[i] = rc;
        } else {
            rcs[i] = t->mg_values[i] ? KV_OK : KV_NOTFOUND;
        }
    }
    return rc;
}

static int rdb_batch_begin(kv_thread *t) {
    rocksdb_writebatch_clear(t->wb);
    t->in_batch = 1;
    return KV_OK;
}

static int rdb_batch_commit(kv_thread *t) {
    t->in_batch = 0;
    return write_out(t);
}

static int rdb_batch_abort(kv_thread *t) {
    rocksdb_writebatch_clear(t->wb);
    t->in_batch = 0;
    return KV_OK;
}

/* Transactions: see the header comment. */
static int rdb_txn_begin(kv_thread *t, int kind) {
    if (t->txn_kind) return kv_seterr(&t->c.err, KV_E_OTHER, "RocksDB: transaction already open");
    t->txn_kind = kind;
    if (kind == KV_TXN_WRITE && t->db->otdb) {
        t->txn = rocksdb_optimistictransaction_begin(t->db->otdb, t->db->wopts, t->db->otopts, t->txn);
        t->snap = rocksdb_transaction_get_snapshot(t->txn);   /* a wrapper, freed with rocksdb_free */
        t->in_otxn = 1;
    } else {
        t->snap = rocksdb_create_snapshot(t->db->db);
        if (kind == KV_TXN_WRITE) rdb_batch_begin(t);
    }
    rocksdb_readoptions_set_snapshot(t->ropts, t->snap);
    return KV_OK;
}

static void end_txn(kv_thread *t) {
    if (!t->txn_kind) return;
    if (t->it) { rocksdb_iter_destroy(t->it); t->it = NULL; }
    if (t->pinned) { rocksdb_pinnableslice_destroy(t->pinned); t->pinned = NULL; }
    rocksdb_readoptions_set_snapshot(t->ropts, NULL);
    if (t->in_otxn) rocksdb_free((void *)t->snap);
    else rocksdb_release_snapshot(t->db->db, t->snap);
    t->snap = NULL;
    t->txn_kind = 0;
}

static int rdb_txn_commit(kv_thread *t) {
    int kind = t->txn_kind, otxn = t->in_otxn, rc = KV_OK;
    end_txn(t);
    t->in_otxn = 0;
    if (otxn) {
        char *msg = NULL;
        rocksdb_transaction_commit(t->txn, &msg);
        if (msg) rc = take_error(&t->c.err, msg);
    } else if (kind == KV_TXN_WRITE) {
        rc = rdb_batch_commit(t);
    }
    return rc;
}

static void rdb_txn_abort(kv_thread *t) {
    int otxn = t->in_otxn;
    end_txn(t);
    t->in_otxn = 0;
    if (otxn) {
        char *msg = NULL;
        rocksdb_transaction_rollback(t->txn, &msg);
        if (msg) rocksdb_free(msg);
    }
    rdb_batch_abort(t);
}

/* Bulk load: each chunk an SST file written with the database's own options (SstFileWriter), then
   ingested with move_files (a hard link, no copy).  The chunks' key ranges follow one another and lie above
   everything the database holds, so each goes straight to the bottom level: no memtable, no WAL, no flush,
   no compaction. */
static int rdb_bulk_begin(kv_thread *t) {
    char *msg = NULL;
    rocksdb_envoptions_t *env = rocksdb_envoptions_create();
    t->sst = rocksdb_sstfilewriter_create(env, t->db->opts);
    rocksdb_envoptions_destroy(env);
    t->sst_entries = 0;
    rocksdb_sstfilewriter_open(t->sst, t->db->bulk_file, &msg);
    if (msg) {
        rdb_bulk_abort(t);
        return take_error(&t->c.err, msg);
    }
    return KV_OK;
}

static int rdb_bulk_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    char *msg = NULL;
    rocksdb_sstfilewriter_put(t->sst, k, kl, v, vl, &msg);
    if (msg) return take_error(&t->c.err, msg);
    t->sst_entries++;
    return KV_OK;
}

static int rdb_bulk_commit(kv_thread *t, int last) {
    (void)last;
    char *msg = NULL;
    if (t->sst_entries) rocksdb_sstfilewriter_finish(t->sst, &msg);
    if (!msg && t->sst_entries) {
        const char *files[1] = {t->db->bulk_file};
        rocksdb_ingestexternalfileoptions_t *io = rocksdb_ingestexternalfileoptions_create();
        rocksdb_ingestexternalfileoptions_set_move_files(io, 1);
        rocksdb_ingest_external_file(t->db->db, files, 1, io, &msg);
        rocksdb_ingestexternalfileoptions_destroy(io);
    }
    rdb_bulk_abort(t);   /* the writer, and the file where ingestion did not take it */
    return msg ? take_error(&t->c.err, msg) : KV_OK;
}

static void rdb_bulk_abort(kv_thread *t) {
    if (!t->sst) return;
    rocksdb_sstfilewriter_destroy(t->sst);
    t->sst = NULL;
    unlink(t->db->bulk_file);
}

static const char *rdb_isolation(const char *variant, int transactions) {
    (void)variant;
    return transactions
        ? "snapshot isolation with read tracking: an OptimisticTransactionDB transaction with a snapshot at "
          "its start, reads by GetForUpdate; commit fails on any key read or written that another transaction "
          "committed since (counted as a conflict, retried from the start); read-only transactions read one snapshot"
        : "a snapshot for a transaction's reads and one atomic WriteBatch for its writes; no conflict detection "
          "(the database was not opened as an OptimisticTransactionDB)";
}

static int iter_out(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (!rocksdb_iter_valid(t->it)) {
        char *msg = NULL;
        rocksdb_iter_get_error(t->it, &msg);
        return msg ? take_error(&t->c.err, msg) : KV_NOTFOUND;
    }
    *ko = rocksdb_iter_key(t->it, klo);
    *vo = rocksdb_iter_value(t->it, vlo);
    return KV_OK;
}

static int rdb_iter_seek(kv_thread *t, const char *k, size_t kl,
                         const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (t->it) rocksdb_iter_destroy(t->it);
    t->it = t->in_otxn ? rocksdb_transaction_create_iterator(t->txn, t->ropts)
                       : rocksdb_create_iterator(t->db->db, t->ropts);
    if (kl) rocksdb_iter_seek(t->it, k, kl);
    else rocksdb_iter_seek_to_first(t->it);
    return iter_out(t, ko, klo, vo, vlo);
}

static int rdb_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    rocksdb_iter_next(t->it);
    return iter_out(t, ko, klo, vo, vlo);
}

static void rdb_iter_close(kv_thread *t) {
    if (t->it) rocksdb_iter_destroy(t->it);
    t->it = NULL;
}

static int rdb_compact(kv_db *d, kv_failure *err) {
    (void)err;
    rocksdb_compact_range(d->db, NULL, 0, NULL, 0);
    return KV_OK;
}

static int rdb_stats(kv_db *d, char *buf, size_t len) {
    static const char *props[] = {
        "rocksdb.estimate-num-keys", "rocksdb.total-sst-files-size", "rocksdb.live-sst-files-size",
        "rocksdb.cur-size-all-mem-tables", "rocksdb.num-immutable-mem-table", "rocksdb.num-running-compactions",
        "rocksdb.num-running-flushes", "rocksdb.estimate-pending-compaction-bytes", "rocksdb.block-cache-usage",
        "rocksdb.estimate-table-readers-mem", "rocksdb.num-live-versions", "rocksdb.actual-delayed-write-rate",
        "rocksdb.is-write-stopped",
    };
    int n = 0;
    for (size_t i = 0; i < sizeof props / sizeof props[0] && (size_t)n < len; i++) {
        uint64_t v = 0;
        if (rocksdb_property_int(d->db, props[i], &v) == 0)
            n += snprintf(buf + n, len - n, "%s=%llu\n", props[i] + 8, (unsigned long long)v);
    }
    for (size_t i = 0; d->counters && i < N_PERF_METRICS && (size_t)n < len; i++)
        n += snprintf(buf + n, len - n, "op.%s=%llu\n", PERF_METRICS[i].name,
                      (unsigned long long)__atomic_load_n(&d->perf[i], __ATOMIC_RELAXED));
    if (d->counters && (size_t)n < len)
        n += snprintf(buf + n, len - n, "op.iostats_bytes_read=%llu\nop.iostats_bytes_written=%llu\n",
                      (unsigned long long)__atomic_load_n(&d->perf[IOSTATS_READ], __ATOMIC_RELAXED),
                      (unsigned long long)__atomic_load_n(&d->perf[IOSTATS_WRITTEN], __ATOMIC_RELAXED));
    char *text = rocksdb_property_value(d->db, "rocksdb.stats");
    if ((size_t)n < len) snprintf(buf + n, len - n, "#text\n%s", text ? text : "");
    if (text) rocksdb_free(text);
    return KV_OK;
}

/* The C API has no version call; the build records the header's version. */
static const char *rdb_version(void) { return KV_ROCKSDB_VERSION; }

const kv_engine_ops kv_engine_rocksdb = {
    .name = "rocksdb",
    .open = rdb_open, .close = rdb_close,
    .thread_open = rdb_thread_open, .thread_close = rdb_thread_close,
    .put = rdb_put, .get = rdb_get, .del = rdb_del,
    .batch_begin = rdb_batch_begin, .batch_commit = rdb_batch_commit, .batch_abort = rdb_batch_abort,
    .txn_begin = rdb_txn_begin, .txn_commit = rdb_txn_commit, .txn_abort = rdb_txn_abort,
    .iter_seek = rdb_iter_seek, .iter_next = rdb_iter_next, .iter_close = rdb_iter_close,
    .compact = rdb_compact, .stats = rdb_stats, .version = rdb_version, .process_shutdown = NULL,
    .isolation = rdb_isolation,
    .bulk_begin = rdb_bulk_begin, .bulk_put = rdb_bulk_put, .bulk_commit = rdb_bulk_commit,
    .bulk_abort = rdb_bulk_abort,
    .bulk_how = "SST files written with the database's options (SstFileWriter), one a chunk, ingested with "
                "move_files straight into the bottom level: no memtable, WAL, flush or compaction",
    .multi_get = rdb_multi_get,
    .multi_get_how = "rocksdb_multi_get: RocksDB's MultiGet over the batch's keys (db_bench's multireadrandom "
                     "without --multiread_batched), each value returned as a copy",
};
