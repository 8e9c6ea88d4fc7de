/* kvfjall.h - the C face of kvlab's fjall shim (src/lib.rs, a Rust staticlib over fjall 3.x, an LSM-tree).
 *
 * One database (a fjall SingleWriterTxDatabase, its one keyspace "kv" of byte-string keys and values, ordered
 * bytewise) and a context per thread, which holds that thread's read snapshot, its write transaction, its range
 * iterator, and the buffers a read copies its key and value into.  A context is only ever used by one thread at a
 * time.
 *
 * Every call returns KVFJALL_OK, KVFJALL_NOTFOUND or KVFJALL_ERROR; on KVFJALL_ERROR it has filled the
 * kvfjall_error it was given (a panic inside fjall is caught at this boundary and reported as one, kind
 * KVFJALL_E_PANIC).  Values and keys a call hands back point into the context's buffers: valid until the
 * context's next call.  Keys are 1..65535 bytes, values at most 2^32-1 bytes (fjall's limits). */
#ifndef KVFJALL_H
#define KVFJALL_H

#include <stddef.h>
#include <stdint.h>

#define KVFJALL_OK 0
#define KVFJALL_NOTFOUND 1
#define KVFJALL_ERROR (-1)

/* What went wrong, as kvlab sorts it (the adapter maps each to a KV_E_* code) */
enum kvfjall_kind {
    KVFJALL_E_OTHER = 1,
    KVFJALL_E_IO = 2,      /* fjall's Io / Storage(Io) (errno in os_errno), Poisoned (an earlier fsync failed), a
                              missing database opened with create 0 (ENOENT) */
    KVFJALL_E_FULL = 3,    /* an Io whose errno is ENOSPC or EDQUOT */
    KVFJALL_E_CONFIG = 4,  /* an option out of fjall's range, a key or value over its limits, a call out of order */
    KVFJALL_E_CORRUPT = 5, /* JournalRecovery, InvalidVersion, Decompress, InvalidTrailer, InvalidTag, Unrecoverable,
                              Storage(ChecksumMismatch, InvalidHeader, ...) */
    KVFJALL_E_BUSY = 6,    /* Locked: another process (or handle) holds the database's lock file */
    KVFJALL_E_PANIC = 7,   /* fjall panicked; the message is the panic's */
};

typedef struct kvfjall_error {
    int kind;         /* enum kvfjall_kind */
    int os_errno;     /* the OS's errno under an Io error; 0: none */
    const char *name; /* fjall's error variant ("Io", "Storage.ChecksumMismatch", "Locked", "Poisoned", ...): static */
    char text[400];   /* fjall's message (its Display), cut to fit */
} kvfjall_error;

/* The PersistMode every commit's journal write is made durable with before the commit returns */
#define KVFJALL_DURABILITY_NONE 0      /* PersistMode::Buffer: written to the OS (survives a process crash, not a
                                          power loss or OS crash) */
#define KVFJALL_DURABILITY_SYNC_DATA 1 /* PersistMode::SyncData: fdatasync of the journal */
#define KVFJALL_DURABILITY_SYNC_ALL 2  /* PersistMode::SyncAll: fsync of the journal */

/* Data block compression (KeyspaceCreateOptions::data_block_compression_policy) */
#define KVFJALL_COMPRESSION_DEFAULT 0 /* fjall's: none in levels 0-1, LZ4 below */
#define KVFJALL_COMPRESSION_NONE 1    /* none in every level */
#define KVFJALL_COMPRESSION_LZ4 2     /* LZ4 in every level */

typedef struct kvfjall_db kvfjall_db;
typedef struct kvfjall_thread kvfjall_thread;

/* 0 in a size or count: fjall's default.  The options marked (create) are the keyspace's: fjall stores them when it
   makes the keyspace and ignores them when the keyspace exists (they are read back from the database). */
typedef struct kvfjall_options {
    uint64_t cache_size;          /* bytes of block cache; 0: fjall's default (32 MiB) */
    int create;                   /* create the database if missing; 0: fail (ENOENT) where none is */
    int durability;               /* KVFJALL_DURABILITY_* */
    uint64_t max_memtable_size;   /* (create) bytes before a memtable is sealed and flushed; 0: 64 MiB */
    uint64_t max_journaling_size; /* bytes of journals before memtables are flushed to free them; 0: 512 MiB;
                                     else at least 64 MiB */
    uint32_t block_size;          /* (create) data block size in bytes, 1 KiB..1 MiB; 0: 4 KiB */
    int compression;              /* (create) KVFJALL_COMPRESSION_* */
    int bloom_bits_per_key;       /* (create) 0: fjall's (1e-4 false positives in level 0, 10 bits a key below);
                                     > 0: that many bits a key in every level; < 0: no filters */
    uint32_t kv_separation;       /* (create) 0: off; else values of at least this many bytes go to blob files */
    int worker_threads;           /* flush and compaction threads; 0: fjall's default (min(cores, 4)) */
} kvfjall_options;

/* Open (or, with create, make) the database directory `path` (NUL-terminated) and its keyspace "kv". */
int kvfjall_open(const char *path, const kvfjall_options *opts, kvfjall_db **out, kvfjall_error *err);
/* Close it: fsyncs the journal (Database::persist(SyncAll)), then drops fjall's handles (which stop its flush and
   compaction threads and unlock the directory).  Memtables are not flushed: the next open replays the journal.
   Every context must be closed first.  The handle is freed even when an error is returned. */
int kvfjall_close(kvfjall_db *db, kvfjall_error *err);

kvfjall_thread *kvfjall_thread_open(kvfjall_db *db);
void kvfjall_thread_close(kvfjall_thread *t); /* rolls back a write transaction left open */

/* Write transactions: begin (waits for fjall's one writer), put/del in it, commit or abort.  The commit writes all
   of it as one journal batch under one sequence number: atomic, and durable per the durability option. */
int kvfjall_write_begin(kvfjall_thread *t, kvfjall_error *err);
int kvfjall_write_commit(kvfjall_thread *t, kvfjall_error *err);
void kvfjall_write_abort(kvfjall_thread *t);
int kvfjall_in_write(const kvfjall_thread *t);
int kvfjall_put(kvfjall_thread *t, const char *k, size_t kl, const char *v, size_t vl, kvfjall_error *err);
/* A blind delete (an LSM tombstone): KVFJALL_OK whether or not the key was there (knowing would cost a read). */
int kvfjall_del(kvfjall_thread *t, const char *k, size_t kl, kvfjall_error *err);

/* A read transaction: every read until read_end sees one snapshot.  Outside one, a read in a write transaction sees
   the transaction's snapshot and its own writes; any other read sees every commit made before it. */
int kvfjall_read_begin(kvfjall_thread *t, kvfjall_error *err);
void kvfjall_read_end(kvfjall_thread *t);

/* The value of k, copied into the context's buffer (grown, never per call). */
int kvfjall_get(kvfjall_thread *t, const char *k, size_t kl, const char **v, size_t *vl, kvfjall_error *err);

/* Range reads: seek to the first key >= k, then next; the key and value are copied into the context's buffers.
   An open range holds a snapshot (it keeps old versions from compaction) until iter_close or the next seek. */
int kvfjall_seek(kvfjall_thread *t, const char *k, size_t kl, const char **ko, size_t *klo, const char **vo,
                 size_t *vlo, kvfjall_error *err);
int kvfjall_next(kvfjall_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo, kvfjall_error *err);
void kvfjall_iter_close(kvfjall_thread *t);

typedef struct kvfjall_stats {
    uint64_t disk_space;           /* Database::disk_space: journals + the keyspace's tables and blob files, bytes */
    uint64_t journal_disk_space;   /* of which journals */
    uint64_t journal_count;        /* journal files on disk */
    uint64_t table_count;          /* the keyspace's tables (SST files), all levels */
    uint64_t l0_table_count;       /* of which in level 0 */
    uint64_t blob_file_count;      /* blob files (kv_separation) */
    uint64_t approximate_len;      /* keys, counting not-yet-compacted versions and tombstones */
    uint64_t write_buffer_size;    /* bytes in memtables, active and sealed */
    uint64_t outstanding_flushes;  /* sealed memtables waiting to be flushed */
    uint64_t active_compactions;   /* compactions running now */
    uint64_t compactions_completed;
    uint64_t cache_capacity;       /* the block cache's capacity, bytes */
    uint64_t cache_used;           /* bytes in it now */
    uint64_t commits;              /* write transactions committed through this handle (empty ones included) */
    uint64_t durable_commits;      /* of which with SYNC_DATA or SYNC_ALL */
} kvfjall_stats;

void kvfjall_get_stats(const kvfjall_db *db, kvfjall_stats *out);

/* The fjall crate's version, as the shim's Cargo.lock resolved it ("3.1.13"). */
const char *kvfjall_version(void);

#endif
