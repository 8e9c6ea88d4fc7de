/* The name tables of kv_names.h: the headers' X-macro lists, each expanded once. */
#include "kv_dist.h"
#include "kv_names.h"

#define KV_NAME_END {NULL, 0}

const kv_workload_info kv_workload_table[KV_W__COUNT] = {
#define KV_W_ROW(id, name, optype, writes, ops_are_num, several) [KV_W_##id] = {name, optype, writes, ops_are_num, several},
    KV_WORKLOADS(KV_W_ROW)
#undef KV_W_ROW
};

const kv_name kv_error_names[] = {
#define KV_ERROR_ROW(name, value, meaning) {#name, name},
    KV_ERRORS(KV_ERROR_ROW)
#undef KV_ERROR_ROW
    KV_NAME_END
};

const kv_name kv_optype_names[] = {
#define KV_OP_ROW(id, name) {name, KV_OP_##id},
    KV_OPTYPES(KV_OP_ROW)
#undef KV_OP_ROW
    KV_NAME_END
};

const kv_name kv_graph_op_names[] = {
#define KV_G_ROW(id, name) {name, KV_G_##id},
    KV_GRAPH_OPS(KV_G_ROW)
#undef KV_G_ROW
    KV_NAME_END
};

const kv_name kv_dist_names[] = {
#define KV_DIST_ROW(id, name) {name, KV_DIST_##id},
    KV_DISTS(KV_DIST_ROW)
#undef KV_DIST_ROW
    KV_NAME_END
};

const kv_name kv_length_dist_names[] = {
#define KV_LEN_ROW(id, name) {name, KV_LEN_##id},
    KV_LENGTH_DISTS(KV_LEN_ROW)
#undef KV_LEN_ROW
    KV_NAME_END
};

const kv_name kv_compression_names[] = {
#define KV_COMP_ROW(id, name) {name, KV_COMP_##id},
    KV_COMPRESSIONS(KV_COMP_ROW)
#undef KV_COMP_ROW
    KV_NAME_END
};

const kv_name kv_txn_kind_names[] = {
#define KV_TXN_ROW(id, name, value) {name, KV_TXN_##id},
    KV_TXN_KINDS(KV_TXN_ROW)
#undef KV_TXN_ROW
    KV_NAME_END
};
