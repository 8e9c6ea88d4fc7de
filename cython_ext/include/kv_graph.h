/* kv_graph.h - LinkBench's social graph on a key-value engine: one encoding for every engine, its
 * load phase and its ten request operations, written only against kv_engine.h.
 *
 * The encoding (all integers big-endian, so byte order is numeric order):
 *   node    'N' id(8)                               -> type(4) version(8) time(4) data
 *   link    'L' id1(8) link_type(8) id2(8)          -> visibility(1) version(4) time(8) data
 *   list    'I' id1(8) link_type(8) ~time(8) id2(8) -> version(4) data        (visible links only)
 *   count   'C' id1(8) link_type(8)                 -> count(8) version(8) time(8)
 * The list entries are LinkBench's MySQL covering index (id1, link_type, visibility, time, id2,
 * version, data): get_links_list is one short range read, newest first (~time ascending), ties by id2.
 * A write that touches several records (add/update/delete_link: link, list entry, count) runs in one
 * write transaction (kv_engine.h), as LinkBench's MySQL store commits each operation once.
 *
 * The graph at load is a pure function of (seed, id): node i's out-degree is drawn from a power law
 * P(d) ~ (d + 1)^-shape, d in [0, degree_max], by an RNG seeded with (seed, i); its links of type t
 * are to id2 = id1, id1 + 1, ..., (LinkBench's id1 + j), the degree split evenly over the link
 * types.  So the request phase knows which links exist without asking, and so does a test.
 */
#ifndef KV_GRAPH_H
#define KV_GRAPH_H

#include <stdint.h>
#include "kv_dist.h"
#include "kv_engine.h"

/* LinkBench's operations (its request mix names them addlink, getlinklist, ...): X(id, name as
   kvlab.model.workloads.mix's op kinds write it). */
#define KV_GRAPH_OPS(X)                                                                               \
    X(GET_NODE, "get_node") X(ADD_NODE, "add_node") X(UPDATE_NODE, "update_node")                     \
    X(DELETE_NODE, "delete_node") X(GET_LINK, "get_link") X(ADD_LINK, "add_link")                     \
    X(UPDATE_LINK, "update_link") X(DELETE_LINK, "delete_link") X(COUNT_LINK, "count_link")           \
    X(MULTIGET_LINK, "multiget_link") X(GET_LINKS_LIST, "get_links_list")

enum kv_graph_op {
#define KV_G_ENUM(id, name) KV_G_##id,
    KV_GRAPH_OPS(KV_G_ENUM)
#undef KV_G_ENUM
    KV_G__COUNT
};

#define KV_G_LINK_TYPE_BASE 123456789ull   /* LinkBench's first link type */
#define KV_G_NODE_TYPE 2048u               /* the type LinkBench's loader gives every node */
#define KV_G_VISIBLE 1
#define KV_G_HIDDEN 0
#define KV_G_MAX_DATA 65536                /* node payloads are capped here (LinkBench: 1 MB) */
#define KV_G_MAX_MULTIGET 128

typedef struct kv_graph {
    uint64_t startid1;          /* first node id (LinkBench's startid1) */
    uint64_t nodes;             /* ids loaded: startid1 .. startid1 + nodes - 1 (maxid1 - startid1) */
    int link_types;             /* link_type_count */
    int range_limit;            /* get_links_list returns at most this many links (LinkStore's 10000) */
    double degree_shape;        /* out-degree power law at load */
    uint64_t degree_max;
    double node_data_median, link_data_median, data_sigma;   /* log-normal payload sizes (bytes) */
    int link_data_max;          /* LinkBench's MAX_LINK_DATA, 255 */
    double multiget_p;          /* multiget_link: geometric number of id2s, p, in [1, multiget_max) */
    int multiget_max;
    double p_exists[KV_G__COUNT];   /* per link op: the chance its id2 is a link loaded for id1 (LinkBench's
                                       id2 chooser: id1 + uniform[0, ceil(nlinks / p))) */
    uint64_t seed;
    int load_writes;            /* writes per load batch (one batch holds whole nodes) */
} kv_graph;

/* Per thread: the out-degree generator, scratch records, and tallies. */
typedef struct kv_graph_state {
    kv_dist degree;
    uint64_t degree_n;          /* the power law's support, min(degree_max, nodes - 1) + 1 */
    uint64_t perm_mask, perm_mul, perm_add;   /* a fixed shuffle of [0, nodes): hot ids are spread out */
    uint64_t found, missing, bytes;
    uint64_t links_listed;      /* links returned by get_links_list */
    uint64_t nodes_loaded, links_loaded;
    char key[64], key2[64];
    char val[KV_G_MAX_DATA + 64], val2[KV_G_MAX_DATA + 64];
} kv_graph_state;

void kv_graph_state_init(kv_graph_state *s, const kv_graph *g);

/* Node index i's out-degree at load, per link type t (0 <= i < g->nodes). */
uint64_t kv_graph_degree(const kv_graph *g, kv_graph_state *s, uint64_t i);
uint64_t kv_graph_type_degree(const kv_graph *g, uint64_t degree, int type);

/* The shuffle applied to a drawn index before it names a node (a bijection of [0, nodes)). */
uint64_t kv_graph_shuffle(const kv_graph_state *s, const kv_graph *g, uint64_t i);

/* One request operation on node index `i` (for add_node: the new node's index).  Payload bytes come
   from `data` (len bytes, read-only).  Returns KV_OK, or a KV_E_* code (KV_NOTFOUND is tallied). */
int kv_graph_op(const kv_engine_ops *e, kv_thread *t, const kv_graph *g, kv_graph_state *s, int op,
                uint64_t i, kv_rng *rng, const char *data, size_t len);

/* Load node indices [first, first + count): each node, its links and its counts, in batches of about
   g->load_writes writes.  `progress` is called after each batch with the writes it held; a nonzero
   return stops the load.  Returns KV_OK or a KV_E_* code. */
int kv_graph_load(const kv_engine_ops *e, kv_thread *t, const kv_graph *g, kv_graph_state *s,
                  uint64_t first, uint64_t count, kv_rng *rng, const char *data, size_t len,
                  int (*progress)(void *arg, uint64_t writes), void *arg);

/* Keys, for tests and Python readers. */
size_t kv_graph_node_key(char *buf, uint64_t id);
size_t kv_graph_link_key(char *buf, uint64_t id1, uint64_t type, uint64_t id2);
size_t kv_graph_count_key(char *buf, uint64_t id1, uint64_t type);
size_t kv_graph_list_prefix(char *buf, uint64_t id1, uint64_t type);

#endif
