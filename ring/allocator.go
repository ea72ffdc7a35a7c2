package ring

import "github.com/nccomring/libnccomring/abi"

// This file is where the memory of Postset and ncclBuildRings comes from:
// the Allocator a caller passes (C malloc in the library), or the Go heap
// when it passes none. scratch.go takes a call's working memory from it,
// Postset its fresh userRanks buffers (D12).

// Allocator provides the userRanks buffers Postset allocates for channels
// whose ring.userRanks is NULL (D12). The export layer uses C malloc/free, so
// the host frees them with free(); tests use Go memory they keep alive.
type Allocator interface {
	// AllocInts returns the address of n ints, or 0 when out of memory.
	AllocInts(n int) uintptr
	// Free releases an address AllocInts returned.
	Free(p uintptr)
}

// goHeap is an Allocator over the Go heap, for callers without C memory
// (tests): it keeps each block alive until it is freed.
type goHeap struct{ live map[uintptr][]int32 }

func (g *goHeap) AllocInts(n int) uintptr {
	buf := make([]int32, n)
	p := abi.Address(buf)
	g.live[p] = buf
	return p
}

func (g *goHeap) Free(p uintptr) { delete(g.live, p) }
