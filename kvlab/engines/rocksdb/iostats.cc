// RocksDB's IOStatsContext for kvlab's C adapter (engine_rocksdb.c): RocksDB's C API has no call for it.
// Each thread has its own context; the adapter resets it as a thread opens and reads it as it closes, under
// --engine-counters only.  Its byte counters are kept at every perf level; its timers only from enable_time,
// which kvlab does not turn on (they would cost two clock reads per I/O), so those are not read.
#include <rocksdb/iostats_context.h>
#include <stdint.h>

extern "C" {

void kv_rocksdb_iostats_reset(void) { rocksdb::get_iostats_context()->Reset(); }

// bytes read and written through RocksDB's file wrappers by this thread since the reset
void kv_rocksdb_iostats_read(uint64_t *bytes_read, uint64_t *bytes_written) {
    const rocksdb::IOStatsContext *c = rocksdb::get_iostats_context();
    *bytes_read = c->bytes_read;
    *bytes_written = c->bytes_written;
}
}
