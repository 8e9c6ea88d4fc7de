# Part of kvlab._native, included by _native.pyx (one extension module; the C interfaces are the .pxd files beside the
# headers in cython_ext/include).  The driver's latency histogram from Python (for tests and for checking it against
# exact percentiles), and whether the kernel's clocksource lets latency use the TSC.

_TSC = None


def _kernel_uses_tsc():
    """The TSC is used for latency only where the kernel's own clocksource is tsc."""
    global _TSC
    if _TSC is None:
        try:
            with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
                _TSC = f.read().strip() == "tsc"
        except OSError:
            _TSC = False
    return _TSC


def histogram_of(values):
    """Record `values` (ns, non-negative integers) in the driver's histogram; for tests
    and for checking the histogram against exact percentiles."""
    cdef uint64_t[::1] vals = np.ascontiguousarray(values, dtype=np.uint64)
    cdef kv_hist *h = <kv_hist *> calloc(1, sizeof(kv_hist))
    if h == NULL:
        raise MemoryError()
    cdef Py_ssize_t i
    cdef uint64_t[::1] view
    try:
        with nogil:
            kv_hist_init(h)
            for i in range(vals.shape[0]):
                kv_hist_record(h, vals[i])
            kv_hist_finish(h)
        counts = np.empty(KV_HIST_BUCKETS, dtype=np.uint64)
        view = counts
        memcpy(&view[0], h.buckets, KV_HIST_BUCKETS * 8)
        return {"counts": counts, "count": h.count, "min": h.min, "max": h.max}
    finally:
        free(h)
