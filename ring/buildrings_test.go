package ring_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
)

// The Go API checks the lengths the export layer's views always have: 2
// rings of 4 ranks need 8 ints in rings and 8 in next, and either one
// short is refused with nothing written. The slices are cut to their
// length (full slice expressions), so that nothing past it can be reached.
func TestBuildRingsRefusesShortTables(t *testing.T) {
	next := ints(1, 2, 3, 0, 3, 0, 1, 2) // two whole rings
	for _, tc := range []struct {
		name        string
		rings, next []int32
		text        string
	}{
		{"rings short", make([]int32, 7), next,
			"ncclBuildRings: 2 rings of 4 ranks need 8 ints, got rings 7 and next 8"},
		{"next short", make([]int32, 8), next[:7:7],
			"ncclBuildRings: 2 rings of 4 ranks need 8 ints, got rings 8 and next 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ring.BuildRings(2, 0, 4, tc.rings, tc.next, nil)
			requireNCCLError(t, err, abi.InvalidArgument, tc.text)
			assert.Equal(t, make([]int32, len(tc.rings)), tc.rings, "rings written on error")
		})
	}
}

// B5a from the other side: next begins one int into rings, so rings' last
// three ints are next's first three. rings is the lower of the two, and
// the check must use its end, not its start.
func TestBuildRingsRefusesNextInsideRings(t *testing.T) {
	buf := ints(7, 1, 2, 3, 0) // next = 1 2 3 0: the ring 0 1 2 3
	err := ring.BuildRings(1, 0, 4, buf[:4], buf[1:], nil)
	requireNCCLError(t, err, abi.InvalidArgument, "ncclBuildRings: rings and next overlap (4 ints each); the rings would be written over the table they are read from")
	assert.Equal(t, ints(7, 1, 2, 3, 0), buf)
}

// B8 finds the missing rank with a bitmap of nranks bits (buildrings.go's
// smallestMissing): 65,536 ranks take 8 KiB, whatever the table's size.
// The ranks 0..32767 close on themselves, so 32768 is missing. The bound
// leaves 4 KiB for the error and its text.
func TestBuildRingsMissingRankTakesABitmapOfNranksBits(t *testing.T) {
	const n = 1 << 16
	next := make([]int32, n)
	for i := range next {
		next[i] = int32((i + 1) % n)
	}
	next[n/2-1] = 0
	rings := make([]int32, n)
	// TotalAlloc is the process's: a test running beside this one (the
	// package's parallel tests, the race detector's own) can allocate
	// between the two reads. The least of five calls is this call's.
	least := uint64(math.MaxUint64)
	scratch := &reusedBlock{} // the walk's working memory: C malloc's in the library, reused here
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := ring.BuildRings(1, 0, n, rings, next, scratch)
		runtime.ReadMemStats(&after)
		requireNCCLError(t, err, abi.InternalError, "Error : ring 0 does not contain rank 32768")
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	require.LessOrEqual(t, least, uint64(n/8+4096), "bytes allocated for the missing rank")
}

// B5b: the walks' working memory (nrings*nranks ints, C malloc in the
// library) that cannot be had is ncclSystemError, after the argument
// checks, and rings is left as it was.
func TestBuildRingsWithoutWorkingMemoryIsASystemError(t *testing.T) {
	rings := ints(7, 7, 7, 7, 7, 7, 7, 7)
	err := ring.BuildRings(2, 0, 4, rings, ints(1, 2, 3, 0, 3, 0, 1, 2), noMemory{})
	requireNCCLError(t, err, abi.SystemError, "ncclBuildRings: malloc of 32 bytes of working memory for 2 rings x 4 ranks failed")
	assert.Equal(t, ints(7, 7, 7, 7, 7, 7, 7, 7), rings)
	// The argument checks come first: B3 is not hidden behind B5b.
	err = ring.BuildRings(33, 0, 4, rings, ints(1, 2, 3, 0), noMemory{})
	requireNCCLError(t, err, abi.InvalidArgument, "ncclBuildRings: nrings 33 is outside [0, 32]")
}
