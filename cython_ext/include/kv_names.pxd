# Cython's view of kv_names.h: the C core's name tables, each ending with a NULL name.


cdef extern from "kv_names.h":
    ctypedef struct kv_name:
        const char *name
        int code
    const kv_name kv_error_names[]
    const kv_name kv_optype_names[]
    const kv_name kv_graph_op_names[]
    const kv_name kv_dist_names[]
    const kv_name kv_length_dist_names[]
    const kv_name kv_compression_names[]
    const kv_name kv_txn_kind_names[]
