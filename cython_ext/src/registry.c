/* The adapters compiled into this build.  setup.py defines KV_HAVE_<ENGINE> for
   each engine whose headers and library it found; an absent engine is simply
   not listed here. */
#include <stddef.h>
#include "kv_engine.h"


#ifdef KV_HAVE_LMDB
extern const kv_engine_ops kv_engine_lmdb;
#endif
#ifdef KV_HAVE_LEVELDB
extern const kv_engine_ops kv_engine_leveldb;
#endif
#ifdef KV_HAVE_ROCKSDB
extern const kv_engine_ops kv_engine_rocksdb;
#endif
#ifdef KV_HAVE_WIREDTIGER
extern const kv_engine_ops kv_engine_wiredtiger;
#endif
#ifdef KV_HAVE_BDB
extern const kv_engine_ops kv_engine_bdb;
#endif
#ifdef KV_HAVE_FDB
extern const kv_engine_ops kv_engine_fdb;
#endif
#ifdef KV_HAVE_NULL
extern const kv_engine_ops kv_engine_null;
#endif

const kv_engine_ops *const kv_engines[] = {
#ifdef KV_HAVE_LMDB
    &kv_engine_lmdb,
#endif
#ifdef KV_HAVE_LEVELDB
    &kv_engine_leveldb,
#endif
#ifdef KV_HAVE_ROCKSDB
    &kv_engine_rocksdb,
#endif
#ifdef KV_HAVE_WIREDTIGER
    &kv_engine_wiredtiger,
#endif
#ifdef KV_HAVE_BDB
    &kv_engine_bdb,
#endif
#ifdef KV_HAVE_FDB
    &kv_engine_fdb,
#endif
#ifdef KV_HAVE_NULL
    &kv_engine_null,
#endif
    NULL,
};
