package ring

import "github.com/nccomring/libnccomring/abi"

// walk writes into ring the traversal from start along next (both nranks =
// len(ring) long) and checks it is one cycle through every rank, with the
// errors of ncclBuildRings (spec §3, D16; docs/errors.md B6-B8) for ring
// index r. On error ring holds a partial walk: callers walk into scratch.
//
// The walk costs one compare per step beyond the copy: it returns to start
// after exactly nranks steps and never earlier if and only if it is a
// Hamiltonian cycle, so the membership bitmap is built only to name the
// smallest missing rank once a ring is known to be short.
func walk(r int, ring []int32, start int32, next []int32) error {
	nranks := len(ring)
	next = next[:nranks]
	cur := start
	shortCycle := 0 // length of the cycle through start, when shorter than nranks
	for step := range nranks {
		if cur == start && step > 0 && shortCycle == 0 {
			shortCycle = step
		}
		ring[step] = cur
		v := next[cur]
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
