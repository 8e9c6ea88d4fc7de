/* Reference loop for libmdbx, from mdbx.h's documentation (not kvlab's adapter).
 *
 * Configuration (the same as kvlab's mdbx configuration at kvlab's defaults, sync off):
 *   mdbx_env_set_geometry: lower bound libmdbx's default, 16 MiB now, 64 GiB upper (kvlab's default map_size; the
 *   file grows in 16 MiB steps), default page size; mdbx_env_set_maxreaders THREADS + 10 (kvlab: max_threads + 8,
 *   max_threads = THREADS + 2); mdbx_env_open flags MDBX_NOSTICKYTHREADS | MDBX_SAFE_NOSYNC (libmdbx's no-sync
 *   mode that keeps the last steady commit), the unnamed table; libmdbx's log level set to warnings.  libmdbx has
 *   no cache of its own (the OS page cache).
 * fillseq: one write txn per REF_BATCH puts (mdbx_put, MDBX_UPSERT), mdbx_txn_commit.
 * readrandom: one MDBX_TXN_RDONLY txn per thread, renewed for each get (mdbx_txn_renew) and reset after it
 *   (mdbx_txn_reset), as mdbx.h describes mdbx_txn_reset: it "saves allocation overhead if the process will start
 *   a new read-only transaction soon, and also locking overhead if MDBX_NOSTICKYTHREADS is in use".
 */
#include <mdbx.h>

#define REF_ENGINE "mdbx"
#include "ref_common.h"

static MDBX_env *env;
static MDBX_dbi dbi;

typedef struct {
    MDBX_txn *txn;
} ref_reader;

static void check(int rc, const char *what);

static void eng_open(const ref_args *a, char *config, size_t len) {
    unsigned maxreaders = (unsigned)a->threads + 10;
    intptr_t step = (intptr_t)16 << 20;
    mdbx_setup_debug(MDBX_LOG_WARN, MDBX_DBG_DONTCHANGE, MDBX_LOGGER_DONTCHANGE);
    check(mdbx_env_create(&env), "mdbx_env_create");
    intptr_t upper = a->map_size ? (intptr_t)a->map_size : (intptr_t)64 << 30;   /* --map-size: under valgrind */
    check(mdbx_env_set_geometry(env, -1, step, upper, step, -1, -1), "mdbx_env_set_geometry");
    check(mdbx_env_set_maxreaders(env, maxreaders), "mdbx_env_set_maxreaders");
    check(mdbx_env_open(env, a->dir, MDBX_NOSTICKYTHREADS | MDBX_SAFE_NOSYNC, 0664), "mdbx_env_open");
    MDBX_txn *txn;
    check(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "mdbx_txn_begin");
    check(mdbx_dbi_open(txn, NULL, MDBX_DB_DEFAULTS, &dbi), "mdbx_dbi_open");
    check(mdbx_txn_commit(txn), "mdbx_txn_commit");
    snprintf(config, len, "geometry=-1,%ld,%ld,%ld maxreaders=%u flags=MDBX_NOSTICKYTHREADS|MDBX_SAFE_NOSYNC; "
             "read: mdbx_txn_renew, mdbx_get, mdbx_txn_reset", (long)step, (long)upper, (long)step, maxreaders);
}

static void check(int rc, const char *what) {
    if (rc) ref_die(what, mdbx_strerror(rc));
}

static void eng_close(void) { mdbx_env_close(env); }

static void eng_fill(const ref_args *a, const char *value) {
    char key[REF_KEY];
    MDBX_val k = {key, REF_KEY}, v = {(void *)value, REF_VALUE};
    for (uint64_t i = 0; i < a->num;) {
        MDBX_txn *txn;
        check(mdbx_txn_begin(env, NULL, MDBX_TXN_READWRITE, &txn), "mdbx_txn_begin");
        for (uint64_t end = i + REF_BATCH < a->num ? i + REF_BATCH : a->num; i < end; i++) {
            ref_key(key, i);
            check(mdbx_put(txn, dbi, &k, &v, MDBX_UPSERT), "mdbx_put");
        }
        check(mdbx_txn_commit(txn), "mdbx_txn_commit");
    }
}

static void eng_reader_open(ref_reader *r) {
    check(mdbx_txn_begin(env, NULL, MDBX_TXN_RDONLY, &r->txn), "mdbx_txn_begin(MDBX_TXN_RDONLY)");
    mdbx_txn_reset(r->txn);
}

static void eng_reader_close(ref_reader *r) { mdbx_txn_abort(r->txn); }

static inline int eng_get(ref_reader *r, const char *key) {
    MDBX_val k = {(void *)key, REF_KEY}, v;
    int rc = mdbx_txn_renew(r->txn);
    if (rc) ref_die("mdbx_txn_renew", mdbx_strerror(rc));
    rc = mdbx_get(r->txn, dbi, &k, &v);
    mdbx_txn_reset(r->txn);   /* the value is not used after this: it pointed into the map */
    if (rc == MDBX_NOTFOUND) return 0;
    if (rc) ref_die("mdbx_get", mdbx_strerror(rc));
    return 1;
}

#include "ref_main.h"
