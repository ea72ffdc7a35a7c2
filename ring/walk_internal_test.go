package ring

import (
	"math/rand/v2"
	"testing"
)

// The walk's lookahead is a hint: with it, whatever its heads, start node
// and span (nodes past the table's end, a start node anywhere, spans that
// do not divide nRanks), every verdict and every recorded walk must be the
// one a plain walk along next gives, and the hint's loads must run.
func TestLookaheadChangesNoWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 3))
	for trial := range 400 {
		nRanks := []int{8, 9, 31, 64, 100, 257}[trial%6]
		nRings := 1 + rng.IntN(9)
		pairs := make([]uint64, nRings*nRanks)
		for r := range nRings {
			order := rng.Perm(nRanks)
			for i, v := range order {
				pairs[r*nRanks+v] = pair(int32(order[(i+1)%nRanks]), int32(order[(i+nRanks-1)%nRanks]))
			}
		}
		broken := trial%3 == 0
		if broken { // one rank's next skips a rank: that ring is not whole
			r, v := rng.IntN(nRings), rng.IntN(nRanks)
			x := pairs[r*nRanks+v]
			pairs[r*nRanks+v] = pair(nextOf(pairs[r*nRanks+int(nextOf(x))]), prevOf(x))
		}
		heads := make([]int32, 1+rng.IntN(nRanks))
		for i := range heads {
			heads[i] = int32(rng.IntN(nRanks))
		}
		hint := lookahead{heads: heads, from: rng.IntN(len(heads)), span: 1 + rng.IntN(nRanks)}
		start := int32(rng.IntN(nRanks))
		table := ringTable[uint64]{pairs, nRanks}

		plain, hinted := make([]int32, nRings*nRanks), make([]int32, nRings*nRanks)
		wantWhole := table.whole(nRings, start, plain, nil)
		if got := table.whole(nRings, start, hinted, &hint); got != wantWhole {
			t.Fatalf("trial %d: whole with the lookahead %+v is %v, without %v", trial, hint, got, wantWhole)
		}
		if broken && nRanks > 2 && wantWhole {
			t.Fatalf("trial %d: a ring with a skipped rank walked whole", trial)
		}
		if !wantWhole {
			continue
		}
		for r := range nRings { // the model: next, step by step, from start
			cur := start
			for i := range nRanks {
				if plain[r*nRanks+i] != cur || hinted[r*nRanks+i] != cur {
					t.Fatalf("trial %d: ring %d step %d: plain %d, hinted %d, want %d", trial, r, i, plain[r*nRanks+i], hinted[r*nRanks+i], cur)
				}
				cur = nextOf(pairs[r*nRanks+int(cur)])
			}
		}
		// The first hint, at step 1, loads a head's pair on every lane,
		// and with nRanks >= 3 no rank's pair is zero (its next and prev
		// are not both rank 0).
		if hint.loaded == 0 {
			t.Fatalf("trial %d: the lookahead %+v loaded nothing", trial, hint)
		}
	}
}
