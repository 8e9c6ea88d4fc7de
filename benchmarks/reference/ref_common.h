/* The engine-independent part of the reference programs (benchmarks/reference/<engine>.c, with ref_main.h):
 * arguments, keys, values, JSON lines.  Nothing here is kvlab's: it includes no kvlab header, and each
 * engine's own path (open, fill, get) is written in its .c file from that engine's documentation.
 *
 * An engine file defines REF_ENGINE (its name, for the JSON lines), includes this header, then defines the
 * following and includes ref_main.h (the timed loop and main, which call them: the get is inlined into the loop):
 *   typedef ... ref_reader;    one reading thread's state (a txn, a session and cursor, read options)
 *   static void eng_open(const ref_args *a, char *config, size_t len);   opens; writes its configuration
 *   static void eng_close(void);
 *   static void eng_fill(const ref_args *a, const char *value);  fillseq: keys 0..num-1, batches of REF_BATCH
 *   static void eng_reader_open(ref_reader *r);
 *   static void eng_reader_close(ref_reader *r);
 *   static inline int eng_get(ref_reader *r, const char *key);   1: found, 0: not found; exits on an error
 *
 *   ref_<engine> DBDIR NUM READS_OR_SECONDS THREADS [--cache-size BYTES] [--variant V] [--options S]
 *                [--phases fillseq,readrandom] [--seed N] [--map-size BYTES] [--object NAME]
 *
 * READS_OR_SECONDS: a count (reads per thread) or a duration with an "s" suffix ("5s", "0.5s").  Each phase
 * prints {"workload", "ops", "seconds", "ops_per_sec", "found"} (plus "engine", "threads", "config").  The wall
 * time of readrandom runs from the release of all threads (a barrier) to the last join.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REF_BATCH 1000      /* puts per batch or transaction in fillseq, as kvlab's batched load */
#define REF_KEY 16          /* key bytes: the index, zero-padded decimal */
#define REF_VALUE 100       /* value bytes */
#define REF_MAX_THREADS 64

typedef struct {
    const char *dir;
    uint64_t num, reads, seed, cache_size, map_size;   /* map_size: LMDB's (0: 64 GiB) */
    double seconds;         /* > 0: readrandom runs for this long instead of `reads` per thread */
    int threads, fill, read;
    const char *variant, *options;
    const char *object;     /* WiredTiger's object and Berkeley DB's file: "ref" ("kvlab": read kvlab's) */
} ref_args;

static void ref_die(const char *what, const char *msg) {
    fprintf(stderr, "ref_%s: %s: %s\n", REF_ENGINE, what, msg ? msg : "(no message)");
    exit(1);
}

static double ref_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 16 decimal digits of i (i < 10^16), two at a time from a table. */
static const char ref_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline void ref_digits4(char *out, uint32_t v) {
    memcpy(out, ref_pairs + 2 * (v / 100), 2);
    memcpy(out + 2, ref_pairs + 2 * (v % 100), 2);
}

static inline void ref_key(char *out, uint64_t i) {
    uint32_t hi = (uint32_t)(i / 100000000u), lo = (uint32_t)(i % 100000000u);
    ref_digits4(out, hi / 10000);
    ref_digits4(out + 4, hi % 10000);
    ref_digits4(out + 8, lo / 10000);
    ref_digits4(out + 12, lo % 10000);
}

/* splitmix64, and a uniform draw below n by multiply-high (Lemire) */
static inline uint64_t ref_rand(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t ref_below(uint64_t *s, uint64_t n) {
    return (uint64_t)(((unsigned __int128)ref_rand(s) * n) >> 64);
}

static void ref_print(const char *workload, int threads, uint64_t ops, double secs, uint64_t found,
                      const char *config) {
    printf("{\"engine\": \"%s\", \"workload\": \"%s\", \"threads\": %d, \"ops\": %llu, \"seconds\": %.6f, "
           "\"ops_per_sec\": %.1f, \"found\": %llu, \"config\": \"", REF_ENGINE, workload, threads,
           (unsigned long long)ops, secs, secs > 0 ? (double)ops / secs : 0.0, (unsigned long long)found);
    for (const char *c = config; *c; c++) {   /* JSON string escapes for what a config may hold */
        if (*c == '"' || *c == '\\') putchar('\\');
        putchar(*c);
    }
    printf("\"}\n");
    fflush(stdout);
}

