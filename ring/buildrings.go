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
// next[r*nranks ...]. rings and next hold at least nrings*nranks ints. Every
// ring is checked before any is written (all-or-nothing); the walk goes into
// scratch and is copied once it is known to be good. prev is not an input:
// upstream never reads it.
func BuildRings(nrings, rank, nranks int, rings, next []int32) error {
	if err := CheckBuildRingsArgs(nrings, rank, nranks); err != nil {
		return err
	}
	total := nrings * nranks
	if len(rings) < total || len(next) < total {
		return abi.Errorf(abi.InvalidArgument, "ncclBuildRings: %d rings of %d ranks need %d ints, got rings %d and next %d", nrings, nranks, total, len(rings), len(next))
	}
	sc := getScratch()
	defer putScratch(sc)
	walked := sc.ints(&sc.rings, total)
	// One ring at a time: each ring's successors are a contiguous table the
	// walk keeps in cache; walking them side by side would spread the
	// lookups over every table at once.
	for r := range nrings {
		span := r * nranks
		if err := walk(r, walked[span:span+nranks], int32(rank), next, 1, span); err != nil {
			return err
		}
	}
	copy(rings[:total], walked)
	return nil
}
