/* Small helpers shared by the adapters (header-only, static inline). */
#ifndef KV_UTIL_H
#define KV_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include "kv_engine.h"

static inline int kv_seterr(char *buf, int code, const char *fmt, ...) {
    if (buf) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, KV_ERRMSG_MAX, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* LevelDB and RocksDB report errors as Status strings ("IO error: ...", "Corruption: ..."). */
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

#endif

/* A replay log of a batch's operations, for adapters whose commit can fail with
   a conflict and must be retried from the start (WiredTiger, FoundationDB). */
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
