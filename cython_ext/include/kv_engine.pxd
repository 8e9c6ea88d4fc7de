# Cython's view of kv_engine.h, the adapters' contract (what kvlab._native uses of it).
from libc.stdint cimport uint64_t


cdef extern from "kv_engine.h":
    enum:
        KV_OK
        KV_NOTFOUND
        KV_E_OTHER
        KV_E_NOTSUP
        KV_ERRMSG_MAX
        KV_ENGINE_ABI
        KV_TXN_READ
        KV_TXN_WRITE
    ctypedef struct kv_failure:
        char msg[KV_ERRMSG_MAX]
        int code
        int sys_errno
        const char *code_name
    ctypedef struct kv_db:
        pass
    ctypedef struct kv_thread:
        pass
    ctypedef struct kv_config:
        const char *variant
        uint64_t cache_size
        uint64_t map_size
        uint64_t write_buffer_size
        int sync
        int disable_wal
        int compression
        int max_threads
        int create
        int block_size
        int bloom_bits
        int max_open_files
        const char *options
        const char *table_options
        int transactions
        int engine_counters
    ctypedef struct kv_engine_ops:
        const char *name
        int (*open)(const char *path, const kv_config *cfg, kv_db **out, kv_failure *err) nogil
        int (*close)(kv_db *db, kv_failure *err) nogil
        int (*thread_open)(kv_db *db, kv_thread **out, kv_failure *err) nogil
        void (*thread_close)(kv_thread *t) nogil
        int (*put)(kv_thread *t, const char *k, size_t kl, const char *v, size_t vl) nogil
        int (*get)(kv_thread *t, const char *k, size_t kl, const char **v, size_t *vl) nogil
        int (*delete "del")(kv_thread *t, const char *k, size_t kl) nogil
        int (*batch_begin)(kv_thread *t) nogil
        int (*batch_commit)(kv_thread *t) nogil
        int (*batch_abort)(kv_thread *t) nogil
        int (*txn_begin)(kv_thread *t, int kind) nogil
        int (*txn_commit)(kv_thread *t) nogil
        void (*txn_abort)(kv_thread *t) nogil
        int (*iter_seek)(kv_thread *t, const char *k, size_t kl, const char **ko, size_t *klo,
                         const char **vo, size_t *vlo) nogil
        int (*iter_next)(kv_thread *t, const char **ko, size_t *klo, const char **vo, size_t *vlo) nogil
        void (*iter_close)(kv_thread *t) nogil
        int (*compact)(kv_db *db, kv_failure *err) nogil
        int (*stats)(kv_db *db, char *buf, size_t len) nogil
        const char *(*version)() nogil
        void (*process_shutdown)() nogil
        const char *(*isolation)(const char *variant, int transactions) nogil
        int (*bulk_begin)(kv_thread *t) nogil
        const char *bulk_how
        int (*multi_get)(kv_thread *t, size_t n, const char *const *keys, const size_t *kls, const char **vs,
                         size_t *vls, int *rcs) nogil
        const char *multi_get_how
        void *own_loop
        const char *own_loop_how
    const kv_engine_ops *kv_engines[]
    size_t KV_ENGINE_OPS_MIN_SIZE
    kv_failure *kv_thread_error(kv_thread *t) nogil


cdef extern from "kv_plugin.h":
    const char *KV_PLUGIN_SYMBOL
    ctypedef const kv_engine_ops *(*kv_plugin_entry)(int *abi, size_t *ops_size)
