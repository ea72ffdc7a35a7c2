package ring

import "github.com/nccomring/libnccomring/abi"

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
// sc, or returns nil when there is none.
func newPostsetMemory(sc *scratch, nRanks, n int) *postsetMemory {
	block := sc.ints((2 + 3*n) * nRanks)
	if block == nil {
		return nil
	}
	take := func(k int) []int32 { s := block[:k:k]; block = block[k:]; return s }
	return &postsetMemory{nodeOf: take(nRanks), heads: take(nRanks), links: take(2 * n * nRanks), rings: take(n * nRanks)}
}

// nodeTable is the result of node detection (D8).
type nodeTable struct {
	heads []int32 // heads[m]: node m's channel-0 head rank (nodesFirstRank)
	self  int     // this rank's node
}

// scanFragments makes the one pass Postset makes over every fragment (rank
// order) for n channels. For each rank it checks the ranges of its ring
// arrays (docs/errors.md P8, P9), finds its node by its channel-0 head (D8;
// a dense table indexed by head rank is the map), checks that it agrees with
// its node's first rank on every channel's head and tail (P10, P11), and
// copies its ringNext and ringPrev into the rank-major link table
// links[(r*n + c)*2 + {0: next, 1: prev}] (one sequential stream of writes),
// which stitch then completes. Next and prev of a rank share a cache line,
// so the walk that checks both reads each rank's row once.
//
// The checks run branch-free over a rank's channels and only say whether
// one failed (ok false): the canonical error, the same on every rank, comes
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
		recv, send := f.RingRecv[:n], f.RingSend[:n]
		prev, nxt := f.RingPrev[:n], f.RingNext[:n]
		// The largest value as unsigned: a negative one wraps to a huge one,
		// so one compare after the loop checks [0, size) for all of them.
		// prev/next are shifted by one so that -1 is in range.
		var ends, link uint32
		row := links[2*r*n : 2*(r+1)*n]
		for c := range recv {
			ends = max(ends, uint32(recv[c]), uint32(send[c]))
			link = max(link, uint32(prev[c]+1), uint32(nxt[c]+1))
			row[2*c], row[2*c+1] = nxt[c], prev[c]
		}
		if ends >= size || link > size {
			return nodeTable{}, nil, false
		}
		h := recv[0]
		m := nodeOf[h]
		if m < 0 {
			m = int32(len(heads))
			nodeOf[h] = m
			heads = heads[:m+1] // within w.heads: at most nRanks nodes
			heads[m] = h
		}
		if int32(r) == rank {
			self = int(m)
		}
		first := all[h]
		var differ int32
		for c := range recv {
			differ |= (recv[c] ^ first.RingRecv[c]) | (send[c] ^ first.RingSend[c])
		}
		if differ != 0 {
			return nodeTable{}, nil, false
		}
	}
	w.sink = touched
	return nodeTable{heads: heads, self: self}, links, true
}

// stitch completes the link table with D9's stitch (stitch.go): each
// node's tail's next and each node's head's prev.
func stitch(all []*abi.TopoRanks, heads []int32, n int, links []int32) {
	for c := range n {
		stitchNext(all, heads, c, func(tail, head int32) { links[2*(int(tail)*n+c)] = head })
		stitchPrev(all, heads, c, func(head, tail int32) { links[2*(int(head)*n+c)+1] = tail })
	}
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
