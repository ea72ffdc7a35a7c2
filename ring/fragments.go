package ring

import (
	"unsafe"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
)

// nodeFinder is D8's node detection, the one place Postset and its
// diagnosis take it from: ranks are offered in rank order by their
// channel-0 head (ringRecv[0]), and a head not seen before opens the next
// node, whose first rank (nodesFirstRank) it is. byHead is the map D8
// asks for, dense: byHead[h] is the node of head h, -1 when h heads none.
type nodeFinder struct {
	byHead []int32 // nRanks ints
	heads  []int32 // heads[m]: node m's first rank; room for nRanks
}

// newNodeFinder returns a finder over byHead and heads (nRanks ints each,
// the caller's working memory).
func newNodeFinder(byHead, heads []int32) nodeFinder {
	for i := range byHead {
		byHead[i] = -1
	}
	return nodeFinder{byHead: byHead, heads: heads[:0]}
}

// node returns the node of a rank whose channel-0 head is h, in [0,
// nRanks), and whether this call opened it.
func (f *nodeFinder) node(h int32) (m int32, opened bool) {
	if m = f.byHead[h]; m >= 0 {
		return m, false
	}
	m = int32(len(f.heads))
	f.byHead[h] = m
	f.heads = append(f.heads, h) // within its capacity: at most nRanks nodes
	return m, true
}

// touchBlock is how many fragments gather loads ahead at a time: 32 x 8
// lines = 16 KiB, which stays in L1/L2 until the checks reach them.
const touchBlock = 32

// gathered is what Postset builds from the fragments, in one block of
// working memory from the call's Allocator: ring-major for n channels
// (walk.go's layout), the pairs of every rank on every channel,
// pairs[c*nRanks + r] (its ringNext and ringPrev, then stitched), the
// node finder's two tables, and the walk of each channel's ring from the
// calling rank, walks[c*nRanks + i] (the userRanks the call commits); and
// what gather counts and keeps as it passes the records.
type gathered struct {
	pairs []uint64
	nodes nodeFinder
	walks []int32
	sink  int32 // what the touch-ahead loads, so they are not dropped
	// census counts the fragments' records as gather passes them (D28,
	// records.go).
	census census
	// places is each node's head's location as gather found it, when
	// rank 0's record asks for the network order (Postset then takes room
	// for it): read while the head's record is in cache, for nodeOrder.
	places nodeorder.Compact
}

// newGathered takes the block for nRanks ranks and up to n channels from sc;
// false when there is none. Returned by value: nothing of the call's
// bookkeeping goes to the Go heap.
func newGathered(sc *scratch, nRanks, n int) (gathered, bool) {
	block := sc.ints((2 + 3*n) * nRanks)
	if block == nil {
		return gathered{}, false
	}
	take := func(k int) []int32 { s := block[:k:k]; block = block[k:]; return s }
	g := gathered{pairs: pairsOf(take(2 * n * nRanks))} // first: the block's alignment
	g.nodes = nodeFinder{byHead: take(nRanks), heads: take(nRanks)}
	g.walks = take(n * nRanks)
	return g, true
}

// gather is Postset's one pass over the fragments, in rank order, for n
// channels: it finds the nodes (D8), checks that every rank agrees with
// its node's first rank on every channel's head and tail (P10), whose
// range it checks once per node (P8; so every rank's is in range), and
// copies every rank's ringNext and ringPrev into its pairs, ready for the
// stitch, and counts every rank's record (census.add, D28). It only says whether a check failed: the canonical
// error, the same on every rank, comes from channelCount (D27) or the
// diagnosis (D24), which run only then. self is rank's node.
//
// The range of ringNext and ringPrev (P9) is checked by stitch for the
// values it overwrites and by the walk for every other.
func (g *gathered) gather(all []*abi.TopoRanks, n int, rank int32) (self int32, ok bool) {
	if n == 0 { // rank 0's fragment has no channel (P7a)
		return -1, false
	}
	nRanks := len(all)
	size := uint32(nRanks)
	g.nodes = newNodeFinder(g.nodes.byHead, g.nodes.heads)
	g.census.reset(all[0], false)
	last := n - 1
	for lo := 0; lo < nRanks; lo += touchBlock {
		block := all[lo:min(lo+touchBlock, nRanks)]
		// Touch the ring lines of the whole block in a tight loop of
		// loads first: many misses are then in flight at once, instead of
		// one at a time as the checks below would take them (a 960-byte
		// stride no hardware prefetcher follows). Both ends of each
		// array's used part: a fragment that is not 64-byte aligned (a
		// malloc'd AllGather buffer) spreads each over two cache lines.
		for _, a := range block {
			g.sink |= a.RingRecv[0] | a.RingSend[0] | a.RingPrev[0] | a.RingNext[0] |
				a.RingRecv[last] | a.RingSend[last] | a.RingPrev[last] | a.RingNext[last] | record.Of(a).Magic
		}
		for i, f := range block {
			h := f.RingRecv[0]
			if uint32(h) >= size {
				return -1, false
			}
			m, opened := g.nodes.node(h)
			first := all[h]
			if opened && !endsInRange(first, n, size) {
				return -1, false
			}
			if opened && g.places.Levels != nil {
				r := record.Of(first)
				g.places.Set(int(m), record.Levels(r.Flags), &r.Location)
			}
			if int32(lo+i) == rank {
				self = m
			}
			if !sameEnds(f, first, n) {
				return -1, false
			}
			g.census.add(f, first, int32(lo+i), n)
		}
		// The block's pairs, channel by channel: each row gets a run of
		// whole cache lines at once. (Rank by rank, the n rows, nRanks
		// pairs apart, would share a few cache sets and evict each other
		// on every store.)
		for c := range n {
			row := g.pairs[c*nRanks+lo:][:len(block)]
			for i, f := range block {
				row[i] = pair(f.RingNext[c], f.RingPrev[c])
			}
		}
	}
	return self, true
}

// endsInRange reports whether every ringRecv and ringSend of f's first n
// channels is in [0, size).
func endsInRange(f *abi.TopoRanks, n int, size uint32) bool {
	var most uint32
	for c := range n {
		most = max(most, uint32(f.RingRecv[c]), uint32(f.RingSend[c]))
	}
	return most < size
}

// sameEnds reports whether f and first hold the same ringRecv and ringSend
// on each of the first n channels.
func sameEnds(f, first *abi.TopoRanks, n int) bool {
	return asBytes(f.RingRecv[:n]) == asBytes(first.RingRecv[:n]) && asBytes(f.RingSend[:n]) == asBytes(first.RingSend[:n])
}

// asBytes views the bytes of s as a string, without copying (they do not
// change while it is in use), so that comparing two is the runtime's
// vector compare, not a loop over the ints (BENCHMARKS.md, "Where the time
// goes", has what it saves).
func asBytes(s []int32) string {
	return unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
}

// ownChannels is a fragment's channel count (D23): the number of leading
// channels whose ringRecv is >= 0.
func ownChannels(f *abi.TopoRanks) int {
	k := 0
	for k < layout.MaxChannels && f.RingRecv[k] >= 0 {
		k++
	}
	return k
}

// channelCount is the job's channel count (D27): the smallest channel
// count of any fragment, and the first rank whose fragment has it.
func channelCount(all []*abi.TopoRanks) (count, firstRank int) {
	count, firstRank = layout.MaxChannels+1, -1
	for r, f := range all {
		if k := ownChannels(f); k < count {
			count, firstRank = k, r
		}
	}
	return count, firstRank
}
