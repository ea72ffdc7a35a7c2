package ring

import (
	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// ringTable is the successor table of a set of rings, in either layout the
// ring stage uses: the next of rank v on ring r is tab[v*stride +
// r*ringStride], and, when hasPrev, its prev is the int after it.
// ncclBuildRings' table is ring-major (stride 1, ringStride nranks, no
// prev); Postset's link table is rank-major with next and prev side by side
// (stride 2n, ringStride 2), so one cache line holds all of a rank's links.
//
// batch is how many rings walk side by side (0: all): side by side the
// independent lookups overlap in the memory system, which pays where the
// rings share cache lines (Postset's rank-major table); one at a time keeps
// a ring-major ring's table in cache (ncclBuildRings).
type ringTable struct {
	tab                []int32
	stride, ringStride int
	hasPrev            bool
	batch              int
}

// faultKind is how a ring walk failed, in the order ncclBuildRings reports
// them (docs/errors.md B6-B8).
type faultKind uint8

const (
	whole       faultKind = iota
	outOfRange            // B6: rank's next is value, outside [0, nRanks)
	noLoopBack            // B7: the walk ended at rank, not at start
	shortCycle            // B8: back at start after cycle steps, so some rank is missing
	prevDiffers           // Postset: a rank's prev is not the rank the walk came from
)

// ringFault is the first failing ring and why, or kind whole.
type ringFault struct {
	kind        faultKind
	ring        int
	rank, value int32
	cycle       int
}

// walk is the one ring walker of the ring stage: it walks rings 0..nRings-1
// from start, nRanks steps each as ncclBuildRings does, all side by side, so
// the independent lookups of the rings overlap in the memory system
// instead of waiting on each other. When out is not nil, ring r's walk is
// written to out[r*nRanks ...]; pos[r] (when pos is not nil) gets the step
// at which self was reached.
//
// A walk that returns to start after exactly nRanks steps, and never
// earlier, visits every rank once: one compare per step decides that a ring
// is a Hamiltonian cycle. With prevs, every rank's prev must also be the
// rank the walk came from (D24). It returns the first failing ring in ring
// order with what failed, or kind whole.
func (t ringTable) walk(nRings, nRanks int, start, self int32, out []int32, pos *[layout.MaxChannels]int) ringFault {
	var cur, last, badNext, badRank [layout.MaxChannels]int32
	var stopped, badPrev [layout.MaxChannels]bool
	var short [layout.MaxChannels]int
	for r := range nRings {
		cur[r] = start
	}
	var noPos [layout.MaxChannels]int
	if pos == nil {
		pos = &noPos
	}
	broken := false
	batch := t.batch
	if batch <= 0 {
		batch = nRings
	}
	n := uint32(nRanks)
	for first := 0; first < nRings; first += batch {
		end := min(first+batch, nRings)
		for step := range nRanks {
			for r := first; r < end; r++ {
				v := cur[r]
				if out != nil {
					out[r*nRanks+step] = v
				}
				if v == self {
					pos[r] = step
				}
				at := int(v)*t.stride + r*t.ringStride
				if t.hasPrev {
					if step > 0 && t.tab[at+1] != last[r] {
						badPrev[r], broken = true, true
					}
					last[r] = v
				}
				next := t.tab[at]
				// The rare cases in one branch: a next out of range, or
				// back at start. A ring that ran out of range is
				// finished; it walks on from start only to keep the
				// loop free of a test per step.
				if uint32(next) >= n || next == start {
					switch {
					case stopped[r]:
						next = start
					case uint32(next) >= n:
						badRank[r], badNext[r] = v, next
						stopped[r], broken = true, true
						next = start
					case step+1 < nRanks && short[r] == 0:
						short[r], broken = step+1, true // back at start too early
					}
				}
				cur[r] = next
			}
		}
	}
	// Back at start, whose prev must be the ring's last rank.
	prevOfStart := func(r int) int32 { return t.tab[int(start)*t.stride+r*t.ringStride+1] }
	for r := range nRings {
		if !stopped[r] && (cur[r] != start || (t.hasPrev && prevOfStart(r) != last[r])) {
			broken = true
		}
	}
	if !broken {
		return ringFault{kind: whole, ring: -1}
	}
	for r := range nRings {
		switch {
		case stopped[r]:
			return ringFault{kind: outOfRange, ring: r, rank: badRank[r], value: badNext[r]}
		case cur[r] != start:
			return ringFault{kind: noLoopBack, ring: r, rank: cur[r]}
		case short[r] > 0:
			return ringFault{kind: shortCycle, ring: r, cycle: short[r]}
		case badPrev[r] || (t.hasPrev && prevOfStart(r) != last[r]):
			return ringFault{kind: prevDiffers, ring: r}
		}
	}
	return ringFault{kind: whole, ring: -1} // not reached: some ring failed above
}

// buildRingsError is the WARN of a ring walk's failure in ncclBuildRings'
// words (spec §3, D16; docs/errors.md B6-B8; the two spec strings exact).
func (t ringTable) buildRingsError(f ringFault, start int32, nRanks int) error {
	switch f.kind {
	case outOfRange:
		return abi.Errorf(abi.InternalError, "Error : ring %d: rank %d has next %d, outside [0, %d)", f.ring, f.rank, f.value, nRanks)
	case noLoopBack:
		return abi.Errorf(abi.InternalError, "Error : ring %d does not loop back to start (%d != %d)", f.ring, f.rank, start)
	}
	return abi.Errorf(abi.InternalError, "Error : ring %d does not contain rank %d", f.ring, t.smallestMissing(f.ring, start, f.cycle, nRanks))
}

// smallestMissing returns the least rank in [0, nRanks) that the cycle of
// length k through start on ring r does not visit: a bitmap of nRanks bits,
// 1/32 of the successor table the caller holds, on the failure path only.
func (t ringTable) smallestMissing(r int, start int32, k, nRanks int) int {
	present := make([]uint64, (nRanks+63)/64)
	cur := start
	for range k {
		present[cur/64] |= 1 << (cur % 64)
		cur = t.tab[int(cur)*t.stride+r*t.ringStride]
	}
	for i, word := range present {
		if word != ^uint64(0) {
			for bit := range 64 {
				if word&(1<<bit) == 0 && i*64+bit < nRanks {
					return i*64 + bit
				}
			}
		}
	}
	return nRanks // not reached: a short cycle misses some rank
}
