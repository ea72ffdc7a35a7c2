package verify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Every kind has exactly one hint, of one line.
func TestEveryKindHasAHint(t *testing.T) {
	kinds := []string{KindUnusable, KindNRanks, KindRankRange, KindDuplicate, KindFailed, KindNoRings, KindMissing, KindShape,
		KindRange, KindNext, KindPrev, KindLink, KindUserRanks, KindCycle, KindDoubling,
		KindDecision, KindAsked, KindSequence, KindLocation}
	assert.Len(t, hints, len(kinds))
	for _, k := range kinds {
		assert.NotEmpty(t, hints[k], k)
		assert.False(t, strings.Contains(hints[k], "\n"), k)
	}
}

func TestMissingRanks(t *testing.T) {
	for _, c := range []struct {
		present []int
		n       int
		missing int
		listed  []int
	}{
		{[]int{0, 1, 2}, 3, 0, nil},
		{[]int{1, 3}, 5, 3, []int{0, 2, 4}},
		{nil, 2, 2, []int{0, 1}},
	} {
		missing, listed := missingRanks(c.present, c.n)
		assert.Equal(t, c.missing, missing, "%v of %d", c.present, c.n)
		assert.Equal(t, c.listed, listed, "%v of %d", c.present, c.n)
	}
}

// plurality's ties go to the value the lowest index holds, whichever
// value reaches the tied count first: in A B B A, B reaches two holders
// at index 2, before A does at index 3, yet A (index 0) is the answer.
func TestPluralityTiesGoToTheLowestIndexsValue(t *testing.T) {
	for _, tc := range []struct {
		values     string
		best, held int
	}{
		{"ABBA", 0, 2},
		{"BAAB", 0, 2},
		{"ABBBA", 1, 3},
		{"ABCCBA", 0, 2},
		{"A", 0, 1},
		{"ABC", 0, 1},
		{"CAB", 0, 1},
		{"ABB", 1, 2},
	} {
		best, held := plurality(len(tc.values), func(i int) byte { return tc.values[i] })
		assert.Equal(t, [2]int{tc.best, tc.held}, [2]int{best, held}, tc.values)
	}
}
