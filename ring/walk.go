package ring

import "github.com/nccomring/libnccomring/abi"

// checkRing checks that the traversal from start along a successor table is
// one cycle through all nranks ranks, with the errors of ncclBuildRings
// (spec §3, D16; docs/errors.md B6-B8) for ring index r. The successor of
// rank v is next[v*stride + offset]: stride 1 and offset r*nranks for
// ncclBuildRings' [r*nranks + v] layout, stride nChannels and offset c for
// Postset's rank-major table. It writes nothing and allocates only to name
// the missing rank of a ring already known to be short.
//
// One compare per step decides membership: a walk that returns to start
// after exactly nranks steps, and never earlier, visits every rank once.
func checkRing(r int, start int32, next []int32, stride, offset, nranks int) error {
	cur := start
	shortCycle := 0 // length of the cycle through start, when shorter than nranks
	for step := range nranks {
		if cur == start && step > 0 && shortCycle == 0 {
			shortCycle = step
		}
		v := next[int(cur)*stride+offset]
		if uint32(v) >= uint32(nranks) {
			return abi.Errorf(abi.InternalError, "Error : ring %d: rank %d has next %d, outside [0, %d)", r, cur, v, nranks)
		}
		cur = v
	}
	if cur != start {
		return abi.Errorf(abi.InternalError, "Error : ring %d does not loop back to start (%d != %d)", r, cur, start)
	}
	if shortCycle != 0 {
		return abi.Errorf(abi.InternalError, "Error : ring %d does not contain rank %d", r,
			smallestMissing(start, shortCycle, next, stride, offset, nranks))
	}
	return nil
}

// writeRing writes the traversal of a ring checkRing accepted.
func writeRing(ring []int32, start int32, next []int32, stride, offset int) {
	cur := start
	for step := range ring {
		ring[step] = cur
		cur = next[int(cur)*stride+offset]
	}
}

// smallestMissing returns the least rank in [0, nranks) that the cycle of
// length k through start does not visit: a bitmap of nranks bits, 1/32 of
// the successor table the caller holds.
func smallestMissing(start int32, k int, next []int32, stride, offset, nranks int) int {
	present := make([]uint64, (nranks+63)/64)
	cur := start
	for range k {
		present[cur/64] |= 1 << (cur % 64)
		cur = next[int(cur)*stride+offset]
	}
	for i, word := range present {
		if word != ^uint64(0) {
			for bit := range 64 {
				if word&(1<<bit) == 0 && i*64+bit < nranks {
					return i*64 + bit
				}
			}
		}
	}
	return nranks // not reached: a short cycle misses some rank
}

// walkRings walks the n stitched rings of a link table from rank 0
// (scanFragments' layout: the next of rank v on ring r at links[2*(v*n+r)],
// its prev one int later), writing ring r to rings[r*nRanks ...], and
// records in pos[r] where self stands on ring r. Starting at rank 0, not at
// the caller, makes the verdict the same on every rank (D24).
//
// It reports whether every ring is one cycle through all nRanks ranks in
// which every rank's prev is the rank whose next it is: the stitched-prev
// check of D24 for every rank, not only the caller. A walk that returns to
// rank 0 after exactly nRanks steps, and never earlier, visits every rank
// once; each rank's prev shares its cache line with its next, so checking
// it costs no extra miss. The rings are walked side by side: at each step
// every ring takes its next hop, so the independent lookups overlap in the
// memory system instead of waiting on each other.
func walkRings(n int, rings []int32, links []int32, self int32, pos *[32]int) bool {
	nRanks := len(rings) / n
	var cur [32]int32 // every ring starts at rank 0
	broken := false
	for step := range nRanks {
		for r := range n {
			v := cur[r]
			rings[r*nRanks+step] = v
			row := 2 * (int(v)*n + r)
			nx, pv := links[row], links[row+1]
			if step > 0 && pv != rings[r*nRanks+step-1] {
				broken = true // v's prev is not the rank the ring reached it from
			}
			if v == self {
				pos[r] = step
			}
			if uint32(nx) >= uint32(nRanks) || (nx == 0 && step+1 < nRanks) {
				broken = true // out of range, or back at rank 0 too early
				nx = 0
			}
			cur[r] = nx
		}
	}
	for r := range n {
		// Back at rank 0, whose prev must be the ring's last rank.
		broken = broken || cur[r] != 0 || links[2*r+1] != rings[(r+1)*nRanks-1]
	}
	return !broken
}
