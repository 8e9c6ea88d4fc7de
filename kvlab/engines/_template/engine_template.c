/* engine_template.c - your own engine, run by kvlab without rebuilding kvlab (docs/own-engine.md).
 *
 * Copy this file, rename `template` and fill in your engine.  It implements the contract every built-in engine
 * implements, cython_ext/include/kv_engine.h, and exports it with the one line at the bottom (kv_plugin.h).
 * Build it as a shared object and run it by its path:
 *
 *     gcc -O2 -fPIC -shared -I cython_ext/include engine_template.c -o libtemplate.so -lpthread
 *     kvlab engines check ./libtemplate.so           # the conformance checks the built-in engines pass
 *     kvlab run --engine ./libtemplate.so --workload fillseq,readrandom --num 100000
 *
 * As a working example it is a small, real engine: a sorted array of keys in memory, every change appended to a
 * log file (`template.log` in the database directory) and replayed at open.  A put, a delete or a whole batch is one
 * log record group, written with one write(2) and, when the run asks for `sync`, made durable with fdatasync(2)
 * before the call returns; a crash loses at most the group being written, which replay ignores.  Readers share a
 * read lock, writers take the write lock.  Its limits are the template's, not the contract's: an insert in the
 * middle of the array moves the entries after it (load in key order: fillseq), and the log is never compacted.
 */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "kv_plugin.h"
#include "kv_util.h"

#define TPL_LOG "template.log"
enum { TPL_PUT = 'P', TPL_DEL = 'D', TPL_GROUP = 'G' };   /* a group: its size, then its records */

typedef struct { char *k; size_t kl; char *v; size_t vl; } tpl_entry;

typedef struct { char *p; size_t len, cap; } tpl_buf;

struct kv_db {
    pthread_rwlock_t lock;
    tpl_entry *e;
    size_t n, cap;
    int fd;
    int sync;
};

struct kv_thread {
    kv_thread_common c;          /* first: the driver reads the last error here */
    kv_db *db;
    tpl_buf out;                 /* the value a get or a cursor returned, valid until the thread's next call */
    tpl_buf key;                 /* the cursor's key */
    tpl_buf batch;               /* the records of an open batch */
    int in_batch;
    size_t batch_ops;
};

static int buf_put(tpl_buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static int cmp(const char *a, size_t al, const char *b, size_t bl) {
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

/* The first index whose key is >= k. */
static size_t lower_bound(const kv_db *db, const char *k, size_t kl) {
    size_t lo = 0, hi = db->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(db->e[mid].k, db->e[mid].kl, k, kl) < 0) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static int apply_put(kv_db *db, const char *k, size_t kl, const char *v, size_t vl) {
    size_t i = lower_bound(db, k, kl);
    char *copy = malloc(vl ? vl : 1);
    if (!copy) return -1;
    memcpy(copy, v, vl);
    if (i < db->n && cmp(db->e[i].k, db->e[i].kl, k, kl) == 0) {
        free(db->e[i].v);
        db->e[i].v = copy;
        db->e[i].vl = vl;
        return 0;
    }
    if (db->n == db->cap) {
        size_t cap = db->cap ? db->cap * 2 : 1024;
        tpl_entry *e = realloc(db->e, cap * sizeof *e);
        if (!e) { free(copy); return -1; }
        db->e = e;
        db->cap = cap;
    }
    char *key = malloc(kl ? kl : 1);
    if (!key) { free(copy); return -1; }
    memcpy(key, k, kl);
    memmove(db->e + i + 1, db->e + i, (db->n - i) * sizeof *db->e);
    db->e[i] = (tpl_entry){key, kl, copy, vl};
    db->n++;
    return 0;
}

static void apply_del(kv_db *db, const char *k, size_t kl) {
    size_t i = lower_bound(db, k, kl);
    if (i < db->n && cmp(db->e[i].k, db->e[i].kl, k, kl) == 0) {
        free(db->e[i].k);
        free(db->e[i].v);
        memmove(db->e + i, db->e + i + 1, (db->n - i - 1) * sizeof *db->e);
        db->n--;
    }
}

/* One record: op, key length, value length (u32 each, little-endian as the host), key, value. */
static int record(tpl_buf *b, char op, const char *k, size_t kl, const char *v, size_t vl) {
    uint32_t lens[2] = {(uint32_t)kl, (uint32_t)vl};
    return buf_put(b, &op, 1) || buf_put(b, lens, sizeof lens) || buf_put(b, k, kl) || (vl && buf_put(b, v, vl));
}

/* Apply the records in p[0..len); -1 where one is cut short. */
static int apply_records(kv_db *db, const char *p, size_t len) {
    size_t at = 0;
    while (at < len) {
        uint32_t lens[2];
        if (len - at < 1 + sizeof lens) return -1;
        char op = p[at];
        memcpy(lens, p + at + 1, sizeof lens);
        size_t need = 1 + sizeof lens + (size_t)lens[0] + lens[1];
        if (len - at < need) return -1;
        const char *k = p + at + 1 + sizeof lens;
        if (op == TPL_PUT) {
            if (apply_put(db, k, lens[0], k + lens[0], lens[1])) return -1;
        } else if (op == TPL_DEL) {
            apply_del(db, k, lens[0]);
        } else {
            return -1;
        }
        at += need;
    }
    return 0;
}

/* Append one group (a put, a delete or a batch) to the log in one write; fdatasync where asked. */
static int log_group(kv_thread *t, const tpl_buf *records) {
    kv_db *db = t->db;
    uint64_t size = records->len;
    char head[1 + sizeof size];
    head[0] = TPL_GROUP;
    memcpy(head + 1, &size, sizeof size);
    tpl_buf all = {0};
    if (buf_put(&all, head, sizeof head) || buf_put(&all, records->p, records->len)) {
        free(all.p);
        return kv_seterr(&t->c.err, KV_E_OTHER, "template: out of memory");
    }
    size_t done = 0;
    while (done < all.len) {
        ssize_t w = write(db->fd, all.p + done, all.len - done);
        if (w < 0) {
            int e = errno;
            free(all.p);
            kv_seterr(&t->c.err, e == ENOSPC ? KV_E_FULL : KV_E_IO, "template: writing its log: %s", strerror(e));
            t->c.err.sys_errno = e;
            return e == ENOSPC ? KV_E_FULL : KV_E_IO;
        }
        done += (size_t)w;
    }
    free(all.p);
    if (db->sync && fdatasync(db->fd) != 0) {
        int e = errno;
        kv_seterr(&t->c.err, KV_E_IO, "template: fdatasync: %s", strerror(e));
        t->c.err.sys_errno = e;
        return KV_E_IO;
    }
    return KV_OK;
}

/* A group's records: logged, then applied, under the write lock (so the log's order is the order applied). */
static int commit(kv_thread *t, const tpl_buf *records) {
    kv_db *db = t->db;
    pthread_rwlock_wrlock(&db->lock);
    int rc = log_group(t, records);
    if (rc == KV_OK && apply_records(db, records->p, records->len) != 0)
        rc = kv_seterr(&t->c.err, KV_E_OTHER, "template: out of memory applying a write");
    pthread_rwlock_unlock(&db->lock);
    return rc;
}

static int replay(kv_db *db, const char *path, kv_failure *err) {
    off_t size = lseek(db->fd, 0, SEEK_END);
    if (size < 0) return kv_seterr(err, KV_E_IO, "template: %s: %s", path, strerror(errno));
    char *all = malloc(size ? (size_t)size : 1);
    if (!all) return kv_seterr(err, KV_E_OTHER, "template: out of memory reading %s", path);
    if (pread(db->fd, all, (size_t)size, 0) != size) {
        free(all);
        return kv_seterr(err, KV_E_IO, "template: reading %s: %s", path, strerror(errno));
    }
    size_t at = 0, good = 0;
    while (at + 9 <= (size_t)size && all[at] == TPL_GROUP) {
        uint64_t len;
        memcpy(&len, all + at + 1, sizeof len);
        if (len > (size_t)size - at - 9) break;                  /* the group a crash cut short */
        if (apply_records(db, all + at + 9, len) != 0) break;   /* a record cut short inside it */
        at += 9 + len;
        good = at;
    }
    free(all);
    /* what follows the last whole group was never acknowledged: cut it off so new groups follow whole ones */
    if (good < (size_t)size && ftruncate(db->fd, (off_t)good) != 0)
        return kv_seterr(err, KV_E_IO, "template: truncating %s: %s", path, strerror(errno));
    return lseek(db->fd, 0, SEEK_END) < 0 ? kv_seterr(err, KV_E_IO, "template: seek: %s", strerror(errno)) : KV_OK;
}

static int tpl_open(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) {
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, TPL_LOG);
    kv_db *db = calloc(1, sizeof *db);
    if (!db) return kv_seterr(err, KV_E_OTHER, "template: out of memory");
    db->sync = cfg->sync;
    db->fd = open(file, O_RDWR | O_CLOEXEC | (cfg->create ? O_CREAT : 0), 0644);
    if (db->fd < 0) {
        int e = errno;
        free(db);
        kv_seterr(err, KV_E_IO, "template: opening %s: %s", file, strerror(e));
        if (err) err->sys_errno = e;
        return KV_E_IO;
    }
    pthread_rwlock_init(&db->lock, NULL);
    int rc = replay(db, file, err);
    if (rc != KV_OK) {
        close(db->fd);
        free(db);
        return rc;
    }
    *out = db;
    return KV_OK;
}

static int tpl_close(kv_db *db, kv_failure *err) {
    int rc = KV_OK;
    if (db->sync && fdatasync(db->fd) != 0) rc = kv_seterr(err, KV_E_IO, "template: fdatasync: %s", strerror(errno));
    close(db->fd);
    for (size_t i = 0; i < db->n; i++) {
        free(db->e[i].k);
        free(db->e[i].v);
    }
    free(db->e);
    pthread_rwlock_destroy(&db->lock);
    free(db);
    return rc;
}

static int tpl_thread_open(kv_db *db, kv_thread **out, kv_failure *err) {
    kv_thread *t = calloc(1, sizeof *t);
    if (!t) return kv_seterr(err, KV_E_OTHER, "template: out of memory");
    t->db = db;
    *out = t;
    return KV_OK;
}

static void tpl_thread_close(kv_thread *t) {
    free(t->out.p);
    free(t->key.p);
    free(t->batch.p);
    free(t);
}

static int write_op(kv_thread *t, char op, const char *k, size_t kl, const char *v, size_t vl) {
    if (t->in_batch) {
        t->batch_ops++;
        return record(&t->batch, op, k, kl, v, vl) ? kv_seterr(&t->c.err, KV_E_OTHER, "template: out of memory")
                                                   : KV_OK;
    }
    tpl_buf one = {0};
    int rc = record(&one, op, k, kl, v, vl) ? kv_seterr(&t->c.err, KV_E_OTHER, "template: out of memory")
                                            : commit(t, &one);
    free(one.p);
    return rc;
}

static int tpl_put(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) {
    return write_op(t, TPL_PUT, k, kl, v, vl);
}

static int tpl_del(kv_thread *t, const char *k, size_t kl) { return write_op(t, TPL_DEL, k, kl, NULL, 0); }

static int tpl_get(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) {
    kv_db *db = t->db;
    int rc = KV_NOTFOUND;
    pthread_rwlock_rdlock(&db->lock);
    size_t i = lower_bound(db, k, kl);
    if (i < db->n && cmp(db->e[i].k, db->e[i].kl, k, kl) == 0) {
        t->out.len = 0;
        rc = buf_put(&t->out, db->e[i].v, db->e[i].vl) ? kv_seterr(&t->c.err, KV_E_OTHER, "template: out of memory")
                                                        : KV_OK;
        *v = t->out.p;
        *vl = db->e[i].vl;
    }
    pthread_rwlock_unlock(&db->lock);
    return rc;
}

static int tpl_batch_begin(kv_thread *t) {
    t->batch.len = 0;
    t->batch_ops = 0;
    t->in_batch = 1;
    return KV_OK;
}

static int tpl_batch_commit(kv_thread *t) {
    t->in_batch = 0;
    return t->batch_ops ? commit(t, &t->batch) : KV_OK;
}

static int tpl_batch_abort(kv_thread *t) {
    t->in_batch = 0;
    t->batch.len = 0;
    return KV_OK;
}

/* The cursor keeps no lock between calls: each step finds the first key after the one it returned last. */
static int cursor_at(kv_thread *t, const char *k, size_t kl, int after, const char **ko, size_t *klo,
                     const char **vo, size_t *vlo) {
    kv_db *db = t->db;
    int rc = KV_NOTFOUND;
    pthread_rwlock_rdlock(&db->lock);
    size_t i = lower_bound(db, k, kl);
    if (after && i < db->n && cmp(db->e[i].k, db->e[i].kl, k, kl) == 0) i++;
    if (i < db->n) {
        tpl_buf key = {0};
        t->out.len = 0;
        if (buf_put(&key, db->e[i].k, db->e[i].kl) || buf_put(&t->out, db->e[i].v, db->e[i].vl)) {
            free(key.p);
            rc = kv_seterr(&t->c.err, KV_E_OTHER, "template: out of memory");
        } else {
            free(t->key.p);
            t->key = key;
            *ko = t->key.p; *klo = t->key.len; *vo = t->out.p; *vlo = t->out.len;
            rc = KV_OK;
        }
    }
    pthread_rwlock_unlock(&db->lock);
    return rc;
}

static int tpl_iter_seek(kv_thread *t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo,
                         size_t *vlo) {
    return cursor_at(t, k, kl, 0, ko, klo, vo, vlo);
}

static int tpl_iter_next(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) {
    tpl_buf last = t->key;   /* cursor_at replaces t->key: search from a copy */
    tpl_buf copy = {0};
    if (buf_put(&copy, last.p, last.len)) return kv_seterr(&t->c.err, KV_E_OTHER, "template: out of memory");
    int rc = cursor_at(t, copy.p, copy.len, 1, ko, klo, vo, vlo);
    free(copy.p);
    return rc;
}

static void tpl_iter_close(kv_thread *t) { t->key.len = 0; }

static int tpl_compact(kv_db *db, kv_failure *err) {
    (void)db;
    return kv_seterr(err, KV_E_NOTSUP, "template: no compaction (its log only grows)");
}

static int tpl_stats(kv_db *db, char *buf, size_t len) {
    pthread_rwlock_rdlock(&db->lock);
    off_t size = lseek(db->fd, 0, SEEK_END);
    snprintf(buf, len, "keys=%zu\nlog_bytes=%lld\n", db->n, (long long)size);
    pthread_rwlock_unlock(&db->lock);
    return KV_OK;
}

static const char *tpl_version(void) { return "1.0"; }

static const char *tpl_isolation(const char *variant, int transactions) {
    (void)variant; (void)transactions;
    return "none of its own: a batch is applied and logged as one group (atomic, also across a crash)";
}

const kv_engine_ops kv_engine_template = {
    .name = "template",
    .open = tpl_open, .close = tpl_close,
    .thread_open = tpl_thread_open, .thread_close = tpl_thread_close,
    .put = tpl_put, .get = tpl_get, .del = tpl_del,
    .batch_begin = tpl_batch_begin, .batch_commit = tpl_batch_commit, .batch_abort = tpl_batch_abort,
    /* no transactions: the driver brackets a mix template's writes in a batch */
    .iter_seek = tpl_iter_seek, .iter_next = tpl_iter_next, .iter_close = tpl_iter_close,
    .compact = tpl_compact, .stats = tpl_stats, .version = tpl_version, .isolation = tpl_isolation,
};

KV_PLUGIN(kv_engine_template)
