package ring

import "github.com/nccomring/libnccomring/abi"

// walk writes into ring the traversal from start along a successor table
// and checks it is one cycle through every rank (nranks = len(ring)), with
// the errors of ncclBuildRings (spec §3, D16; docs/errors.md B6-B8) for ring
// index r. The successor of rank v is next[v*stride + offset]: stride 1 and
// offset r*nranks for ncclBuildRings' [r*nranks + v] layout, stride
// nChannels and offset c for Postset's rank-major tables. On error ring holds
// a partial walk: callers walk into scratch.
//
// The walk costs one compare per step beyond the copy: it returns to start
// after exactly nranks steps and never earlier if and only if it is a
// Hamiltonian cycle, so the membership bitmap is built only to name the
// smallest missing rank once a ring is known to be short.
func walk(r int, ring []int32, start int32, next []int32, stride, offset int) error {
	nranks := len(ring)
	cur := start
	shortCycle := 0 // length of the cycle through start, when shorter than nranks
	for step := range nranks {
		if cur == start && step > 0 && shortCycle == 0 {
			shortCycle = step
		}
		ring[step] = cur
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
		return abi.Errorf(abi.InternalError, "Error : ring %d does not contain rank %d", r, smallestMissing(ring[:shortCycle], nranks))
	}
	return nil
}

// smallestMissing returns the least rank in [0, nranks) not in ranks.
func smallestMissing(ranks []int32, nranks int) int {
	present := make([]bool, nranks)
	for _, v := range ranks {
		present[v] = true
	}
	for i, ok := range present {
		if !ok {
			return i
		}
	}
	return nranks // not reached: callers pass fewer than nranks distinct ranks
}

// walkAll walks rings 0..nRings-1 from start, writing ring r to
// rings[r*nRanks ...]; the successor of rank v on ring r is
// next[v*stride + r*ringStride] (Postset's rank-major table: stride nRings,
// ringStride 1, so one cache line holds all of a rank's successors). The
// rings are walked side by side: at each step every ring takes its next hop,
// so the independent lookups overlap in the memory system instead of
// waiting on each other. It checks what walk checks; on any failure it walks
// the rings again one by one, so the error reported is exactly walk's for
// the first failing ring (docs/errors.md B6-B8, in ring order).
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
		if err := walk(r, rings[r*nRanks:(r+1)*nRanks], start, next, stride, r*ringStride); err != nil {
			return err
		}
	}
	return nil // not reached: some ring failed above
}
