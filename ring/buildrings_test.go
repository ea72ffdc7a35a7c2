package ring_test

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// Issue 13: ncclBuildRings walks its rings four at a time (walk.go's
// lanes, the last set padded with the last ring); every ring count and a
// broken ring in any place of a set must give the walk, or an error with
// nothing written.
func TestBuildRingsEveryRingCountAndBrokenRing(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for _, nranks := range []int{1, 2, 3, 7, 64} {
		for nrings := 1; nrings <= 32; nrings++ {
			next := make([]int32, nrings*nranks)
			for r := range nrings {
				order := rng.Perm(nranks)
				for i, v := range order {
					next[r*nranks+v] = int32(order[(i+1)%nranks])
				}
			}
			rank := rng.IntN(nranks)
			rings := make([]int32, nrings*nranks)
			if err := ring.BuildRings(nrings, rank, nranks, rings, next, nil); err != nil {
				t.Fatalf("%d rings of %d ranks: %v", nrings, nranks, err)
			}
			for r := range nrings {
				cur := int32(rank)
				for i := range nranks {
					if rings[r*nranks+i] != cur {
						t.Fatalf("%d rings of %d ranks: ring %d step %d is %d, want %d", nrings, nranks, r, i, rings[r*nranks+i], cur)
					}
					cur = next[r*nranks+int(cur)]
				}
			}
			if nranks < 2 {
				continue
			}
			// One ring broken: its rank's next made to be itself (a short
			// cycle or a ring that does not loop back), or out of range.
			bad := rng.IntN(nrings)
			v := rng.IntN(nranks)
			for _, value := range []int32{int32(v), int32(nranks), -1} {
				broken := append([]int32(nil), next...)
				broken[bad*nranks+v] = value
				out := make([]int32, nrings*nranks)
				for i := range out {
					out[i] = -77
				}
				if err := ring.BuildRings(nrings, rank, nranks, out, broken, nil); err == nil {
					t.Fatalf("%d rings of %d ranks, ring %d rank %d's next %d: no error", nrings, nranks, bad, v, value)
				}
				for i, x := range out {
					if x != -77 {
						t.Fatalf("%d rings of %d ranks, ring %d broken: rings[%d] written on error", nrings, nranks, bad, i)
					}
				}
			}
		}
	}
}

func TestBuildRingsWalksNext(t *testing.T) {
	// Two rings of 4 ranks: 0>2>1>3>0 and 0>3>2>1>0.
	next := ints(2, 3, 1, 0 /* ring 0 */, 3, 0, 1, 2 /* ring 1 */)
	rings := make([]int32, 8)
	require.NoError(t, ring.BuildRings(2, 1, 4, rings, next, nil))
	assert.Equal(t, ints(1, 3, 0, 2, 1, 0, 3, 2), rings)
}

func TestBuildRingsZeroRingsWritesNothing(t *testing.T) {
	rings := ints(9)
	require.NoError(t, ring.BuildRings(0, 0, 1, rings, ints(0), nil))
	assert.Equal(t, ints(9), rings)
}

func TestBuildRingsErrors(t *testing.T) {
	for _, tc := range []struct {
		name                string
		nrings, rank, nrank int
		next                []int32
		code                abi.Result
		text                string
	}{
		{"B3 too many rings", 33, 0, 1, make([]int32, 33), abi.InvalidArgument, "ncclBuildRings: nrings 33 is outside [0, 32]"},
		{"B3 negative rings", -1, 0, 1, nil, abi.InvalidArgument, "ncclBuildRings: nrings -1 is outside [0, 32]"},
		{"B4 no ranks", 1, 0, 0, nil, abi.InvalidArgument, "ncclBuildRings: nranks 0 is not positive"},
		{"B5 rank out of range", 1, 4, 4, ints(1, 2, 3, 0), abi.InvalidArgument, "ncclBuildRings: rank 4 is outside [0, 4)"},
		{"B6 next out of range", 1, 0, 4, ints(1, 7, 3, 0), abi.InternalError, "Error : ring 0: rank 1 has next 7, outside [0, 4)"},
		{"B6 negative next", 1, 0, 4, ints(1, -1, 3, 0), abi.InternalError, "Error : ring 0: rank 1 has next -1, outside [0, 4)"},
		{"B6 next at nranks", 1, 0, 4, ints(1, 4, 3, 0), abi.InternalError, "Error : ring 0: rank 1 has next 4, outside [0, 4)"},
		// 0>1>2>1>2: never returns to 0; after 4 steps cur is 1... 0,1,2,1 then next(1)=2.
		{"B7 no loop back", 1, 0, 4, ints(1, 2, 1, 0), abi.InternalError, "Error : ring 0 does not loop back to start (2 != 0)"},
		// 0>1>0>1>0 loops back after 4 steps but misses 2 and 3.
		{"B8 missing rank", 1, 0, 4, ints(1, 0, 3, 2), abi.InternalError, "Error : ring 0 does not contain rank 2"},
		{"B8 second ring", 2, 0, 2, ints(1, 0, 0, 0), abi.InternalError, "Error : ring 1 does not contain rank 1"},
		// D16's order. The scalar checks: nrings before nranks before rank.
		{"B3 before B4", 33, 0, 0, nil, abi.InvalidArgument, "ncclBuildRings: nrings 33 is outside [0, 32]"},
		{"B4 before B5", 1, 5, 0, nil, abi.InvalidArgument, "ncclBuildRings: nranks 0 is not positive"},
		// Rings in ring order: ring 0's failure is reported, whatever ring 1's.
		{"ring 0's B8 before ring 1's B6", 2, 0, 4, ints(1, 0, 3, 2 /* ring 0 */, 1, 9, 3, 0 /* ring 1 */), abi.InternalError,
			"Error : ring 0 does not contain rank 2"},
		{"ring 0's B7 before ring 1's B8", 2, 0, 4, ints(1, 2, 1, 0 /* ring 0 */, 1, 0, 3, 2 /* ring 1 */), abi.InternalError,
			"Error : ring 0 does not loop back to start (2 != 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rings := make([]int32, max(tc.nrings*tc.nrank, 0))
			for i := range rings {
				rings[i] = -7
			}
			err := ring.BuildRings(tc.nrings, tc.rank, tc.nrank, rings, tc.next, nil)
			requireNCCLError(t, err, tc.code, tc.text)
			for i, v := range rings {
				require.EqualValues(t, -7, v, "rings[%d] written on error", i)
			}
		})
	}
}

// Issue 9: rings aliasing next would be written over the table they are read
// from (a success with rings 0 0 0 0 before); any overlap is refused, and
// nothing is written.
func TestBuildRingsRefusesRingsOverlappingNext(t *testing.T) {
	buf := ints(1, 2, 3, 0, 9, 9)
	for _, tc := range []struct {
		name        string
		rings, next []int32
	}{{"the same buffer", buf[:4], buf[:4]}, {"shifted by one", buf[1:5], buf[:4]}} {
		t.Run(tc.name, func(t *testing.T) {
			err := ring.BuildRings(1, 0, 4, tc.rings, tc.next, nil)
			requireNCCLError(t, err, abi.InvalidArgument, "ncclBuildRings: rings and next overlap (4 ints each); the rings would be written over the table they are read from")
			assert.Equal(t, ints(1, 2, 3, 0, 9, 9), buf)
		})
	}
	// Adjacent is not overlapping.
	require.NoError(t, ring.BuildRings(1, 0, 2, buf[2:4], ints(1, 0), nil))
}

// B8 names the smallest missing rank even past the first 64 (the membership
// bitmap's first word): 0..63 form a 64-cycle of 128 ranks, so 128 steps
// return to 0 and rank 64 is the first never visited.
func TestBuildRingsNamesAMissingRankPastSixtyFour(t *testing.T) {
	next := make([]int32, 128)
	for i := range next {
		next[i] = int32((i + 1) % 128)
	}
	next[63] = 0
	err := ring.BuildRings(1, 0, 128, make([]int32, 128), next, nil)
	requireNCCLError(t, err, abi.InternalError, "Error : ring 0 does not contain rank 64")
}

// D16's O(nranks) membership is a property of the walker's construction
// (walk.go: a walk that comes back to its start after exactly nranks
// steps, and never earlier, has visited every rank once, so membership
// costs one compare per step). No test measures it. This one is only a
// backstop: the values it asserts are hand-computed, and a membership
// check quadratic in nranks (some 4·10^12 steps here) would not finish
// within go test's timeout.
func TestBuildRingsOnTwoMillionRanks(t *testing.T) {
	const n = 1 << 21
	next := make([]int32, n)
	for i := range next {
		next[i] = int32((i + 1) % n)
	}
	rings := make([]int32, n)
	require.NoError(t, ring.BuildRings(1, 5, n, rings, next, nil))
	assert.EqualValues(t, 5, rings[0])
	assert.EqualValues(t, n-1, rings[n-6])
	assert.EqualValues(t, 0, rings[n-5])
	assert.EqualValues(t, 4, rings[n-1])

	// Ranks 0 .. n/2-1 closed on themselves: n steps from 0 come back to 0
	// (twice round), and n/2 is the smallest rank never visited.
	next[n/2-1] = 0
	err := ring.BuildRings(1, 0, n, rings, next, nil)
	requireNCCLError(t, err, abi.InternalError, fmt.Sprintf("Error : ring 0 does not contain rank %d", n/2))
}
