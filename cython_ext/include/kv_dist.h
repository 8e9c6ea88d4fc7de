/* Key distributions: which key index an operation touches.
 *
 * One kv_dist per thread (it carries the thread's cursor and the zeta sum it has grown to), drawn
 * from the thread's own kv_rng, so nothing is shared in the hot loop and the same seed gives the
 * same stream on every engine.  `count` is the number of keys the thread sees now ([0, count)),
 * which inserts grow.  The same code serves the driver's loops and kvlab.keys(), so a notebook
 * plots exactly the stream a run will use.
 *
 * Meanings follow YCSB 0.17.0's generators (site.ycsb.generator), which users compare against:
 *   uniform        every key alike
 *   zipfian        YCSB's ScrambledZipfianGenerator, what `requestdistribution=zipfian` draws: Gray et
 *                  al.'s zipfian over 10^10 + 1 items (zeta 26.46902820178302 at constant 0.99), each
 *                  item hashed with FNV-1a-64 onto a key space of `modulus` keys; a draw at or past
 *                  `count` is drawn again (CoreWorkload sizes the modulus for the inserts it expects)
 *   zipfian-plain  a zipfian over exactly the current keys, rank r+1 at key r, any constant: sampled
 *                  by rejection-inversion (Hoermann and Derflinger 1996), exact for every rank
 *   latest         YCSB's SkewedLatestGenerator: the newest key is the most popular (Gray's zipfian
 *                  over recency, its zeta grown as keys are inserted)
 *   hotspot        a hot fraction of the keys (the lowest indices) gets a given fraction of the ops
 *   sequential     key after key, wrapping; each thread starts at its share of the key space
 *   exponential    YCSB's ExponentialGenerator counted back from the newest key: `percentile` percent of
 *                  the draws fall in the newest `frac` of the keys
 *   two-term-exp   Meta's mixgraph (Cao et al., FAST 2020; db_bench's GenerateTwoTermExpKeys): the keys split
 *                  into equal key ranges whose shares follow a*exp(b*x) + c*exp(d*x), placed in a shuffled
 *                  order (the table of cumulative shares is made by kvlab.model, shared read-only by the
 *                  threads); within a range a rank drawn from the power law P(rank <= s) = key_a * s^key_b,
 *                  hashed onto the range's keys (uniform within the range when key_a or key_b is 0)
 *
 * And the sizes mixgraph draws (value sizes, scan lengths): a generalized Pareto (kv_pareto_size).
 */
#ifndef KV_DIST_H
#define KV_DIST_H

#include <math.h>
#include <stdint.h>
#include "kv_gen.h"

/* The distributions above, X(id, name as kvlab.model.workloads.distributions writes it). */
#define KV_DISTS(X)                                                                                   \
    X(UNIFORM, "uniform") X(ZIPFIAN, "zipfian") X(ZIPFIAN_PLAIN, "zipfian-plain") X(LATEST, "latest")  \
    X(HOTSPOT, "hotspot") X(SEQUENTIAL, "sequential") X(EXPONENTIAL, "exponential")                 \
    X(TWO_TERM_EXP, "two-term-exp")

enum kv_dist_kind {
#define KV_DIST_ENUM(id, name) KV_DIST_##id,
    KV_DISTS(KV_DIST_ENUM)
#undef KV_DIST_ENUM
    KV_DIST__COUNT
};

#define KV_YCSB_ITEM_COUNT 10000000000ull        /* ScrambledZipfianGenerator.ITEM_COUNT (0.17.0) */
#define KV_YCSB_ZETAN 26.46902820178302           /* its zeta for that count at constant 0.99 */

typedef struct { uint64_t m, mul; int sh1, sh2; } kv_divisor;   /* see kv_mod */

typedef struct {
    int kind;
    double theta;           /* zipfian constant */
    /* Gray et al.'s zipfian (YCSB's ZipfianGenerator): zipfian, latest */
    double items, zetan, eta, alpha, zeta2, half_pow_theta;
    int int_alpha;          /* alpha when it is a whole number (100 at constant 0.99), else 0 */
    uint64_t count_for_zeta;
    uint64_t modulus;       /* zipfian: keys the hash is taken modulo */
    kv_divisor mod;         /* modulus, for kv_mod */
    /* rejection-inversion: zipfian-plain */
    uint64_t plain_n;
    double h_x1, h_n, s;
    /* hotspot */
    double hot_fraction, hot_ops;
    /* exponential */
    double gamma;
    uint64_t cursor;        /* sequential */
    /* two-term-exp: the key ranges' cumulative shares, in key order (the last is 1), and the power law */
    const double *range_cum;
    int nranges;
    double key_a, key_b;
} kv_dist;

static inline double kv_unit(kv_rng *r) { return (double)(kv_rng_next(r) >> 11) * 0x1.0p-53; }

/* sum_{i=1..n} i^-theta: exact for the first terms, Euler-Maclaurin for the tail (relative error
   under 1e-14), so a zipfian over billions of keys is set up in microseconds. */
static inline double kv_zeta(uint64_t n, double theta) {
    const uint64_t m = 4096;
    double sum = 0;
    uint64_t head = n < m ? n : m - 1;
    for (uint64_t i = 1; i <= head; i++) sum += pow((double)i, -theta);
    if (n < m) return sum;
    double a = (double)m, b = (double)n;
    double integral = fabs(theta - 1.0) < 1e-12 ? log(b / a) : (pow(b, 1 - theta) - pow(a, 1 - theta)) / (1 - theta);
    double f_a = pow(a, -theta), f_b = pow(b, -theta);
    double d1 = -theta * (pow(b, -theta - 1) - pow(a, -theta - 1));                              /* f'(b)-f'(a) */
    double d3 = -theta * (theta + 1) * (theta + 2) * (pow(b, -theta - 3) - pow(a, -theta - 3));  /* f''' */
    return sum + integral + (f_a + f_b) / 2 + d1 / 12 - d3 / 720;
}

/* Gray et al.'s zipfian over `items` items (YCSB's ZipfianGenerator(0, items-1) with a given zeta). */
static inline void kv_gray_init(kv_dist *d, double items, double theta, double zetan) {
    d->items = items;
    d->theta = theta;
    d->zeta2 = 1.0 + pow(2.0, -theta);
    d->alpha = 1.0 / (1.0 - theta);
    d->zetan = zetan;
    d->half_pow_theta = pow(0.5, theta);
    d->eta = (1 - pow(2.0 / items, 1 - theta)) / (1 - d->zeta2 / zetan);
    double whole = floor(d->alpha + 0.5);
    d->int_alpha = fabs(d->alpha - whole) < 1e-9 && whole >= 1 && whole <= 1024 ? (int)whole : 0;
}

/* b^n by squaring: 8 multiplies for n = 100 against ~24 ns for pow() here (relative difference
   ~1e-15, far below what moves the integer Gray's formula takes from it). */
static inline double kv_ipow(double b, int n) {
    if (__builtin_expect(n == 100, 1)) {  /* YCSB's constant 0.99: b^64 * (b^32 * b^4), straight-line: seven multiplies deep */
        double b2 = b * b, b4 = b2 * b2, b8 = b4 * b4, b16 = b8 * b8, b32 = b16 * b16, b64 = b32 * b32;
        return b64 * (b32 * b4);
    }
    double r = 1.0;
    for (;;) {
        if (n & 1) r *= b;
        n >>= 1;
        if (!n) return r;
        b *= b;
    }
}

/* Gray's draw over `itemcount` items, zeta as it stands. */
static inline __attribute__((always_inline)) uint64_t kv_gray_draw(const kv_dist *d, kv_rng *r, uint64_t itemcount) {
    double u = kv_unit(r), uz = u * d->zetan;
    if (uz < 1.0) return 0;
    if (uz < 1.0 + d->half_pow_theta) return 1;
    double base = d->eta * u - d->eta + 1;
    /* item counts are below 2^63: the signed conversions, one instruction each, are exact */
    return (uint64_t)(int64_t)((double)(int64_t)itemcount * (__builtin_expect(d->int_alpha != 0, 1) ? kv_ipow(base, d->int_alpha) : pow(base, d->alpha)));
}

/* YCSB's nextLong(itemcount): a larger itemcount grows zeta incrementally; eta keeps using the
   item count the generator was made with, as YCSB's does. */
static inline uint64_t kv_gray_next(kv_dist *d, kv_rng *r, uint64_t itemcount) {
    if (itemcount > d->count_for_zeta) {
        for (uint64_t i = d->count_for_zeta; i < itemcount; i++) d->zetan += pow((double)(i + 1), -d->theta);
        d->count_for_zeta = itemcount;
        d->eta = (1 - pow(2.0 / d->items, 1 - d->theta)) / (1 - d->zeta2 / d->zetan);
    }
    return kv_gray_draw(d, r, itemcount);
}

/* FNV-1a-64 (YCSB's Utils.fnvhash64) of v's eight bytes, low byte first, when v has at most `nbytes`
   nonzero low bytes (nbytes a constant): the step of a zero byte is a multiply by the prime alone, so the
   zero bytes above are one multiply by a power of the prime; each written byte is an xor and a multiply
   on the chain. */
#define KV_FNV_PRIME 1099511628211ull
static inline __attribute__((always_inline)) uint64_t kv_fnv_low(uint64_t v, int nbytes) {
    uint64_t h = 0xCBF29CE484222325ull, rest = 1;
#pragma GCC unroll 8
    for (int i = 0; i < nbytes; i++) h = (h ^ ((v >> (8 * i)) & 0xff)) * KV_FNV_PRIME;
#pragma GCC unroll 8
    for (int i = nbytes; i < 8; i++) rest *= KV_FNV_PRIME;   /* folded at compile time */
    return h * rest;
}

/* Math.abs of a hash (Long.MIN_VALUE, one input in 2^64, is taken as 2^63), branch-free: the sign is a
   coin toss, a branch on it mispredicts half the time. */
static inline __attribute__((always_inline)) uint64_t kv_abs64(uint64_t h) {
    uint64_t sign = (uint64_t)((int64_t)h >> 63);
    return (h ^ sign) - sign;
}

/* YCSB's Utils.fnvhash64, then Math.abs.  Items below 2^40 (YCSB's are below 2^34) take five bytes: a
   branch that is always taken for YCSB's zipfian, where a test for fewer bytes would go either way. */
static inline __attribute__((always_inline)) uint64_t kv_fnv_abs(uint64_t v) {
    return kv_abs64(__builtin_expect(v >> 40 == 0, 1) ? kv_fnv_low(v, 5) : kv_fnv_low(v, 8));
}

/* YCSB's hashed insert order (CoreWorkload.buildKeyName: fnvhash64 of the record number), kept to 16
   decimal digits so it is a 16-byte key.  Record numbers below 2^24 (key spaces up to 16 M) take three
   bytes; a key space is mostly on one side of that line, so the branch is predicted. */
static inline __attribute__((always_inline)) uint64_t kv_key_hash(uint64_t record) {
    uint64_t h = record >> 24 == 0 ? kv_fnv_low(record, 3) : record >> 40 == 0 ? kv_fnv_low(record, 5) : kv_fnv_low(record, 8);
    return kv_abs64(h) % 10000000000000000ull;
}

/* h % m, exactly, without a 64-bit division (~40 cycles): Granlund and Montgomery's division by an
   invariant integer (1994, fig. 4.1), a multiply-high, two shifts and an add for the quotient, exact for
   every h and m >= 1. */
static inline void kv_divisor_init(kv_divisor *dv, uint64_t m) {
    int l = 0;
    while (l < 64 && ((unsigned __int128)1 << l) < m) l++;          /* ceil(log2 m) */
    dv->m = m;
    dv->mul = (uint64_t)((((unsigned __int128)1 << 64) * ((((unsigned __int128)1) << l) - m)) / m) + 1;
    dv->sh1 = l < 1 ? l : 1;
    dv->sh2 = l > 1 ? l - 1 : 0;
}
static inline __attribute__((always_inline)) uint64_t kv_mod(uint64_t h, const kv_divisor *dv) {
    uint64_t t = (uint64_t)(((unsigned __int128)dv->mul * h) >> 64);
    uint64_t q = (t + ((h - t) >> dv->sh1)) >> dv->sh2;
    return h - q * dv->m;
}

/* Rejection-inversion for P(k) ~ k^-s, k in 1..n (Hoermann and Derflinger). H is an antiderivative of
   h(x) = x^-s written with expm1/log1p so it is accurate for s near 1. */
static inline double kv_ri_h(double x, double s) { return exp(-s * log(x)); }
static inline double kv_ri_expm1_over(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x / 2 * (1 + x / 3); }
static inline double kv_ri_log1p_over(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x / 3); }
static inline double kv_ri_H(double x, double s) { double lx = log(x); return kv_ri_expm1_over((1 - s) * lx) * lx; }
static inline double kv_ri_Hinv(double x, double s) {
    double t = x * (1 - s);
    if (t < -1) t = -1;
    return exp(kv_ri_log1p_over(t) * x);
}
static inline void kv_ri_init(kv_dist *d, uint64_t n) {
    double s = d->theta;
    d->plain_n = n;
    d->h_x1 = kv_ri_H(1.5, s) - 1.0;
    d->h_n = kv_ri_H((double)n + 0.5, s);
    d->s = 2 - kv_ri_Hinv(kv_ri_H(2.5, s) - kv_ri_h(2, s), s);
}
static inline uint64_t kv_ri_next(kv_dist *d, kv_rng *r, uint64_t n) {
    if (n != d->plain_n) kv_ri_init(d, n);
    double s = d->theta;
    for (;;) {
        double u = d->h_n + kv_unit(r) * (d->h_x1 - d->h_n);
        double x = kv_ri_Hinv(u, s);
        double kd = floor(x + 0.5);
        if (kd < 1) kd = 1;
        else if (kd > (double)n) kd = (double)n;
        if (kd - x <= d->s || u >= kv_ri_H(kd + 0.5, s) - kv_ri_h(kd, s)) return (uint64_t)kd - 1;
    }
}

/* Parameters as kvlab.model validates them; `count` is the key count at the start, `modulus` the
   zipfian's hash range (0: count + 1, as CoreWorkload gives a run with no inserts), `thread` and
   `threads` place the sequential cursor. */
static inline void kv_dist_init(kv_dist *d, int kind, uint64_t count, double theta, uint64_t modulus,
                                double hot_fraction, double hot_ops, double exp_percentile, double exp_frac,
                                int thread, int threads) {
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->theta = theta;
    if (count < 1) count = 1;
    switch (kind) {
    case KV_DIST_ZIPFIAN: {
        double items = (double)KV_YCSB_ITEM_COUNT + 1;   /* ZipfianGenerator(0, ITEM_COUNT) */
        double zetan = theta == 0.99 ? KV_YCSB_ZETAN : kv_zeta(KV_YCSB_ITEM_COUNT + 1, theta);
        kv_gray_init(d, items, theta, zetan);
        d->count_for_zeta = KV_YCSB_ITEM_COUNT + 1;
        d->modulus = modulus ? modulus : count + 1;
        kv_divisor_init(&d->mod, d->modulus);
        break;
    }
    case KV_DIST_LATEST: {
        uint64_t items = count > 1 ? count - 1 : 1;       /* ZipfianGenerator(lastValue) */
        kv_gray_init(d, (double)items, theta, kv_zeta(items, theta));
        d->count_for_zeta = items;
        break;
    }
    case KV_DIST_ZIPFIAN_PLAIN: kv_ri_init(d, count); break;
    case KV_DIST_HOTSPOT: d->hot_fraction = hot_fraction; d->hot_ops = hot_ops; break;
    case KV_DIST_EXPONENTIAL: d->gamma = -log(1.0 - exp_percentile / 100.0) / ((double)count * exp_frac); break;
    case KV_DIST_SEQUENTIAL: d->cursor = threads > 0 ? count * (uint64_t)thread / (uint64_t)threads : 0; break;
    }
}

/* two-term-exp's table (not copied: the caller keeps it alive for the generator's life) and power law. */
static inline void kv_dist_key_ranges(kv_dist *d, const double *range_cum, int nranges, double key_a, double key_b) {
    d->range_cum = range_cum;
    d->nranges = nranges;
    d->key_a = key_a;
    d->key_b = key_b;
}

/* A key range by its share (binary search of the cumulative shares), then a key within it: a rank from the
   power law (db_bench's PowerCdfInversion: ceil((u / a)^(1 / b))), hashed onto the range's keys as db_bench
   seeds a generator with it (kvlab hashes with FNV-1a, so which key gets which rank differs, the ranks'
   distribution does not).  The ranges are count / nranges keys each (at least one). */
static inline uint64_t kv_two_term_next(const kv_dist *d, kv_rng *r, uint64_t count) {
    int lo = 0, hi = d->nranges - 1;
    if (hi > 0) {
        double u = kv_unit(r);
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (u < d->range_cum[mid]) hi = mid;
            else lo = mid + 1;
        }
    }
    uint64_t size = count / (uint64_t)(d->nranges > 0 ? d->nranges : 1);
    if (size < 1) size = 1;
    uint64_t offset;
    if (d->key_a > 0 && d->key_b > 0) {
        double rank = ceil(pow(kv_unit(r) / d->key_a, 1.0 / d->key_b));
        offset = kv_fnv_abs(rank < 1.8e19 ? (uint64_t)rank : UINT64_MAX) % size;
    } else {
        offset = kv_rng_below(r, size);
    }
    uint64_t k = (uint64_t)lo * size + offset;
    return k < count ? k : k % count;
}

/* A generalized Pareto draw by inversion (db_bench's ParetoCdfInversion), rounded up: theta + sigma * (u^-k -
   1) / k, or theta - sigma * ln u when k is 0; u uniform in (0, 1]. */
static inline double kv_pareto(kv_rng *r, double k, double sigma, double theta) {
    double u = 1.0 - kv_unit(r);
    double x = k == 0.0 ? theta - sigma * log(u) : theta + sigma * (pow(u, -k) - 1.0) / k;
    return ceil(x);
}

/* A size from the Pareto as db_bench's mixgraph bounds it: below 0 it is 0, past `max` it wraps (modulo
   max, db_bench's rule for value sizes and scan lengths); then at least `least`. */
static inline uint64_t kv_pareto_size(kv_rng *r, double k, double sigma, double theta, uint64_t max, uint64_t least) {
    double x = kv_pareto(r, k, sigma, theta);
    uint64_t v = x <= 0 ? 0 : x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
    if (max > 0 && v > max) v %= max;
    return v < least ? least : v;
}

/* YCSB's scrambled zipfian: its item count is fixed, so zeta never grows. */
static inline __attribute__((always_inline)) uint64_t kv_dist_zipfian(const kv_dist *d, kv_rng *r, uint64_t count) {
    uint64_t k;
    if (count < 1) count = 1;   /* as kv_dist_next: the redraw below would never end */
    do k = kv_mod(kv_fnv_abs(kv_gray_draw(d, r, d->count_for_zeta)), &d->mod);
    while (k >= count);
    return k;
}

/* The next key index in [0, count). */
static inline uint64_t kv_dist_next(kv_dist *d, kv_rng *r, uint64_t count) {
    if (count < 1) count = 1;
    switch (d->kind) {
    case KV_DIST_ZIPFIAN: return kv_dist_zipfian(d, r, count);
    case KV_DIST_ZIPFIAN_PLAIN: return kv_ri_next(d, r, count);
    case KV_DIST_LATEST: {
        uint64_t last = count - 1;                          /* the newest key */
        uint64_t z = kv_gray_next(d, r, last > 0 ? last : 1);
        return z > last ? 0 : last - z;
    }
    case KV_DIST_HOTSPOT: {
        uint64_t hot = (uint64_t)((double)count * d->hot_fraction);
        if (hot > count) hot = count;
        if (hot && (hot == count || kv_unit(r) < d->hot_ops)) return kv_rng_below(r, hot);
        return hot + kv_rng_below(r, count - hot);
    }
    case KV_DIST_SEQUENTIAL: { uint64_t k = d->cursor++ % count; return k; }
    case KV_DIST_EXPONENTIAL:
        for (;;) {
            double back = -log(kv_unit(r)) / d->gamma;
            if (back < (double)count) return count - 1 - (uint64_t)back;
        }
    case KV_DIST_TWO_TERM_EXP: return kv_two_term_next(d, r, count);
    default: return kv_rng_below(r, count);
    }
}

/* n draws into out: the kind resolved once, as the driver's one-op loop does (kvlab.keys). */
static inline void kv_dist_fill(kv_dist *d, kv_rng *r, uint64_t count, uint64_t *out, uint64_t n) {
    if (d->kind == KV_DIST_ZIPFIAN)
        for (uint64_t i = 0; i < n; i++) out[i] = kv_dist_zipfian(d, r, count);
    else
        for (uint64_t i = 0; i < n; i++) out[i] = kv_dist_next(d, r, count);
}

#endif
