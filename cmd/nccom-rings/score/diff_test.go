package score_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
)

func TestDiffOfAJobWithItselfIsEmpty(t *testing.T) {
	assert.Empty(t, score.Diff(d25Job(), d25Job()))
}

func TestDiffNamesEachKindOfChange(t *testing.T) {
	a, b := d25Job(), d25Job()
	// Channel 0 of b in the network order too (channel 1's ring); rank 5's
	// NIC on channel 1 changes; node 3 runs on another host at another
	// leaf; b has one graph channel where a had two.
	b.Rings[0] = b.Rings[1]
	b.NetDev[32+5] = 7
	b.Host[3], b.Location[3] = "z", "spine0/leafC"
	b.GraphChannels, a.GraphChannels = 1, 2
	assert.Equal(t, []score.Change{
		{Kind: "placement", Count: 1, Text: `node 3 on host "d" -> "z"; 0 ranks on another node, 1 of 8 nodes on another host`},
		{Kind: "locations", Count: 1, Text: `node 3 at "spine0/leafB" -> "spine0/leafC"; 1 of 8 nodes`},
		{Kind: "channel count", Count: 1, Text: "2 graph channels (2 after doubling) -> 1 (2); the dumps do not say which rank's graph set it (D27: the smallest of any rank's)"},
		{Kind: "node sequence", Count: 1, Text: "channel 0: 0 1 2 3 4 5 6 7 -> 0 2 4 6 1 3 5 7; 1 of 2 channels visit the nodes in another order"},
		// Rank 3, node 0's last, goes to node 2's first (8), not node 1's.
		{Kind: "rings", Count: 1, Text: "channel 0: rank 3's next 4 -> 8; 1 of 2 channels differ"},
		{Kind: "NIC indices", Count: 1, Text: "channel 1: rank 5's NIC index 2 -> 7; 1 of 64 channel-rank pairs differ"},
	}, score.Diff(a, b))
}

func TestDiffOfJobsOfOtherSizes(t *testing.T) {
	a := d25Job()
	b := &score.Job{NRanks: 4, NNodes: 2, Node: []int{0, 0, 1, 1}, Host: []string{"a", "x"}, Location: []string{"spine0/leafA", ""},
		Rings: [][]int{{1, 0, 2, 3}}, NetDev: []int{-1, -1, -1, -1}}
	assert.Equal(t, []score.Change{
		{Kind: "ranks", Count: 1, Text: "32 ranks -> 4"},
		{Kind: "nodes", Count: 1, Text: "8 nodes -> 2"},
		// Ranks 2 and 3 are on node 0 in a, node 1 in b.
		{Kind: "placement", Count: 3, Text: `rank 2 on node 0 -> 1; 2 ranks on another node, 1 of 2 nodes on another host`},
		{Kind: "locations", Count: 1, Text: `node 1 at "spine0/leafB" -> none; 1 of 2 nodes`},
		{Kind: "channel count", Count: 1, Text: "0 graph channels (2 after doubling) -> 0 (1); the dumps do not say which rank's graph set it (D27: the smallest of any rank's)"},
		// b's ring from rank 0: 0 2 3 1, nodes 0 1 0, one visit of node 0.
		{Kind: "node sequence", Count: 1, Text: "channel 0: 0 1 2 3 4 5 6 7 -> 0 1; 1 of 1 channels visit the nodes in another order"},
	}, score.Diff(a, b))
}
