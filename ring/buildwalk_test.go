package ring_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nccomring/libnccomring/ring"
)

// Issue 13: the fast path of ncclBuildRings walks eight, four or one ring
// at a time; every ring count and a broken ring in any place of a group
// must give the walk, or an error with nothing written.
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
