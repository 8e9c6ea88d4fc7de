/* Reference loop for WiredTiger, from wiredtiger.h and WiredTiger's documentation (not kvlab's adapter).
 * --variant btree (a "table:" object, a row-store B-tree) or lsm (an "lsm:" object).
 *
 * Configuration (the same as kvlab's wiredtiger-btree and wiredtiger-lsm configurations at kvlab's defaults,
 * sync off); statistics, an instrument, are off (wiredtiger_open's default, statistics=(none); kvlab's side is given
 * statistics=(none) too, which its adapter now also opens with unless a run asks for the engine's counters):
 *   wiredtiger_open "create,session_max=THREADS+22,cache_size=--cache-size,log=(enabled=false)" (kvlab: session_max
 *   max_threads + 20 with max_threads = THREADS + 2; without sync kvlab opens with the log off; no cache_size:
 *   WiredTiger's 100MB), then --options appended; the object "key_format=u,value_format=u" (raw bytes), no block
 *   compression, the rest WiredTiger's defaults.
 * fillseq: one session and cursor; session->begin_transaction, REF_BATCH cursor->insert, commit_transaction.
 * readrandom: one session per thread with one cursor on the object, opened once and kept (wiredtiger.h, on
 *   open_cursor: applications should reuse cursors when they can), cursor->set_key, cursor->search,
 *   cursor->get_value, then cursor->reset (on search: "the WT_CURSOR::reset method should be called as soon as
 *   the record has been retrieved and the cursor no longer needs that position").
 */
#include <wiredtiger.h>

#define REF_ENGINE "wiredtiger"
#include "ref_common.h"

static WT_CONNECTION *conn;
static char uri[32];

typedef struct {
    WT_SESSION *s;
    WT_CURSOR *c;
} ref_reader;

static void check(int rc, const char *what) {
    if (rc) ref_die(what, wiredtiger_strerror(rc));
}

static void eng_open(const ref_args *a, char *config, size_t len) {
    int lsm = !strcmp(a->variant, "lsm");
    if (!lsm && *a->variant && strcmp(a->variant, "btree")) ref_die("--variant", "btree or lsm");
    snprintf(uri, sizeof uri, "%s:%.20s", lsm ? "lsm" : "table", a->object);
    char conf[1024];
    int n = snprintf(conf, sizeof conf, "create,session_max=%d,log=(enabled=false)", a->threads + 22);
    if (a->cache_size) n += snprintf(conf + n, sizeof conf - n, ",cache_size=%llu", (unsigned long long)a->cache_size);
    if (*a->options) snprintf(conf + n, sizeof conf - n, ",%s", a->options);
    check(wiredtiger_open(a->dir, NULL, conf, &conn), "wiredtiger_open");
    WT_SESSION *s;
    check(conn->open_session(conn, NULL, NULL, &s), "open_session");
    check(s->create(s, uri, "key_format=u,value_format=u"), "create");
    check(s->close(s, NULL), "session close");
    snprintf(config, len, "object=%s wiredtiger_open=\"%s\" create=\"key_format=u,value_format=u\"; read: one "
             "session and kept cursor per thread, set_key, search, get_value, reset", uri, conf);
}

static void eng_close(void) { check(conn->close(conn, NULL), "close"); }

static void eng_fill(const ref_args *a, const char *value) {
    char key[REF_KEY];
    WT_ITEM k = {.data = key, .size = REF_KEY}, v = {.data = value, .size = REF_VALUE};
    WT_SESSION *s;
    WT_CURSOR *c;
    check(conn->open_session(conn, NULL, NULL, &s), "open_session");
    check(s->open_cursor(s, uri, NULL, NULL, &c), "open_cursor");
    for (uint64_t i = 0; i < a->num;) {
        check(s->begin_transaction(s, NULL), "begin_transaction");
        for (uint64_t end = i + REF_BATCH < a->num ? i + REF_BATCH : a->num; i < end; i++) {
            ref_key(key, i);
            c->set_key(c, &k);
            c->set_value(c, &v);
            check(c->insert(c), "insert");
        }
        check(s->commit_transaction(s, NULL), "commit_transaction");
    }
    check(s->close(s, NULL), "session close");
}

static void eng_reader_open(ref_reader *r) {
    check(conn->open_session(conn, NULL, NULL, &r->s), "open_session");
    check(r->s->open_cursor(r->s, uri, NULL, NULL, &r->c), "open_cursor");
}

static void eng_reader_close(ref_reader *r) { check(r->s->close(r->s, NULL), "session close"); }

static inline int eng_get(ref_reader *r, const char *key) {
    WT_CURSOR *c = r->c;
    WT_ITEM k = {.data = key, .size = REF_KEY}, v;
    c->set_key(c, &k);
    int rc = c->search(c);
    if (rc == WT_NOTFOUND) return 0;
    check(rc, "search");
    check(c->get_value(c, &v), "get_value");
    check(c->reset(c), "reset");
    return 1;
}

#include "ref_main.h"
