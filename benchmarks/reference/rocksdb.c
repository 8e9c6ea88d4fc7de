/* Reference loop for RocksDB, from rocksdb/c.h and RocksDB's wiki (not kvlab's adapter).
 *
 * Configuration (the same as kvlab's rocksdb and rocksdb-tuned configurations at kvlab's defaults, sync off):
 *   create_if_missing, compression none (kvlab passes no compression unless asked; RocksDB's own default is
 *   snappy), a block-based table whose block cache is an LRU cache of --cache-size bytes (without it
 *   RocksDB 7.8 makes an 8 MB one), the rest RocksDB's defaults; then --options, a RocksDB options string
 *   applied over those by rocksdb_get_options_from_string (for rocksdb-tuned: kvlab's translation of seed 001's
 *   "pfx" flags, which replaces the table factory with a PlainTable); WriteOptions sync off, WAL on; every
 *   thread at perf level "disable" (rocksdb_set_perf_level), as db_bench runs by default and kvlab does.
 * fillseq: one rocksdb_writebatch of REF_BATCH puts, rocksdb_write, cleared and reused.
 * readrandom: rocksdb_get_pinned (no copy of the value), rocksdb_pinnableslice_destroy after reading it.
 */
#include <rocksdb/c.h>

#define REF_ENGINE "rocksdb"
#include "ref_common.h"

static rocksdb_t *db;
static rocksdb_options_t *opts;
static rocksdb_block_based_table_options_t *table;
static rocksdb_cache_t *cache;
static rocksdb_writeoptions_t *wopts;

typedef struct {
    rocksdb_readoptions_t *ropts;
} ref_reader;

static void check(char *err, const char *what) {
    if (err) ref_die(what, err);
}

static void eng_open(const ref_args *a, char *config, size_t len) {
    char *err = NULL;
    rocksdb_options_t *base = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(base, 1);
    rocksdb_options_set_compression(base, rocksdb_no_compression);
    table = rocksdb_block_based_options_create();
    if (a->cache_size) {
        cache = rocksdb_cache_create_lru(a->cache_size);
        rocksdb_block_based_options_set_block_cache(table, cache);
    }
    rocksdb_options_set_block_based_table_factory(base, table);
    if (*a->options) {
        opts = rocksdb_options_create();
        rocksdb_get_options_from_string(base, a->options, opts, &err);
        check(err, "rocksdb_get_options_from_string");
        rocksdb_options_destroy(base);
    } else {
        opts = base;
    }
    wopts = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(wopts, 0);
    rocksdb_set_perf_level(rocksdb_disable);
    db = rocksdb_open(opts, a->dir, &err);
    check(err, "rocksdb_open");
    char cache_text[64] = "RocksDB's 8 MB";
    if (a->cache_size) snprintf(cache_text, sizeof cache_text, "LRU(%llu)", (unsigned long long)a->cache_size);
    snprintf(config, len, "compression=none block_cache=%s sync=0 wal=on perf_level=disable%s%s; "
             "read: rocksdb_get_pinned, rocksdb_pinnableslice_destroy", cache_text,
             *a->options ? " options=" : "", a->options);
}

static void eng_close(void) {
    rocksdb_close(db);
    rocksdb_writeoptions_destroy(wopts);
    rocksdb_options_destroy(opts);
    rocksdb_block_based_options_destroy(table);
    if (cache) rocksdb_cache_destroy(cache);
}

static void eng_fill(const ref_args *a, const char *value) {
    char key[REF_KEY], *err = NULL;
    rocksdb_writebatch_t *batch = rocksdb_writebatch_create();
    for (uint64_t i = 0; i < a->num;) {
        rocksdb_writebatch_clear(batch);
        for (uint64_t end = i + REF_BATCH < a->num ? i + REF_BATCH : a->num; i < end; i++) {
            ref_key(key, i);
            rocksdb_writebatch_put(batch, key, REF_KEY, value, REF_VALUE);
        }
        rocksdb_write(db, wopts, batch, &err);
        check(err, "rocksdb_write");
    }
    rocksdb_writebatch_destroy(batch);
}

static void eng_reader_open(ref_reader *r) {
    rocksdb_set_perf_level(rocksdb_disable);   /* a thread-local: set on the reading thread */
    r->ropts = rocksdb_readoptions_create();
}

static void eng_reader_close(ref_reader *r) { rocksdb_readoptions_destroy(r->ropts); }

static inline int eng_get(ref_reader *r, const char *key) {
    char *err = NULL;
    rocksdb_pinnableslice_t *p = rocksdb_get_pinned(db, r->ropts, key, REF_KEY, &err);
    check(err, "rocksdb_get_pinned");
    if (!p) return 0;
    size_t vlen;
    const char *v = rocksdb_pinnableslice_value(p, &vlen);
    (void)v;
    rocksdb_pinnableslice_destroy(p);
    return 1;
}

#include "ref_main.h"
