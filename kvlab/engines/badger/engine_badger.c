/* Badger adapter (github.com/dgraph-io/badger/v4, an LSM-tree that keeps large values apart in a value log, after
 * the WiscKey paper, in Go): never compiled into kvlab; `kvlab engines build badger@VERSION` builds kvlab's Go shim
 * (../_goshim: Pebble and Badger behind kvgo.h, one c-shared object for both) and links this adapter to it (the
 * body is ../_goshim/adapter_go.h).
 *
 * One Badger DB in the run's directory, keys ordered bytewise.  A put or delete outside a batch is one update
 * transaction (DB.Update); a batch is one update transaction committed whole (Txn.Commit: atomic; too large a batch
 * is Badger's ErrTxnTooBig).  A get is a read transaction's Txn.Get, its value copied; a range is a read
 * transaction's iterator (values not prefetched).  sync: Options.SyncWrites (each commit's write-ahead log synced
 * before it returns). */
#define KVGO_ENGINE KVGO_BADGER
#define KVGO_NAME "badger"
#define KVGO_ISOLATION                                                                                            \
    "read committed: a write transaction is one Badger update transaction committed whole (atomic; blind writes, "  \
    "so never a conflict); reads outside it, each in a read transaction of its own, see what was committed before"
#include "adapter_go.h"

const kv_engine_ops kv_engine_badger = KVGO_OPS;
