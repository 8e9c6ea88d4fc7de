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

/* after_error: the failed transaction `seq` told, with the engine's message, then read back: how many of its puts
   (each key's last in the transaction) a get returns with its stamp, data the engine said it did not commit */
static int tell_failed(ctx *c, uint64_t seq, int rc, const uint64_t *ops, int batch, int ks) {
    const kv_failure *f = kv_thread_error(c->t);
    size_t len = strnlen(f->msg, KV_ERRMSG_MAX);
    uint64_t rec[4 + KV_ERRMSG_MAX / 8 + 1] = {KV_CRASH_FAILED, seq, (uint64_t)(int64_t)rc, (uint64_t)len};
    memcpy(rec + 4, f->msg, len);
    if (write_all(c->run->p.ack_fd, rec, (4 + (len + 7) / 8) * 8)) return -1;
    uint64_t shown = 0, puts = 0, failed_gets = 0;
    for (int j = 0; j < batch; j++) {
        int later = 0;
        for (int i = j + 1; i < batch && !later; i++) later = ops[i] >> 1 == ops[j] >> 1;
        if ((ops[j] & 1) || later) continue;
        puts++;
        const char *v;
        size_t vl;
        kv_make_key(c->key, ks, ops[j] >> 1);
        int g = c->run->ops->get(c->t, c->key, ks, &v, &vl);
        uint64_t stamp;
        if (g == KV_OK && vl >= 8) {
            memcpy(&stamp, v, 8);
            shown += stamp == seq;
        } else if (g != KV_NOTFOUND) {
            failed_gets++;
        }
    }
    uint64_t back[5] = {KV_CRASH_READBACK, seq, shown, puts, failed_gets};
    return write_all(c->run->p.ack_fd, back, sizeof back);
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
    int left = -1;   /* after_error: transactions still to go after the failed one (-1: none failed yet) */
    for (uint64_t n = 0; !err && left != 0 && (by_time || n < p->reads); n++) {
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
            if (rc == KV_OK) {
                rc = txn_commit(e, c->t, KV_TXN_WRITE);
            } else {   /* the failure's message survives the abort, whatever the abort records */
                kv_failure failed = *kv_thread_error(c->t);
                txn_abort(e, c->t, KV_TXN_WRITE);
                *kv_thread_error(c->t) = failed;
            }
        }
        if (rc && p->after_error > 0 && left < 0) {   /* the first failure: told, read back, then go on */
            uint64_t ops[KV_CRASH_MAX_BATCH];
            memcpy(ops, rec + 3, (size_t)batch * 8);
            if (tell_failed(c, seq, rc, ops, batch, ks)) { pipe_errno = errno; err = KV_E_IO; break; }
            left = p->after_error;
            continue;
        }
        if (rc) { err = rc; break; }
        rec[0] = KV_CRASH_ACK; rec[1] = seq;
        if (write_all(p->ack_fd, rec, 16)) { pipe_errno = errno; err = KV_E_IO; break; }
        if (left > 0) left--;
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
