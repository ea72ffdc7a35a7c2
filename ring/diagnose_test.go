package ring_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
)

// The diagnosis's rules one at a time (docs/errors.md "Diagnosis"), on
// small jobs with a few fields set by hand. Each case's WARN is worked out
// from the rules in the comment above it; rank 0's walks are given where a
// case is about them. Channel 0 is always clean, so channel 1 decides, and
// the nodes are the ones channel 0 makes.

// nodesJob gathers a job of nodes of the given sizes, ranks numbered
// node-major, on two channels: channel 0 runs every node in rank order,
// channel 1 runs node m in the local order ch1[m].
func nodesJob(t *testing.T, sizes []int, ch1 [][]int) *job {
	t.Helper()
	var nodeOf []int
	var graphs []*abi.TopoGraph
	for m, size := range sizes {
		g := &abi.TopoGraph{Pattern: 4, NChannels: 2}
		base := len(nodeOf)
		for i := range size {
			g.Intra[i] = int32(base + i)
			g.Intra[size+i] = int32(base + ch1[m][i])
			nodeOf = append(nodeOf, m)
		}
		graphs = append(graphs, g)
	}
	return gather(t, len(nodeOf), func(r int) int { return sizes[nodeOf[r]] },
		func(r int) *abi.TopoGraph { return graphs[nodeOf[r]] }, 0)
}

func TestDiagnosisRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		ch1   [][]int
		edits []edit
		text  string
		walks []string // rank 0's; checked when not nil
	}{
		// Node 0 runs 3 2 1 0 on channel 1. Ranks 2 and 3 say its head is
		// 1 and rank 1 says its prev is -1: heads 3 and 1 are held by two
		// ranks each, and both are ranks whose ringPrev is -1, so the node's
		// first rank (0) decides: it holds 3. Contradictions: ranks 2 and 3
		// head (1 vote each), rank 1's ringPrev -1, rank 2's ringNext 1
		// (rank 1's prev is -1): ranks 1 and 2 have 2 votes, 1 is lower.
		{"agreed head: a tie of marked values goes to the first rank's", []int{4}, [][]int{{3, 2, 1, 0}}, []edit{{2, 0, 1}, {3, 0, 1}, {1, 2, -1}},
			"ncclTopoPostset: rank 1, channel 1: ringPrev is -1 but node 0's head is 3", nil},
		// Node 0 runs 1 0, node 1 runs 3 2. Rank 0 says node 0's head is 2
		// (a rank of node 1) and rank 1's ringPrev is 0: neither 2 nor 1
		// has ringPrev -1 in node 0, so the first rank's value, 2, is the
		// head. Rank 1: head (1 vote) and ringPrev 0, the tail (1 vote);
		// rank 2: its node is not node 0 (1 vote).
		{"agreed head: a tie of unmarked values goes to the first rank's", []int{2, 2}, [][]int{{1, 0}, {1, 0}}, []edit{{0, 0, 2}, {1, 2, 0}},
			"ncclTopoPostset: rank 1, channel 1: ringRecv (head) is 1 but node 0's head is 2 (held by 1 of its 2 ranks)", nil},
		// Node 0 runs 1 2 3 0. Ranks 0 and 2 say the head is 3: 3 and 1
		// are held by two ranks each; only 1 has ringPrev -1, so 1 is the
		// head although the first rank holds 3. Ranks 0 and 2 are named
		// once each; the lower is 0.
		{"agreed head: a marked value wins over the first rank's", []int{4}, [][]int{{1, 2, 3, 0}}, []edit{{0, 0, 3}, {2, 0, 3}},
			"ncclTopoPostset: rank 0, channel 1: ringRecv (head) is 3 but node 0's head is 1 (held by 2 of its 4 ranks)", nil},
		// Node 0 runs 1 2 3 0. Rank 0 says the head is 2, and the head 1's
		// own ringPrev (which the stitch replaces) is 3: 1 is held by
		// three ranks, none of the held values has ringPrev -1 and the
		// first rank's value is not among them, so the head is 1. Rank 0
		// is the one rank named.
		{"agreed head: the most held value, none marked, not the first rank's", []int{4}, [][]int{{1, 2, 3, 0}}, []edit{{0, 0, 2}, {1, 2, 3}},
			"ncclTopoPostset: rank 0, channel 1: ringRecv (head) is 2 but node 0's head is 1 (held by 3 of its 4 ranks)", nil},
		// Nodes {0,1} {2,3} {4,5}, each run backwards on channel 1. Both
		// ranks of node 1 say its head is 4, a rank of node 2: rank 4 is
		// named once (its node), rank 3 once (ringPrev -1 although it is
		// not the head); the lower, 3, is named.
		{"head of another node, held by the whole node", []int{2, 2, 2}, [][]int{{1, 0}, {1, 0}, {1, 0}}, []edit{{2, 0, 4}, {3, 0, 4}},
			"ncclTopoPostset: rank 3, channel 1: ringPrev is -1 but node 1's head is 4", nil},
		// The same with the tail: rank 4 (its node) and rank 2 (ringNext
		// -1 although it is not the tail), once each.
		{"tail of another node, held by the whole node", []int{2, 2, 2}, [][]int{{1, 0}, {1, 0}, {1, 0}}, []edit{{2, 1, 4}, {3, 1, 4}},
			"ncclTopoPostset: rank 2, channel 1: ringNext is -1 but node 1's tail is 4", nil},
		// Nodes {0,1} {2} {3}. The one-rank nodes 1 and 2 both say their
		// head on channel 1 is 0: each of ranks 2 and 3 is named twice
		// (head of another node, ringPrev -1), and rank 0 twice, as the
		// other rank of both. Rank 0 is the lowest but never a subject:
		// the WARN is the first contradiction that names it.
		{"a rank named only as the other rank", []int{2, 1, 1}, [][]int{{0, 1}, {0}, {0}}, []edit{{2, 0, 0}, {3, 0, 0}},
			"ncclTopoPostset: rank 0, channel 1: rank 2's ringRecv (head) is 0, a rank of node 0, not of its own node 1", nil},
		// The same with the tail 1 (ringNext -1 is the one-rank nodes'
		// second contradiction).
		{"a rank named only as the other rank, by tails", []int{2, 1, 1}, [][]int{{0, 1}, {0}, {0}}, []edit{{2, 1, 1}, {3, 1, 1}},
			"ncclTopoPostset: rank 1, channel 1: rank 2's ringSend (tail) is 1, a rank of node 0, not of its own node 1", nil},
		// Node 0 runs 2 0 1 3; the links are made 2 3 and 0 1 0, each
		// pointing back: no rank contradicts another, and the segment
		// from 2 reaches the tail 3 without 0 and 1. After the stitch
		// (3 to 2) rank 0's walk goes round 0 1.
		{"a rank off its node's segment", []int{4}, [][]int{{2, 0, 1, 3}}, []edit{{2, 3, 3}, {3, 2, 2}, {1, 3, 0}, {0, 2, 1}},
			"ncclTopoPostset: rank 0, channel 1: not on node 0's segment from head 2 to tail 3",
			[]string{"Channel 01/02 :    0   1   0   1"}},
		// Node 1 of {0,1} {2,3,4,5} runs 2 4 5 3; the links are made 2 3
		// and 4 5 4. Rank 4 is the one rank named. After the stitch the
		// ring through 0 is 0 1 2 3, without 4 and 5.
		{"a rank off its node's segment, in the second node", []int{2, 4}, [][]int{{0, 1}, {0, 2, 3, 1}}, []edit{{2, 3, 3}, {3, 2, 2}, {5, 3, 4}, {4, 2, 5}},
			"ncclTopoPostset: rank 4, channel 1: not on node 1's segment from head 2 to tail 3",
			[]string{"Channel 01/02 :    0   1   2   3   0   1"}},
		// Node 0 runs 1 0 2 3; rank 1's ringNext skips 0 to 2. Rank 0's
		// ringPrev 1 and rank 1's ringNext 2 are contradicted (1 twice):
		// rank 0 names 1 as its ringPrev and no rank names 0 as its
		// ringNext.
		{"the rank reached by nobody is rank 0", []int{4}, [][]int{{1, 0, 2, 3}}, []edit{{1, 3, 2}},
			"ncclTopoPostset: rank 1, channel 1: ringNext is 2 but rank 2's ringPrev is 0; rank 0 is reached by nobody", nil},
		// The same node and rank 1's ringNext, and the tail 3's ringNext
		// (which the stitch replaces) is 0: rank 0 names 1 as its ringPrev
		// but is rank 3's ringNext, so no rank is reached by nobody.
		{"a rank that some ringNext names is reached", []int{4}, [][]int{{1, 0, 2, 3}}, []edit{{1, 3, 2}, {3, 3, 0}},
			"ncclTopoPostset: rank 1, channel 1: ringNext is 2 but rank 2's ringPrev is 0", nil},
		// Node 0 runs 0 1 2 3; rank 0's ringNext is 3 and its own ringPrev
		// 0. Ranks 0 and 1 both name 0 as their ringPrev and are nobody's
		// ringNext: the lower, 0, is the one reached by nobody.
		{"the lowest of the ranks reached by nobody", []int{4}, [][]int{{0, 1, 2, 3}}, []edit{{0, 3, 3}, {0, 2, 0}},
			"ncclTopoPostset: rank 0, channel 1: ringNext is 3 but rank 3's ringPrev is 2; rank 0 is reached by nobody", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := nodesJob(t, tc.sizes, tc.ch1)
			for _, e := range tc.edits {
				ringField(&j.fragments[e.rank], e.field)[1] = e.v
			}
			out := postsetEveryRank(t, j)
			v := oneVerdict(t, out)
			require.Equal(t, abi.InternalError, v.code, v.text)
			assert.Equal(t, tc.text, v.text)
			if tc.walks != nil {
				assert.Equal(t, tc.walks, out[0].walks, "rank 0's walks")
			}
		})
	}
}
