/* Reference loop for LevelDB, from leveldb/c.h and LevelDB's doc/index.md (not kvlab's adapter).
 *
 * Configuration (the same as kvlab's leveldb configuration at kvlab's defaults, sync off):
 *   create_if_missing, compression none (kvlab's default: leveldb_no_compression), an LRU block cache of
 *   --cache-size bytes (leveldb_cache_create_lru; without it LevelDB's own 8 MB), write buffer, block size,
 *   open files and filter at LevelDB's defaults (kvlab sets none of them by default), WriteOptions.sync off.
 * fillseq: a leveldb_writebatch of REF_BATCH puts, leveldb_write, cleared and reused.
 * readrandom: leveldb_get with one ReadOptions per thread; the C API returns a malloc'd copy of the value,
 *   released with leveldb_free (c.h: "Returns NULL if not found.  A malloc()ed array otherwise").
 */
#include <leveldb/c.h>

#define REF_ENGINE "leveldb"
#include "ref_common.h"

static leveldb_t *db;
static leveldb_options_t *opts;
static leveldb_cache_t *cache;
static leveldb_writeoptions_t *wopts;

typedef struct {
    leveldb_readoptions_t *ropts;
} ref_reader;

static void check(char *err, const char *what) {
    if (err) ref_die(what, err);
}

static void eng_open(const ref_args *a, char *config, size_t len) {
    char *err = NULL;
    opts = leveldb_options_create();
    leveldb_options_set_create_if_missing(opts, 1);
    leveldb_options_set_compression(opts, leveldb_no_compression);
    if (a->cache_size) {
        cache = leveldb_cache_create_lru(a->cache_size);
        leveldb_options_set_cache(opts, cache);
    }
    wopts = leveldb_writeoptions_create();
    leveldb_writeoptions_set_sync(wopts, 0);
    db = leveldb_open(opts, a->dir, &err);
    check(err, "leveldb_open");
    char cache_text[64] = "LevelDB's 8 MB";
    if (a->cache_size) snprintf(cache_text, sizeof cache_text, "LRU(%llu)", (unsigned long long)a->cache_size);
    snprintf(config, len, "compression=none block_cache=%s sync=0, other options LevelDB's defaults; "
             "read: leveldb_get, leveldb_free", cache_text);
}

static void eng_close(void) {
    leveldb_close(db);
    leveldb_writeoptions_destroy(wopts);
    leveldb_options_destroy(opts);
    if (cache) leveldb_cache_destroy(cache);
}

static void eng_fill(const ref_args *a, const char *value) {
    char key[REF_KEY], *err = NULL;
    leveldb_writebatch_t *batch = leveldb_writebatch_create();
    for (uint64_t i = 0; i < a->num;) {
        leveldb_writebatch_clear(batch);
        for (uint64_t end = i + REF_BATCH < a->num ? i + REF_BATCH : a->num; i < end; i++) {
            ref_key(key, i);
            leveldb_writebatch_put(batch, key, REF_KEY, value, REF_VALUE);
        }
        leveldb_write(db, wopts, batch, &err);
        check(err, "leveldb_write");
    }
    leveldb_writebatch_destroy(batch);
}

static void eng_reader_open(ref_reader *r) { r->ropts = leveldb_readoptions_create(); }

static void eng_reader_close(ref_reader *r) { leveldb_readoptions_destroy(r->ropts); }

static inline int eng_get(ref_reader *r, const char *key) {
    char *err = NULL;
    size_t vlen;
    char *v = leveldb_get(db, r->ropts, key, REF_KEY, &vlen, &err);
    check(err, "leveldb_get");
    if (!v) return 0;
    leveldb_free(v);
    return 1;
}

#include "ref_main.h"
