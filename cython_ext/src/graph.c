/* LinkBench's social graph over kv_engine.h: the encoding, the load and the ten request operations
 * (kv_graph.h says what is stored where).  The driver picks the operation, the node and the
 * transaction (kvlab.model.workloads.mix's op kinds say which each needs); this file only encodes
 * and calls the engine.  Semantics follow LinkBench's MySQL store:
 *   add_link / update_link  an upsert: a new or hidden link becomes visible and its count goes up;
 *                           a visible one gets new data, time and version (its list entry moves)
 *   delete_link             hides a visible link (LinkBench's expunge=false): the list entry goes,
 *                           the count goes down (never below 0); a missing or hidden link: nothing
 *   multiget_link           reads several links of one (id1, type), hidden ones included
 *   get_links_list          the newest `range_limit` visible links of (id1, type), one range read
 */
#define _GNU_SOURCE
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "kv_graph.h"

static inline void put64(char *p, uint64_t v) { for (int i = 7; i >= 0; i--) { p[i] = (char)(v & 0xff); v >>= 8; } }
static inline void put32(char *p, uint32_t v) { for (int i = 3; i >= 0; i--) { p[i] = (char)(v & 0xff); v >>= 8; } }
static inline uint64_t get64(const char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | (unsigned char)p[i];
    return v;
}
static inline uint32_t get32(const char *p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v = v << 8 | (unsigned char)p[i];
    return v;
}

size_t kv_graph_node_key(char *b, uint64_t id) { b[0] = 'N'; put64(b + 1, id); return 9; }
size_t kv_graph_link_key(char *b, uint64_t id1, uint64_t type, uint64_t id2) {
    b[0] = 'L'; put64(b + 1, id1); put64(b + 9, type); put64(b + 17, id2); return 25;
}
size_t kv_graph_count_key(char *b, uint64_t id1, uint64_t type) { b[0] = 'C'; put64(b + 1, id1); put64(b + 9, type); return 17; }
size_t kv_graph_list_prefix(char *b, uint64_t id1, uint64_t type) { b[0] = 'I'; put64(b + 1, id1); put64(b + 9, type); return 17; }
static size_t list_key(char *b, uint64_t id1, uint64_t type, uint64_t time, uint64_t id2) {
    kv_graph_list_prefix(b, id1, type);
    put64(b + 17, ~time);
    put64(b + 25, id2);
    return 33;
}

static inline uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void kv_graph_state_init(kv_graph_state *s, const kv_graph *g) {
    memset(s, 0, offsetof(kv_graph_state, key));
    uint64_t support = g->nodes > 1 ? g->nodes - 1 : 0;
    if (g->degree_max < support) support = g->degree_max;
    s->degree_n = support + 1;
    kv_dist_init(&s->degree, KV_DIST_ZIPFIAN_PLAIN, s->degree_n, g->degree_shape, 0, 0, 0, 0, 0, 0, 1);
    /* the shuffle: an odd multiplier and an offset mod the next power of two, walked until inside */
    uint64_t mask = 1;
    while (mask < g->nodes) mask <<= 1;
    s->perm_mask = mask - 1;
    s->perm_mul = (0x9E3779B97F4A7C15ull ^ g->seed) | 1;
    s->perm_add = g->seed * 0xD1B54A32D192ED03ull;
}

uint64_t kv_graph_shuffle(const kv_graph_state *s, const kv_graph *g, uint64_t i) {
    if (i >= g->nodes) return i;   /* added since the load: not shuffled */
    do { i = (i * s->perm_mul + s->perm_add) & s->perm_mask; } while (i >= g->nodes);
    return i;
}

uint64_t kv_graph_degree(const kv_graph *g, kv_graph_state *s, uint64_t i) {
    if (i >= g->nodes) return 0;
    kv_rng r;
    kv_rng_seed(&r, g->seed, 0x6C696E6Bull /* "link" */, i);
    return kv_dist_next(&s->degree, &r, s->degree_n);
}

uint64_t kv_graph_type_degree(const kv_graph *g, uint64_t degree, int type) {
    uint64_t n = (uint64_t)g->link_types;
    return degree / n + ((uint64_t)type < degree % n ? 1 : 0);
}

/* A log-normal payload size (LinkBench's link_datasize/node_datasize are its medians), in [1, max]. */
static int data_size(kv_rng *rng, double median, double sigma, int max) {
    double u1 = kv_unit(rng), u2 = kv_unit(rng);
    double z = sqrt(-2.0 * log(1.0 - u1)) * cos(2 * M_PI * u2);
    double v = median * exp(sigma * z);
    if (v < 1) return 1;
    return v > max ? max : (int)v;
}

static inline const char *data_bytes(kv_rng *rng, const char *data, size_t len, int n) {
    return data + kv_rng_below(rng, len - (size_t)n + 1);
}

/* node value: type(4) version(8) time(4) data */
static size_t node_value(char *b, uint64_t version, uint32_t time, kv_rng *rng, const kv_graph *g,
                         const char *data, size_t len) {
    int n = data_size(rng, g->node_data_median, g->data_sigma, KV_G_MAX_DATA);
    put32(b, KV_G_NODE_TYPE);
    put64(b + 4, version);
    put32(b + 12, time);
    memcpy(b + 16, data_bytes(rng, data, len, n), (size_t)n);
    return 16 + (size_t)n;
}

/* link value: visibility(1) version(4) time(8) data; list value: version(4) data */
static size_t link_value(char *b, int vis, uint32_t version, uint64_t time, const char *d, int n) {
    b[0] = (char)vis;
    put32(b + 1, version);
    put64(b + 5, time);
    memcpy(b + 13, d, (size_t)n);
    return 13 + (size_t)n;
}

static size_t list_value(char *b, uint32_t version, const char *d, int n) {
    put32(b, version);
    memcpy(b + 4, d, (size_t)n);
    return 4 + (size_t)n;
}

/* count +delta (floored at 0), version + 1 */
static int count_add(const kv_engine_ops *e, kv_thread *t, kv_graph_state *s, uint64_t id1, uint64_t type,
                     int delta, uint64_t time) {
    size_t kl = kv_graph_count_key(s->key2, id1, type);
    const char *v;
    size_t vl;
    uint64_t count = 0, version = 0;
    int rc = e->get(t, s->key2, kl, &v, &vl);
    if (rc < 0) return rc;
    if (rc == KV_OK && vl >= 16) { count = get64(v); version = get64(v + 8); }
    if (delta < 0 && count == 0) return KV_OK;   /* LinkBench: IF(count = 0, 0, count - 1) */
    count = delta < 0 ? count - 1 : count + (uint64_t)delta;
    char cv[24];
    put64(cv, count);
    put64(cv + 8, version + 1);
    put64(cv + 16, time);
    s->bytes += kl + 24;
    return e->put(t, s->key2, kl, cv, 24);
}

/* add_link / update_link: an upsert of (id1, type, id2) */
static int upsert_link(const kv_engine_ops *e, kv_thread *t, const kv_graph *g, kv_graph_state *s,
                       uint64_t id1, uint64_t type, uint64_t id2, kv_rng *rng, const char *data, size_t len) {
    size_t kl = kv_graph_link_key(s->key, id1, type, id2);
    const char *v;
    size_t vl;
    int rc = e->get(t, s->key, kl, &v, &vl);
    if (rc < 0) return rc;
    int existed = rc == KV_OK && vl >= 13, was_visible = existed && v[0] == KV_G_VISIBLE;
    uint32_t version = existed ? get32(v + 1) + 1 : 0;
    uint64_t old_time = existed ? get64(v + 5) : 0, time = now_ms();
    if (existed) s->found++; else s->missing++;
    if (was_visible) {   /* its list entry moves to the new time */
        size_t ll = list_key(s->key2, id1, type, old_time, id2);
        if ((rc = e->del(t, s->key2, ll)) < 0) return rc;
    }
    int n = data_size(rng, g->link_data_median, g->data_sigma, g->link_data_max);
    const char *d = data_bytes(rng, data, len, n);
    size_t n1 = link_value(s->val, KV_G_VISIBLE, version, time, d, n);
    if ((rc = e->put(t, s->key, kl, s->val, n1)) < 0) return rc;
    size_t ll = list_key(s->key2, id1, type, time, id2);
    size_t n2 = list_value(s->val2, version, d, n);
    if ((rc = e->put(t, s->key2, ll, s->val2, n2)) < 0) return rc;
    s->bytes += kl + n1 + ll + n2;
    return was_visible ? KV_OK : count_add(e, t, s, id1, type, +1, time);
}

static int hide_link(const kv_engine_ops *e, kv_thread *t, kv_graph_state *s, uint64_t id1, uint64_t type,
                     uint64_t id2) {
    size_t kl = kv_graph_link_key(s->key, id1, type, id2);
    const char *v;
    size_t vl;
    int rc = e->get(t, s->key, kl, &v, &vl);
    if (rc < 0) return rc;
    if (rc == KV_NOTFOUND || vl < 13 || v[0] != KV_G_VISIBLE) { s->missing++; return KV_OK; }
    if (vl > sizeof s->val) return KV_E_CORRUPT;   /* not a link this encoding wrote */
    s->found++;
    memcpy(s->val, v, vl);          /* v is valid only until the next call */
    s->val[0] = KV_G_HIDDEN;
    uint64_t time = get64(s->val + 5);
    if ((rc = e->put(t, s->key, kl, s->val, vl)) < 0) return rc;
    size_t ll = list_key(s->key2, id1, type, time, id2);
    if ((rc = e->del(t, s->key2, ll)) < 0 && rc != KV_NOTFOUND) return rc;
    s->bytes += kl + vl;
    return count_add(e, t, s, id1, type, -1, now_ms());
}

/* LinkBench's id2 chooser: a link of (id1, type) that existed at load with about probability p */
static uint64_t choose_id2(const kv_graph *g, kv_graph_state *s, uint64_t i, int type, double p, kv_rng *rng) {
    uint64_t nlinks = kv_graph_type_degree(g, kv_graph_degree(g, s, i), type);
    uint64_t span = (uint64_t)ceil((double)nlinks / p);
    return g->startid1 + i + (span ? kv_rng_below(rng, span) : 0);
}

static int list_links(const kv_engine_ops *e, kv_thread *t, const kv_graph *g, kv_graph_state *s,
                      uint64_t id1, uint64_t type) {
    size_t pl = kv_graph_list_prefix(s->key, id1, type);
    const char *k, *v;
    size_t kl, vl;
    int n = 0;
    int rc = e->iter_seek(t, s->key, pl, &k, &kl, &v, &vl);
    while (rc == KV_OK && n < g->range_limit && kl >= pl && memcmp(k, s->key, pl) == 0) {
        n++;
        s->bytes += kl + vl;
        rc = e->iter_next(t, &k, &kl, &v, &vl);
    }
    e->iter_close(t);
    s->links_listed += (uint64_t)n;
    if (n) s->found++; else s->missing++;
    return rc == KV_NOTFOUND ? KV_OK : rc;
}

static int get_one(const kv_engine_ops *e, kv_thread *t, kv_graph_state *s, const char *k, size_t kl) {
    const char *v;
    size_t vl;
    int rc = e->get(t, k, kl, &v, &vl);
    if (rc == KV_OK) { s->found++; s->bytes += kl + vl; }
    else if (rc == KV_NOTFOUND) { s->missing++; rc = KV_OK; }
    return rc;
}

int kv_graph_op(const kv_engine_ops *e, kv_thread *t, const kv_graph *g, kv_graph_state *s, int op,
                uint64_t i, kv_rng *rng, const char *data, size_t len) {
    uint64_t id = g->startid1 + i;
    int type = (int)kv_rng_below(rng, (uint64_t)g->link_types);
    uint64_t ltype = KV_G_LINK_TYPE_BASE + (uint64_t)type;
    size_t kl;
    int rc;
    switch (op) {
    case KV_G_GET_NODE:
        return get_one(e, t, s, s->key, kv_graph_node_key(s->key, id));
    case KV_G_ADD_NODE: {
        kl = kv_graph_node_key(s->key, id);
        size_t vl = node_value(s->val, 1, (uint32_t)(now_ms() / 1000), rng, g, data, len);
        s->bytes += kl + vl;
        return e->put(t, s->key, kl, s->val, vl);
    }
    case KV_G_UPDATE_NODE: {
        const char *v;
        size_t vl;
        kl = kv_graph_node_key(s->key, id);
        rc = e->get(t, s->key, kl, &v, &vl);
        if (rc == KV_NOTFOUND) { s->missing++; return KV_OK; }
        if (rc < 0) return rc;
        s->found++;
        uint64_t version = vl >= 12 ? get64(v + 4) + 1 : 1;
        vl = node_value(s->val, version, (uint32_t)(now_ms() / 1000), rng, g, data, len);
        s->bytes += kl + vl;
        return e->put(t, s->key, kl, s->val, vl);
    }
    case KV_G_DELETE_NODE:
        rc = e->del(t, s->key, kv_graph_node_key(s->key, id));
        if (rc == KV_NOTFOUND) { s->missing++; return KV_OK; }
        if (rc == KV_OK) s->found++;
        return rc;
    case KV_G_GET_LINK:
        return get_one(e, t, s, s->key, kv_graph_link_key(s->key, id, ltype,
                                                          choose_id2(g, s, i, type, g->p_exists[op], rng)));
    case KV_G_ADD_LINK: case KV_G_UPDATE_LINK:
        return upsert_link(e, t, g, s, id, ltype, choose_id2(g, s, i, type, g->p_exists[op], rng), rng, data, len);
    case KV_G_DELETE_LINK:
        return hide_link(e, t, s, id, ltype, choose_id2(g, s, i, type, g->p_exists[op], rng));
    case KV_G_COUNT_LINK:
        return get_one(e, t, s, s->key, kv_graph_count_key(s->key, id, ltype));
    case KV_G_MULTIGET_LINK: {
        int n = 1;   /* geometric in [1, multiget_max) */
        while (n < g->multiget_max - 1 && kv_unit(rng) >= g->multiget_p) n++;
        for (int j = 0; j < n; j++) {
            kl = kv_graph_link_key(s->key, id, ltype, choose_id2(g, s, i, type, g->p_exists[op], rng));
            if ((rc = get_one(e, t, s, s->key, kl)) < 0) return rc;
        }
        return KV_OK;
    }
    case KV_G_GET_LINKS_LIST:
        return list_links(e, t, g, s, id, ltype);
    }
    return KV_E_CONFIG;
}

int kv_graph_load(const kv_engine_ops *e, kv_thread *t, const kv_graph *g, kv_graph_state *s,
                  uint64_t first, uint64_t count, kv_rng *rng, const char *data, size_t len,
                  int (*progress)(void *arg, uint64_t writes), void *arg) {
    uint64_t base = now_ms();
    uint64_t writes = 0;
    int rc = KV_OK, open = 0;
    for (uint64_t i = first; i < first + count && rc == KV_OK; i++) {
        if (!open) {
            if ((rc = e->batch_begin(t)) < 0) break;
            open = 1;
        }
        uint64_t id1 = g->startid1 + i;
        size_t kl = kv_graph_node_key(s->key, id1);
        size_t vl = node_value(s->val, 1, (uint32_t)(base / 1000), rng, g, data, len);
        if ((rc = e->put(t, s->key, kl, s->val, vl)) < 0) break;
        s->bytes += kl + vl;
        writes++;
        s->nodes_loaded++;
        uint64_t degree = kv_graph_degree(g, s, i);
        for (int type = 0; type < g->link_types && rc == KV_OK; type++) {
            uint64_t ltype = KV_G_LINK_TYPE_BASE + (uint64_t)type, n = kv_graph_type_degree(g, degree, type);
            uint64_t last = 0;
            for (uint64_t j = 0; j < n; j++) {
                /* LinkBench's load: time within the last 2^32 ms, version 0, visible */
                uint64_t time = base - kv_rng_below(rng, 1ull << 32), id2 = id1 + j;
                int dn = data_size(rng, g->link_data_median, g->data_sigma, g->link_data_max);
                const char *d = data_bytes(rng, data, len, dn);
                kl = kv_graph_link_key(s->key, id1, ltype, id2);
                vl = link_value(s->val, KV_G_VISIBLE, 0, time, d, dn);
                if ((rc = e->put(t, s->key, kl, s->val, vl)) < 0) break;
                size_t ll = list_key(s->key2, id1, ltype, time, id2), lv = list_value(s->val2, 0, d, dn);
                if ((rc = e->put(t, s->key2, ll, s->val2, lv)) < 0) break;
                s->bytes += kl + vl + ll + lv;
                writes += 2;
                if (time > last) last = time;
            }
            if (rc == KV_OK && n) {
                char cv[24];
                put64(cv, n);
                put64(cv + 8, 0);
                put64(cv + 16, last);
                kl = kv_graph_count_key(s->key, id1, ltype);
                if ((rc = e->put(t, s->key, kl, cv, 24)) < 0) break;
                s->bytes += kl + 24;
                writes++;
                s->links_loaded += n;
            }
        }
        if (rc < 0) break;
        if (writes >= (uint64_t)g->load_writes || i + 1 == first + count) {
            if ((rc = e->batch_commit(t)) < 0) { open = 0; break; }
            open = 0;
            uint64_t w = writes;
            writes = 0;
            if (progress(arg, w)) break;
        }
    }
    if (open) e->batch_abort(t);
    return rc < 0 ? rc : KV_OK;
}
