package ring

import "github.com/nccomring/libnccomring/abi"

// touchBlock is how many fragments scanFragments loads ahead at a time:
// 32 x 8 lines = 16 KiB, which stays in L1/L2 until the checks reach them.
const touchBlock = 32

// nodeTable is the result of node detection (D8).
type nodeTable struct {
	heads []int32 // heads[m]: node m's channel-0 head rank (nodesFirstRank)
	self  int     // this rank's node
}

// scanFragments makes the one pass Postset makes over every fragment (rank
// order). For each rank it checks the ranges of its ring arrays (docs/errors.md
// P8, P9), finds its node by its channel-0 head (D8; a dense table indexed by
// head rank is the map), checks that it agrees with its node's first rank on
// every channel's head and tail (P10, P11), and copies its ringNext into the
// rank-major successor table next[r*nChannels + c] (one sequential stream of
// writes), which stitchTails then completes.
//
// The checks run branch-free over a rank's channels and fall back to
// rangeError/agreementError, which find the first failure in the documented
// order, only when one failed: the common case reads each of the four cache
// lines once and decides once.
func scanFragments(all []*abi.TopoRanks, nChannels int, rank int32, sc *scratch) (nodeTable, []int32, error) {
	nRanks := len(all)
	n := uint32(nRanks)
	nodeOf := sc.ints(&sc.nodeOf, nRanks)
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	next := sc.ints(&sc.next, nChannels*nRanks)
	heads := sc.heads[:0]
	self := -1
	var touched int32
	last := nChannels - 1
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
				if a != nil {
					touched |= a.RingRecv[0] | a.RingSend[0] | a.RingPrev[0] | a.RingNext[0] |
						a.RingRecv[last] | a.RingSend[last] | a.RingPrev[last] | a.RingNext[last]
				}
			}
		}
		recv, send := f.RingRecv[:nChannels], f.RingSend[:nChannels]
		prev, nxt := f.RingPrev[:nChannels], f.RingNext[:nChannels]
		// The largest value as unsigned: a negative one wraps to a huge one,
		// so one compare after the loop checks [0, n) for all of them.
		// prev/next are shifted by one so that -1 is in range.
		var ends, links uint32
		for c := range recv {
			ends = max(ends, uint32(recv[c]), uint32(send[c]))
			links = max(links, uint32(prev[c]+1), uint32(nxt[c]+1))
		}
		copy(next[r*nChannels:(r+1)*nChannels], nxt)
		if ends >= n || links > n {
			return nodeTable{}, nil, rangeError(r, f, nChannels, int32(nRanks))
		}
		h := recv[0]
		m := nodeOf[h]
		if m < 0 {
			m = int32(len(heads))
			nodeOf[h] = m
			heads = append(heads, h)
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
			return nodeTable{}, nil, agreementError(r, int(m), f, first, h, nChannels)
		}
	}
	sc.heads = heads
	sc.sink = touched
	return nodeTable{heads: heads, self: self}, next, nil
}

// rangeError is the first P8/P9 failure of fragment r, in the documented
// order (channel by channel: ringRecv, ringSend, ringPrev, ringNext).
func rangeError(r int, f *abi.TopoRanks, nChannels int, nRanks int32) error {
	fields := [...]struct {
		name   string
		values *[32]int32
		lo     int32
	}{{"ringRecv", &f.RingRecv, 0}, {"ringSend", &f.RingSend, 0}, {"ringPrev", &f.RingPrev, -1}, {"ringNext", &f.RingNext, -1}}
	for c := range nChannels {
		for _, fd := range fields {
			if v := fd.values[c]; v < fd.lo || v >= nRanks {
				return abi.Errorf(abi.InvalidArgument, "ncclTopoPostset: allTopoRanks[%d]->%s[%d] is %d, outside [%d, %d)", r, fd.name, c, v, fd.lo, nRanks)
			}
		}
	}
	return nil // not reached: called only when a value is out of range
}

// agreementError is the first P10/P11 failure of rank r against its node's
// first rank h.
func agreementError(r, m int, f, first *abi.TopoRanks, h int32, nChannels int) error {
	for c := range nChannels {
		if f.RingRecv[c] != first.RingRecv[c] {
			return abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d of node %d has channel %d head %d but the node's first rank %d has head %d",
				r, m, c, f.RingRecv[c], h, first.RingRecv[c])
		}
		if f.RingSend[c] != first.RingSend[c] {
			return abi.Errorf(abi.InternalError, "ncclTopoPostset: rank %d of node %d has channel %d tail %d but the node's first rank %d has tail %d",
				r, m, c, f.RingSend[c], h, first.RingSend[c])
		}
	}
	return nil // not reached: called only when a value differs
}

// stitchTails completes the next tables (D9, upstream's connectRings): each
// node's tail on channel c leads to the next node's head; with one node the
// tail wraps to its own head. Nodes later in node order overwrite earlier
// ones, as upstream's loop does.
func stitchTails(all []*abi.TopoRanks, heads []int32, nChannels int, next []int32) {
	nNodes := len(heads)
	for m, h := range heads {
		node, following := all[h], all[heads[(m+1)%nNodes]]
		for c := range nChannels {
			next[int(node.RingSend[c])*nChannels+c] = following.RingRecv[c]
		}
	}
}
