/* SQLite adapter (sqlite3.h, Debian's 3.40.1): SQLite as a key-value store.
 *
 * Data model: one table, `CREATE TABLE kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`, in the file kvlab.sqlite
 * of the database directory (its WAL and wal-index, kvlab.sqlite-wal and -shm, beside it).  Keys and values are
 * bound as BLOBs, so keys compare with memcmp (a shorter key first), as every other engine's do.
 *
 * Connections: SQLite connections are not shared between threads here.  Each kv_thread opens its own connection
 * (SQLITE_OPEN_NOMUTEX: SQLite's "multi-thread" mode, no mutex on the connection, since only its thread uses it)
 * and prepares its statements once; kv_db keeps one more connection (SQLITE_OPEN_FULLMUTEX) for the calls
 * without a thread (open, compact, stats, close).
 *
 * Settings, applied to every connection as PRAGMAs:
 *   journal_mode=WAL always (persistent in the file: set once at open);
 *   sync           true: synchronous=FULL (the WAL is synced at every commit), false: synchronous=NORMAL (synced
 *                  only at checkpoints); options may say synchronous=off|normal|full|extra instead;
 *   cache_size     bytes for all thread connections together: each gets PRAGMA cache_size=-(cache_size /
 *                  max_threads / 1024) KiB (a connection's page cache is private); 0: SQLite's default, -2000;
 *   block_size     PRAGMA page_size, before the table is created (a WAL database's page size never changes);
 *   options        key=value list of synchronous, wal_autocheckpoint, mmap_size, busy_timeout, secure_delete,
 *                  cache_spill.
 *
 * Reads copy the value into the thread's buffer and reset the statement at once, so no read transaction stays
 * open between calls (an un-reset SELECT would hold its WAL snapshot and stop checkpoints from finishing).
 * Writes outside a batch are autocommit statements; a batch is BEGIN IMMEDIATE .. COMMIT.
 *
 * Another writer: SQLite admits one writer at a time.  A statement that finds the write lock taken waits for it
 * (busy_timeout, 60 s by default, SQLite's own busy handler sleeping between tries) rather than failing; once the
 * wait runs out it fails with SQLITE_BUSY, kvlab's KV_E_BUSY.  Batches and write transactions take the lock at
 * BEGIN (IMMEDIATE), so a write inside them never meets a lock taken since and never needs a retry.
 *
 * Transactions: KV_TXN_READ is a deferred BEGIN: its first read takes a WAL snapshot that every later get and
 * cursor in it reads.  KV_TXN_WRITE is BEGIN IMMEDIATE: it holds the one write lock from its start, so it reads
 * the latest data and its own writes, and nothing commits meanwhile (serializable; no conflicts).
 * SQLITE_BUSY_SNAPSHOT (a read snapshot that cannot be upgraded to a write) is a conflict, KV_E_CONFLICT.
 *
 * compact is VACUUM (the file rewritten without free pages), then a TRUNCATE checkpoint of the WAL.
 */
#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "kv_util.h"

#define KV_SQLITE_FILE "kvlab.sqlite"
#define KV_SQLITE_BUSY_MS 60000
#define KV_SQLITE_ADMIN_CACHE_KIB 256

/* The statements each thread prepares (X(id, SQL)). */
#define SQ_STATEMENTS(X)                                                           \
    X(GET, "SELECT v FROM kv WHERE k = ?1")                                        \
    X(PUT, "INSERT OR REPLACE INTO kv(k, v) VALUES (?1, ?2)")                      \
    X(DEL, "DELETE FROM kv WHERE k = ?1")                                          \
    X(SEEK, "SELECT k, v FROM kv WHERE k >= ?1 ORDER BY k")                        \
    X(BEGIN, "BEGIN")                                                              \
    X(BEGIN_IMMEDIATE, "BEGIN IMMEDIATE")                                          \
    X(COMMIT, "COMMIT")                                                            \
    X(ROLLBACK, "ROLLBACK")

enum {
#define SQ_ENUM(id, sql) SQ_##id,
    SQ_STATEMENTS(SQ_ENUM)
#undef SQ_ENUM
    SQ_COUNT
};

static const char *const sq_sql[SQ_COUNT] = {
#define SQ_TEXT(id, sql) sql,
    SQ_STATEMENTS(SQ_TEXT)
#undef SQ_TEXT
};

/* The cache counters sqlite3_db_status keeps per connection, summed for stats (X(op, stats name)). */
#define SQ_CACHE_STATS(X)                                                                                        \
    X(SQLITE_DBSTATUS_CACHE_HIT, "cache_hit") X(SQLITE_DBSTATUS_CACHE_MISS, "cache_miss")                        \
    X(SQLITE_DBSTATUS_CACHE_WRITE, "cache_write") X(SQLITE_DBSTATUS_CACHE_SPILL, "cache_spill")

enum {
#define SQ_CS_ENUM(op, name) SQ_CS_##op,
    SQ_CACHE_STATS(SQ_CS_ENUM)
#undef SQ_CS_ENUM
    SQ_CS_COUNT
};

/* The statement counters SQLite keeps for every prepared statement at no cost (sqlite3_stmt_status), summed over
   a thread's statements as it closes, reported as "op." lines: kvlab divides a phase's by its operations (virtual
   machine steps per get, full-scan steps, sorts, automatic indexes). */
#define SQ_STMT_STATS(X)                                                                                         \
    X(SQLITE_STMTSTATUS_VM_STEP, "vm_step") X(SQLITE_STMTSTATUS_FULLSCAN_STEP, "fullscan_step")                   \
    X(SQLITE_STMTSTATUS_SORT, "sort") X(SQLITE_STMTSTATUS_AUTOINDEX, "autoindex")                                \
    X(SQLITE_STMTSTATUS_RUN, "run")

enum {
#define SQ_SS_ENUM(op, name) SQ_SS_##op,
    SQ_STMT_STATS(SQ_SS_ENUM)
#undef SQ_SS_ENUM
    SQ_SS_COUNT
};

struct kv_db {
    char *file;              /* the database file's path */
    sqlite3 *admin;          /* the connection for open, compact, stats and close */
    char pragmas[512];       /* what every connection runs after opening, but cache_size */
    long cache_kib;          /* each thread connection's cache, KiB; 0: SQLite's default */
    int busy_ms;
    pthread_mutex_t mu;      /* guards threads and the closed connections' counters */
    kv_thread *threads;      /* the open thread contexts (their counters, for stats) */
    long long closed[SQ_CS_COUNT];
    long long stmt_closed[SQ_SS_COUNT];   /* the closed connections' statement counters, summed */
};

struct kv_thread {
    kv_thread_common c;
    kv_db *db;
    sqlite3 *conn;
    sqlite3_stmt *st[SQ_COUNT];
    int in_txn;              /* 0, or the open BEGIN's kind: KV_TXN_READ or KV_TXN_WRITE (a batch is WRITE) */
    int iter_live;           /* the SEEK statement is stepping */
    int failed;              /* a write in the open batch or transaction failed: its commit rolls back */
    char *buf;               /* the value a get copied */
    size_t cap;
    int seen[SQ_CS_COUNT];   /* the cache counters as last read (sqlite3_db_status: 31 bits, wrapping) */
    long long counted[SQ_CS_COUNT];   /* their increase since the connection opened, 64 bits (under db->mu) */
    kv_thread *next, *prev;
};

/* SQLite's result codes by name (sqlite3.h): the primary ones, and the extended ones kvlab tells apart. */
#define SQ_CODES(X)                                                                                              \
    X(SQLITE_ERROR) X(SQLITE_INTERNAL) X(SQLITE_PERM) X(SQLITE_ABORT) X(SQLITE_BUSY) X(SQLITE_LOCKED)            \
    X(SQLITE_NOMEM) X(SQLITE_READONLY) X(SQLITE_INTERRUPT) X(SQLITE_IOERR) X(SQLITE_CORRUPT) X(SQLITE_NOTFOUND)  \
    X(SQLITE_FULL) X(SQLITE_CANTOPEN) X(SQLITE_PROTOCOL) X(SQLITE_EMPTY) X(SQLITE_SCHEMA) X(SQLITE_TOOBIG)       \
    X(SQLITE_CONSTRAINT) X(SQLITE_MISMATCH) X(SQLITE_MISUSE) X(SQLITE_NOLFS) X(SQLITE_AUTH) X(SQLITE_FORMAT)     \
    X(SQLITE_RANGE) X(SQLITE_NOTADB) X(SQLITE_NOTICE) X(SQLITE_WARNING)                                          \
    X(SQLITE_BUSY_SNAPSHOT) X(SQLITE_BUSY_RECOVERY) X(SQLITE_BUSY_TIMEOUT) X(SQLITE_LOCKED_SHAREDCACHE)          \
    X(SQLITE_IOERR_READ) X(SQLITE_IOERR_SHORT_READ) X(SQLITE_IOERR_WRITE) X(SQLITE_IOERR_FSYNC)                  \
    X(SQLITE_IOERR_DIR_FSYNC) X(SQLITE_IOERR_TRUNCATE) X(SQLITE_IOERR_FSTAT) X(SQLITE_IOERR_LOCK)                \
    X(SQLITE_IOERR_NOMEM) X(SQLITE_IOERR_ACCESS) X(SQLITE_IOERR_SHMOPEN) X(SQLITE_IOERR_SHMSIZE)                 \
    X(SQLITE_IOERR_SHMMAP) X(SQLITE_IOERR_SEEK) X(SQLITE_IOERR_MMAP) X(SQLITE_IOERR_DATA)                        \
    X(SQLITE_CORRUPT_INDEX) X(SQLITE_CORRUPT_SEQUENCE) X(SQLITE_CANTOPEN_ISDIR) X(SQLITE_CANTOPEN_FULLPATH)      \
    X(SQLITE_READONLY_RECOVERY) X(SQLITE_READONLY_DBMOVED)

static const char *sq_name(int rc) {
    switch (rc) {
#define SQ_CASE(name) case name: return #name;
    SQ_CODES(SQ_CASE)
#undef SQ_CASE
    default: return (rc & 0xff) != rc ? sq_name(rc & 0xff) : NULL;
    }
}

static int sq_code(int rc, int sys_errno) {
    if (rc == SQLITE_BUSY_SNAPSHOT) return KV_E_CONFLICT;
    switch (rc & 0xff) {
    case SQLITE_OK: case SQLITE_DONE: case SQLITE_ROW: return KV_OK;
    case SQLITE_FULL: return KV_E_FULL;
    case SQLITE_CORRUPT: case SQLITE_NOTADB: case SQLITE_FORMAT: return KV_E_CORRUPT;
    case SQLITE_BUSY: case SQLITE_LOCKED: return KV_E_BUSY;
    case SQLITE_IOERR: return sys_errno == ENOSPC || sys_errno == EDQUOT ? KV_E_FULL : KV_E_IO;
    case SQLITE_CANTOPEN: case SQLITE_PERM: case SQLITE_READONLY: return KV_E_IO;
    case SQLITE_TOOBIG: case SQLITE_RANGE: case SQLITE_MISUSE: return KV_E_CONFIG;
    default: return KV_E_OTHER;
    }
}

/* SQLite's failure `rc` on connection `conn` (NULL: none) as a kv_failure: the code's name, sqlite3_errstr's text,
   then the connection's own message where it says more. */
static int fail(kv_failure *e, sqlite3 *conn, int rc, const char *what) {
    char where[64];
    snprintf(where, sizeof where, "SQLite %s", what);
    int os = (rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_FULL || (rc & 0xff) == SQLITE_CANTOPEN;
    int sys = os && conn ? sqlite3_system_errno(conn) : 0;   /* the OS's errno, where the OS failed */
    const char *text = sqlite3_errstr(rc);
    const char *msg = conn ? sqlite3_errmsg(conn) : "";
    int more = msg && *msg && strcmp(msg, text) != 0;
    const char *name = sys ? kv_errno_name(sys) : NULL;
    return kv_engine_error(e, sq_code(rc, sys), rc, sq_name(rc), sys, where, text, "%s%s%s%s%s%s%s",
                           more ? " | " : "", more ? msg : "", sys ? " (" : "", name ? name : "",
                           name ? ": " : "", sys ? strerror(sys) : "", sys ? ")" : "");
}

/* --- options -------------------------------------------------------------------------------------------------- */

static int is_word(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-'))
            return 0;
    return 1;
}

/* The options string as PRAGMA statements appended to `out` (all but busy_timeout, kept in *busy_ms).  Each
   value is a word or a number: nothing else reaches SQL. */
static int parse_options(const char *opts, char *out, size_t cap, int *busy_ms, kv_failure *err) {
    static const char *const allowed[] = {"synchronous", "wal_autocheckpoint", "mmap_size", "busy_timeout",
                                          "secure_delete", "cache_spill"};
    char tok[128];
    const char *s = opts;
    while ((s = kv_next_token(s, tok, sizeof tok)) != NULL) {
        char *eq = strchr(tok, '=');
        if (!eq) return kv_seterr(err, KV_E_CONFIG, "SQLite option '%s': expected key=value", tok);
        *eq = '\0';
        const char *key = tok, *value = eq + 1;
        while (*value == ' ') value++;
        for (char *p = eq; p > tok && p[-1] == ' '; p--) p[-1] = '\0';
        size_t i;
        for (i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
            if (strcmp(key, allowed[i]) == 0) break;
        if (i == sizeof allowed / sizeof allowed[0])
            return kv_seterr(err, KV_E_CONFIG, "SQLite option '%s' is unknown; allowed: synchronous, "
                             "wal_autocheckpoint, mmap_size, busy_timeout, secure_delete, cache_spill", key);
        if (!is_word(value))
            return kv_seterr(err, KV_E_CONFIG, "SQLite option %s='%s': the value must be a word or a number", key,
                             value);
        if (strcmp(key, "busy_timeout") == 0) {
            char *end;
            long ms = strtol(value, &end, 10);
            if (*end || ms < 0 || ms > 86400000)
                return kv_seterr(err, KV_E_CONFIG, "SQLite option busy_timeout='%s': milliseconds, 0 to 86400000",
                                 value);
            *busy_ms = (int)ms;
            continue;
        }
        size_t n = strlen(out);
        if (snprintf(out + n, cap - n, "PRAGMA %s=%s;", key, value) >= (int)(cap - n))
            return kv_seterr(err, KV_E_CONFIG, "SQLite options: too many");
    }
    return KV_OK;
}

/* A connection to the database file, with the settings every connection runs. */
static int sq_connect(kv_db *d, int flags, long cache_kib, sqlite3 **out, kv_failure *err) {
    sqlite3 *conn = NULL;
    int rc = sqlite3_open_v2(d->file, &conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | flags, NULL);
    if (rc) {
        fail(err, conn, rc, "open");
        sqlite3_close(conn);
        return sq_code(rc, 0) ? sq_code(rc, 0) : KV_E_OTHER;
    }
    sqlite3_extended_result_codes(conn, 1);
    sqlite3_busy_timeout(conn, d->busy_ms);
    char sql[640];
    snprintf(sql, sizeof sql, "%s", d->pragmas);
    if (cache_kib) snprintf(sql + strlen(sql), sizeof sql - strlen(sql), "PRAGMA cache_size=-%ld;", cache_kib);
    char *msg = NULL;
    if ((rc = sqlite3_exec(conn, sql, NULL, NULL, &msg))) {
        /* the connection's first statement: the first to read the file (its header and schema) */
        int more = msg && strcmp(msg, sqlite3_errstr(rc)) != 0;
        kv_engine_error(err, sq_code(rc, 0) ? sq_code(rc, 0) : KV_E_OTHER, rc, sq_name(rc), 0, "SQLite open",
                        sqlite3_errstr(rc), "%s%s (running %s)", more ? " | " : "", more ? msg : "", sql);
        sqlite3_free(msg);
        sqlite3_close(conn);
        return sq_code(rc, 0) ? sq_code(rc, 0) : KV_E_OTHER;
    }
    *out = conn;
    return KV_OK;
}

static int sq_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    if (cfg->variant && *cfg->variant)
        return kv_seterr(err, KV_E_CONFIG, "SQLite variant '%s' is unknown; it has none", cfg->variant);
    if (cfg->create && mkdir(path, 0775) && errno != EEXIST)
        return kv_engine_error(err, KV_E_IO, errno, kv_errno_name(errno), errno, "SQLite mkdir", strerror(errno),
                               " (%s)", path);
    kv_db *d = calloc(1, sizeof *d);
    if (!d) return kv_seterr(err, KV_E_OTHER, "SQLite: out of memory");
    size_t n = strlen(path) + sizeof KV_SQLITE_FILE + 2;
    if (!(d->file = malloc(n))) { free(d); return kv_seterr(err, KV_E_OTHER, "SQLite: out of memory"); }
    snprintf(d->file, n, "%s/%s", path, KV_SQLITE_FILE);
    d->busy_ms = KV_SQLITE_BUSY_MS;
    snprintf(d->pragmas, sizeof d->pragmas, "PRAGMA synchronous=%s;", cfg->sync ? "FULL" : "NORMAL");
    int threads = cfg->max_threads > 0 ? cfg->max_threads : 1;
    d->cache_kib = cfg->cache_size ? (long)(cfg->cache_size / (uint64_t)threads / 1024u) : 0;
    if (cfg->cache_size && d->cache_kib < 1) d->cache_kib = 1;
    int rc = parse_options(cfg->options, d->pragmas, sizeof d->pragmas, &d->busy_ms, err);
    struct stat sb;
    if (!rc && !cfg->create && stat(d->file, &sb) != 0)
        rc = kv_engine_error(err, KV_E_IO, errno, kv_errno_name(errno), errno, "SQLite open", strerror(errno),
                             " (%s)", d->file);
    int bs = cfg->block_size;
    if (!rc && bs && (bs < 512 || bs > 65536 || (bs & (bs - 1))))
        rc = kv_seterr(err, KV_E_CONFIG, "SQLite block_size %d: its page size is a power of two from 512 to 65536",
                       bs);
    /* the admin connection's own cache, outside cache_size: small (it reads PRAGMAs; VACUUM passes through it) */
    if (!rc) rc = sq_connect(d, SQLITE_OPEN_FULLMUTEX, KV_SQLITE_ADMIN_CACHE_KIB, &d->admin, err);
    if (rc) { free(d->file); free(d); return rc; }
    char sql[128], *msg = NULL;
    snprintf(sql, sizeof sql, "%s", "");
    if (cfg->block_size) snprintf(sql, sizeof sql, "PRAGMA page_size=%d;", cfg->block_size);
    snprintf(sql + strlen(sql), sizeof sql - strlen(sql), "%s",
             "PRAGMA journal_mode=WAL;CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID;");
    if ((rc = sqlite3_exec(d->admin, sql, NULL, NULL, &msg))) {
        sqlite3_free(msg);
        fail(err, d->admin, rc, "open");
        sqlite3_close(d->admin);
        free(d->file);
        free(d);
        return sq_code(rc, 0) ? sq_code(rc, 0) : KV_E_OTHER;
    }
    pthread_mutex_init(&d->mu, NULL);
    *out = d;
    return KV_OK;
}

static int sq_close(kv_db *d, kv_failure *err) {
    /* the last connection's close checkpoints the WAL into the database and deletes it */
    int rc = sqlite3_close_v2(d->admin);
    if (rc) fail(err, d->admin, rc, "close");
    pthread_mutex_destroy(&d->mu);
    free(d->file);
    free(d);
    return rc ? sq_code(rc, 0) : KV_OK;
}

/* A thread connection's cache counters into t->counted (under db->mu).  sqlite3_db_status gives each as an int
   masked to 31 bits, which wraps within minutes of a fast run: the increase since the last reading is taken modulo
   2^31, so a reading at least that often (stats, at every interval and phase end) counts it whole. */
static void cache_stats(kv_thread *t) {
    int cur, hi, i = 0;
#define SQ_CS_READ(op, name)                                                     \
    if (sqlite3_db_status(t->conn, op, &cur, &hi, 0) == SQLITE_OK) {             \
        t->counted[i] += (long long)((unsigned)(cur - t->seen[i]) & 0x7fffffffu); \
        t->seen[i] = cur;                                                        \
    }                                                                            \
    i++;
    SQ_CACHE_STATS(SQ_CS_READ)
#undef SQ_CS_READ
}

static void sq_thread_close(kv_thread *t) {
    kv_db *d = t->db;
    pthread_mutex_lock(&d->mu);
    if (t->prev) t->prev->next = t->next;
    else if (d->threads == t) d->threads = t->next;
    if (t->next) t->next->prev = t->prev;
    if (t->conn) {
        cache_stats(t);
        for (int i = 0; i < SQ_CS_COUNT; i++) d->closed[i] += t->counted[i];
        for (int j = 0; j < SQ_COUNT; j++) {
            if (!t->st[j]) continue;
            int i = 0;
#define SQ_SS_ADD(op, name) d->stmt_closed[i++] += sqlite3_stmt_status(t->st[j], op, 0);
            SQ_STMT_STATS(SQ_SS_ADD)
#undef SQ_SS_ADD
        }
    }
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < SQ_COUNT; i++) sqlite3_finalize(t->st[i]);
    sqlite3_close(t->conn);   /* an open transaction is rolled back */
    free(t->buf);
    free(t);
}

static int sq_thread_open(kv_db *d, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "SQLite: out of memory");
    t->db = d;
    int rc = sq_connect(d, SQLITE_OPEN_NOMUTEX, d->cache_kib, &t->conn, err);
    if (rc) { free(t); return rc; }
    for (int i = 0; i < SQ_COUNT; i++) {
        if ((rc = sqlite3_prepare_v3(t->conn, sq_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &t->st[i], NULL))) {
            fail(err, t->conn, rc, "prepare");
            sq_thread_close(t);
            return sq_code(rc, 0) ? sq_code(rc, 0) : KV_E_OTHER;
        }
    }
    pthread_mutex_lock(&d->mu);
    t->next = d->threads;
    if (d->threads) d->threads->prev = t;
    d->threads = t;
    pthread_mutex_unlock(&d->mu);
    *out = t;
    return KV_OK;
}

/* --- reads and writes ----------------------------------------------------------------------------------------- */

static void sq_iter_close(kv_thread *t) {
    if (t->iter_live) sqlite3_reset(t->st[SQ_SEEK]);
    t->iter_live = 0;
}

/* A key bound as a BLOB; a zero-length key as a zero-length BLOB, not NULL (what a NULL pointer would bind). */
static int bind_blob(sqlite3_stmt *st, int i, const char *p, size_t n) {
    return sqlite3_bind_blob64(st, i, n ? p : "", n, SQLITE_STATIC);
}

/* One statement run to its end (a write, BEGIN, COMMIT): KV_OK, or the failure. */
static int run(kv_thread *t, int id, const char *what) {
    sqlite3_stmt *st = t->st[id];
    int rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    int code = rc ? fail(&t->c.err, t->conn, rc, what) : KV_OK;   /* before reset, which clears the message */
    sqlite3_reset(st);
    return code;
}

static int sq_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    sq_iter_close(t);
    sqlite3_stmt *st = t->st[SQ_PUT];
    int rc = bind_blob(st, 1, k, kl);
    if (!rc) rc = bind_blob(st, 2, v, vl);
    if (rc) return fail(&t->c.err, t->conn, rc, "bind");
    if ((rc = run(t, SQ_PUT, "put")) && t->in_txn) t->failed = 1;
    return rc;
}

static int sq_del(kv_thread *t, const char *k, size_t kl) {
    sq_iter_close(t);
    int rc = bind_blob(t->st[SQ_DEL], 1, k, kl);
    if (rc) return fail(&t->c.err, t->conn, rc, "bind");
    if ((rc = run(t, SQ_DEL, "del"))) {
        if (t->in_txn) t->failed = 1;
        return rc;
    }
    return sqlite3_changes(t->conn) ? KV_OK : KV_NOTFOUND;
}

static int sq_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    sq_iter_close(t);
    sqlite3_stmt *st = t->st[SQ_GET];
    int rc = bind_blob(st, 1, k, kl);
    if (rc) return fail(&t->c.err, t->conn, rc, "bind");
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) { sqlite3_reset(st); return KV_NOTFOUND; }
    if (rc != SQLITE_ROW) {
        int code = fail(&t->c.err, t->conn, rc, "get");
        sqlite3_reset(st);
        return code;
    }
    const void *p = sqlite3_column_blob(st, 0);
    size_t n = (size_t)sqlite3_column_bytes(st, 0);
    if (n > t->cap) {
        char *buf = realloc(t->buf, n);
        if (!buf) { sqlite3_reset(st); return kv_seterr(&t->c.err, KV_E_OTHER, "SQLite: out of memory"); }
        t->buf = buf;
        t->cap = n;
    }
    if (n) memcpy(t->buf, p, n);
    sqlite3_reset(st);   /* ends the statement's read transaction (outside BEGIN) */
    *v = t->buf ? t->buf : "";
    *vl = n;
    return KV_OK;
}

/* --- batches and transactions --------------------------------------------------------------------------------- */

static int sq_batch_abort(kv_thread *t);

static int sq_batch_begin(kv_thread *t) {
    if (t->in_txn) return kv_seterr(&t->c.err, KV_E_OTHER, "SQLite: a batch or transaction is already open");
    sq_iter_close(t);
    int rc = run(t, SQ_BEGIN_IMMEDIATE, "BEGIN IMMEDIATE");
    if (!rc) t->in_txn = KV_TXN_WRITE;
    return rc;
}

static int sq_batch_commit(kv_thread *t) {
    sq_iter_close(t);
    if (!t->in_txn) return kv_seterr(&t->c.err, KV_E_OTHER, "SQLite: no batch or transaction is open");
    if (t->failed) {   /* SQLite keeps a transaction open past a failed statement: none of it is committed */
        sq_batch_abort(t);
        return kv_seterr(&t->c.err, KV_E_OTHER, "SQLite: a write of this batch or transaction failed; it was "
                         "rolled back, not committed");
    }
    int rc = run(t, SQ_COMMIT, "COMMIT");
    if (rc && !sqlite3_get_autocommit(t->conn)) sq_batch_abort(t);   /* still open: end it */
    t->in_txn = 0;
    return rc;
}

static int sq_batch_abort(kv_thread *t) {
    sq_iter_close(t);
    if (t->in_txn && !sqlite3_get_autocommit(t->conn)) run(t, SQ_ROLLBACK, "ROLLBACK");
    t->in_txn = t->failed = 0;
    return KV_OK;
}

static int sq_txn_begin(kv_thread *t, int kind) {
    if (kind == KV_TXN_WRITE) return sq_batch_begin(t);
    if (t->in_txn) return kv_seterr(&t->c.err, KV_E_OTHER, "SQLite: a batch or transaction is already open");
    sq_iter_close(t);
    int rc = run(t, SQ_BEGIN, "BEGIN");
    if (!rc) t->in_txn = KV_TXN_READ;
    return rc;
}

static void sq_txn_abort(kv_thread *t) { sq_batch_abort(t); }

static const char *sq_isolation(const char *variant, int transactions) {
    (void)variant; (void)transactions;
    return "serializable: a write transaction is BEGIN IMMEDIATE, which takes SQLite's one write lock at its start "
           "(waiting up to busy_timeout for another writer), so writers run one at a time and never conflict; a read "
           "transaction is a deferred BEGIN reading one WAL snapshot from its first read";
}

/* --- cursors -------------------------------------------------------------------------------------------------- */

static int cursor_out(kv_thread *t, int rc, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    sqlite3_stmt *st = t->st[SQ_SEEK];
    if (rc == SQLITE_DONE) { sq_iter_close(t); return KV_NOTFOUND; }
    if (rc != SQLITE_ROW) {
        int code = fail(&t->c.err, t->conn, rc, "cursor step");
        sq_iter_close(t);
        return code;
    }
    /* valid until the next step or reset of the statement: the next cursor call */
    const char *k = sqlite3_column_blob(st, 0), *v = sqlite3_column_blob(st, 1);
    *klo = (size_t)sqlite3_column_bytes(st, 0);
    *vlo = (size_t)sqlite3_column_bytes(st, 1);
    *ko = k ? k : "";
    *vo = v ? v : "";
    return KV_OK;
}

static int sq_iter_seek(kv_thread *t, const char *k, size_t kl,
                        const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    sq_iter_close(t);
    sqlite3_stmt *st = t->st[SQ_SEEK];
    int rc = bind_blob(st, 1, k, kl);
    if (rc) return fail(&t->c.err, t->conn, rc, "bind");
    t->iter_live = 1;
    return cursor_out(t, sqlite3_step(st), ko, klo, vo, vlo);
}

static int sq_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    if (!t->iter_live) return KV_NOTFOUND;
    return cursor_out(t, sqlite3_step(t->st[SQ_SEEK]), ko, klo, vo, vlo);
}

/* --- the database --------------------------------------------------------------------------------------------- */

static int sq_compact(kv_db *d, kv_failure *err) {
    char *msg = NULL;
    int rc = sqlite3_exec(d->admin, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, &msg);
    sqlite3_free(msg);
    return rc ? fail(err, d->admin, rc, "VACUUM") : KV_OK;
}

static long long pragma_number(sqlite3 *conn, const char *sql) {
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Numbers from the admin connection's PRAGMAs (a read of the database header), the WAL's size, and the cache
   counters of every thread connection, closed ones included.  A live connection's counters are read while its
   thread may be running: plain integer reads (sqlite3_db_status takes no lock on a NOMUTEX connection), a figure
   possibly a few operations old. */
static int sq_stats(kv_db *d, char *buf, size_t len) {
    static const char *const names[] = {"page_count", "page_size", "freelist_count", "synchronous",
                                        "wal_autocheckpoint", "mmap_size", "secure_delete", "auto_vacuum"};
    size_t n = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && n < len; i++) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA %s", names[i]);
        long long v = pragma_number(d->admin, sql);
        if (v != -1)
            n += (size_t)snprintf(buf + n, len - n, "%s=%lld\n", names[i], v);
    }
    if (n < len) n += (size_t)snprintf(buf + n, len - n, "thread_cache_kib=%ld\n", d->cache_kib);
    struct stat sb;
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", d->file);
    if (n < len) n += (size_t)snprintf(buf + n, len - n, "wal_bytes=%lld\n",
                                       stat(wal, &sb) == 0 ? (long long)sb.st_size : 0LL);
    long long acc[SQ_CS_COUNT], steps[SQ_SS_COUNT];
    pthread_mutex_lock(&d->mu);
    memcpy(acc, d->closed, sizeof acc);
    memcpy(steps, d->stmt_closed, sizeof steps);   /* the closed threads' (a phase's threads close as it ends) */
    for (kv_thread *t = d->threads; t; t = t->next) {
        cache_stats(t);
        for (int i = 0; i < SQ_CS_COUNT; i++) acc[i] += t->counted[i];
    }
    pthread_mutex_unlock(&d->mu);
    int i = 0;
#define SQ_CS_PRINT(op, name) \
    if (n < len) n += (size_t)snprintf(buf + n, len - n, "%s=%lld\n", name, acc[i]); \
    i++;
    SQ_CACHE_STATS(SQ_CS_PRINT)
#undef SQ_CS_PRINT
    i = 0;
#define SQ_SS_PRINT(op, name) \
    if (n < len) n += (size_t)snprintf(buf + n, len - n, "op.%s=%lld\n", name, steps[i]); \
    i++;
    SQ_STMT_STATS(SQ_SS_PRINT)
#undef SQ_SS_PRINT
    if (n < len) n += (size_t)snprintf(buf + n, len - n, "memory_used=%lld\n", (long long)sqlite3_memory_used());
    return KV_OK;
}

static const char *sq_version(void) { return sqlite3_libversion(); }

const kv_engine_ops kv_engine_sqlite = {
    .name = "sqlite",
    .open = sq_open, .close = sq_close,
    .thread_open = sq_thread_open, .thread_close = sq_thread_close,
    .put = sq_put, .get = sq_get, .del = sq_del,
    .batch_begin = sq_batch_begin, .batch_commit = sq_batch_commit, .batch_abort = sq_batch_abort,
    .txn_begin = sq_txn_begin, .txn_commit = sq_batch_commit, .txn_abort = sq_txn_abort,
    .iter_seek = sq_iter_seek, .iter_next = sq_iter_next, .iter_close = sq_iter_close,
    .compact = sq_compact, .stats = sq_stats, .version = sq_version, .process_shutdown = NULL,
    .isolation = sq_isolation,
};
