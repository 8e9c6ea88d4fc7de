package main

/*
#define KVGO_INSIDE_GO
#include "kvgo.h"
*/
import "C"

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
	_ "unsafe" // go:linkname

	"kvlab/goshim/tsc"
)

// CLOCK_MONOTONIC in ns through the vDSO, as kvlab's C loops read it (kv_now_ns) when the TSC is not its clock.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// kv_hist.h's layout: 7 sub-bucket bits, up to 2^44.
const (
	histSubBits = 7
	histSub     = 1 << histSubBits
	histMaxExp  = 44
	histBuckets = histSub + (histMaxExp-histSubBits)*histSub
)

// histIndex is kv_hist_index.
func histIndex(v uint64) uint64 {
	const top = uint64(1)<<histMaxExp - 1
	if v > top {
		v = top
	}
	shift := uint64(63-histSubBits) - uint64(bits.LeadingZeros64(v|histSub))
	return shift<<histSubBits + v>>shift
}

// rng is kv_rng: xoshiro256**.
type rng struct{ s0, s1, s2, s3 uint64 }

func (r *rng) next() uint64 {
	result := bits.RotateLeft64(r.s1*5, 7) * 9
	t := r.s1 << 17
	r.s2 ^= r.s0
	r.s3 ^= r.s1
	r.s1 ^= r.s2
	r.s0 ^= r.s3
	r.s2 ^= t
	r.s3 = bits.RotateLeft64(r.s3, 45)
	return result
}

// below is kv_rng_below (Lemire's multiply-shift).
func (r *rng) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// makeKey is kv_make_key: the last len(key) decimal digits of index, zero-padded.
func makeKey(key []byte, index uint64) {
	for i := len(key) - 1; i >= 0; i-- {
		q := index / 10
		key[i] = byte('0' + index - q*10)
		index = q
	}
}

// keySum folds one key into a checksum (kvgo_key_sum's and the tests').
func keySum(sum uint64, key []byte) uint64 {
	for _, b := range key {
		sum = (sum ^ uint64(b)) * 0x100000001b3
	}
	return sum
}

//export kvgo_key_sum
func kvgo_key_sum(state *C.uint64_t, n, offset, span C.uint64_t, keySize C.int) C.uint64_t {
	s := unsafe.Slice((*uint64)(unsafe.Pointer(state)), 4)
	r := rng{s[0], s[1], s[2], s[3]}
	key := make([]byte, int(keySize))
	sum := uint64(0xcbf29ce484222325)
	for i := uint64(0); i < uint64(n); i++ {
		makeKey(key, uint64(offset)+r.below(uint64(span)))
		sum = keySum(sum, key)
	}
	s[0], s[1], s[2], s[3] = r.s0, r.s1, r.s2, r.s3
	return C.uint64_t(sum)
}

// clock reads the run's latency clock.
func clock(useTSC bool) uint64 {
	if useTSC {
		return tsc.Read()
	}
	return uint64(nanotime())
}

//export kvgo_loop_run
func kvgo_loop_run(h C.uint64_t, l *C.kvgo_loop, cerr *C.kvgo_error) (rc C.int) {
	defer caught(cerr, &rc)
	t := th(h)
	if t == nil {
		return fill(cerr, configf("kvgo: no context %d", uint64(h)))
	}
	// The loop runs on a goroutine of its own, as a Go program's would, while the calling thread waits: the
	// goroutine a call from C runs on is locked to the C thread, and every time the engine makes it wait (Pebble's
	// commit pipeline, Badger's write channel) a locked goroutine costs a hand-off between OS threads that an
	// unlocked one does not (measured: Pebble's batched fillseq ran at 0.65-0.83x of a plain Go loop's when locked).
	type outcome struct {
		err      error
		panicked any
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{panicked: r}
			}
		}()
		switch l.kind {
		case C.KVGO_LOOP_WRITE:
			done <- outcome{err: loopWrite(t.t, l)}
		case C.KVGO_LOOP_READ:
			done <- outcome{err: loopRead(t.t, l)}
		default:
			done <- outcome{err: configf("kvgo: loop kind %d is none of write (1), read (2)", int(l.kind))}
		}
	}()
	o := <-done
	if o.panicked != nil {
		return panicked(cerr, o.panicked)
	}
	if o.err != nil {
		return fill(cerr, o.err)
	}
	return C.KVGO_OK
}

// loopState: what both loops read from the phase and hand back.
type loopState struct {
	r        rng
	state    []uint64
	hist     []uint64
	max      *uint64
	last     *uint64
	progress *uint64
	until    *uint64
	useTSC   bool
}

func loopStart(l *C.kvgo_loop) loopState {
	s := unsafe.Slice((*uint64)(unsafe.Pointer(l.rng)), 4)
	return loopState{
		r: rng{s[0], s[1], s[2], s[3]}, state: s,
		hist:     unsafe.Slice((*uint64)(unsafe.Pointer(l.hist_buckets)), histBuckets),
		max:      (*uint64)(unsafe.Pointer(l.hist_max)),
		last:     (*uint64)(unsafe.Pointer(l.last)),
		progress: (*uint64)(unsafe.Pointer(l.progress)),
		until:    (*uint64)(unsafe.Pointer(l.until)),
		useTSC:   l.tsc != 0,
	}
}

func (s *loopState) end() {
	s.state[0], s.state[1], s.state[2], s.state[3] = s.r.s0, s.r.s1, s.r.s2, s.r.s3
}

// endOp is loop.h's end_op: one reading of the clock ends the op (its latency into the histogram, the reading the
// next op's start), the progress published, the deadline or a stop read.  True: the run ends for this thread.
func (s *loopState) endOp(last *uint64, done uint64) bool {
	now := clock(s.useTSC)
	v := now - *last
	s.hist[histIndex(v)]++
	if v > *s.max {
		*s.max = v
	}
	*last = now
	atomic.StoreUint64(s.progress, done)
	return now >= atomic.LoadUint64(s.until)
}

// loopWrite is loops_dbbench.c's loop_write_on (no recording, no hashed keys: those runs take the C loop).
func loopWrite(t engineThread, l *C.kvgo_loop) error {
	s := loopStart(l)
	defer s.end()
	ks, vs, batch := int(l.key_size), int(l.value_size), int(l.batch)
	if batch < 1 {
		batch = 1
	}
	byTime, sequential := l.by_time != 0, l.sequential != 0
	first, count, num := uint64(l.first), uint64(l.count), uint64(l.num)
	values := unsafe.Slice((*byte)(unsafe.Pointer(l.values)), int(l.values_len))
	pos := int(*l.value_pos)
	key := make([]byte, ks)
	put := t.put
	if st, ok := t.(interface{ putStable(k, v []byte) error }); ok {
		put = st.putStable // the values are the run's buffer: read-only and there until the run ends
	}
	last := *s.last
	defer func() { *s.last = last; *l.value_pos = C.size_t(pos) }()
	done := atomic.LoadUint64(s.progress)
	bytes := uint64(0)
	defer func() { l.bytes += C.uint64_t(bytes) }()
	for i := uint64(0); byTime || i < count; {
		n := batch
		if !byTime && count-i < uint64(n) {
			n = int(count - i)
		}
		if batch > 1 {
			if err := t.batchBegin(); err != nil {
				return err
			}
		}
		for j := 0; j < n; j, i = j+1, i+1 {
			var idx uint64
			if sequential {
				idx = (first + i) % num
			} else {
				idx = s.r.below(num)
			}
			makeKey(key, idx)
			if pos+vs > len(values) {
				pos = 0
			}
			if err := put(key, values[pos:pos+vs]); err != nil {
				if batch > 1 {
					t.batchAbort()
				}
				return err
			}
			pos += vs
			bytes += uint64(ks + vs)
		}
		if batch > 1 {
			if err := t.batchCommit(); err != nil {
				return err
			}
		}
		done += uint64(n)
		if s.endOp(&last, done) {
			break
		}
	}
	return nil
}

// loopRead is loops_dbbench.c's loop_read_on.
func loopRead(t engineThread, l *C.kvgo_loop) error {
	s := loopStart(l)
	defer s.end()
	ks := int(l.key_size)
	offset, span := uint64(l.offset), uint64(l.span)
	key := make([]byte, ks)
	last := *s.last
	defer func() { *s.last = last }()
	start := atomic.LoadUint64(s.progress)
	done, end := start, start+uint64(l.count)
	if l.by_time != 0 {
		end = ^uint64(0)
	}
	missing, valueBytes := uint64(0), uint64(0)
	defer func() {
		found := done - start - missing
		l.found += C.uint64_t(found)
		l.not_found += C.uint64_t(missing)
		l.bytes += C.uint64_t(found*uint64(ks) + valueBytes)
	}()
	for done != end {
		makeKey(key, offset+s.r.below(span))
		v, found, err := t.get(key)
		if err != nil {
			return err
		}
		if found {
			valueBytes += uint64(len(v))
			t.release()
		} else {
			missing++
		}
		done++
		if s.endOp(&last, done) {
			break
		}
	}
	return nil
}
