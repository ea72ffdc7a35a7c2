package ring

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
)

// scratch is the working memory of one Postset call, taken from the call's
// Allocator and released when the call returns: nothing in it outlives the
// call. In the library the Allocator is C malloc, so the memory is outside
// the Go heap (steady-state calls leave the Go garbage collector nothing to
// do) and running out of it is an answer (ncclSystemError), not Go's fatal
// "out of memory".
//
// The blocks are held in the struct itself, so that a call's bookkeeping
// allocates nothing on the Go heap either (issue 13). A Postset that
// succeeds takes three at most (the gathered tables, D25's locations and
// order); one that fails adds the diagnosis and rank 0's walk lines, and a
// fifth block goes to a Go slice: the heap is touched only on that path
// (TestBrokenRingUnderTheNetworkOrder takes it).
type scratch struct {
	alloc  Allocator
	first  [4]uintptr
	nFirst int
	more   []uintptr
	failed int // bytes of the request that failed, 0 if none
}

// newScratch takes working memory from a, or from the Go heap when a is nil.
func newScratch(a Allocator) *scratch {
	if a == nil {
		a = &goHeap{live: map[uintptr][]int32{}}
	}
	return &scratch{alloc: a}
}

// ints returns n ints of working memory, not cleared, or nil when the
// allocator has none.
func (s *scratch) ints(n int) []int32 {
	p := s.alloc.AllocInts(max(n, 1))
	if p == 0 {
		s.failed = 4 * n
		return nil
	}
	if s.nFirst < len(s.first) {
		s.first[s.nFirst] = p
		s.nFirst++
	} else {
		s.more = append(s.more, p)
	}
	return abi.Ints(p, n)
}

// release frees every block.
func (s *scratch) release() {
	for _, p := range s.first[:s.nFirst] {
		s.alloc.Free(p)
	}
	for _, p := range s.more {
		s.alloc.Free(p)
	}
	s.nFirst, s.more = 0, s.more[:0]
}

// err is the ncclSystemError of a failed request (docs/errors.md P7b).
func (s *scratch) err(fn string, nRanks, n int) *abi.Error {
	return abi.Errorf(abi.SystemError, "%s: malloc of %d bytes of working memory for %d ranks x %d channels failed", fn, s.failed, nRanks, n)
}

// pairsOf views 2k ints of working memory as k pairs (walk.go). It must
// start a block: the Allocator's blocks are 8-byte aligned (malloc's are
// 16, the Go heap's at least 8).
func pairsOf(s []int32) []uint64 {
	if len(s) == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(s))
	if uintptr(p)%8 != 0 {
		panic("ring: working memory is not 8-byte aligned")
	}
	return unsafe.Slice((*uint64)(p), len(s)/2)
}
