// Command reference is the independent reference loop of kvlab's Go engines (benchmarks/vs_reference.py): Pebble's
// and Badger's documented read and write paths in plain Go, no kvlab code, opened with the settings kvlab's side is
// given.  The protocol is benchmarks/reference/ref_common.h's: fillseq (keys 0..num-1, batches of 1000, 100-byte
// values), then readrandom (uniform keys, splitmix64 and a multiply-high draw, 16 decimal digits) on THREADS
// goroutines, as a Go program runs them (kvlab's measured loop runs on one goroutine a thread too), for READS per
// thread or "<seconds>s"; one JSON line a phase.  Every value is the same 100 bytes, as in the C references: a
// fillseq here gives the engine's compression an easier time than kvlab's values, which differ (half compressible).
//
//	ref_pebble|ref_badger DBDIR NUM READS_OR_SECONDS THREADS [--cache-size BYTES] [--phases fillseq,readrandom]
//	          [--seed N]
//
// The engine is the program's name after "ref_" (benchmarks/vs_reference.py builds it as ref_pebble and ref_badger,
// as it names the C references).
package main

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	badger "github.com/dgraph-io/badger/v4"
)

const (
	batchSize = 1000
	keySize   = 16
	valueSize = 100
)

type store interface {
	fill(num uint64, value []byte) error
	get(key []byte) (bool, error) // the value read whole (Pebble: the slice until Close; Badger: a copy)
	close() error
	config() string
}

// ---- Pebble: pebble.Open, Batch.Set / Commit(pebble.NoSync), DB.Get and its io.Closer (Pebble's README) ----

type pebbleStore struct {
	db    *pebble.DB
	cache int64
}

func openPebble(dir string, cache int64) (store, error) {
	opts := &pebble.Options{}
	if cache > 0 {
		c := pebble.NewCache(cache)
		defer c.Unref()
		opts.Cache = c
	}
	db, err := pebble.Open(dir, opts)
	return &pebbleStore{db: db, cache: cache}, err
}

func (p *pebbleStore) fill(num uint64, value []byte) error {
	key := make([]byte, keySize)
	for i := uint64(0); i < num; i += batchSize {
		b := p.db.NewBatch()
		for j := i; j < i+batchSize && j < num; j++ {
			makeKey(key, j)
			if err := b.Set(key, value, nil); err != nil {
				return err
			}
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			return err
		}
		b.Close()
	}
	return nil
}

func (p *pebbleStore) get(key []byte) (bool, error) {
	v, closer, err := p.db.Get(key)
	if err == pebble.ErrNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_ = len(v)
	return true, closer.Close()
}

func (p *pebbleStore) close() error   { return p.db.Close() }
func (p *pebbleStore) config() string { return fmt.Sprintf("pebble cache=%d sync=false", p.cache) }

// ---- Badger: badger.Open, one DB.Update transaction per batch, DB.View with Txn.Get and Item.ValueCopy
// (Badger's README, "Read-write transactions" and "Read-only transactions") ----

type badgerStore struct {
	db    *badger.DB
	cache int64
	bufs  sync.Pool
}

func openBadger(dir string, cache int64) (store, error) {
	opts := badger.DefaultOptions(dir).WithLogger(nil)
	if cache > 0 {
		opts = opts.WithBlockCacheSize(cache)
	}
	db, err := badger.Open(opts)
	return &badgerStore{db: db, cache: opts.BlockCacheSize}, err
}

func (b *badgerStore) fill(num uint64, value []byte) error {
	for i := uint64(0); i < num; i += batchSize {
		err := b.db.Update(func(txn *badger.Txn) error {
			for j := i; j < i+batchSize && j < num; j++ {
				key := make([]byte, keySize) // kept by the transaction until it commits
				makeKey(key, j)
				if err := txn.Set(key, value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

type valueBuf struct{ b []byte }

func (b *badgerStore) get(key []byte) (bool, error) {
	found := false
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err == badger.ErrKeyNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		buf, _ := b.bufs.Get().(*valueBuf)
		if buf == nil {
			buf = &valueBuf{}
		}
		buf.b, err = item.ValueCopy(buf.b[:0])
		b.bufs.Put(buf)
		found = err == nil
		return err
	})
	return found, err
}

func (b *badgerStore) close() error { return b.db.Close() }
func (b *badgerStore) config() string {
	return fmt.Sprintf("badger block_cache=%d sync_writes=false", b.cache)
}

// ---- the protocol ----

func makeKey(key []byte, i uint64) {
	for j := len(key) - 1; j >= 0; j-- {
		q := i / 10
		key[j] = byte('0' + i - q*10)
		i = q
	}
}

func splitmix(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func below(s *uint64, n uint64) uint64 {
	hi, _ := bits.Mul64(splitmix(s), n)
	return hi
}

func report(engine, workload string, threads int, ops uint64, secs float64, found uint64, config string) {
	line, _ := json.Marshal(map[string]any{"engine": engine, "workload": workload, "threads": threads, "ops": ops,
		"seconds": secs, "ops_per_sec": float64(ops) / secs, "found": found, "config": config})
	fmt.Println(string(line))
}

func die(what string, err error) {
	fmt.Fprintf(os.Stderr, "reference: %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: ref_pebble|ref_badger DBDIR NUM READS_OR_SECONDS THREADS "+
			"[--cache-size BYTES] [--phases fillseq,readrandom] [--seed N]")
		os.Exit(2)
	}
	engine, dir := strings.TrimPrefix(filepath.Base(os.Args[0]), "ref_"), os.Args[1]
	num, _ := strconv.ParseUint(os.Args[2], 10, 64)
	amount := os.Args[3]
	threads, _ := strconv.Atoi(os.Args[4])
	cache, seed, phases := int64(0), uint64(1), "fillseq,readrandom"
	for i := 5; i+1 < len(os.Args); i += 2 {
		switch os.Args[i] {
		case "--cache-size":
			cache, _ = strconv.ParseInt(os.Args[i+1], 10, 64)
		case "--seed":
			seed, _ = strconv.ParseUint(os.Args[i+1], 10, 64)
		case "--phases":
			phases = os.Args[i+1]
		case "--object": // the C references' table or file name; a Go engine's database is the directory

		default:
			die("option", fmt.Errorf("%s is unknown", os.Args[i]))
		}
	}
	var s store
	var err error
	switch engine {
	case "pebble":
		s, err = openPebble(dir, cache)
	case "badger":
		s, err = openBadger(dir, cache)
	default:
		err = fmt.Errorf("engine %q is neither pebble nor badger", engine)
	}
	if err != nil {
		die("open", err)
	}
	if strings.Contains(phases, "fillseq") {
		value := make([]byte, valueSize)
		vs := seed
		for i := 0; i < valueSize/2; i++ {
			value[i] = byte(' ' + below(&vs, 95))
		}
		copy(value[valueSize/2:], value[:valueSize/2])
		t0 := time.Now()
		if err := s.fill(num, value); err != nil {
			die("fillseq", err)
		}
		report(engine, "fillseq", 1, num, time.Since(t0).Seconds(), 0, s.config())
	}
	if strings.Contains(phases, "readrandom") {
		readrandom(engine, s, num, amount, threads, seed)
	}
	if err := s.close(); err != nil {
		die("close", err)
	}
}

func readrandom(engine string, s store, num uint64, amount string, threads int, seed uint64) {
	var stop atomic.Bool
	seconds, timed := 0.0, strings.HasSuffix(amount, "s")
	reads := uint64(0)
	if timed {
		seconds, _ = strconv.ParseFloat(strings.TrimSuffix(amount, "s"), 64)
	} else {
		reads, _ = strconv.ParseUint(amount, 10, 64)
	}
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ops, found := make([]uint64, threads), make([]uint64, threads)
	for w := 0; w < threads; w++ {
		ready.Add(1)
		done.Add(1)
		go func(w int) {
			defer done.Done()
			rng := seed*0x100000001b3 + uint64(w) + 1
			key := make([]byte, keySize)
			n, f := uint64(0), uint64(0)
			ready.Done()
			<-start
			for (timed && !stop.Load()) || (!timed && n < reads) {
				makeKey(key, below(&rng, num))
				ok, err := s.get(key)
				if err != nil {
					die("get", err)
				}
				if ok {
					f++
				}
				n++
			}
			ops[w], found[w] = n, f
		}(w)
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	if timed {
		time.Sleep(time.Duration(seconds * float64(time.Second)))
		stop.Store(true)
	}
	done.Wait()
	secs := time.Since(t0).Seconds()
	total, hits := uint64(0), uint64(0)
	for w := range ops {
		total += ops[w]
		hits += found[w]
	}
	report(engine, "readrandom", threads, total, secs, hits, s.config())
}
