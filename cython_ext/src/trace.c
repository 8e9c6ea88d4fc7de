/* Recording a run's operations (kv_trace.h): each thread's buffer, written as a block when full and when the
 * thread ends.  The only lock is the trace's, taken once per block; nothing here runs per op but kv_trace_put.
 */
#include "loop.h"

/* Everything of `n` bytes at `p` to fd, across short writes; 0 or errno. */
static int write_all(int fd, const void *p, size_t n) {
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return errno ? errno : EIO;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

uint64_t kv_trace_flush(kv_trace_buf *b) {
    kv_trace *t = b->trace;
    if (!b->n) return 0;
    uint64_t began = clock_read(t->use_tsc);
    struct { uint32_t tag, phase, thread, count; uint64_t clock_start; double ns_per_tick; } head = {
        KV_TRACE_BLOCK_TAG, t->phase, b->thread, b->n, t->start_ticks, t->ns_per_tick};
    pthread_mutex_lock(&t->lock);
    int rc = t->err ? 0 : write_all(t->fd, &head, sizeof head);
    if (!rc && !t->err) rc = write_all(t->fd, b->recs, sizeof(kv_trace_rec) * b->n);
    if (rc && !t->err) t->err = rc;
    pthread_mutex_unlock(&t->lock);
    b->n = 0;
    return clock_read(t->use_tsc) - began;
}

int kv_trace_thread_open(ctx *c, int index) {
    kv_trace *t = c->run->trace;
    if (!t) return 0;
    kv_trace_buf *b = calloc(1, sizeof *b);
    if (b) b->recs = malloc(sizeof(kv_trace_rec) * KV_TRACE_BUF_RECS);
    if (!b || !b->recs) {
        free(b);
        c->res->rc = KV_E_OTHER;
        kv_seterr(&c->res->err, KV_E_OTHER, "out of memory for the trace's buffer");
        kv_run_request_stop(c->run);
        return KV_E_OTHER;
    }
    b->trace = t;
    b->thread = (uint32_t)index;
    c->trace = b;
    return 0;
}

void kv_trace_thread_close(ctx *c) {
    if (!c->trace) return;
    kv_trace_flush(c->trace);
    free(c->trace->recs);
    free(c->trace);
    c->trace = NULL;
}
