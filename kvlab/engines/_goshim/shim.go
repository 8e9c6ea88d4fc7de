// Package main is kvlab's Go shim: Pebble and Badger behind the C calls of kvgo.h, built with -buildmode=c-shared
// into one object (a process hosts one Go runtime).  shim.go: the exported calls, handles, buffers and errors;
// engines.go: the two engines behind one interface; loop.go: the measured loops that run inside Go.
package main

/*
#include <stdlib.h>
#include <string.h>
#define KVGO_INSIDE_GO
#include "kvgo.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

func main() {}

// A context's C buffers: what a get or a cursor hands back lives here until the context's next call.
type cbuf struct {
	p   unsafe.Pointer
	cap int
}

func (b *cbuf) set(src []byte) (*C.char, C.size_t) {
	if len(src) > b.cap {
		n := b.cap*2 + 64
		if n < len(src) {
			n = len(src)
		}
		p := C.realloc(b.p, C.size_t(n))
		if p == nil {
			panic("kvgo: out of memory")
		}
		b.p, b.cap = p, n
	}
	if len(src) > 0 {
		copy(unsafe.Slice((*byte)(b.p), len(src)), src)
	}
	return (*C.char)(b.p), C.size_t(len(src))
}

func (b *cbuf) free() {
	C.free(b.p)
	b.p, b.cap = nil, 0
}

type thread struct {
	db       *database
	t        engineThread
	val, key cbuf
}

type database struct {
	e       engine
	threads atomic.Int64
}

// Handles: small integers into tables that a call reads without a lock (the table is only grown under mu).
const maxHandles = 1 << 16

var (
	mu       sync.Mutex
	dbTab    [256]atomic.Pointer[database]
	thTab    [maxHandles]atomic.Pointer[thread]
	freeThs  []uint64
	nextTh   uint64 = 1
	buildVer        = map[string]string{}
)

func init() {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			v := d.Version
			if d.Replace != nil {
				v = d.Replace.Version
			}
			buildVer[d.Path] = v
		}
	}
}

func th(h C.uint64_t) *thread { return thTab[uint64(h)&(maxHandles-1)].Load() }

// fill turns a Go error into kvgo_error; returns KVGO_ERROR.
func fill(out *C.kvgo_error, e error) C.int {
	kind, name := C.KVGO_E_OTHER, fmt.Sprintf("%T", e)
	var errno syscall.Errno
	var cfg *configError
	switch {
	case errors.As(e, &cfg):
		kind, name = C.KVGO_E_CONFIG, "config"
	case errors.As(e, &errno):
		kind = C.KVGO_E_IO
		if errno == syscall.ENOSPC || errno == syscall.EDQUOT {
			kind = C.KVGO_E_FULL
		}
		out.os_errno = C.int(errno)
	default:
		kind, name = classify(e)
	}
	out.kind = C.int(kind)
	out.name = cstr("name:"+name, name)
	setText(out.text[:], e.Error())
	return C.KVGO_ERROR
}

func setText(dst []C.char, s string) {
	if len(s) > len(dst)-1 {
		s = s[:len(dst)-1]
	}
	for i := 0; i < len(s); i++ {
		dst[i] = C.char(s[i])
	}
	dst[len(s)] = 0
}

type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

func configf(format string, a ...any) error { return &configError{fmt.Sprintf(format, a...)} }

// caught turns a panic inside an engine into kvgo_error kind KVGO_E_PANIC (deferred by every call that reaches one).
func caught(out *C.kvgo_error, rc *C.int) {
	if r := recover(); r != nil {
		*rc = panicked(out, r)
	}
}

// panicked fills kvgo_error (where there is one) with a panic's message; returns KVGO_ERROR.
func panicked(out *C.kvgo_error, r any) C.int {
	if out != nil {
		// an engine that panics on a failed write (Pebble's fatal commit error) says the OS's error in words
		msg := fmt.Sprint(r)
		out.kind, out.os_errno = C.KVGO_E_PANIC, 0
		switch {
		case strings.Contains(msg, syscall.ENOSPC.Error()):
			out.kind, out.os_errno = C.KVGO_E_FULL, C.int(syscall.ENOSPC)
		case strings.Contains(msg, syscall.EIO.Error()):
			out.kind, out.os_errno = C.KVGO_E_IO, C.int(syscall.EIO)
		}
		out.name = cstr("name:panic", "panic")
		setText(out.text[:], msg)
	}
	return C.KVGO_ERROR
}

func goBytes(p *C.char, n C.size_t) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
}

//export kvgo_open
func kvgo_open(path *C.char, o *C.kvgo_options, out *C.uint64_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	opts := options{
		create: o.create != 0, sync: o.sync != 0, cacheSize: int64(o.cache_size),
		memtableSize: int64(o.memtable_size), blockSize: int(o.block_size),
	}
	if o.options != nil {
		opts.own = C.GoString(o.options)
	}
	var e engine
	var err error
	switch o.engine {
	case C.KVGO_PEBBLE:
		e, err = openPebble(C.GoString(path), opts)
	case C.KVGO_BADGER:
		e, err = openBadger(C.GoString(path), opts)
	default:
		err = configf("kvgo: engine %d is none of pebble (1), badger (2)", int(o.engine))
	}
	if err != nil {
		return fill(cerr, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i < len(dbTab); i++ {
		if dbTab[i].Load() == nil {
			dbTab[i].Store(&database{e: e})
			*out = C.uint64_t(i)
			return C.KVGO_OK
		}
	}
	e.close()
	return fill(cerr, configf("kvgo: more than %d databases open", len(dbTab)-1))
}

//export kvgo_close
func kvgo_close(h C.uint64_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	db := dbTab[uint64(h)&255].Swap(nil)
	if db == nil {
		return fill(cerr, configf("kvgo: no database %d", uint64(h)))
	}
	if err := db.e.close(); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_thread_open
func kvgo_thread_open(h C.uint64_t) C.uint64_t {
	db := dbTab[uint64(h)&255].Load()
	if db == nil {
		return 0
	}
	mu.Lock()
	defer mu.Unlock()
	var id uint64
	if n := len(freeThs); n > 0 {
		id, freeThs = freeThs[n-1], freeThs[:n-1]
	} else if nextTh < maxHandles {
		id = nextTh
		nextTh++
	} else {
		return 0
	}
	db.threads.Add(1)
	thTab[id].Store(&thread{db: db, t: db.e.thread()})
	return C.uint64_t(id)
}

//export kvgo_thread_close
func kvgo_thread_close(h C.uint64_t) {
	id := uint64(h) & (maxHandles - 1)
	t := thTab[id].Swap(nil)
	if t == nil {
		return
	}
	func() {
		defer func() { recover() }()
		t.t.close()
	}()
	t.val.free()
	t.key.free()
	t.db.threads.Add(-1)
	mu.Lock()
	freeThs = append(freeThs, id)
	mu.Unlock()
}

//export kvgo_put
func kvgo_put(h C.uint64_t, k *C.char, kl C.size_t, v *C.char, vl C.size_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	if err := th(h).t.put(goBytes(k, kl), goBytes(v, vl)); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_del
func kvgo_del(h C.uint64_t, k *C.char, kl C.size_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	if err := th(h).t.del(goBytes(k, kl)); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_get
func kvgo_get(h C.uint64_t, k *C.char, kl C.size_t, v **C.char, vl *C.size_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	t := th(h)
	val, found, err := t.t.get(goBytes(k, kl))
	if err != nil {
		return fill(cerr, err)
	}
	if !found {
		return C.KVGO_NOTFOUND
	}
	*v, *vl = t.val.set(val)
	t.t.release()
	return C.KVGO_OK
}

//export kvgo_batch_begin
func kvgo_batch_begin(h C.uint64_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	if err := th(h).t.batchBegin(); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_batch_commit
func kvgo_batch_commit(h C.uint64_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	if err := th(h).t.batchCommit(); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_txn_begin
func kvgo_txn_begin(h C.uint64_t, kind C.int, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	if err := th(h).t.txnBegin(int(kind)); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_txn_commit
func kvgo_txn_commit(h C.uint64_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	if err := th(h).t.txnCommit(); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_txn_abort
func kvgo_txn_abort(h C.uint64_t) {
	defer func() { recover() }()
	th(h).t.txnAbort()
}

//export kvgo_batch_abort
func kvgo_batch_abort(h C.uint64_t) {
	defer func() { recover() }()
	th(h).t.batchAbort()
}

func cursorOut(t *thread, k, v []byte, ok bool, err error, ko **C.char, klo *C.size_t, vo **C.char,
	vlo *C.size_t, cerr *C.kvgo_error) C.int {
	if err != nil {
		return fill(cerr, err)
	}
	if !ok {
		return C.KVGO_NOTFOUND
	}
	*ko, *klo = t.key.set(k)
	*vo, *vlo = t.val.set(v)
	return C.KVGO_OK
}

//export kvgo_seek
func kvgo_seek(h C.uint64_t, k *C.char, kl C.size_t, ko **C.char, klo *C.size_t, vo **C.char, vlo *C.size_t,
	cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	t := th(h)
	var key []byte
	if k != nil {
		key = goBytes(k, kl)
	}
	kk, vv, ok, err := t.t.seek(key)
	return cursorOut(t, kk, vv, ok, err, ko, klo, vo, vlo, cerr)
}

//export kvgo_next
func kvgo_next(h C.uint64_t, ko **C.char, klo *C.size_t, vo **C.char, vlo *C.size_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	t := th(h)
	kk, vv, ok, err := t.t.next()
	return cursorOut(t, kk, vv, ok, err, ko, klo, vo, vlo, cerr)
}

//export kvgo_iter_close
func kvgo_iter_close(h C.uint64_t) {
	defer func() { recover() }()
	th(h).t.iterClose()
}

//export kvgo_compact
func kvgo_compact(h C.uint64_t, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	if err := dbTab[uint64(h)&255].Load().e.compact(); err != nil {
		return fill(cerr, err)
	}
	return C.KVGO_OK
}

//export kvgo_stats
func kvgo_stats(h C.uint64_t, buf *C.char, n C.size_t) {
	defer func() { recover() }()
	var b strings.Builder
	for _, kv := range dbTab[uint64(h)&255].Load().e.stats() {
		fmt.Fprintf(&b, "%s=%d\n", kv.name, kv.value)
	}
	s := b.String()
	if len(s) >= int(n) {
		s = s[:int(n)-1]
	}
	out := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	copy(out, s)
	out[len(s)] = 0
}

var versions sync.Map // a key -> its *C.char, made once and kept: the versions and the errors' names

func cstr(key any, s string) *C.char {
	if p, ok := versions.Load(key); ok {
		return p.(*C.char)
	}
	p, _ := versions.LoadOrStore(key, C.CString(s))
	return p.(*C.char)
}

//export kvgo_version
func kvgo_version(engine C.int) *C.char {
	switch engine {
	case C.KVGO_PEBBLE:
		return cstr(1, strings.TrimPrefix(buildVer["github.com/cockroachdb/pebble/v2"], "v"))
	case C.KVGO_BADGER:
		return cstr(2, strings.TrimPrefix(buildVer["github.com/dgraph-io/badger/v4"], "v"))
	}
	return cstr(0, "unknown")
}

//export kvgo_go_version
func kvgo_go_version() *C.char { return cstr("go", runtime.Version()) }
