/* Key, value and random-number generation shared by the driver and the bare
 * C benchmark loop, so both make byte-identical engine calls.
 *
 * Key encoding (one for every engine, recorded in every result as
 * "decimal-zero-padded"): the key index in decimal, right-aligned and
 * zero-padded to key_size bytes, as LevelDB's db_bench "%016d" does for the
 * default 16-byte key.  Lexicographic order equals numeric order.
 *
 * Values: db_bench's compressible generator.  A buffer is built from 100-byte
 * pieces, each holding compression_ratio*100 random printable bytes repeated to
 * fill the piece (LevelDB's CompressibleString); values are consecutive slices.
 */
#ifndef KV_GEN_H
#define KV_GEN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KV_KEY_ENCODING "decimal-zero-padded"
#define KV_VALUE_BUFFER (1u << 20)
#define KV_KEY_MAX 1024             /* the longest key_size: the driver's key buffers hold one */

/* RNG streams: reads and writes draw from different sequences, so a readrandom
   after a fillrandom with the same seed samples independently of what was written. */
#define KV_STREAM_WRITE 1
#define KV_STREAM_READ 2
#define KV_STREAM_WRITER 3

typedef struct { uint64_t s[4]; } kv_rng;

static inline uint64_t kv_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Stream `stream` of thread `index` under run seed `seed`: independent of the engine. */
static inline void kv_rng_seed(kv_rng *r, uint64_t seed, uint64_t stream, uint64_t index) {
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull) ^ ((index + 1) * 0xABC98388FB8FAC03ull);
    for (int i = 0; i < 4; i++) r->s[i] = kv_splitmix64(&x);
}

static inline uint64_t kv_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** */
static inline uint64_t kv_rng_next(kv_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = kv_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = kv_rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n) without modulo bias worth measuring (Lemire's multiply-shift). */
static inline uint64_t kv_rng_below(kv_rng *r, uint64_t n) {
    return (uint64_t)(((unsigned __int128)kv_rng_next(r) * n) >> 64);
}

/* The key for `index`: its last key_size decimal digits, zero-padded.  The usual case (key_size >= 16,
   index < 10^16) converts the two 8-digit halves without a division by 10: each half is split into
   4-digit, then 2-digit, then 1-digit lanes by multiply-shifts that cannot carry between lanes.  On x86-64
   the two halves go through the steps together in one SSE2 register (~20 instructions for 16 digits);
   elsewhere each half is a 64-bit register's lanes (kv_digits8: two chains of ~28), against ~75 for four
   table look-ups of digit pairs and ~100 cycles for 16 dependent divisions by 10.  Output is
   byte-identical to the digit-at-a-time loop (tests/test_keys.py checks both paths). */
static inline __attribute__((always_inline)) uint64_t kv_digits8(uint32_t x) {  /* x < 10^8 -> 8 ASCII digits, first in the low byte */
    uint64_t v = (uint64_t)(x / 10000u) | ((uint64_t)(x % 10000u) << 32);      /* 4-digit lanes of 32 bits */
    uint64_t q = ((v * 10486u) >> 20) & 0x0000007F0000007Full;                 /* / 100 (exact below 43699) */
    v = q | ((v - q * 100u) << 16);                                              /* 2-digit lanes of 16 bits */
    q = ((v * 103u) >> 10) & 0x000F000F000F000Full;                             /* / 10 (exact below 179) */
    v = q | ((v - q * 10u) << 8);                                                /* 1-digit lanes of 8 bits */
    return v | 0x3030303030303030ull;
}

static inline __attribute__((always_inline)) void kv_digits16_swar(char *p, uint64_t index) {  /* index < 10^16 */
    uint64_t hi = kv_digits8((uint32_t)(index / 100000000u)), lo = kv_digits8((uint32_t)(index % 100000000u));
    memcpy(p, &hi, 8);
    memcpy(p + 8, &lo, 8);
}

#if defined(__SSE2__)
#include <emmintrin.h>
#define KV_HAVE_SSE2_DIGITS 1
/* The same lanes as kv_digits8, the two halves side by side: 64-bit lanes (high half first in memory),
   then 32-bit lanes of 4 digits, 16-bit lanes of 2, bytes of 1; each split a multiply-high and a
   multiply-subtract (all three divisors exact over their lanes' ranges: x/10000 = x*0xD1B71759 >> 45 for
   any 32-bit x, x/100 = x*5243 >> 19 below 10^4, x/10 = x*6554 >> 16 below 100). */
static inline __attribute__((always_inline)) void kv_digits16_sse2(char *p, uint64_t index) {  /* index < 10^16 */
    uint64_t hi = index / 100000000u;
    __m128i v = _mm_set_epi64x((long long)(index - hi * 100000000u), (long long)hi);
    __m128i q = _mm_srli_epi64(_mm_mul_epu32(v, _mm_set1_epi32((int)0xD1B71759)), 45);
    __m128i r = _mm_sub_epi32(v, _mm_mul_epu32(q, _mm_set1_epi32(10000)));
    v = _mm_or_si128(q, _mm_slli_epi64(r, 32));                                     /* 4 digits a 32-bit lane */
    q = _mm_srli_epi16(_mm_mulhi_epu16(v, _mm_set1_epi16(5243)), 3);
    v = _mm_or_si128(q, _mm_slli_epi32(_mm_sub_epi16(v, _mm_mullo_epi16(q, _mm_set1_epi16(100))), 16));  /* 2 a 16-bit lane */
    q = _mm_mulhi_epu16(v, _mm_set1_epi16(6554));
    v = _mm_or_si128(q, _mm_slli_epi16(_mm_sub_epi16(v, _mm_mullo_epi16(q, _mm_set1_epi16(10))), 8));     /* 1 a byte */
    _mm_storeu_si128((__m128i *)p, _mm_or_si128(v, _mm_set1_epi8('0')));
}
#else
#define KV_HAVE_SSE2_DIGITS 0
#endif

/* index < 10^16 -> 16 digits; `simd`: SSE2 where there is one (little-endian only, as kv_digits8). */
static inline __attribute__((always_inline)) void kv_digits16(char *p, uint64_t index, int simd) {
#if KV_HAVE_SSE2_DIGITS
    if (simd) { kv_digits16_sse2(p, index); return; }
#endif
    (void)simd;
    kv_digits16_swar(p, index);
}

/* `simd`: the SSE2 conversion where there is one (a constant in the hot loops); kv_make_key_portable
   takes the other path, so the tests check both on every machine. */
static inline __attribute__((always_inline)) void kv_make_key_on(char *buf, int key_size, uint64_t index, int simd) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (key_size >= 16 && index < 10000000000000000ull) {
        char *p = buf + key_size - 16;
        if (key_size > 16) memset(buf, '0', (size_t)(key_size - 16));
        kv_digits16(p, index, simd);
        return;
    }
#endif
    (void)simd;
    char *p = buf + key_size;
    while (p > buf) { *--p = (char)('0' + index % 10); index /= 10; }
}

static inline __attribute__((always_inline)) void kv_make_key(char *buf, int key_size, uint64_t index) {
    kv_make_key_on(buf, key_size, index, 1);
}

/* A 16-byte key of an index the caller knows is below KV_KEY16_LIMIT (10^16): kv_make_key without its
   range check. */
#define KV_KEY16_LIMIT 10000000000000000ull
static inline __attribute__((always_inline)) void kv_make_key16(char *buf, uint64_t index) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    kv_digits16(buf, index, 1);
#else
    kv_make_key(buf, 16, index);
#endif
}
static inline void kv_make_key_portable(char *buf, int key_size, uint64_t index) {
    kv_make_key_on(buf, key_size, index, 0);
}

/* Fill `buf` (len bytes) with db_bench-style compressible printable data. */
static inline void kv_fill_values(char *buf, size_t len, double compression_ratio, uint64_t seed) {
    kv_rng r;
    kv_rng_seed(&r, seed, 0x76616c756573ull /* "values" */, 0);
    int raw = (int)(compression_ratio * 100);
    if (raw < 1) raw = 1;
    if (raw > 100) raw = 100;
    for (size_t pos = 0; pos < len; pos += 100) {
        char piece[100];
        for (int i = 0; i < raw; i++) piece[i] = (char)(' ' + kv_rng_below(&r, 95));
        for (int i = raw; i < 100; i++) piece[i] = piece[i % raw];
        size_t n = len - pos < 100 ? len - pos : 100;
        memcpy(buf + pos, piece, n);
    }
}

/* Per-operation latency clock.  Where the kernel itself uses the TSC as its
   clocksource (so it is invariant and synchronised across cores), the driver
   reads it directly: 12 ns here against 27 ns for clock_gettime, which is most of
   the harness's cost on an LMDB read.  Ticks are converted to ns with a rate
   measured against CLOCK_MONOTONIC at the start of each run.  Elsewhere the
   driver uses CLOCK_MONOTONIC itself. */
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t kv_tsc(void) { return __rdtsc(); }
#define KV_HAVE_TSC 1
#else
static inline uint64_t kv_tsc(void) { return 0; }
#define KV_HAVE_TSC 0
#endif

static inline int64_t kv_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

#endif
