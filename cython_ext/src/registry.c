/* The adapters compiled into this build: kv_engine_list.h names each one that
   setup.py built (KV_HAVE_<ENGINE>); this file never changes for a new engine. */
#include <stddef.h>
#include "kv_engine.h"

#define KV_ENGINE(name) extern const kv_engine_ops kv_engine_##name;
#include "kv_engine_list.h"
#undef KV_ENGINE

const kv_engine_ops *const kv_engines[] = {
#define KV_ENGINE(name) &kv_engine_##name,
#include "kv_engine_list.h"
#undef KV_ENGINE
    NULL,
};
