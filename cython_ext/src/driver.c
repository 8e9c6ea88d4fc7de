/* The driver's threads: kv_run_execute starts one thread per worker (plus readwhilewriting's writer),
 * each opens its engine context, all wait at the start gate and go together, run their loop
 * (loops_dbbench.c, loop_mix.c, loop_crash.c) and finish their own histograms and CPU counts.
 * Each thread owns its engine context, RNG, key buffer and histograms; nothing is shared in the hot
 * loop but the read-only value buffer and `until` (deadline and stop in one word).  Time comes from
 * the latency clock (loop.h), read once per operation (the end of one op is the start of the next).
 */
#include "loop.h"

typedef struct worker_arg {
    kv_run *run;
    int index;
} worker_arg;

int kv_run_thread_count(const kv_run_params *p) {
    return p->threads + (p->workload == KV_W_READWHILEWRITING ? 1 : 0);
}

/* A thread's context before the gate: its engine context (an error is recorded and stops the run),
   its generator (the write stream for a loop that writes: kv_workload_table), its histograms, the op
   type its progress counts, where it starts in the value buffer.  Returns the engine's code. */
static int worker_open(ctx *c, kv_run *run, int index, int writer) {
    const kv_run_params *p = &run->p;
    const kv_workload_info *w = &kv_workload_table[p->workload];
    memset(c, 0, sizeof *c);
    c->run = run;
    c->res = &run->results[index];
    c->res->role = writer ? KV_ROLE_WRITER : KV_ROLE_WORKER;
    /* into a local first, as before kv_failure: the worker's frame, so where the engine's frames sit on the
       thread's stack, stays the size it was (glibc's memcmp costs a few instructions more or less with the
       stack's offset in its page: benchmarks/harness_instructions.py would read that as harness cost) */
    kv_failure err = {0};
    int rc = run->ops->thread_open(run->db, &c->t, &err);
    if (rc) {
        c->res->rc = rc;
        c->res->err = err;
        kv_run_request_stop(run);
    }
    kv_rng_seed(&c->rng, p->seed, writer ? KV_STREAM_WRITER : w->writes ? KV_STREAM_WRITE : KV_STREAM_READ, index);
    for (int j = 0; j < KV_NOPTYPES; j++) kv_hist_init(&c->res->hist[j]);
    c->res->optype = writer ? KV_OP_WRITE : w->optype;
    c->value_pos = ((size_t)index * 7919u * (size_t)p->value_size) % (run->values_len - p->value_size);
    if (!rc) rc = kv_trace_thread_open(c, index);
    return rc;
}

/* All threads open their contexts first, then start together (kv_run_execute opens the gate). */
static void gate_wait(kv_run *run) {
    pthread_mutex_lock(&run->gate);
    run->ready++;
    pthread_cond_broadcast(&run->gate_cond);
    while (!run->go) pthread_cond_wait(&run->gate_cond, &run->gate);
    pthread_mutex_unlock(&run->gate);
}

/* The thread's loop; write loops take this thread's share [first, first + share) of the key space. */
static void run_loop(ctx *c, int index, int writer) {
    const kv_run_params *p = &c->run->p;
    uint64_t base = p->workload == KV_W_FILLSEQ || p->workload == KV_W_BULKLOAD ? p->first_key : 0;
    uint64_t span = p->num > base ? p->num - base : 0;   /* a resumed load writes [first_key, num) */
    uint64_t first = base + span * (uint64_t)index / (uint64_t)p->threads;
    uint64_t share = base + span * (uint64_t)(index + 1) / (uint64_t)p->threads - first;
    switch (writer ? -1 : p->workload) {
    case -1: kv_loop_writer(c); break;
    case KV_W_FILLSEQ: kv_loop_write(c, first, share, 1); break;
    case KV_W_FILLRANDOM: case KV_W_OVERWRITE: kv_loop_write(c, first, share, 0); break;
    case KV_W_DELETERANDOM: kv_loop_delete(c, share); break;
    case KV_W_READRANDOM: case KV_W_READWHILEWRITING: kv_loop_read(c, p->reads, 0, p->num); break;
    case KV_W_READMISSING: kv_loop_read(c, p->reads, p->num, p->num); break;
    case KV_W_READHOT: kv_loop_read(c, p->reads, 0, p->num / 100 ? p->num / 100 : 1); break;
    case KV_W_READSEQ: kv_loop_readseq(c, p->reads); break;
    case KV_W_SEEKRANDOM: kv_loop_seek(c, p->reads); break;
    case KV_W_COMPACT: if (index == 0) kv_loop_compact(c); break;
    case KV_W_MIX: kv_loop_mix(c); break;
    case KV_W_CRASHWRITE: if (index == 0) kv_loop_crashwrite(c); break;
    case KV_W_GRAPHLOAD: kv_loop_graphload(c, first, share); break;
    case KV_W_BULKLOAD: kv_loop_bulkload(c, first, share); break;
    case KV_W_READRANDOMWRITERANDOM: kv_loop_readwrite(c, p->reads); break;
    case KV_W_UPDATERANDOM: kv_loop_update(c, p->reads); break;
    case KV_W_MULTIREADRANDOM: kv_loop_multiread(c, p->reads); break;
    case KV_W_FILLSEQDETERMINISTIC: if (index == 0) kv_loop_fillseqdet(c, 0, p->num); break;
    case KV_W_REPLAY: kv_loop_replay(c, index); break;
    }
}

static int64_t tv_ns(struct timeval a, struct timeval b) {
    return (b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_usec - a.tv_usec) * 1000ll;
}

static void *worker(void *arg) {
    worker_arg *a = arg;
    kv_run *run = a->run;
    int writer = a->index >= run->p.threads;
    ctx c;
    int rc = worker_open(&c, run, a->index, writer);
    gate_wait(run);
    struct rusage ru0, ru1;
    getrusage(RUSAGE_THREAD, &ru0);
    c.res->t_start_ns = kv_now_ns();
    c.last = latency_clock(run);
    c.deadline = run->deadline_ticks ? run->deadline_ticks : UINT64_MAX;
    if (!rc && !stopped(&c)) run_loop(&c, a->index, writer);
    c.res->t_end_ns = kv_now_ns();
    kv_trace_thread_close(&c);
    if (!kv_workload_table[run->p.workload].several) c.res->ops[c.res->optype] = done_ops(&c);   /* else the loop's */
    /* only the histograms this thread recorded into (a scan of 4,864 buckets each otherwise) */
    for (int j = 0; j < KV_NOPTYPES; j++)
        if (j == c.res->optype || c.res->ops[j]) kv_hist_finish(&c.res->hist[j]);
    getrusage(RUSAGE_THREAD, &ru1);
    c.res->cpu_user_ns = tv_ns(ru0.ru_utime, ru1.ru_utime);
    c.res->cpu_sys_ns = tv_ns(ru0.ru_stime, ru1.ru_stime);
    c.res->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
    c.res->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
    if (!writer) __atomic_sub_fetch(&run->workers_left, 1, __ATOMIC_RELEASE);
    if (c.t) run->ops->thread_close(c.t);
    return NULL;
}

/* The latency clock's rate: 1 ns per tick for CLOCK_MONOTONIC; the TSC calibrated against it over 20 ms. */
static double ns_per_tick(int use_tsc) {
    if (!use_tsc) return 1.0;
    int64_t n0 = kv_now_ns();
    uint64_t t0 = kv_tsc();
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    int64_t n1 = kv_now_ns();
    uint64_t t1 = kv_tsc();
    return t1 > t0 ? (double)(n1 - n0) / (double)(t1 - t0) : 1.0;
}

/* Once every thread started is at the gate: the deadline, set by compare-and-swap so a stop requested
   meanwhile stands (kv_driver.h), then all go. */
static void gate_open(kv_run *run, int started) {
    const kv_run_params *p = &run->p;
    pthread_mutex_lock(&run->gate);
    while (run->ready < started) pthread_cond_wait(&run->gate_cond, &run->gate);
    if (run->trace) run->trace->start_ticks = latency_clock(run);   /* a trace's times count from here */
    run->deadline_ticks = p->duration_s > 0 ? latency_clock(run) + (uint64_t)(p->duration_s * 1e9 / run->ns_per_tick) : 0;
    uint64_t unset = KV_UNTIL_UNSET;  /* fails, leaving 0, if a stop came first */
    __atomic_compare_exchange_n(&run->until, &unset, run->deadline_ticks ? run->deadline_ticks : UINT64_MAX, 0,
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    run->go = 1;
    pthread_cond_broadcast(&run->gate_cond);
    pthread_mutex_unlock(&run->gate);
}

int kv_run_execute(kv_run *run) {
    const kv_run_params *p = &run->p;
    int n = kv_run_thread_count(p);
    run->nthreads = n;
    run->workers_left = p->threads;
    run->values_len = KV_VALUE_BUFFER > (size_t)p->value_size * 4 ? KV_VALUE_BUFFER : (size_t)p->value_size * 4;
    run->values = malloc(run->values_len);
    pthread_t *tids = calloc((size_t)n, sizeof *tids);
    worker_arg *args = calloc((size_t)n, sizeof *args);
    if (!run->values || !tids || !args) { free(run->values); free(tids); free(args); return KV_E_OTHER; }
    kv_fill_values(run->values, run->values_len, p->compression_ratio, p->seed);
    if (!KV_HAVE_TSC) run->p.use_tsc = 0;
    run->ns_per_tick = ns_per_tick(run->p.use_tsc);
    if (run->trace) {
        run->trace->ns_per_tick = run->ns_per_tick;
        run->trace->use_tsc = run->p.use_tsc;
        pthread_mutex_init(&run->trace->lock, NULL);
    }
    pthread_mutex_init(&run->gate, NULL);
    pthread_cond_init(&run->gate_cond, NULL);
    run->ready = run->go = 0;

    int started = 0, rc = 0;
    for (; started < n; started++) {
        args[started].run = run;
        args[started].index = started;
        if (pthread_create(&tids[started], NULL, worker, &args[started])) {
            rc = KV_E_OTHER;
            kv_run_request_stop(run);  /* the threads already started exit at once */
            break;
        }
    }
    gate_open(run, started);
    for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
    pthread_cond_destroy(&run->gate_cond);
    pthread_mutex_destroy(&run->gate);
    if (run->trace) pthread_mutex_destroy(&run->trace->lock);
    free(tids);
    free(args);
    free(run->values);
    run->values = NULL;
    return rc;
}
