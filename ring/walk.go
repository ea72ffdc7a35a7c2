package ring

import "github.com/nccomring/libnccomring/abi"

// ringTable is ncclBuildRings' ring-major successor table: the next of rank
// v on ring r is tab[r*nRanks + v].
type ringTable struct {
	tab    []int32
	nRanks int
}

// faultKind is how a ring walk failed, in the order ncclBuildRings reports
// them (docs/errors.md B6-B8).
type faultKind uint8

const (
	whole      faultKind = iota
	outOfRange           // B6: rank's next is value, outside [0, nRanks)
	noLoopBack           // B7: the walk ended at rank, not at start
	shortCycle           // B8: back at start after cycle steps, so some rank is missing
)

// ringFault is the first failing ring and why, or kind whole.
type ringFault struct {
	kind        faultKind
	ring        int
	rank, value int32
	cycle       int
}

// firstFault walks rings 0..nRings-1 from start, nRanks steps each as
// ncclBuildRings does, and returns the first failing ring with what failed,
// or kind whole. It names the fault exactly; the fast path (buildwalk.go)
// only says whether every ring passed, and ncclBuildRings runs this one only
// when some ring failed, for its WARN.
//
// A walk that returns to start after exactly nRanks steps, and never
// earlier, visits every rank once: one compare per step decides that a ring
// is a Hamiltonian cycle.
func (t ringTable) firstFault(nRings int, start int32) ringFault {
	n := uint32(t.nRanks)
	for r := range nRings {
		row := t.tab[r*t.nRanks : (r+1)*t.nRanks]
		cur, short := start, 0
		for step := range t.nRanks {
			next := row[cur]
			if uint32(next) >= n {
				return ringFault{kind: outOfRange, ring: r, rank: cur, value: next}
			}
			if next == start && short == 0 && step+1 < t.nRanks {
				short = step + 1 // back at start too early
			}
			cur = next
		}
		switch {
		case cur != start:
			return ringFault{kind: noLoopBack, ring: r, rank: cur}
		case short > 0:
			return ringFault{kind: shortCycle, ring: r, cycle: short}
		}
	}
	return ringFault{kind: whole, ring: -1}
}

// buildRingsError is the WARN of a ring walk's failure in ncclBuildRings'
// words (spec §3, D16; docs/errors.md B6-B8; the two spec strings exact).
func (t ringTable) buildRingsError(f ringFault, start int32) error {
	switch f.kind {
	case outOfRange:
		return abi.Errorf(abi.InternalError, "Error : ring %d: rank %d has next %d, outside [0, %d)", f.ring, f.rank, f.value, t.nRanks)
	case noLoopBack:
		return abi.Errorf(abi.InternalError, "Error : ring %d does not loop back to start (%d != %d)", f.ring, f.rank, start)
	}
	return abi.Errorf(abi.InternalError, "Error : ring %d does not contain rank %d", f.ring, t.smallestMissing(f.ring, start, f.cycle))
}

// smallestMissing returns the least rank in [0, nRanks) that the cycle of
// length k through start on ring r does not visit: a bitmap of nRanks bits,
// 1/32 of the successor table the caller holds, on the failure path only.
func (t ringTable) smallestMissing(r int, start int32, k int) int {
	present := make([]uint64, (t.nRanks+63)/64)
	row := t.tab[r*t.nRanks : (r+1)*t.nRanks]
	cur := start
	for range k {
		present[cur/64] |= 1 << (cur % 64)
		cur = row[cur]
	}
	for i, word := range present {
		if word != ^uint64(0) {
			for bit := range 64 {
				if word&(1<<bit) == 0 && i*64+bit < t.nRanks {
					return i*64 + bit
				}
			}
		}
	}
	return t.nRanks // not reached: a short cycle misses some rank
}
