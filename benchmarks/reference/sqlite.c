/* Reference loop for SQLite 3, from sqlite3.h and SQLite's documentation (sqlite.org/c3ref, /pragma.html, /wal.html,
 * /threadsafe.html; not kvlab's adapter).
 *
 * Configuration (the same as kvlab's sqlite configuration at kvlab's defaults, sync off):
 *   the file DBDIR/<object>.sqlite ("ref"; --object kvlab reads kvlab's kvlab.sqlite), one table
 *   `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`, PRAGMA journal_mode=WAL, PRAGMA synchronous=NORMAL,
 *   sqlite3_busy_timeout 60000 ms.  Each thread opens its own connection with SQLITE_OPEN_NOMUTEX ("multi-thread"
 *   mode: a connection used by one thread at a time needs no mutex) and prepares its statement once
 *   (sqlite3_prepare_v3, SQLITE_PREPARE_PERSISTENT).  --cache-size BYTES: each connection's PRAGMA
 *   cache_size=-KiB is BYTES / (THREADS + 2) / 1024, as kvlab's adapter splits its cache_size over max_threads
 *   connections and kvlab's runner opens it with max_threads = threads + 2; without it SQLite's default (-2000).
 * fillseq: one connection, BEGIN IMMEDIATE, REF_BATCH executions of `INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)`
 *   (sqlite3_bind_blob, sqlite3_step, sqlite3_reset), COMMIT.
 * readrandom: `SELECT v FROM kv WHERE k = ?1`: bind the key, step, read sqlite3_column_blob and
 *   sqlite3_column_bytes on SQLITE_ROW, sqlite3_reset (which ends the statement's implicit read transaction).
 */
#include <sqlite3.h>

#define REF_ENGINE "sqlite"
#include "ref_common.h"

static char path[4096];
static sqlite3 *writer;
static long cache_kib;

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *get;
} ref_reader;

static void check(sqlite3 *db, int rc, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
        ref_die(what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

static sqlite3 *connect(void) {
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    check(db, rc, "sqlite3_open_v2");
    check(db, sqlite3_busy_timeout(db, 60000), "sqlite3_busy_timeout");
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA synchronous=NORMAL;");
    if (cache_kib) snprintf(sql + strlen(sql), sizeof sql - strlen(sql), "PRAGMA cache_size=-%ld;", cache_kib);
    check(db, sqlite3_exec(db, sql, NULL, NULL, NULL), "PRAGMA");
    return db;
}

static void eng_open(const ref_args *a, char *config, size_t len) {
    snprintf(path, sizeof path, "%s/%s.sqlite", a->dir, a->object);
    cache_kib = a->cache_size ? (long)(a->cache_size / (uint64_t)(a->threads + 2) / 1024u) : 0;
    writer = connect();
    check(writer, sqlite3_exec(writer, "PRAGMA journal_mode=WAL;"
                                       "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID;",
                               NULL, NULL, NULL), "create");
    snprintf(config, len, "%s.sqlite journal_mode=WAL synchronous=NORMAL cache_size=-%ld KiB a connection "
             "(SQLITE_OPEN_NOMUTEX, one per thread), busy_timeout=60000; read: bind, step, column_blob, reset",
             a->object, cache_kib ? cache_kib : 2000);
}

static void eng_close(void) { check(writer, sqlite3_close(writer), "sqlite3_close"); }

static void eng_fill(const ref_args *a, const char *value) {
    char key[REF_KEY];
    sqlite3_stmt *put;
    check(writer, sqlite3_prepare_v3(writer, "INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)", -1,
                                     SQLITE_PREPARE_PERSISTENT, &put, NULL), "prepare INSERT");
    for (uint64_t i = 0; i < a->num;) {
        check(writer, sqlite3_exec(writer, "BEGIN IMMEDIATE", NULL, NULL, NULL), "BEGIN IMMEDIATE");
        for (uint64_t end = i + REF_BATCH < a->num ? i + REF_BATCH : a->num; i < end; i++) {
            ref_key(key, i);
            check(writer, sqlite3_bind_blob(put, 1, key, REF_KEY, SQLITE_STATIC), "bind");
            check(writer, sqlite3_bind_blob(put, 2, value, REF_VALUE, SQLITE_STATIC), "bind");
            check(writer, sqlite3_step(put), "INSERT");
            sqlite3_reset(put);
        }
        check(writer, sqlite3_exec(writer, "COMMIT", NULL, NULL, NULL), "COMMIT");
    }
    sqlite3_finalize(put);
}

static void eng_reader_open(ref_reader *r) {
    r->db = connect();
    check(r->db, sqlite3_prepare_v3(r->db, "SELECT v FROM kv WHERE k = ?1", -1, SQLITE_PREPARE_PERSISTENT, &r->get,
                                    NULL), "prepare SELECT");
}

static void eng_reader_close(ref_reader *r) {
    sqlite3_finalize(r->get);
    sqlite3_close(r->db);
}

static inline int eng_get(ref_reader *r, const char *key) {
    sqlite3_bind_blob(r->get, 1, key, REF_KEY, SQLITE_STATIC);
    int rc = sqlite3_step(r->get), found = 0;
    if (rc == SQLITE_ROW) {
        volatile const void *v = sqlite3_column_blob(r->get, 0);   /* the value, as a reader would take it */
        found = v != NULL && sqlite3_column_bytes(r->get, 0) > 0;
    } else if (rc != SQLITE_DONE) {
        ref_die("SELECT", sqlite3_errmsg(r->db));
    }
    sqlite3_reset(r->get);
    return found;
}

#include "ref_main.h"
