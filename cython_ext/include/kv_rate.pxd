# Cython's view of kv_rate.h: an open loop's target rate over time.


cdef extern from "kv_rate.h":
    ctypedef struct kv_rate:
        int n
        const double *t_ns
        const double *per_ns
        const double *cum
        double period_ns, period_cum
    double kv_rate_time(const kv_rate *r, double work, int *cursor) nogil
