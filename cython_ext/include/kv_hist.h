/* Log-linear latency histogram (HdrHistogram-like), in nanoseconds.
 * Values below 2^KV_HIST_SUB_BITS are exact; above, each power of two is split
 * into 2^KV_HIST_SUB_BITS linear buckets, so a bucket's midpoint is within
 * 1/2^(KV_HIST_SUB_BITS+1) = 0.39% of any value in it.  Histograms merge by adding counts.
 * kvlab/results/histogram.py mirrors the bucket arithmetic.
 */
#ifndef KV_HIST_H
#define KV_HIST_H

#include <stddef.h>
#include <stdint.h>

#define KV_HIST_SUB_BITS 7
#define KV_HIST_SUB (1 << KV_HIST_SUB_BITS)
#define KV_HIST_MAX_EXP 44              /* up to 2^44 ns = 4.9 hours */
#define KV_HIST_BUCKETS (KV_HIST_SUB + (KV_HIST_MAX_EXP - KV_HIST_SUB_BITS) * KV_HIST_SUB)

typedef struct kv_hist {
    uint64_t count;
    uint64_t min, max;
    uint64_t buckets[KV_HIST_BUCKETS];
} kv_hist;

/* Clamping to the top bucket's range and OR-ing in KV_HIST_SUB (so values below it take e = SUB_BITS,
   shift 0, index v) gives one formula for every value, the same mapping as the piecewise definition:
   exact below KV_HIST_SUB, then KV_HIST_SUB linear buckets per power of two up to 2^KV_HIST_MAX_EXP.
   The index is pointer-sized, so the hot loops spend no instruction widening it. */
static inline size_t kv_hist_index(uint64_t v) {
    const uint64_t top = (1ull << KV_HIST_MAX_EXP) - 1;
    v = v < top ? v : top;
    size_t shift = (size_t)(63 - KV_HIST_SUB_BITS) - (size_t)__builtin_clzll(v | KV_HIST_SUB);
    return (shift << KV_HIST_SUB_BITS) + (size_t)(v >> shift);
}

/* The hot path is one bucket increment and an exact max (the tail matters most).
   kv_hist_finish() fills in count and min (the lowest non-empty bucket's lower
   bound, exact below 128) after the run, keeping the per-op cost of recording to
   the index arithmetic; means come from the buckets.  Start from kv_hist_init(). */
static inline void kv_hist_init(kv_hist *h) {
    h->count = 0;
    h->min = UINT64_MAX;
    h->max = 0;
}

static inline void kv_hist_record(kv_hist *h, uint64_t v) {
    h->buckets[kv_hist_index(v)]++;
    if (__builtin_expect(v > h->max, 0)) h->max = v;   /* a new maximum is rare: a branch, no store */
}

/* Lower bound of bucket i. */
static inline uint64_t kv_hist_low(int i) {
    if (i < KV_HIST_SUB) return (uint64_t)i;
    int shift = (i - KV_HIST_SUB) / KV_HIST_SUB;
    return (uint64_t)((i - KV_HIST_SUB) % KV_HIST_SUB + KV_HIST_SUB) << shift;
}

static inline void kv_hist_finish(kv_hist *h) {
    uint64_t n = 0;
    h->min = 0;
    for (int i = KV_HIST_BUCKETS - 1; i >= 0; i--) {
        if (!h->buckets[i]) continue;
        n += h->buckets[i];
        h->min = kv_hist_low(i);
    }
    h->count = n;
    if (h->min > h->max) h->min = h->max;
}

#endif
