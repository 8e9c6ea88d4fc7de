/* Pebble adapter (github.com/cockroachdb/pebble/v2, CockroachDB's LSM engine, in Go): never compiled into kvlab;
 * `kvlab engines build pebble@VERSION` builds kvlab's Go shim (../_goshim: Pebble and Badger behind kvgo.h, one
 * c-shared object for both) and links this adapter to it (the body is ../_goshim/adapter_go.h).
 *
 * One Pebble DB in the run's directory, keys ordered bytewise.  A put or delete outside a batch is DB.Set/Delete
 * with the run's WriteOptions (sync: pebble.Sync, the WAL fsynced before it returns; else pebble.NoSync); a batch
 * is a pebble.Batch committed whole.  A get is DB.Get; a range is DB.NewIter.  Pebble has no transactions: a read
 * transaction reads a Snapshot, a write transaction is an indexed batch (read-your-writes), with no conflict
 * detection. */
#define KVGO_ENGINE KVGO_PEBBLE
#define KVGO_NAME "pebble"
#define KVGO_ISOLATION                                                                                        \
    "snapshot reads, no conflict detection: a read transaction reads one Pebble Snapshot; a write transaction is " \
    "an indexed batch (its reads see its own writes and the latest commits) committed atomically; nothing "         \
    "detects conflicts, so concurrent read-modify-writes can lose updates"
#include "adapter_go.h"

const kv_engine_ops kv_engine_pebble = KVGO_OPS;
