/* Reference loop for LMDB, from lmdb.h's documentation (not kvlab's adapter).
 *
 * Configuration (the same as kvlab's lmdb configuration at kvlab's defaults, sync off):
 *   mdb_env_set_mapsize 64 GiB (kvlab's default map_size; the file is sparse), mdb_env_set_maxreaders
 *   THREADS + 10 (kvlab: max_threads + 8, max_threads = THREADS + 2), mdb_env_open flags
 *   MDB_NOTLS | MDB_NOSYNC, the unnamed database.  LMDB has no cache of its own (the OS page cache).
 * fillseq: one write txn per REF_BATCH puts (mdb_put, flags 0), mdb_txn_commit.
 * readrandom: one MDB_RDONLY txn per thread, renewed for each get (mdb_txn_renew) and reset after it
 *   (mdb_txn_reset), as lmdb.h advises for a process that starts read-only transactions often: "This saves
 *   allocation overhead if the process will start a new read-only transaction soon, and also locking overhead if
 *   MDB_NOTLS is in use."
 */
#include <lmdb.h>

#define REF_ENGINE "lmdb"
#include "ref_common.h"

static MDB_env *env;
static MDB_dbi dbi;

typedef struct {
    MDB_txn *txn;
} ref_reader;

static void check(int rc, const char *what);

static void eng_open(const ref_args *a, char *config, size_t len) {
    unsigned maxreaders = (unsigned)a->threads + 10;
    check(mdb_env_create(&env), "mdb_env_create");
    size_t map = a->map_size ? (size_t)a->map_size : (size_t)64 << 30;   /* --map-size: under valgrind */
    check(mdb_env_set_mapsize(env, map), "mdb_env_set_mapsize");
    check(mdb_env_set_maxreaders(env, maxreaders), "mdb_env_set_maxreaders");
    check(mdb_env_open(env, a->dir, MDB_NOTLS | MDB_NOSYNC, 0664), "mdb_env_open");
    MDB_txn *txn;
    check(mdb_txn_begin(env, NULL, 0, &txn), "mdb_txn_begin");
    check(mdb_dbi_open(txn, NULL, 0, &dbi), "mdb_dbi_open");
    check(mdb_txn_commit(txn), "mdb_txn_commit");
    snprintf(config, len, "mapsize=%zu maxreaders=%u flags=MDB_NOTLS|MDB_NOSYNC; read: mdb_txn_renew, "
             "mdb_get, mdb_txn_reset", map, maxreaders);
}

static void check(int rc, const char *what) {
    if (rc) ref_die(what, mdb_strerror(rc));
}

static void eng_close(void) { mdb_env_close(env); }

static void eng_fill(const ref_args *a, const char *value) {
    char key[REF_KEY];
    MDB_val k = {REF_KEY, key}, v = {REF_VALUE, (void *)value};
    for (uint64_t i = 0; i < a->num;) {
        MDB_txn *txn;
        check(mdb_txn_begin(env, NULL, 0, &txn), "mdb_txn_begin");
        for (uint64_t end = i + REF_BATCH < a->num ? i + REF_BATCH : a->num; i < end; i++) {
            ref_key(key, i);
            check(mdb_put(txn, dbi, &k, &v, 0), "mdb_put");
        }
        check(mdb_txn_commit(txn), "mdb_txn_commit");
    }
}

static void eng_reader_open(ref_reader *r) {
    check(mdb_txn_begin(env, NULL, MDB_RDONLY, &r->txn), "mdb_txn_begin(MDB_RDONLY)");
    mdb_txn_reset(r->txn);
}

static void eng_reader_close(ref_reader *r) { mdb_txn_abort(r->txn); }

static inline int eng_get(ref_reader *r, const char *key) {
    MDB_val k = {REF_KEY, (void *)key}, v;
    int rc = mdb_txn_renew(r->txn);
    if (rc) ref_die("mdb_txn_renew", mdb_strerror(rc));
    rc = mdb_get(r->txn, dbi, &k, &v);
    mdb_txn_reset(r->txn);   /* the value is not used after this: it pointed into the map */
    if (rc == MDB_NOTFOUND) return 0;
    if (rc) ref_die("mdb_get", mdb_strerror(rc));
    return 1;
}

#include "ref_main.h"
