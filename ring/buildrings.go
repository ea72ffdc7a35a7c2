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
// must not overlap (B5a). Every ring is checked before any is written
// (all-or-nothing), by a first walk that only reads; a second writes
// (buildwalk.go: four rings side by side in each). Two walks instead of one
// into scratch: the call needs no working memory and allocates nothing
// whatever nranks claims (but, on the failure path only, a bitmap of nranks
// bits for the WARN of a short ring).
// prev is not an input: upstream never reads it.
func BuildRings(nrings, rank, nranks int, rings, next []int32) error {
	if err := CheckBuildRingsArgs(nrings, rank, nranks); err != nil {
		return err
	}
	total := nrings * nranks
	if len(rings) < total || len(next) < total {
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: %d rings of %d ranks need %d ints, got rings %d and next %d", nrings, nranks, total, len(rings), len(next))
	}
	if total > 0 && overlap(rings[:total], next[:total]) {
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: rings and next overlap (%d ints each); the rings would be written over the table they are read from", total)
	}
	start := int32(rank)
	if total > 0 && !ringsWhole(next[:total], nrings, nranks, start) {
		// The exact fault (B6-B8, in ring order) from the general walker:
		// only on failure.
		table := ringTable{tab: next[:total], nRanks: nranks}
		return table.buildRingsError(table.firstFault(nrings, start), start)
	}
	probeWritable(rings[:total]) // a bad rings pointer faults before any write
	if total > 0 {
		writeRings(rings, next, nrings, nranks, start)
	}
	return nil
}

// overlap reports whether two int slices share memory.
func overlap(a, b []int32) bool {
	aLo, bLo := abi.Address(a), abi.Address(b)
	aHi, bHi := aLo+4*uintptr(len(a)), bLo+4*uintptr(len(b))
	return aLo < bHi && bLo < aHi
}
