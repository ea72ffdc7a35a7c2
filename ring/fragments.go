package ring

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// touchBlock is how many fragments scanFragments loads ahead at a time:
// 32 x 8 lines = 16 KiB, which stays in L1/L2 until the checks reach them.
const touchBlock = 32

// postsetMemory is Postset's working memory, one block from the call's
// Allocator: the node of each head rank, the heads in node order, the link
// table and the rings walked from rank 0.
type postsetMemory struct {
	nodeOf, heads, links, rings []int32
	sink                        int32
}

// newPostsetMemory takes the block for nRanks ranks and n channels from
// sc; false when there is none. It is returned by value: nothing of the
// call's bookkeeping goes to the Go heap.
func newPostsetMemory(sc *scratch, nRanks, n int) (postsetMemory, bool) {
	block := sc.ints((2 + 3*n) * nRanks)
	if block == nil {
		return postsetMemory{}, false
	}
	take := func(k int) []int32 { s := block[:k:k]; block = block[k:]; return s }
	return postsetMemory{nodeOf: take(nRanks), heads: take(nRanks), links: take(2 * n * nRanks), rings: take(n * nRanks)}, true
}

// nodeTable is the result of node detection (D8).
type nodeTable struct {
	heads []int32 // heads[m]: node m's channel-0 head rank (nodesFirstRank)
	self  int     // this rank's node
	// at[c] is this rank's position in ring c of Postset's working rings:
	// nodeWalk writes them from node self's head (from node 0's in delta
	// form), the exact path and fastWalk from this rank (0).
	at [layout.MaxChannels]int32
	// deltas, when not nil, is the working rings in delta form (deltas.go,
	// nodeWalk's for block numberings): ring c's position p holds its rank
	// minus p, and nodeWalk writes them from node 0's head.
	deltas []int8
}

// scanFragments makes the one pass Postset makes over every fragment (rank
// order) for n channels. For each rank it finds its node by its channel-0
// head (D8; a dense table indexed by head rank is the map), checks that it
// agrees with its node's first rank on every channel's head and tail (P10,
// P11), whose range it checks once per node (P8; so every rank's is in
// range), and copies its ringNext and ringPrev into the ring-major link table
// links[c*2*nRanks + 2*r + {0: next, 1: prev}] (one sequential stream of
// writes per channel), which stitch then completes. Next and prev of a rank
// on a channel are side by side, so the walk that checks both reads one
// pair per step, and each channel's table is a contiguous 8*nRanks bytes
// that a walk of a few channels keeps in cache.
//
// The range of ringPrev and ringNext (P9) is checked by stitch, for the
// values it overwrites, and by the walk for every other. The checks run
// branch-free over a rank's channels and only say whether one failed (ok
// false): the canonical error, the same on every rank, comes
// from the channel count (D23) or diagnose (D24), which run only then.
//
// w is the call's working memory (postsetMemory): w.nodeOf and w.heads of
// nRanks ints, w.links of 2*n*nRanks.
func scanFragments(all []*abi.TopoRanks, n int, rank int32, w *postsetMemory) (nodes nodeTable, links []int32, ok bool) {
	nRanks := len(all)
	size := uint32(nRanks)
	nodeOf := w.nodeOf
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	links = w.links[:2*n*nRanks]
	heads := w.heads[:0]
	self := -1
	var touched int32
	last := n - 1
	for r, f := range all {
		// At the start of each block of fragments, touch the ring lines of
		// the whole block in a tight loop of loads: many misses are then in
		// flight at once, instead of one at a time as the checks below would
		// take them (a 960-byte stride no hardware prefetcher follows). Both
		// ends of each array's used part are touched: a fragment that is not
		// 64-byte aligned (a malloc'd AllGather buffer) spreads each over two
		// cache lines.
		if r%touchBlock == 0 {
			for _, a := range all[r:min(r+touchBlock, nRanks)] {
				touched |= a.RingRecv[0] | a.RingSend[0] | a.RingPrev[0] | a.RingNext[0] |
					a.RingRecv[last] | a.RingSend[last] | a.RingPrev[last] | a.RingNext[last]
			}
		}
		// This rank's node by its channel-0 head (a head out of range
		// fails the range check anyway).
		h := f.RingRecv[0]
		if uint32(h) >= size {
			return nodeTable{}, nil, false
		}
		m := nodeOf[h]
		if m < 0 {
			// A new node: its first rank's ringRecv and ringSend must be
			// in range; every rank of the node must agree with them
			// (below), so theirs are then in range too.
			if !endsInRange(all[h], n, size) {
				return nodeTable{}, nil, false
			}
			m = int32(len(heads))
			nodeOf[h] = m
			heads = heads[:m+1] // within w.heads: at most nRanks nodes
			heads[m] = h
		}
		if int32(r) == rank {
			self = int(m)
		}
		if !scanRank(f, all[h], n, unsafe.Pointer(&links[2*r]), 8*nRanks) {
			return nodeTable{}, nil, false
		}
	}
	w.sink = touched
	return nodeTable{heads: heads, self: self}, links, true
}

// word is the ints a[c] and a[c+1] as one 64-bit word, a[c] in the low
// half (c+1 < 32).
func word(a *[32]int32, c int) uint64 { return *(*uint64)(unsafe.Pointer(&a[c])) }

// endsInRange reports whether every ringRecv and ringSend of f's n
// channels is in [0, size).
func endsInRange(f *abi.TopoRanks, n int, size uint32) bool {
	var most uint32
	for c := range n {
		most = max(most, uint32(f.RingRecv[c]), uint32(f.RingSend[c]))
	}
	return most < size
}

// scanRank is scanFragments' work on one fragment f over n channels: its
// ringRecv and ringSend must equal those of its node's first rank's
// fragment first (whose range endsInRange checked), and each channel c's
// {ringNext, ringPrev} is stored at pair + c*stride bytes, two channels at
// a time as 64-bit words. ringNext and ringPrev are not range-checked
// here: stitch checks the ones it overwrites, and the walk checks every
// other (a walk that passes follows every rank's next and compares every
// rank's prev with an in-range rank).
func scanRank(f, first *abi.TopoRanks, n int, pair unsafe.Pointer, stride int) bool {
	var differ uint64
	c := 0
	for ; c+2 <= n; c += 2 {
		differ |= (word(&f.RingRecv, c) ^ word(&first.RingRecv, c)) | (word(&f.RingSend, c) ^ word(&first.RingSend, c))
		prev, next := word(&f.RingPrev, c), word(&f.RingNext, c)
		*(*uint64)(unsafe.Add(pair, c*stride)) = next&0xffffffff | prev<<32
		*(*uint64)(unsafe.Add(pair, (c+1)*stride)) = next>>32 | prev&^0xffffffff
	}
	if c < n { // an odd channel count: the last channel alone
		differ |= uint64(uint32(f.RingRecv[c]^first.RingRecv[c]) | uint32(f.RingSend[c]^first.RingSend[c]))
		*(*[2]int32)(unsafe.Add(pair, c*stride)) = [2]int32{f.RingNext[c], f.RingPrev[c]}
	}
	return differ == 0
}

// stitch completes the link table with D9's stitch (stitch.go): each
// node's tail's next and each node's head's prev, node by node (every
// channel of a node at once). Both halves write disjoint slots, and within
// a channel the nodes come in node order, so the result is that of
// stitchNext then stitchPrev channel by channel. It reports whether every
// value it overwrote was in [-1, nRanks), the range scanFragments leaves
// to it and the walk (a slot written twice: its second value is a
// ringRecv, in range).
func stitch(all []*abi.TopoRanks, heads []int32, n int, links []int32) bool {
	nRanks := len(all)
	size := uint32(nRanks)
	var most uint32 // the largest overwritten value plus one, unsigned
	for m := range heads {
		stitchNode(all, heads, m, n, func(c int, tail, head, recv, headPrev int32) {
			row := links[2*c*nRanks : 2*(c+1)*nRanks]
			at, from := 2*int(tail), 2*int(recv)+1
			most = max(most, uint32(row[at]+1), uint32(row[from]+1))
			row[at], row[from] = head, headPrev
		})
	}
	return most <= size
}

// channelCount is D23's channel count of the fragments, at most limit: the
// number of leading channels whose ringRecv is >= 0, the smallest over all
// fragments, and the first rank whose fragment has that count.
func channelCount(all []*abi.TopoRanks, limit int) (count int, firstRank int) {
	count, firstRank = limit, -1
	for r, f := range all {
		k := 0
		for k < limit && f.RingRecv[k] >= 0 {
			k++
		}
		if k < count {
			count, firstRank = k, r
		}
	}
	return count, firstRank
}

// firstWithCount returns the first rank whose fragment has exactly n
// channels (D23: ringRecv[n] < 0, or n = 32), or -1. Postset's INFO line
// names it; in a consistent job rank 0 has it, so this reads one int.
func firstWithCount(all []*abi.TopoRanks, n int) int {
	for r, f := range all {
		if n == len(f.RingRecv) || f.RingRecv[n] < 0 {
			return r
		}
	}
	return -1
}
