package ring

import (
	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// CheckBuildRingsArgs validates the scalar arguments of ncclBuildRings
// (docs/errors.md B3-B5, P9). The export layer calls it before it views the
// caller's arrays, whose lengths these values give.
func CheckBuildRingsArgs(nrings, rank, nranks int) error {
	switch {
	case nrings < 0 || nrings > layout.MaxChannels:
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: nrings %d is outside [0, %d]", nrings, layout.MaxChannels)
	case nranks <= 0:
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: nranks %d is not positive", nranks)
	case rank < 0 || rank >= nranks:
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: rank %d is outside [0, %d)", rank, nranks)
	}
	return nil
}

// BuildRings is ncclBuildRings (spec §3, D16): for each ring r < nrings it
// writes rings[r*nranks ...] with the walk from rank along
// next[r*nranks ...]. rings and next hold at least nrings*nranks ints and
// must not overlap (B5a). The walker of walk.go checks every ring and
// records it in working memory of nrings*nranks ints from scratch (C
// malloc in the library, so the Go heap stays untouched; nil is the Go
// heap); only when every ring is whole are they copied into rings
// (all-or-nothing). Working memory that cannot be had is ncclSystemError
// (B5b). prev is not an input: upstream never reads it.
func BuildRings(nrings, rank, nranks int, rings, next []int32, scratch Allocator) error {
	if err := CheckBuildRingsArgs(nrings, rank, nranks); err != nil {
		return err
	}
	total := nrings * nranks
	if len(rings) < total || len(next) < total {
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: %d rings of %d ranks need %d ints, got rings %d and next %d", nrings, nranks, total, len(rings), len(next))
	}
	if total == 0 {
		return nil
	}
	if overlap(rings[:total], next[:total]) {
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: rings and next overlap (%d ints each); the rings would be written over the table they are read from", total)
	}
	sc := newScratch(scratch)
	defer sc.release()
	mem := sc.ints(total)
	if mem == nil {
		return abi.Errorf(abi.SystemError, "ncclBuildRings: malloc of %d bytes of working memory for %d rings x %d ranks failed", sc.failed, nrings, nranks)
	}
	start := int32(rank)
	if !(ringTable[int32]{next[:total], nranks}).whole(nrings, start, mem, nil) {
		return buildRingsError(next[:total], nrings, nranks, start)
	}
	probeWritable(rings[:total]) // a bad rings pointer faults before any write (D20)
	copy(rings[:total], mem)
	return nil
}

// buildRingsError is the WARN of the first ring that is not whole, in
// ncclBuildRings' words (spec §3, D16; docs/errors.md B6-B8, in that order
// for each ring; the two spec strings exact).
func buildRingsError(next []int32, nRings, nRanks int, start int32) error {
	for r := range nRings {
		row := next[r*nRanks : (r+1)*nRanks]
		last, short := start, 0 // the rank before `after`; the step start came back at, if early
		_, after := follow(row, start, nRanks, func(step int, v int32) bool {
			if v == start && step > 0 && short == 0 {
				short = step
			}
			last = v
			return true
		})
		switch {
		case uint32(after) >= uint32(nRanks):
			return abi.Errorf(abi.InternalError, "Error : ring %d: rank %d has next %d, outside [0, %d)", r, last, after, nRanks)
		case after != start:
			return abi.Errorf(abi.InternalError, "Error : ring %d does not loop back to start (%d != %d)", r, after, start)
		case short > 0:
			return abi.Errorf(abi.InternalError, "Error : ring %d does not contain rank %d", r, smallestMissing(row, start, short))
		}
	}
	return abi.Errorf(abi.InternalError, "ncclBuildRings: internal error: every ring is whole") // not reached
}

// smallestMissing returns the least rank that the cycle of length k
// through start does not visit: a bitmap of len(row) bits, 1/32 of the
// table the caller holds, on the failure path only.
func smallestMissing(row []int32, start int32, k int) int {
	present := make([]uint64, (len(row)+63)/64)
	follow(row, start, k, func(_ int, v int32) bool {
		present[v/64] |= 1 << (v % 64)
		return true
	})
	for v := range row {
		if present[v/64]&(1<<(v%64)) == 0 {
			return v
		}
	}
	return len(row) // not reached: a short cycle misses some rank
}

// overlap reports whether two int slices share memory.
func overlap(a, b []int32) bool {
	aLo, bLo := abi.Address(a), abi.Address(b)
	aHi, bHi := aLo+4*uintptr(len(a)), bLo+4*uintptr(len(b))
	return aLo < bHi && bLo < aHi
}
