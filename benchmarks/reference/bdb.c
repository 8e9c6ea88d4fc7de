/* Reference loop for Berkeley DB 5.3, from db.h and the Berkeley DB Reference Guide / C API reference (not
 * kvlab's adapter).  --variant txn (default) or notxn.
 *
 * Configuration (the same as kvlab's bdb and bdb-notxn configurations at kvlab's defaults, sync off):
 *   a DB_BTREE database in an environment with a cache of --cache-size bytes in one region
 *   (DB_ENV->set_cachesize; without it kvlab's 64 MiB), opened DB_CREATE | DB_INIT_MPOOL | DB_THREAD and
 *   txn: DB_INIT_TXN | DB_INIT_LOG | DB_INIT_LOCK | DB_RECOVER, with DB_REGION_INIT, DB_TXN_NOSYNC (sync off),
 *        set_lk_detect(DB_LOCK_DEFAULT), lk_max_locks 1000000, lk_max_objects 1000000, lk_max_lockers 10000,
 *        set_lg_bsize 8 MiB, DB_LOG_AUTO_REMOVE, the database opened DB_AUTO_COMMIT, and a thread that asks
 *        for a checkpoint every second (DB_ENV->txn_checkpoint(64 MiB of log, 1 minute)), as kvlab's does;
 *   notxn: DB_INIT_CDB | DB_PRIVATE (Concurrent Data Store), no log.
 * fillseq: txn: one DB_TXN per REF_BATCH DB->put; notxn: DB->put without a transaction.
 * readrandom: DB->get with no transaction into a per-thread DB_DBT_USERMEM buffer (a handle opened DB_THREAD
 *   returns data only into DB_DBT_MALLOC, DB_DBT_REALLOC or DB_DBT_USERMEM memory; USERMEM, the caller's own
 *   buffer, allocates nothing per get).
 */
#include <db.h>

#define REF_ENGINE "bdb"
#include "ref_common.h"

static DB_ENV *env;
static DB *db;
static int txn;
static pthread_t ckp;
static atomic_int ckp_stop;

typedef struct {
    char buf[REF_VALUE * 4];
    DBT val;
} ref_reader;

static void check(int rc, const char *what) {
    if (rc) ref_die(what, db_strerror(rc));
}

static void *checkpointer(void *p) {
    (void)p;
    while (!atomic_load(&ckp_stop)) {
        struct timespec ts = {0, 100000000};
        for (int i = 0; i < 10 && !atomic_load(&ckp_stop); i++) nanosleep(&ts, NULL);
        if (!atomic_load(&ckp_stop)) env->txn_checkpoint(env, 64 * 1024, 1, 0);
    }
    return NULL;
}

static void eng_open(const ref_args *a, char *config, size_t len) {
    txn = !*a->variant || !strcmp(a->variant, "txn");
    if (!txn && strcmp(a->variant, "notxn")) ref_die("--variant", "txn or notxn");
    uint64_t cache = a->cache_size ? a->cache_size : (64u << 20);
    check(db_env_create(&env, 0), "db_env_create");
    check(env->set_cachesize(env, (u_int32_t)(cache >> 30), (u_int32_t)(cache & ((1u << 30) - 1)), 1),
          "set_cachesize");
    u_int32_t flags = DB_CREATE | DB_INIT_MPOOL | DB_THREAD;
    if (txn) {
        flags |= DB_INIT_TXN | DB_INIT_LOG | DB_INIT_LOCK | DB_RECOVER;
        check(env->set_flags(env, DB_REGION_INIT, 1), "set_flags(DB_REGION_INIT)");
        check(env->set_lk_detect(env, DB_LOCK_DEFAULT), "set_lk_detect");
        check(env->set_lk_max_locks(env, 1000000), "set_lk_max_locks");
        check(env->set_lk_max_objects(env, 1000000), "set_lk_max_objects");
        check(env->set_lk_max_lockers(env, 10000), "set_lk_max_lockers");
        check(env->set_lg_bsize(env, 8u << 20), "set_lg_bsize");
        check(env->log_set_config(env, DB_LOG_AUTO_REMOVE, 1), "log_set_config");
        check(env->set_flags(env, DB_TXN_NOSYNC, 1), "set_flags(DB_TXN_NOSYNC)");
    } else {
        flags |= DB_INIT_CDB | DB_PRIVATE;
    }
    check(env->open(env, a->dir, flags, 0664), "env open");
    check(db_create(&db, env, 0), "db_create");
    char file[64];
    snprintf(file, sizeof file, "%.40s.db", a->object);
    check(db->open(db, NULL, file, NULL, DB_BTREE, DB_CREATE | DB_THREAD | (txn ? DB_AUTO_COMMIT : 0), 0664),
          "db open");
    if (txn && pthread_create(&ckp, NULL, checkpointer, NULL)) ref_die("pthread_create", "checkpointer");
    snprintf(config, len, "%s cache=%llu (1 region) flags=DB_CREATE|DB_INIT_MPOOL|DB_THREAD%s; read: DB->get, "
             "no txn, DB_DBT_USERMEM", txn ? "txn" : "notxn", (unsigned long long)cache,
             txn ? "|DB_INIT_TXN|DB_INIT_LOG|DB_INIT_LOCK|DB_RECOVER DB_REGION_INIT DB_TXN_NOSYNC lk_detect=default "
                   "lk_max_locks=1000000 lk_max_objects=1000000 lk_max_lockers=10000 lg_bsize=8MiB "
                   "DB_LOG_AUTO_REMOVE DB_AUTO_COMMIT checkpoint(64MiB,1min) every 1 s"
                 : "|DB_INIT_CDB|DB_PRIVATE");
}

static void eng_close(void) {
    if (txn) {
        atomic_store(&ckp_stop, 1);
        pthread_join(ckp, NULL);
    }
    check(db->close(db, 0), "db close");
    check(env->close(env, 0), "env close");
}

static void eng_fill(const ref_args *a, const char *value) {
    char key[REF_KEY];
    DBT k, v;
    memset(&k, 0, sizeof k);
    memset(&v, 0, sizeof v);
    k.data = key;
    k.size = REF_KEY;
    v.data = (void *)value;
    v.size = REF_VALUE;
    for (uint64_t i = 0; i < a->num;) {
        DB_TXN *t = NULL;
        if (txn) check(env->txn_begin(env, NULL, &t, 0), "txn_begin");
        for (uint64_t end = i + REF_BATCH < a->num ? i + REF_BATCH : a->num; i < end; i++) {
            ref_key(key, i);
            check(db->put(db, t, &k, &v, 0), "put");
        }
        if (t) check(t->commit(t, 0), "commit");
    }
}

static void eng_reader_open(ref_reader *r) {
    memset(&r->val, 0, sizeof r->val);
    r->val.data = r->buf;
    r->val.ulen = sizeof r->buf;
    r->val.flags = DB_DBT_USERMEM;
}

static void eng_reader_close(ref_reader *r) { (void)r; }

static inline int eng_get(ref_reader *r, const char *key) {
    DBT k;
    memset(&k, 0, sizeof k);
    k.data = (void *)key;
    k.size = REF_KEY;
    int rc = db->get(db, NULL, &k, &r->val, 0);
    if (rc == DB_NOTFOUND) return 0;
    check(rc, "get");
    return 1;
}

#include "ref_main.h"
