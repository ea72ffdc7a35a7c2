package ring

import (
	"math/rand/v2"
	"slices"
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

// The walker's fourth lane by hand: four rings of four ranks walked from
// rank 0, so ring 3 is lane 3 of whole4's one pass. Each row gives every
// rank's next and prev on ring 3 (rings 0-2 are whole and the same in
// every row) and what the walk must answer; a walker that dropped the
// fourth lane's checks would call the broken ring 3 whole, and one that
// dropped its record would not write ring 3's walk.
func TestWalkFourthLaneByHand(t *testing.T) {
	// {next, prev} of ranks 0..3 on rings 0-2: 0→1→2→3, 0→3→2→1, 0→2→1→3.
	first := [3][4][2]int32{
		{{1, 3}, {2, 0}, {3, 1}, {0, 2}},
		{{3, 1}, {0, 2}, {1, 3}, {2, 0}},
		{{2, 3}, {3, 2}, {1, 0}, {0, 1}},
	}
	firstWalks := []int32{0, 1, 2, 3, 0, 3, 2, 1, 0, 2, 1, 3}
	for _, tc := range []struct {
		name  string
		ring3 [4][2]int32 // {next, prev} of ranks 0..3 on ring 3
		whole bool
		walk3 []int32 // ring 3's recorded walk when whole
	}{
		{"0→1→3→2, whole", [4][2]int32{{1, 2}, {3, 0}, {0, 3}, {2, 1}}, true, []int32{0, 1, 3, 2}},
		{"rank 3's next 4 is outside [0, 4)", [4][2]int32{{1, 2}, {3, 0}, {0, 3}, {4, 1}}, false, nil},
		{"ranks 0 and 1 a cycle of two, 2 and 3 another: back at the start at step 2", [4][2]int32{{1, 1}, {0, 0}, {3, 3}, {2, 2}}, false, nil},
		{"rank 3's prev is 0, but the walk came from 1", [4][2]int32{{1, 2}, {3, 0}, {0, 3}, {2, 0}}, false, nil},
		{"rank 2's next is 1: not back at rank 0 after four steps", [4][2]int32{{1, 2}, {3, 0}, {1, 3}, {2, 1}}, false, nil},
		{"rank 0's prev is 3, but the walk ends at 2", [4][2]int32{{1, 3}, {3, 0}, {0, 3}, {2, 1}}, false, nil},
	} {
		var pairs []uint64
		for _, ring := range append(first[:], tc.ring3) {
			for _, np := range ring {
				pairs = append(pairs, pair(np[0], np[1]))
			}
		}
		walks := make([]int32, 16)
		for i := range walks {
			walks[i] = -9
		}
		got := ringTable[uint64]{pairs, 4}.whole(4, 0, walks, nil)
		if got != tc.whole {
			t.Errorf("%s: whole is %v, want %v", tc.name, got, tc.whole)
			continue
		}
		if tc.whole && !slices.Equal(walks, append(slices.Clone(firstWalks), tc.walk3...)) {
			t.Errorf("%s: walks %v, want %v then %v", tc.name, walks, firstWalks, tc.walk3)
		}
	}
}
