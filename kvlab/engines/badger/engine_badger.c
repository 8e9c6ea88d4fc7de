/* Badger adapter (github.com/dgraph-io/badger/v4, an LSM-tree that keeps large values apart in a value log, after
 * the WiscKey paper, in Go): never compiled into kvlab; `kvlab engines build badger@VERSION` builds kvlab's Go shim
 * (../_goshim: Pebble and Badger behind kvgo.h, one c-shared object for both) and links this adapter to it (the
 * body is ../_goshim/adapter_go.h).
 *
 * One Badger DB in the run's directory, keys ordered bytewise.  A put or delete outside a batch is one update
 * transaction (DB.Update); a batch is one update transaction committed whole (Txn.Commit: atomic; too large a batch
 * is Badger's ErrTxnTooBig).  A get is a read transaction's Txn.Get, its value copied; a range is a read
 * transaction's iterator (values not prefetched).  sync: Options.SyncWrites (each commit's write-ahead log synced
 * before it returns).  Transactions are Badger's: a read transaction, an update transaction (a conflict at
 * commit is KV_E_CONFLICT). */
#define KVGO_ENGINE KVGO_BADGER
#define KVGO_NAME "badger"
#define KVGO_ISOLATION                                                                                        \
    "serializable: Badger's transactions are serializable snapshot isolation (its documentation); a write "       \
    "transaction is one update transaction reading one snapshot and its own writes, and a commit that read a key " \
    "another transaction committed since fails with a conflict (ErrConflict), which kvlab counts and retries; a "  \
    "read transaction reads one snapshot"
#include "adapter_go.h"

const kv_engine_ops kv_engine_badger = KVGO_OPS;
