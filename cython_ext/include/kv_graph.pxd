# Cython's view of kv_graph.h: LinkBench's graph parameters.
from libc.stdint cimport uint64_t


cdef extern from "kv_graph.h":
    enum:
        KV_G__COUNT
    ctypedef struct kv_graph:
        uint64_t startid1, nodes
        int link_types, range_limit
        double degree_shape
        uint64_t degree_max
        double node_data_median, link_data_median, data_sigma
        int link_data_max
        double multiget_p
        int multiget_max
        double p_exists[KV_G__COUNT]
        uint64_t seed
        int load_writes
    ctypedef struct kv_graph_state:
        pass
    void kv_graph_state_init(kv_graph_state *s, const kv_graph *g) nogil
    uint64_t kv_graph_degree(const kv_graph *g, kv_graph_state *s, uint64_t i) nogil
