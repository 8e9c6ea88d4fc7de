/* The reference for kvlab's harness cost: a bare C loop making the same engine
 * calls as kvlab's driver (same adapters, same keys, same values, same RNG
 * streams), with no per-op timing, histograms or progress counters.
 *
 *   bare_loop ENGINE VARIANT DBDIR WORKLOADS NUM READS THREADS SEED [VALUE_SIZE]
 *
 * WORKLOADS is fillseq, readrandom or fillseq,readrandom (run in order on one open db, as kvlab does).
 * Prints one JSON line per workload: {"workload":..., "ops":..., "seconds":..., "ops_per_sec":..., "found":...}.
 * Wall time runs from the moment all threads are released to the last join, as in kvlab.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_engine.h"
#include "kv_gen.h"

typedef struct {
    const kv_engine_ops *e;
    kv_db *db;
    int index, threads, readrandom, value_size;
    uint64_t num, reads, seed, ops, found;
    const char *values;
    size_t values_len;
    pthread_barrier_t *barrier;
} arg_t;

static void *run(void *p) {
    arg_t *a = p;
    kv_thread *t;
    kv_failure err;
    char key[16];
    if (a->e->thread_open(a->db, &t, &err)) { fprintf(stderr, "%s\n", err.msg); exit(1); }
    kv_rng rng;
    kv_rng_seed(&rng, a->seed, a->readrandom ? KV_STREAM_READ : KV_STREAM_WRITE, (uint64_t)a->index);
    size_t vpos = ((size_t)a->index * 7919u * (size_t)a->value_size) % (a->values_len - a->value_size);
    uint64_t first = a->num * (uint64_t)a->index / (uint64_t)a->threads;
    uint64_t share = a->num * (uint64_t)(a->index + 1) / (uint64_t)a->threads - first;
    pthread_barrier_wait(a->barrier);
    if (a->readrandom) {
        const char *v;
        size_t vl;
        for (uint64_t i = 0; i < a->reads; i++) {
            kv_make_key16(key, kv_rng_below(&rng, a->num));   /* num <= 10^16 (main): no range check, as kvlab's loop */
            int rc = a->e->get(t, key, 16, &v, &vl);
            if (rc == KV_OK) a->found++;
            else if (rc != KV_NOTFOUND) { fprintf(stderr, "%s\n", kv_thread_errmsg(t)); exit(1); }
        }
        a->ops = a->reads;
    } else {
        for (uint64_t i = 0; i < share; i++) {
            kv_make_key(key, 16, (first + i) % a->num);
            if (vpos + a->value_size > a->values_len) vpos = 0;
            if (a->e->put(t, key, 16, a->values + vpos, a->value_size) < 0) {
                fprintf(stderr, "%s\n", kv_thread_errmsg(t));
                exit(1);
            }
            vpos += a->value_size;
        }
        a->ops = share;
    }
    a->e->thread_close(t);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: %s ENGINE VARIANT DBDIR fillseq|readrandom NUM READS THREADS SEED [VALUE_SIZE]\n", argv[0]);
        return 2;
    }
    const kv_engine_ops *e = NULL;
    for (int i = 0; kv_engines[i]; i++)
        if (!strcmp(kv_engines[i]->name, argv[1])) e = kv_engines[i];
    if (!e) { fprintf(stderr, "engine %s not built\n", argv[1]); return 2; }
    int threads = atoi(argv[7]);
    int value_size = argc > 9 ? atoi(argv[9]) : 100;
    kv_config cfg = {0};
    cfg.variant = strcmp(argv[2], "-") ? argv[2] : NULL;
    cfg.create = 1;
    cfg.max_threads = threads + 2;
    if (getenv("KV_MAP_SIZE")) cfg.map_size = strtoull(getenv("KV_MAP_SIZE"), NULL, 10);  /* e.g. under valgrind */
    kv_failure err;
    kv_db *db;
    if (e->open(argv[3], &cfg, &db, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    size_t vlen = KV_VALUE_BUFFER;
    char *values = malloc(vlen);
    uint64_t seed = strtoull(argv[8], NULL, 10);
    if (strtoull(argv[5], NULL, 10) > KV_KEY16_LIMIT) { fprintf(stderr, "NUM must be at most 10^16\n"); return 2; }
    kv_fill_values(values, vlen, 0.5, seed);
    char *list = strdup(argv[4]), *save = NULL;
    for (char *wl = strtok_r(list, ",", &save); wl; wl = strtok_r(NULL, ",", &save)) {
        pthread_barrier_t barrier;
        pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
        pthread_t tid[256];
        arg_t args[256];
        for (int i = 0; i < threads; i++) {
            args[i] = (arg_t){.e = e, .db = db, .index = i, .threads = threads,
                              .readrandom = !strcmp(wl, "readrandom"), .value_size = value_size,
                              .num = strtoull(argv[5], NULL, 10), .reads = strtoull(argv[6], NULL, 10),
                              .seed = seed, .values = values, .values_len = vlen, .barrier = &barrier};
            pthread_create(&tid[i], NULL, run, &args[i]);
        }
        pthread_barrier_wait(&barrier);
        int64_t t0 = kv_now_ns();
        uint64_t ops = 0, found = 0;
        for (int i = 0; i < threads; i++) {
            pthread_join(tid[i], NULL);
            ops += args[i].ops;
            found += args[i].found;
        }
        double secs = (kv_now_ns() - t0) / 1e9;
        printf("{\"workload\": \"%s\", \"ops\": %llu, \"seconds\": %.6f, \"ops_per_sec\": %.1f, \"found\": %llu}\n",
               wl, (unsigned long long)ops, secs, ops / secs, (unsigned long long)found);
        pthread_barrier_destroy(&barrier);
    }
    free(list);
    e->close(db, &err);
    free(values);
    return 0;
}
