package ab

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Five runs of A at one size, by hand: sorted 9 10 11 12 13, so the
// median is 11 (the third), the range 9-13.
var fiveA = []float64{10, 12, 11, 9, 13}

func TestSpreadByHand(t *testing.T) {
	assert.Equal(t, Spread{Runs: 5, Median: 11, Min: 9, Max: 13, Values: fiveA}, NewSpread(fiveA))
	// Even counts take the mean of the two middle values: 1 2 | 3 4 -> 2.5.
	assert.Equal(t, 2.5, NewSpread([]float64{4, 1, 3, 2}).Median)
	assert.Equal(t, Spread{Runs: 1, Median: 7, Min: 7, Max: 7, Values: []float64{7}}, NewSpread([]float64{7}))
	assert.Equal(t, Spread{Values: []float64{}}, NewSpread(nil))
	// The input keeps its order (the runs' repeat order).
	v := []float64{3, 1, 2, 5, 4}
	NewSpread(v)
	assert.Equal(t, []float64{3, 1, 2, 5, 4}, v)
}

// The rule both ways: ranges apart are a measurable difference, ranges
// that overlap or touch are not.
func TestJudgeTheOverlapRule(t *testing.T) {
	a := NewSpread(fiveA) // 9-13, median 11
	for _, c := range []struct {
		name    string
		b       []float64
		verdict string
	}{
		// 13.5 14 14.5 15.5 16: every B run above every A run.
		{"apart above", []float64{14, 15.5, 13.5, 16, 14.5}, BFaster},
		// 5 6 7 8 8.5: every B run below A's least, 9.
		{"apart below", []float64{8, 5, 8.5, 6, 7}, BSlower},
		// 12.5 13 14 14.5 15: B's least, 12.5, is inside A's range.
		{"overlap", []float64{12.5, 14, 15, 13, 14.5}, NoDifference},
		// B's least is A's most, 13: touching is overlapping.
		{"touching", []float64{13, 14, 15, 16, 17}, NoDifference},
		// B's median 15 is 1.36 x A's, yet one B run, 10, sits inside A's range.
		{"wide gap of medians, overlapping tails", []float64{10, 15, 16, 14, 17}, NoDifference},
	} {
		assert.Equal(t, c.verdict, Judge(a, NewSpread(c.b)), c.name)
	}
	// Fewer than 5 runs of one side: no judgement, however far apart.
	four := NewSpread([]float64{100, 101, 102, 103})
	assert.Equal(t, TooFewRuns, Judge(a, four))
	assert.Equal(t, TooFewRuns, Judge(four, a))
	assert.Equal(t, "too few runs (A 5, B 4; 5 each needed)", Verdict(a, four))
}

func TestRatios(t *testing.T) {
	a := NewSpread(fiveA)                               // median 11, 9-13
	b := NewSpread([]float64{14, 15.5, 13.5, 16, 14.5}) // median 14.5, 13.5-16
	assert.InDelta(t, 14.5/11, Ratio(a, b), 1e-12)      // 1.318
	lo, hi := RatioRange(a, b)
	assert.InDelta(t, 13.5/13, lo, 1e-12) // 1.038: B's worst over A's best
	assert.InDelta(t, 16.0/9, hi, 1e-12)  // 1.778: B's best over A's worst
	assert.Equal(t, 0.0, Ratio(NewSpread([]float64{0, 0, 0, 0, 0}), b))
}
