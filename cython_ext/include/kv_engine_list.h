/* Every adapter kvlab knows, as an X-macro list: KV_ENGINE(name) for the adapter in src/engine_<name>.c,
   which exports kv_engine_<name>.  Each entry stands under the KV_HAVE_<NAME> that setup.py defines when
   it builds that adapter, so an engine absent at build time is simply not listed.  The list is
   kvlab/model/engines.py's ADAPTERS in C, in its order (planned adapters left out);
   tests/test_engine_checklist.py keeps the two in step.  No include guard: registry.c includes this
   file once per use, with KV_ENGINE defined for that use. */
#ifdef KV_HAVE_LMDB
KV_ENGINE(lmdb)
#endif
#ifdef KV_HAVE_LEVELDB
KV_ENGINE(leveldb)
#endif
#ifdef KV_HAVE_ROCKSDB
KV_ENGINE(rocksdb)
#endif
#ifdef KV_HAVE_WIREDTIGER
KV_ENGINE(wiredtiger)
#endif
#ifdef KV_HAVE_BDB
KV_ENGINE(bdb)
#endif
#ifdef KV_HAVE_NULL
KV_ENGINE(null)
#endif
