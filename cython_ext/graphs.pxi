# Part of kvlab._native, included by _native.pyx (one extension module; the C interfaces are the .pxd files beside the
# headers in cython_ext/include).  LinkBench graphs: the plan's graph as the C core's kv_graph, and the degrees it
# gives nodes.

cdef kv_graph *_make_graph(dict g) except NULL:
    """A kv_graph from kvlab.model.workloads.linkbench's plan (validated there; this checks what would overrun)."""
    cdef kv_graph *out = <kv_graph *> calloc(1, sizeof(kv_graph))
    if out == NULL:
        raise MemoryError()
    cdef int i
    try:
        out.startid1, out.nodes = g["startid1"], g["nodes"]
        out.link_types, out.range_limit = g["link_types"], g["range_limit"]
        out.degree_shape, out.degree_max = g["degree_shape"], g["degree_max"]
        out.node_data_median, out.link_data_median = g["node_data_median"], g["link_data_median"]
        out.data_sigma, out.link_data_max = g["data_sigma"], g["link_data_max"]
        out.multiget_p, out.multiget_max = g["multiget_p"], g["multiget_max"]
        out.seed, out.load_writes = g["seed"], g["load_writes"]
        if not (out.nodes >= 1 and out.link_types >= 1 and out.range_limit >= 1 and out.degree_shape > 0
                and 1 <= out.link_data_max <= 255 and 2 <= out.multiget_max <= 128 and 0 < out.multiget_p <= 1
                and out.load_writes >= 1 and len(g["p_exists"]) == KV_G__COUNT
                and out.node_data_median >= 1 and out.link_data_median >= 1 and out.data_sigma >= 0):
            raise _errors.SpecError(f"graph parameters out of range: {g!r}")
        for i in range(KV_G__COUNT):
            out.p_exists[i] = g["p_exists"][i]
            if not 0 < out.p_exists[i] <= 1:
                raise _errors.SpecError("graph p_exists must be in (0, 1]")
    except BaseException:
        free(out)
        raise
    return out


def graph_degrees(dict graph, uint64_t first, uint64_t n):
    """Out-degrees at load of node indices [first, first + n), as the load writes them."""
    cdef kv_graph *g = _make_graph(graph)
    cdef kv_graph_state *s = <kv_graph_state *> calloc(1, sizeof(kv_graph_state))
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    cdef uint64_t i
    try:
        if s == NULL:
            raise MemoryError()
        with nogil:
            kv_graph_state_init(s, g)
            for i in range(n):
                view[i] = kv_graph_degree(g, s, first + i)
        return out
    finally:
        free(s)
        free(g)
