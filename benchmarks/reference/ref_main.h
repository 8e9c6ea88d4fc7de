/* The timed phases and main of a reference program: see ref_common.h.  Included last by each engine's .c, after
 * its eng_* functions, so the read loop inlines eng_get. */
typedef struct {
    const ref_args *a;
    int index;
    uint64_t ops, found;
    pthread_barrier_t *barrier;
} ref_worker;

static atomic_int ref_stop;

static void *ref_read_thread(void *p) {
    ref_worker *w = p;
    const ref_args *a = w->a;
    ref_reader r;
    eng_reader_open(&r);
    uint64_t rng = a->seed * 0x100000001b3ull + (uint64_t)w->index + 1, found = 0, ops = 0;
    char key[REF_KEY];
    pthread_barrier_wait(w->barrier);
    if (a->seconds > 0) {
        while (!atomic_load_explicit(&ref_stop, memory_order_relaxed)) {
            ref_key(key, ref_below(&rng, a->num));
            found += (uint64_t)eng_get(&r, key);
            ops++;
        }
    } else {
        for (; ops < a->reads; ops++) {
            ref_key(key, ref_below(&rng, a->num));
            found += (uint64_t)eng_get(&r, key);
        }
    }
    eng_reader_close(&r);
    w->ops = ops;
    w->found = found;
    return NULL;
}

static void ref_readrandom(const ref_args *a, const char *config) {
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, (unsigned)a->threads + 1);
    pthread_t tid[REF_MAX_THREADS];
    ref_worker w[REF_MAX_THREADS];
    atomic_store(&ref_stop, 0);
    for (int i = 0; i < a->threads; i++) {
        w[i] = (ref_worker){.a = a, .index = i, .barrier = &barrier};
        if (pthread_create(&tid[i], NULL, ref_read_thread, &w[i])) ref_die("pthread_create", "failed");
    }
    pthread_barrier_wait(&barrier);
    double t0 = ref_now();
    if (a->seconds > 0) {
        double end = t0 + a->seconds;
        for (double now = t0; now < end; now = ref_now()) {
            double left = end - now;
            struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
            nanosleep(&ts, NULL);
        }
        atomic_store(&ref_stop, 1);
    }
    uint64_t ops = 0, found = 0;
    for (int i = 0; i < a->threads; i++) {
        pthread_join(tid[i], NULL);
        ops += w[i].ops;
        found += w[i].found;
    }
    double secs = ref_now() - t0;
    pthread_barrier_destroy(&barrier);
    ref_print("readrandom", a->threads, ops, secs, found, config);
}

static void ref_usage(const char *argv0) {
    fprintf(stderr, "usage: %s DBDIR NUM READS_OR_SECONDS THREADS [--cache-size BYTES] [--variant V] "
                    "[--options S] [--phases fillseq,readrandom] [--seed N] [--map-size BYTES] "
                    "[--object NAME]\n", argv0);
    exit(2);
}

static ref_args ref_parse(int argc, char **argv) {
    if (argc < 5) ref_usage(argv[0]);
    ref_args a = {.dir = argv[1], .num = strtoull(argv[2], NULL, 10), .threads = atoi(argv[4]),
                  .seed = 1, .fill = 1, .read = 1, .variant = "", .options = "", .object = "ref"};
    size_t n = strlen(argv[3]);
    if (n && argv[3][n - 1] == 's') a.seconds = atof(argv[3]);
    else a.reads = strtoull(argv[3], NULL, 10);
    for (int i = 5; i < argc; i++) {
        if (i + 1 >= argc) ref_usage(argv[0]);
        const char *opt = argv[i], *val = argv[++i];
        if (!strcmp(opt, "--cache-size")) a.cache_size = strtoull(val, NULL, 10);
        else if (!strcmp(opt, "--variant")) a.variant = val;
        else if (!strcmp(opt, "--options")) a.options = val;
        else if (!strcmp(opt, "--seed")) a.seed = strtoull(val, NULL, 10);
        else if (!strcmp(opt, "--map-size")) a.map_size = strtoull(val, NULL, 10);
        else if (!strcmp(opt, "--object")) a.object = val;
        else if (!strcmp(opt, "--phases")) {
            a.fill = strstr(val, "fillseq") != NULL;
            a.read = strstr(val, "readrandom") != NULL;
        } else ref_usage(argv[0]);
    }
    if (a.num == 0 || a.num > 10000000000000000ull) ref_die("NUM", "must be 1 to 10^16");
    if (a.threads < 1 || a.threads > REF_MAX_THREADS) ref_die("THREADS", "must be 1 to 64");
    return a;
}

int main(int argc, char **argv) {
    ref_args a = ref_parse(argc, argv);
    char config[2048] = "";
    eng_open(&a, config, sizeof config);
    if (a.fill) {
        char value[REF_VALUE];   /* half random printable bytes, half a repeat of them (compressible to ~50%) */
        uint64_t s = a.seed;
        for (int i = 0; i < REF_VALUE / 2; i++) value[i] = (char)(' ' + ref_below(&s, 95));
        memcpy(value + REF_VALUE / 2, value, REF_VALUE / 2);
        double t0 = ref_now();
        eng_fill(&a, value);
        double secs = ref_now() - t0;
        ref_print("fillseq", 1, a.num, secs, 0, config);
    }
    if (a.read) ref_readrandom(&a, config);
    eng_close();
    return 0;
}
