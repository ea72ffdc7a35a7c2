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

// walkAll walks rings 0..nRings-1 from start, writing ring r to
// rings[r*nRanks ...]; the successor of rank v on ring r is
// next[v*stride + r*ringStride] (Postset's rank-major table: stride nRings,
// ringStride 1, so one cache line holds all of a rank's successors). The
// rings are walked side by side: at each step every ring takes its next hop,
// so the independent lookups overlap in the memory system instead of
// waiting on each other. It checks what checkRing checks; on any failure it
// checks the rings again one by one, so the error reported is exactly
// checkRing's for the first failing ring (docs/errors.md B6-B8, in ring
// order).
func walkAll(nRings int, rings []int32, start int32, next []int32, stride, ringStride int) error {
	nRanks := len(rings) / nRings
	var cur [32]int32
	for r := range nRings {
		cur[r] = start
	}
	broken := false
	for step := range nRanks {
		for r := range nRings {
			v := cur[r]
			rings[r*nRanks+step] = v
			nx := next[int(v)*stride+r*ringStride]
			if uint32(nx) >= uint32(nRanks) || (nx == start && step+1 < nRanks) {
				broken = true // out of range, or back at start too early
				nx = start
			}
			cur[r] = nx
		}
	}
	for r := range nRings {
		broken = broken || cur[r] != start
	}
	if !broken {
		return nil
	}
	for r := range nRings {
		if err := checkRing(r, start, next, stride, r*ringStride, nRanks); err != nil {
			return err
		}
	}
	return nil // not reached: some ring failed above
}
