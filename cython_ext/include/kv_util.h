/* Small helpers shared by the adapters and the driver (header-only, static inline). */
#ifndef KV_UTIL_H
#define KV_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include "kv_engine.h"

/* A refusal of kvlab's own (an unknown option, out of memory, a call out of order): the message, and no
   engine code.  Returns `code`.  e may be NULL. */
static inline __attribute__((format(printf, 3, 4))) int kv_seterr(kv_failure *e, int code, const char *fmt, ...) {
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, KV_ERRMSG_MAX, fmt, ap);
        va_end(ap);
        e->code = 0;
        e->sys_errno = 0;
        e->code_name = NULL;
    }
    return code;
}

/* The engine's own failure, kept whole: its code, the code's name and errno (0 where the OS did not fail), and
   the message "<what>: <name>: <text>" then `tail_fmt`'s text (what the engine's message callback said), the
   name written once (LMDB's texts begin with it) and left out where there is none; a message longer than the
   buffer is cut.  Returns `kv_code`, kvlab's KV_E_* for it.  e may be NULL. */
static inline __attribute__((format(printf, 8, 9))) int kv_engine_error(kv_failure *e, int kv_code, int code,
                                                                        const char *code_name, int sys_errno,
                                                                        const char *what, const char *text,
                                                                        const char *tail_fmt, ...) {
    if (e) {
        size_t nl = code_name ? strlen(code_name) : 0;
        int named = nl && strncmp(text, code_name, nl) != 0;
        int n = snprintf(e->msg, KV_ERRMSG_MAX, "%s: %s%s%s", what, named ? code_name : "", named ? ": " : "", text);
        if (n >= 0 && n < KV_ERRMSG_MAX) {
            va_list ap;
            va_start(ap, tail_fmt);
            vsnprintf(e->msg + n, KV_ERRMSG_MAX - (size_t)n, tail_fmt, ap);
            va_end(ap);
        }
        e->code = code;
        e->sys_errno = sys_errno;
        e->code_name = code_name;
    }
    return kv_code;
}

/* The errno values engines return as their codes, by name (strerrorname_np is glibc's only). */
#define KV_ERRNOS(X)                                                                                      \
    X(EPERM) X(ENOENT) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(EBADF) X(EAGAIN) X(ENOMEM) X(EACCES) X(EFAULT)  \
    X(EBUSY) X(EEXIST) X(EXDEV) X(ENODEV) X(ENOTDIR) X(EISDIR) X(EINVAL) X(ENFILE) X(EMFILE) X(ETXTBSY)   \
    X(EFBIG) X(ENOSPC) X(ESPIPE) X(EROFS) X(EMLINK) X(EPIPE) X(EDEADLK) X(ENAMETOOLONG) X(ENOLCK)         \
    X(ENOSYS) X(ENOTEMPTY) X(ELOOP) X(ENOTSUP) X(ETIMEDOUT) X(EDQUOT) X(EOVERFLOW) X(ESTALE) X(ECANCELED)

static inline const char *kv_errno_name(int e) {
    switch (e) {
#define KV_ERRNO_CASE(name) case name: return #name;
    KV_ERRNOS(KV_ERRNO_CASE)
#undef KV_ERRNO_CASE
    default: return NULL;
    }
}

/* The errno whose text (strerror, in this process's locale, as the engine wrote it) a message holds: what
   LevelDB's and RocksDB's file layer report of the OS, in words only.  0: none. */
static inline int kv_errno_in(const char *msg) {
    static const int candidates[] = {ENOSPC, EDQUOT, EROFS, EACCES, EPERM, ENOENT, EIO, EMFILE, ENFILE, EAGAIN,
                                     EBUSY, ENOMEM, EFBIG, ENAMETOOLONG};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (strstr(msg, strerror(candidates[i]))) return candidates[i];
    return 0;
}

/* LevelDB's and RocksDB's Status kinds: X(Status::Code, name, the prefix Status::ToString() writes).  Both
   libraries number and spell the kinds they share alike; their C APIs give only the string. */
#define KV_STATUS_KINDS(X)                                                                                \
    X(1, "NotFound", "NotFound") X(2, "Corruption", "Corruption") X(3, "NotSupported", "Not implemented")   \
    X(4, "InvalidArgument", "Invalid argument") X(5, "IOError", "IO error")                               \
    X(6, "MergeInProgress", "Merge in progress") X(7, "Incomplete", "Result incomplete")                  \
    X(8, "ShutdownInProgress", "Shutdown in progress") X(9, "TimedOut", "Operation timed out")           \
    X(10, "Aborted", "Operation aborted") X(11, "Busy", "Resource busy") X(12, "Expired", "Operation expired") \
    X(13, "TryAgain", "Operation failed. Try again") X(14, "CompactionTooLarge", "Compaction too large")  \
    X(15, "ColumnFamilyDropped", "Column family dropped")

/* kvlab's code for a LevelDB or RocksDB Status string ("IO error: ...", "Corruption: ..."). */
static inline int kv_code_from_status(const char *msg) {
    if (!msg) return KV_OK;
    if (strncmp(msg, "NotFound", 8) == 0) return KV_NOTFOUND;
    if (strncmp(msg, "Corruption", 10) == 0) return KV_E_CORRUPT;
    if (strncmp(msg, "IO error", 8) == 0) {
        if (strstr(msg, "No space left")) return KV_E_FULL;
        if (strstr(msg, "lock")) return KV_E_BUSY;
        return KV_E_IO;
    }
    if (strncmp(msg, "Invalid argument", 16) == 0 || strncmp(msg, "Not implemented", 15) == 0)
        return KV_E_CONFIG;
    if (strncmp(msg, "Resource busy", 13) == 0 || strncmp(msg, "Operation aborted", 17) == 0 ||
        strncmp(msg, "Operation failed. Try again", 27) == 0)   /* RocksDB Busy / Aborted / TryAgain */
        return KV_E_CONFLICT;
    return KV_E_OTHER;
}

/* A LevelDB or RocksDB Status string as a kv_failure: kvlab's code, the Status kind (its Status::Code and
   name), the errno its text names, and the message "<what>: <status string>" (the string begins with the
   kind).  `kv_code`: kvlab's code, or 0 for kv_code_from_status's.  Returns kvlab's code. */
static inline int kv_status_error(kv_failure *e, int kv_code, const char *what, const char *msg) {
    int code = 0;
    const char *name = NULL;
#define KV_STATUS_MATCH(value, kind, prefix) \
    if (!name && strncmp(msg, prefix, sizeof prefix - 1) == 0) { code = value; name = kind; }
    KV_STATUS_KINDS(KV_STATUS_MATCH)
#undef KV_STATUS_MATCH
    if (!kv_code) kv_code = kv_code_from_status(msg);
    if (!e) return kv_code;
    snprintf(e->msg, KV_ERRMSG_MAX, "%s: %s", what, msg);
    e->code = code;
    e->sys_errno = kv_errno_in(msg);
    e->code_name = name;
    return kv_code;
}

/* Iterate "a,b;c" style lists: copies the next token (trimmed) into tok. Returns the
   rest of the string or NULL at the end. Separators: ',' and ';'. */
static inline const char *kv_next_token(const char *s, char *tok, size_t toklen) {
    if (!s) return NULL;
    while (*s == ' ' || *s == ',' || *s == ';') s++;
    if (!*s) return NULL;
    size_t n = 0;
    while (*s && *s != ',' && *s != ';') {
        if (n + 1 < toklen) tok[n++] = *s;
        s++;
    }
    while (n > 0 && tok[n - 1] == ' ') n--;
    tok[n] = '\0';
    return s;
}

/* Two transactions that conflicted (or deadlocked) and retry at once tend to collide again:
   back off for a random time that grows with the attempt (at most ~10 ms).  `state` is the
   caller's per-thread RNG state (any seed, e.g. the thread context's address). */
static inline void kv_backoff(uint64_t *state, int attempt) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    long max_us = 50L * (attempt < 200 ? attempt + 1 : 200);
    struct timespec ts = {0, (long)((*state >> 33) % (uint64_t)max_us) * 1000L};
    nanosleep(&ts, NULL);
}

/* One pause in a spin-wait: tells the core this thread is spinning (x86's pause, aarch64's yield), so the
   other hardware thread gets the core and the loop's exit costs no memory-order flush; nothing elsewhere. */
static inline void kv_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* A replay log of a batch's operations, for adapters whose commit can fail with
   a conflict and must be retried from the start (WiredTiger, BerkeleyDB). */
typedef struct kv_oplog {
    char *buf;
    size_t len, cap;
} kv_oplog;

typedef struct kv_oprec {
    uint32_t kl, vl;  /* vl == UINT32_MAX marks a delete */
} kv_oprec;

static inline int kv_oplog_add(kv_oplog *log, const char *k, size_t kl, const char *v, size_t vl, int is_del) {
    size_t need = sizeof(kv_oprec) + kl + (is_del ? 0 : vl);
    if (log->len + need > log->cap) {
        size_t cap = log->cap ? log->cap : 4096;
        while (cap < log->len + need) cap *= 2;
        char *nb = realloc(log->buf, cap);
        if (!nb) return KV_E_OTHER;
        log->buf = nb;
        log->cap = cap;
    }
    kv_oprec rec = {(uint32_t)kl, is_del ? UINT32_MAX : (uint32_t)vl};
    memcpy(log->buf + log->len, &rec, sizeof rec);
    log->len += sizeof rec;
    memcpy(log->buf + log->len, k, kl);
    log->len += kl;
    if (!is_del) { memcpy(log->buf + log->len, v, vl); log->len += vl; }
    return KV_OK;
}

/* Walk: `pos` starts at 0; returns 0 at the end. */
static inline int kv_oplog_next(const kv_oplog *log, size_t *pos, const char **k, size_t *kl,
                                const char **v, size_t *vl, int *is_del) {
    if (*pos >= log->len) return 0;
    kv_oprec rec;
    memcpy(&rec, log->buf + *pos, sizeof rec);
    *pos += sizeof rec;
    *k = log->buf + *pos; *kl = rec.kl; *pos += rec.kl;
    *is_del = rec.vl == UINT32_MAX;
    if (*is_del) { *v = NULL; *vl = 0; }
    else { *v = log->buf + *pos; *vl = rec.vl; *pos += rec.vl; }
    return 1;
}

static inline void kv_oplog_free(kv_oplog *log) { free(log->buf); log->buf = NULL; log->len = log->cap = 0; }

#endif
