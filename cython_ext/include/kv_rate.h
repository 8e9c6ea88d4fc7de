/* An open loop's target rate as a function of time (kvlab.model.workloads.rate compiles a schedule into this):
 * segments, each from t_ns[i] (since the loop's start) at per_ns[i] arrivals per nanosecond for one client,
 * with cum[i] the arrivals the schedule asks for before segment i begins.  After the last segment the
 * schedule repeats every period_ns (a sine's period) or, with period_ns 0, the last rate holds.
 *
 * A client's n-th transaction (n counted in arrivals: 1 a gap for even arrivals, an exponential draw for
 * Poisson ones) is intended to start at the time the schedule has asked for n arrivals: the inverse of its
 * integral.  Each intended start is computed from the running count, never from the previous start, so the
 * starts follow the schedule without drift.  The same function serves the hot loop and kvlab's tests
 * (_native.rate_times).
 */
#ifndef KV_RATE_H
#define KV_RATE_H

#include <math.h>

typedef struct kv_rate {
    int n;                  /* segments; 0: no schedule (a constant rate, kv_mix's interval_ns) */
    const double *t_ns, *per_ns, *cum;
    double period_ns;       /* > 0: the schedule repeats after this long */
    double period_cum;      /* arrivals in one period */
} kv_rate;

/* The time (ns since the loop's start) by which the schedule has asked for `work` arrivals; `*cursor` is the
   caller's segment hint (start it at 0; work only grows, so the search moves forward). */
static inline double kv_rate_time(const kv_rate *r, double work, int *cursor) {
    double base = 0;
    if (r->period_ns > 0 && r->period_cum > 0) {
        double k = floor(work / r->period_cum);
        base = k * r->period_ns;
        work -= k * r->period_cum;
    }
    int i = *cursor;
    if (i < 0 || i >= r->n || r->cum[i] > work) i = 0;   /* a new period starts the search over */
    while (i + 1 < r->n && r->cum[i + 1] <= work) i++;
    *cursor = i;
    if (r->per_ns[i] <= 0) return INFINITY;   /* a last rate of 0 asks for nothing more (the model refuses it) */
    return base + r->t_ns[i] + (work - r->cum[i]) / r->per_ns[i];
}

#endif
