package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	badger "github.com/dgraph-io/badger/v4"
	boptions "github.com/dgraph-io/badger/v4/options"
)

// What kvgo_open was asked for; own: the engine's own comma list (each engine's parse says what it allows).
type options struct {
	create, sync            bool
	cacheSize, memtableSize int64
	blockSize               int
	own                     string
}

type stat struct {
	name  string
	value int64
}

type engine interface {
	thread() engineThread
	close() error
	compact() error
	stats() []stat
}

// One thread's context.  A value from get is valid until release (or the context's next call).
type engineThread interface {
	put(k, v []byte) error
	del(k []byte) error
	get(k []byte) (v []byte, found bool, err error)
	release()
	batchBegin() error
	batchCommit() error
	batchAbort()
	// transactions: kind 1 read (one snapshot for every read until it ends), 2 write (reads see its own writes)
	txnBegin(kind int) error
	txnCommit() error
	txnAbort()
	seek(k []byte) (key, value []byte, ok bool, err error)
	next() (key, value []byte, ok bool, err error)
	iterClose()
	close()
}

// ownOptions splits "a=1,b,c=x" into pairs, each checked by `take` (false: not one of the engine's).
func ownOptions(s, engine, allowed string, take func(name, val string, has bool) (bool, error)) error {
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		name, val, has := strings.Cut(tok, "=")
		ok, err := take(name, val, has)
		if err != nil {
			return configf("%s option %q: %v; allowed: %s", engine, tok, err, allowed)
		}
		if !ok {
			return configf("%s option %q is unknown; allowed: %s", engine, tok, allowed)
		}
	}
	return nil
}

func number(val string, has bool, lo, hi int64) (int64, error) {
	if !has {
		return 0, errors.New("needs a value")
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("not a whole number in [%d, %d]", lo, hi)
	}
	return n, nil
}

func mustExist(path string, create bool) error {
	if create {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return err
	}
	return nil
}

// classify names an engine's error (fill's last resort): its kind and a name.
func classify(e error) (int, string) {
	msg := e.Error()
	switch {
	case errors.Is(e, pebble.ErrCorruption):
		return 5, "pebble.ErrCorruption"
	case errors.Is(e, badger.ErrConflict):
		return 8, "badger.ErrConflict"
	case errors.Is(e, badger.ErrTxnTooBig):
		return 4, "badger.ErrTxnTooBig"
	case strings.Contains(msg, "lock"):
		return 6, fmt.Sprintf("%T", e)
	case strings.Contains(msg, "checksum") || strings.Contains(msg, "corrupt"):
		return 5, fmt.Sprintf("%T", e)
	}
	return 1, fmt.Sprintf("%T", e)
}

// ---- Pebble ----

type pebbleDB struct {
	db               *pebble.DB
	wo               *pebble.WriteOptions
	cacheCap, memtab int64 // what it was opened with (Pebble's defaults where not given)
}

const pebbleAllowed = "compression=none|snappy|zstd (default: Pebble's, snappy), bloom_bits=N (0: none, " +
	"the default), l0_compaction_threshold=N, l0_stop_writes_threshold=N, max_concurrent_compactions=N, " +
	"bytes_per_sync=BYTES, disable_wal"

func openPebble(path string, o options) (engine, error) {
	if err := mustExist(path, o.create); err != nil {
		return nil, err
	}
	opts := &pebble.Options{ErrorIfNotExists: !o.create, Logger: quiet{}}
	if o.cacheSize > 0 {
		c := pebble.NewCache(o.cacheSize)
		opts.Cache = c
		defer c.Unref() // the DB holds its own reference
	}
	if o.memtableSize > 0 {
		opts.MemTableSize = uint64(o.memtableSize)
	}
	compression := ""
	bloomBits := int64(0)
	concurrency := int64(0)
	err := ownOptions(o.own, "pebble", pebbleAllowed, func(name, val string, has bool) (bool, error) {
		var err error
		var n int64
		switch name {
		case "compression":
			if val != "none" && val != "snappy" && val != "zstd" {
				return true, errors.New("not none, snappy or zstd")
			}
			compression = val
		case "bloom_bits":
			bloomBits, err = number(val, has, 0, 64)
		case "l0_compaction_threshold":
			n, err = number(val, has, 1, 1<<20)
			opts.L0CompactionThreshold = int(n)
		case "l0_stop_writes_threshold":
			n, err = number(val, has, 1, 1<<20)
			opts.L0StopWritesThreshold = int(n)
		case "max_concurrent_compactions":
			concurrency, err = number(val, has, 1, 256)
		case "bytes_per_sync":
			n, err = number(val, has, 0, 1<<40)
			opts.BytesPerSync = int(n)
		case "disable_wal":
			opts.DisableWAL = true
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	if concurrency > 0 {
		opts.CompactionConcurrencyRange = func() (int, int) { return 1, int(concurrency) }
	}
	opts.EnsureDefaults()
	for i := range opts.Levels {
		l := &opts.Levels[i]
		if o.blockSize > 0 {
			l.BlockSize = o.blockSize
		}
		if bloomBits > 0 {
			l.FilterPolicy = bloom.FilterPolicy(bloomBits)
		}
		switch compression {
		case "none":
			l.Compression = func() *block.CompressionProfile { return block.NoCompression }
		case "snappy":
			l.Compression = func() *block.CompressionProfile { return block.SnappyCompression }
		case "zstd":
			l.Compression = func() *block.CompressionProfile { return block.ZstdCompression }
		}
	}
	db, err := pebble.Open(path, opts)
	if err != nil {
		return nil, err
	}
	wo := pebble.NoSync
	if o.sync {
		wo = pebble.Sync
	}
	cacheCap := o.cacheSize
	if cacheCap <= 0 {
		cacheCap = 8 << 20 // Pebble's own cache when Options.Cache is nil (Options.EnsureDefaults)
	}
	return &pebbleDB{db: db, wo: wo, cacheCap: cacheCap, memtab: int64(opts.MemTableSize)}, nil
}

type quiet struct{}

func (quiet) Infof(string, ...interface{})  {}
func (quiet) Errorf(string, ...interface{}) {}
func (quiet) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf(format, args...))
}

func (p *pebbleDB) close() error { return p.db.Close() }
func (p *pebbleDB) compact() error {
	return p.db.Compact(context.Background(), []byte{}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, true)
}

func (p *pebbleDB) stats() []stat {
	m := p.db.Metrics()
	t := m.Total()
	out := []stat{
		{"cache_capacity", p.cacheCap},
		{"memtable_capacity", p.memtab},
		{"disk_space", int64(m.DiskSpaceUsage())},
		{"wal_bytes_in", int64(m.WAL.BytesIn)},
		{"wal_bytes_written", int64(m.WAL.BytesWritten)},
		{"flush_count", m.Flush.Count},
		{"compact_count", m.Compact.Count},
		{"memtable_size", int64(m.MemTable.Size)},
		{"memtable_count", m.MemTable.Count},
		{"table_count", t.TablesCount},
		{"l0_table_count", m.Levels[0].TablesCount},
		{"bytes_flushed", int64(t.TableBytesFlushed)},
		{"bytes_compacted", int64(t.TableBytesCompacted)},
		{"bytes_read", int64(t.TableBytesRead)},
		{"cache_size", m.BlockCache.Size},
		{"cache_hits", m.BlockCache.Hits},
		{"cache_misses", m.BlockCache.Misses},
	}
	return out
}

type pebbleThread struct {
	p      *pebbleDB
	closer interface{ Close() error }
	batch  *pebble.Batch    // a batch, or a write transaction's indexed batch
	txn    bool             // batch is a write transaction's (reads go through it)
	snap   *pebble.Snapshot // a read transaction's
	iter   *pebble.Iterator
}

// reader: where this thread's reads go (a read transaction's snapshot, a write transaction's batch, the DB).
func (t *pebbleThread) reader() pebble.Reader {
	switch {
	case t.snap != nil:
		return t.snap
	case t.txn:
		return t.batch
	}
	return t.p.db
}

func (p *pebbleDB) thread() engineThread { return &pebbleThread{p: p} }

func (t *pebbleThread) put(k, v []byte) error {
	if t.batch != nil {
		return t.batch.Set(k, v, nil)
	}
	return t.p.db.Set(k, v, t.p.wo)
}

func (t *pebbleThread) del(k []byte) error {
	if t.batch != nil {
		return t.batch.Delete(k, nil)
	}
	return t.p.db.Delete(k, t.p.wo)
}

func (t *pebbleThread) get(k []byte) ([]byte, bool, error) {
	v, closer, err := t.reader().Get(k)
	if err == pebble.ErrNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	t.closer = closer
	return v, true, nil
}

func (t *pebbleThread) release() {
	if t.closer != nil {
		t.closer.Close()
		t.closer = nil
	}
}

func (t *pebbleThread) batchBegin() error {
	if t.batch != nil {
		return configf("pebble: a batch is already open")
	}
	t.batch = t.p.db.NewBatch()
	return nil
}

func (t *pebbleThread) batchCommit() error {
	if t.batch == nil {
		return configf("pebble: no batch is open")
	}
	b := t.batch
	t.batch, t.txn = nil, false
	defer b.Close()
	return b.Commit(t.p.wo)
}

func (t *pebbleThread) batchAbort() {
	if t.batch != nil {
		t.iterClose()
		t.batch.Close()
		t.batch, t.txn = nil, false
	}
}

func (t *pebbleThread) txnBegin(kind int) error {
	if t.batch != nil || t.snap != nil {
		return configf("pebble: a transaction is already open")
	}
	if kind == 1 {
		t.snap = t.p.db.NewSnapshot()
		return nil
	}
	t.batch, t.txn = t.p.db.NewIndexedBatch(), true
	return nil
}

func (t *pebbleThread) txnCommit() error {
	if t.snap != nil {
		t.txnAbort()
		return nil
	}
	t.iterClose()
	return t.batchCommit()
}

func (t *pebbleThread) txnAbort() {
	t.iterClose()
	if t.snap != nil {
		t.snap.Close()
		t.snap = nil
	}
	t.batchAbort()
}

func (t *pebbleThread) current(ok bool) ([]byte, []byte, bool, error) {
	if !ok {
		return nil, nil, false, t.iter.Error()
	}
	v, err := t.iter.ValueAndErr()
	return t.iter.Key(), v, err == nil, err
}

func (t *pebbleThread) seek(k []byte) ([]byte, []byte, bool, error) {
	t.iterClose()
	it, err := t.reader().NewIter(nil)
	if err != nil {
		return nil, nil, false, err
	}
	t.iter = it
	if k == nil {
		return t.current(it.First())
	}
	return t.current(it.SeekGE(k))
}

func (t *pebbleThread) next() ([]byte, []byte, bool, error) {
	if t.iter == nil {
		return nil, nil, false, configf("pebble: next without a seek")
	}
	return t.current(t.iter.Next())
}

func (t *pebbleThread) iterClose() {
	if t.iter != nil {
		t.iter.Close()
		t.iter = nil
	}
}

func (t *pebbleThread) close() {
	t.release()
	t.txnAbort()
}

// ---- Badger ----

type badgerDB struct {
	db                        *badger.DB
	valueTh, cacheCap, memtab int64 // what it was opened with
}

const badgerAllowed = "value_threshold=BYTES (values this size or larger go to the value log; default 1 MiB), " +
	"compression=none|snappy|zstd (default snappy), num_compactors=N, num_memtables=N, index_cache=BYTES, " +
	"bloom_false_positive=PERMILLE (default 10), detect_conflicts=0|1 (default 1), bypass_lock_guard (Badger's " +
	"flock of the directory off)"

func openBadger(path string, o options) (engine, error) {
	if err := mustExist(path, o.create); err != nil {
		return nil, err
	}
	opts := badger.DefaultOptions(path).WithLogger(nil).WithSyncWrites(o.sync)
	if o.cacheSize > 0 {
		opts = opts.WithBlockCacheSize(o.cacheSize)
	}
	if o.memtableSize > 0 {
		opts = opts.WithMemTableSize(o.memtableSize)
	}
	if o.blockSize > 0 {
		opts = opts.WithBlockSize(o.blockSize)
	}
	err := ownOptions(o.own, "badger", badgerAllowed, func(name, val string, has bool) (bool, error) {
		var err error
		var n int64
		switch name {
		case "value_threshold":
			n, err = number(val, has, 0, 1<<20)
			opts = opts.WithValueThreshold(n)
		case "compression":
			switch val {
			case "none":
				opts = opts.WithCompression(boptions.None)
			case "snappy":
				opts = opts.WithCompression(boptions.Snappy)
			case "zstd":
				opts = opts.WithCompression(boptions.ZSTD)
			default:
				err = errors.New("not none, snappy or zstd")
			}
		case "num_compactors":
			n, err = number(val, has, 0, 64)
			opts = opts.WithNumCompactors(int(n))
		case "num_memtables":
			n, err = number(val, has, 1, 64)
			opts = opts.WithNumMemtables(int(n))
		case "index_cache":
			n, err = number(val, has, 0, 1<<40)
			opts = opts.WithIndexCacheSize(n)
		case "bloom_false_positive":
			n, err = number(val, has, 0, 999)
			opts = opts.WithBloomFalsePositive(float64(n) / 1000)
		case "bypass_lock_guard":
			opts = opts.WithBypassLockGuard(true)
		case "detect_conflicts":
			n, err = number(val, has, 0, 1)
			opts = opts.WithDetectConflicts(n == 1)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return nil, err
	}
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	return &badgerDB{db: db, valueTh: opts.ValueThreshold, cacheCap: opts.BlockCacheSize, memtab: opts.MemTableSize}, nil
}

func (b *badgerDB) close() error   { return b.db.Close() }
func (b *badgerDB) compact() error { return b.db.Flatten(4) }

func (b *badgerDB) stats() []stat {
	lsm, vlog := b.db.Size()
	tables := b.db.Tables()
	l0 := int64(0)
	for _, t := range tables {
		if t.Level == 0 {
			l0++
		}
	}
	out := []stat{
		{"lsm_size", lsm}, {"vlog_size", vlog}, {"table_count", int64(len(tables))}, {"l0_table_count", l0},
		{"value_threshold", b.valueTh}, {"cache_capacity", b.cacheCap}, {"memtable_capacity", b.memtab},
	}
	if m := b.db.BlockCacheMetrics(); m != nil {
		out = append(out, stat{"cache_hits", int64(m.Hits())}, stat{"cache_misses", int64(m.Misses())},
			stat{"cache_cost_added", int64(m.CostAdded())})
	}
	return out
}

type badgerThread struct {
	b     *badgerDB
	val   []byte
	batch *badger.Txn // a batch or a write transaction: an update transaction
	snap  *badger.Txn // a read transaction
	rtxn  *badger.Txn // an iterator's own read transaction, outside a transaction
	iter  *badger.Iterator
}

// txn: the transaction this thread's reads go through, or nil (each read in one of its own).
func (t *badgerThread) txn() *badger.Txn {
	if t.snap != nil {
		return t.snap
	}
	return t.batch
}

func (b *badgerDB) thread() engineThread { return &badgerThread{b: b} }

func (t *badgerThread) put(k, v []byte) error {
	if t.batch != nil {
		return t.batch.Set(append([]byte(nil), k...), append([]byte(nil), v...)) // kept until commit
	}
	return t.b.db.Update(func(txn *badger.Txn) error { return txn.Set(k, v) })
}

// putStable is put for a value that stays put until the thread's next commit (the run's value buffer, which the
// measured loop takes values from): a batch keeps it without a copy, as Badger's own callers do.
func (t *badgerThread) putStable(k, v []byte) error {
	if t.batch != nil {
		return t.batch.Set(append([]byte(nil), k...), v)
	}
	return t.b.db.Update(func(txn *badger.Txn) error { return txn.Set(k, v) })
}

func (t *badgerThread) del(k []byte) error {
	if t.batch != nil {
		return t.batch.Delete(append([]byte(nil), k...))
	}
	return t.b.db.Update(func(txn *badger.Txn) error { return txn.Delete(k) })
}

func (t *badgerThread) get(k []byte) ([]byte, bool, error) {
	txn := t.txn()
	if txn == nil {
		txn = t.b.db.NewTransaction(false)
		defer txn.Discard()
	}
	item, err := txn.Get(k)
	if err == badger.ErrKeyNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	t.val, err = item.ValueCopy(t.val[:0])
	return t.val, err == nil, err
}

func (t *badgerThread) release() {}

func (t *badgerThread) batchBegin() error {
	if t.batch != nil {
		return configf("badger: a batch is already open")
	}
	t.batch = t.b.db.NewTransaction(true)
	return nil
}

func (t *badgerThread) batchCommit() error {
	if t.batch == nil {
		return configf("badger: no batch is open")
	}
	t.iterClose()
	txn := t.batch
	t.batch = nil
	return txn.Commit()
}

func (t *badgerThread) batchAbort() {
	if t.batch != nil {
		t.iterClose()
		t.batch.Discard()
		t.batch = nil
	}
}

func (t *badgerThread) txnBegin(kind int) error {
	if t.batch != nil || t.snap != nil {
		return configf("badger: a transaction is already open")
	}
	if kind == 1 {
		t.snap = t.b.db.NewTransaction(false)
		return nil
	}
	return t.batchBegin()
}

func (t *badgerThread) txnCommit() error {
	if t.snap != nil {
		t.txnAbort()
		return nil
	}
	return t.batchCommit()
}

func (t *badgerThread) txnAbort() {
	t.iterClose()
	if t.snap != nil {
		t.snap.Discard()
		t.snap = nil
	}
	t.batchAbort()
}

func (t *badgerThread) current() ([]byte, []byte, bool, error) {
	if !t.iter.Valid() {
		return nil, nil, false, nil
	}
	item := t.iter.Item()
	var err error
	t.val, err = item.ValueCopy(t.val[:0])
	return item.Key(), t.val, err == nil, err
}

func (t *badgerThread) seek(k []byte) ([]byte, []byte, bool, error) {
	t.iterClose()
	txn := t.txn()
	if txn == nil {
		t.rtxn = t.b.db.NewTransaction(false)
		txn = t.rtxn
	}
	opts := badger.DefaultIteratorOptions
	opts.PrefetchValues = false
	t.iter = txn.NewIterator(opts)
	if k == nil {
		t.iter.Rewind()
	} else {
		t.iter.Seek(k)
	}
	return t.current()
}

func (t *badgerThread) next() ([]byte, []byte, bool, error) {
	if t.iter == nil {
		return nil, nil, false, configf("badger: next without a seek")
	}
	t.iter.Next()
	return t.current()
}

func (t *badgerThread) iterClose() {
	if t.iter != nil {
		t.iter.Close()
		t.iter = nil
	}
	if t.rtxn != nil {
		t.rtxn.Discard()
		t.rtxn = nil
	}
}

func (t *badgerThread) close() { t.txnAbort() }
