/* Pebble adapter (github.com/cockroachdb/pebble/v2, CockroachDB's LSM engine, in Go): never compiled into kvlab;
 * `kvlab engines build pebble@VERSION` builds kvlab's Go shim (../_goshim: Pebble and Badger behind kvgo.h, one
 * c-shared object for both) and links this adapter to it (the body is ../_goshim/adapter_go.h).
 *
 * One Pebble DB in the run's directory, keys ordered bytewise.  A put or delete outside a batch is DB.Set/Delete
 * with the run's WriteOptions (sync: pebble.Sync, the WAL fsynced before it returns; else pebble.NoSync); a batch
 * is a pebble.Batch committed whole.  A get is DB.Get; a range is DB.NewIter.  No transactions: a mix's write
 * transaction is one batch, its reads see what is committed. */
#define KVGO_ENGINE KVGO_PEBBLE
#define KVGO_NAME "pebble"
#define KVGO_ISOLATION                                                                                           \
    "read committed: Pebble has batches, not transactions; a write transaction is one atomic batch (Batch.Commit), " \
    "its reads and every other read see what was committed before them"
#include "adapter_go.h"

const kv_engine_ops kv_engine_pebble = KVGO_OPS;
