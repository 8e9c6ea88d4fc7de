/* kvredb.h - the C face of kvlab's redb shim (src/lib.rs, a Rust staticlib): what engine_redb.c calls.
 *
 * One database (a redb Database, its one table of byte-string keys and values) and a context per thread, which
 * holds that thread's read snapshot, its write transaction with the table open in it, its range iterator, and the
 * buffers a read copies its key and value into.  A context is only ever used by one thread at a time.
 *
 * Every call returns KVREDB_OK, KVREDB_NOTFOUND or KVREDB_ERROR; on KVREDB_ERROR it has filled the kvredb_error
 * it was given (a panic inside redb is caught at this boundary and reported as one, kind KVREDB_E_PANIC).  Values
 * and keys a call hands back point into the context's buffers: valid until the context's next call. */
#ifndef KVREDB_H
#define KVREDB_H

#include <stddef.h>
#include <stdint.h>

#define KVREDB_OK 0
#define KVREDB_NOTFOUND 1
#define KVREDB_ERROR (-1)

/* What went wrong, as kvlab sorts it (the adapter maps each to a KV_E_* code) */
enum kvredb_kind {
    KVREDB_E_OTHER = 1,
    KVREDB_E_IO = 2,      /* redb's Io (errno in os_errno) or PreviousIo */
    KVREDB_E_FULL = 3,    /* an Io whose errno is ENOSPC or EDQUOT */
    KVREDB_E_CONFIG = 4,  /* ValueTooLarge, a call out of order (no write transaction open) */
    KVREDB_E_CORRUPT = 5, /* Corrupted, UpgradeRequired */
    KVREDB_E_BUSY = 6,    /* DatabaseAlreadyOpen, LockProtocolMismatch */
    KVREDB_E_PANIC = 7,   /* redb panicked; the message is the panic's */
};

typedef struct kvredb_error {
    int kind;         /* enum kvredb_kind */
    int os_errno;     /* the OS's errno under an Io error; 0: none */
    const char *name; /* redb's error variant ("Io", "Corrupted", "DatabaseAlreadyOpen", ...): static */
    char text[400];   /* redb's message (its Display), cut to fit */
} kvredb_error;

/* redb's Durability for the commits of a database: Immediate (fsync before commit returns) or None */
#define KVREDB_DURABILITY_NONE 0
#define KVREDB_DURABILITY_IMMEDIATE 1

typedef struct kvredb_db kvredb_db;
typedef struct kvredb_thread kvredb_thread;

typedef struct kvredb_options {
    uint64_t cache_size;  /* bytes; 0: redb's default (1 GiB) */
    int create;           /* create the file if missing (redb's Builder::create), else Builder::open */
    int durability;       /* KVREDB_DURABILITY_* */
    int two_phase_commit; /* WriteTransaction::set_two_phase_commit */
    int quick_repair;     /* WriteTransaction::set_quick_repair */
    int check_integrity;  /* Builder::set_check_integrity_on_open */
} kvredb_options;

/* Open the database file `path` (a NUL-terminated path) and make its table. */
int kvredb_open(const char *path, const kvredb_options *opts, kvredb_db **out, kvredb_error *err);
/* Close it (redb makes a pending non-durable commit durable); every context must be closed first. */
int kvredb_close(kvredb_db *db, kvredb_error *err);

kvredb_thread *kvredb_thread_open(kvredb_db *db);
void kvredb_thread_close(kvredb_thread *t);

/* Write transactions: begin (waits for redb's one writer), put/del in it, commit or abort. */
int kvredb_write_begin(kvredb_thread *t, kvredb_error *err);
int kvredb_write_commit(kvredb_thread *t, kvredb_error *err);
void kvredb_write_abort(kvredb_thread *t);
int kvredb_in_write(const kvredb_thread *t);
int kvredb_put(kvredb_thread *t, const char *k, size_t kl, const char *v, size_t vl, kvredb_error *err);
int kvredb_del(kvredb_thread *t, const char *k, size_t kl, kvredb_error *err); /* KVREDB_NOTFOUND: absent */

/* A read transaction: every read until read_end sees one snapshot.  Outside one (and outside a write transaction)
   a read sees every commit made through this database before it. */
int kvredb_read_begin(kvredb_thread *t, kvredb_error *err);
void kvredb_read_end(kvredb_thread *t);

/* The value of k, copied into the context's buffer (grown, never per call). */
int kvredb_get(kvredb_thread *t, const char *k, size_t kl, const char **v, size_t *vl, kvredb_error *err);

/* Range reads: seek to the first key >= k, then next; the key and value are copied into the context's buffers. */
int kvredb_seek(kvredb_thread *t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo, size_t *vlo,
                kvredb_error *err);
int kvredb_next(kvredb_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo, kvredb_error *err);
void kvredb_iter_close(kvredb_thread *t);

typedef struct kvredb_stats {
    uint64_t file_size;       /* the database file's size in bytes */
    uint64_t commits;         /* write transactions committed through this handle */
    uint64_t durable_commits; /* of which with Durability::Immediate */
    uint64_t cache_size;      /* the cache redb was opened with */
    uint64_t page_size;       /* redb's page size */
} kvredb_stats;

void kvredb_get_stats(const kvredb_db *db, kvredb_stats *out);

/* The redb crate's version, as the shim's Cargo.lock resolved it ("4.6.0"). */
const char *kvredb_version(void);

#endif
