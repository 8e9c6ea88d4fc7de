/* kv_names.h - the C core's name tables, for kvlab._native to read: each X-macro list in the headers
 * (KV_ERRORS, KV_OPTYPES, KV_WORKLOADS, KV_DISTS, KV_GRAPH_OPS, ...) expanded once, in src/names.c, into
 * rows of {name, code}.  Python builds its tuples and dicts from these, so no enum is copied "in the
 * same order" anywhere (kv_names.pxd declares them to Cython).
 */
#ifndef KV_NAMES_H
#define KV_NAMES_H

#include "kv_driver.h"

typedef struct kv_name {
    const char *name;
    int code;
} kv_name;

/* Each ends with a {NULL, 0} row. */
extern const kv_name kv_error_names[];          /* KV_ERRORS: "KV_E_IO" -> -2, ... */
extern const kv_name kv_optype_names[];         /* KV_OPTYPES, in enum kv_optype's order */
extern const kv_name kv_graph_op_names[];       /* KV_GRAPH_OPS, in enum kv_graph_op's order */
extern const kv_name kv_dist_names[];           /* KV_DISTS */
extern const kv_name kv_length_dist_names[];    /* KV_LENGTH_DISTS */
extern const kv_name kv_compression_names[];    /* KV_COMPRESSIONS */
extern const kv_name kv_txn_kind_names[];       /* KV_TXN_KINDS, "none" included */
/* The native loops: kv_workload_table (kv_driver.h), KV_W__COUNT rows. */

#endif
