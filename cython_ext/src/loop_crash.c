/* kvlab crashtest's writer (workload crashwrite, kvlab/execution/crash/crashtest.py). */
#include "loop.h"

/* kvlab crashtest's child: transactions of `batch` puts and deletes (one in ten) of random keys in
   [0, num), values stamped with (seq, position); each transaction's content goes down ack_fd before
   it starts and its sequence number after the engine acknowledged the commit (kv_driver.h).  One op
   (batch 1) is a plain put or delete; more are one write transaction. */
static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int kv_loop_crashwrite(ctx *c) {
    const kv_run_params *p = &c->run->p;
    const kv_engine_ops *e = c->run->ops;
    int ks = p->key_size, vs = p->value_size, batch = p->batch > 1 ? p->batch : 1, tsc = p->use_tsc;
    if (batch > KV_CRASH_MAX_BATCH || vs < 12 || p->num < 1) {
        kv_seterr(&c->res->err, KV_E_CONFIG, "crashwrite: batch must be 1..%d, value_size >= 12, num >= 1",
                  KV_CRASH_MAX_BATCH);
        c->res->rc = KV_E_CONFIG;
        return KV_E_CONFIG;
    }
    uint64_t rec[3 + KV_CRASH_MAX_BATCH];
    char *val = malloc((size_t)vs);
    if (!val) return fail(c, KV_E_OTHER);
    memcpy(val, next_value(c), (size_t)vs);
    int err = 0, pipe_errno = 0, by_time = p->duration_s > 0;
    for (uint64_t n = 0; !err && (by_time || n < p->reads); n++) {
        uint64_t seq = p->first_seq + n;
        rec[0] = KV_CRASH_INTENT; rec[1] = seq; rec[2] = (uint64_t)batch;
        for (int j = 0; j < batch; j++)
            rec[3 + j] = kv_rng_below(&c->rng, p->num) << 1 | (kv_rng_below(&c->rng, 10) == 0);
        if (write_all(p->ack_fd, rec, (size_t)(3 + batch) * 8)) { pipe_errno = errno; err = KV_E_IO; break; }
        int rc = batch > 1 ? txn_begin(e, c->t, KV_TXN_WRITE) : KV_OK;
        for (int j = 0; rc == KV_OK && j < batch; j++) {
            kv_make_key(c->key, ks, rec[3 + j] >> 1);
            if (rec[3 + j] & 1) {
                rc = e->del(c->t, c->key, ks);
                if (rc == KV_NOTFOUND) rc = KV_OK;
            } else {
                uint32_t pos = (uint32_t)j;
                memcpy(val, &seq, 8);
                memcpy(val + 8, &pos, 4);
                rc = e->put(c->t, c->key, ks, val, vs);
            }
        }
        if (batch > 1) {
            if (rc == KV_OK) rc = txn_commit(e, c->t, KV_TXN_WRITE);
            else txn_abort(e, c->t, KV_TXN_WRITE);
        }
        if (rc) { err = rc; break; }
        rec[0] = KV_CRASH_ACK; rec[1] = seq;
        if (write_all(p->ack_fd, rec, 16)) { pipe_errno = errno; err = KV_E_IO; break; }
        if (finish_op_on(c, KV_OP_WRITE, (uint64_t)batch, tsc)) break;
    }
    free(val);
    if (pipe_errno) {
        kv_seterr(&c->res->err, KV_E_IO, "crashwrite: writing to the acknowledgement pipe failed: %s",
                  strerror(pipe_errno));
        c->res->err.sys_errno = pipe_errno;
        c->res->rc = KV_E_IO;
        return KV_E_IO;
    }
    return err ? fail(c, err) : 0;
}
