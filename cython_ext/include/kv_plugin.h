/* kv_plugin.h - an adapter as a shared object kvlab loads at run time: a version of an engine built by
 * `kvlab engines build NAME@VERSION` (the engine linked in), or a researcher's own engine (docs/own-engine.md).
 *
 * The shared object is the adapter's one C file (kv_engine.h's contract, as every built-in adapter) and this one
 * line, in any of its files:
 *
 *     KV_PLUGIN(kv_engine_myengine)
 *
 * which exports the one symbol kvlab looks up, `kvlab_engine`: it hands over the adapter's table with the contract
 * version (KV_ENGINE_ABI) and the table's size the adapter was compiled against, so kvlab refuses a table of
 * another version instead of calling through it.  Everything else stays inside the object: link with
 * `-Wl,--exclude-libs,ALL` and a version script exporting `kvlab_engine` only (kvlab's build does), so an engine
 * linked in binds to its own copy, and two versions of one engine coexist in one process (kvlab loads each with
 * RTLD_LOCAL).  The dispatch is the one the built-in adapters have: the driver calls through the table. */
#ifndef KV_PLUGIN_H
#define KV_PLUGIN_H

#include "kv_engine.h"

#define KV_PLUGIN_SYMBOL "kvlab_engine"

typedef const kv_engine_ops *(*kv_plugin_entry)(int *abi, size_t *ops_size);

#define KV_PLUGIN(ops)                                                                                     \
    __attribute__((visibility("default"))) const kv_engine_ops *kvlab_engine(int *abi, size_t *ops_size); \
    __attribute__((visibility("default"))) const kv_engine_ops *kvlab_engine(int *abi, size_t *ops_size) { \
        *abi = KV_ENGINE_ABI;                                                                              \
        *ops_size = sizeof(kv_engine_ops);                                                                 \
        return &(ops);                                                                                     \
    }

#endif
