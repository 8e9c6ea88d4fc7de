/* Log-linear latency histogram (HdrHistogram-like), in nanoseconds.
 * Values below 2^KV_HIST_SUB_BITS are exact; above, each power of two is split
 * into 2^KV_HIST_SUB_BITS linear buckets, so a bucket's midpoint is within
 * 1/2^(KV_HIST_SUB_BITS+1) = 0.39% of any value in it.  Histograms merge by adding counts.
 * kvlab/histogram.py mirrors the bucket arithmetic.
 */
#ifndef KV_HIST_H
#define KV_HIST_H

#include <stdint.h>

#define KV_HIST_SUB_BITS 7
#define KV_HIST_SUB (1 << KV_HIST_SUB_BITS)
#define KV_HIST_MAX_EXP 44              /* up to 2^44 ns = 4.9 hours */
#define KV_HIST_BUCKETS (KV_HIST_SUB + (KV_HIST_MAX_EXP - KV_HIST_SUB_BITS) * KV_HIST_SUB)

typedef struct kv_hist {
    uint64_t count;
    uint64_t min, max;
    double sum;
    uint64_t buckets[KV_HIST_BUCKETS];
} kv_hist;

static inline int kv_hist_index(uint64_t v) {
    if (v < KV_HIST_SUB) return (int)v;
    int e = 63 - __builtin_clzll(v);
    if (e >= KV_HIST_MAX_EXP) return KV_HIST_BUCKETS - 1;
    int shift = e - KV_HIST_SUB_BITS;
    return KV_HIST_SUB + shift * KV_HIST_SUB + (int)((v >> shift) - KV_HIST_SUB);
}

static inline void kv_hist_record(kv_hist *h, uint64_t v) {
    h->buckets[kv_hist_index(v)]++;
    if (h->count == 0 || v < h->min) h->min = v;
    if (v > h->max) h->max = v;
    h->count++;
    h->sum += (double)v;
}

#endif
