package score_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/ringdump"
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

// d25Job's channel 0 crosses the leaves 8 times (rank order), channel 1
// twice (the network order); every inter-node edge of channel 0 leaves a
// node's last rank (NIC index 1) for the next node's first (0), and
// channel 1 keeps NIC index 2: 8 of 16 mismatch, in either ring order.
func TestCompareScores(t *testing.T) {
	a, b := d25Job(), d25Job()
	b.Rings[0] = b.Rings[1]
	sa, err := score.Compute(a)
	require.NoError(t, err)
	sb, err := score.Compute(b)
	require.NoError(t, err)
	ch := score.CompareScores(sa, sb)
	assert.Equal(t, []score.LevelChange{
		{Level: 1, A: &score.Crossings{Groups: 1, Fewest: 0, PerChannel: []int{0, 0}}, B: &score.Crossings{Groups: 1, Fewest: 0, PerChannel: []int{0, 0}}},
		{Level: 2, A: &score.Crossings{Groups: 2, Fewest: 2, PerChannel: []int{8, 2}, Least: 2, Most: 8}, B: &score.Crossings{Groups: 2, Fewest: 2, PerChannel: []int{2, 2}, Least: 2, Most: 2}},
	}, ch.Levels)
	assert.Equal(t, [2]int{8, 8}, ch.NICMismatches)
	assert.Equal(t, [2]int{16, 16}, ch.InterNodeEdges)
	assert.Equal(t, []string{"crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 2-8 -> 2 (fewest 2)", "NIC-index mismatches: 8 of 16 inter-node edges -> 8 of 16"}, ch.Text())

	// Four leaves in B (node m in leaf m%4): the fewest is 4, and both
	// rings cross at each of their 8 edges (rank order: leaves 0 1 2 3 0
	// 1 2 3; network order 0 2 4 6 1 3 5 7: leaves 0 2 0 2 1 3 1 3).
	for m := range b.Location {
		b.Location[m] = fmt.Sprintf("spine0/leaf%d", m%4)
	}
	b.Rings[0] = a.Rings[0]
	sb, err = score.Compute(b)
	require.NoError(t, err)
	assert.Equal(t, "crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 2-8 -> 8 (fewest 2 -> 4)", score.CompareScores(sa, sb).Text()[0])

	// One level in B: its level 2 is none.
	for m := range b.Location {
		b.Location[m] = "spine0"
	}
	sb, err = score.Compute(b)
	require.NoError(t, err)
	assert.Equal(t, "crossings per ring: level 1: 0 -> 0 (fewest 0); level 2: 2-8 -> none", score.CompareScores(sa, sb).Text()[0])
	for m := range b.Location {
		b.Location[m], a.Location[m] = "", ""
	}
	sa, _ = score.Compute(a)
	sb, _ = score.Compute(b)
	assert.Equal(t, "crossings per ring: no node has a location in either job", score.CompareScores(sa, sb).Text()[0])
}

// viewDump is rank 1 of 3 ranks on 2 nodes, one channel 0 -> 1 -> 2.
func viewDump() *ringdump.Dump {
	return &ringdump.Dump{Rank: 1, NRanks: 3, Host: "h", Wiring: &ringdump.Wiring{
		NNodes: 2, Node: 0, NodesFirstRank: []int{0, 2}, GraphChannels: 1, NChannels: 1,
		Channels: []ringdump.Channel{{Channel: 0, Prev: 0, Next: 2, UserRanks: []int{1, 2, 0}}},
		Order:    &ringdump.Order{Asked: "network", Location: "s/l", LocationHashes: []uint32{fnv1a("s"), fnv1a("l")}, FromRecord: true, Network: true, Sequence: []int{0, 1}},
	}, NetDevs: []ringdump.NetDev{{Channel: 0, Dev: 1}}, Version: "v1", PID: 7}
}

func TestViewDifferenceNamesEachField(t *testing.T) {
	a := viewDump()
	b := viewDump()
	b.PID, b.Version = 8, "v2"
	assert.Empty(t, score.ViewDifference(a, b), "another process and library version: the same view")
	b.NetDevs = []ringdump.NetDev{{Channel: 1, Dev: 4}, {Channel: 0, Dev: 1}}
	assert.Equal(t, []string{"channel 1's NIC index none -> 4"}, score.ViewDifference(a, b), "answers in another order are the same answers")

	b = viewDump()
	b.Host = "g"
	b.Node, b.NodesFirstRank = 1, []int{0, 1}
	b.Channels[0].Prev, b.Channels[0].UserRanks = 2, []int{1, 0, 2}
	b.Order.Location, b.Order.LocationHashes = "s/m", []uint32{fnv1a("s"), fnv1a("m")}
	assert.Equal(t, []string{"node 0 -> 1", "nodesFirstRank[1] 2 -> 1", "channel 0's prev 0 -> 2", `channel 0's userRanks[1] 2 -> 0`, `order location "s/l" -> "s/m"`}, score.ViewDifference(a, b))

	b = viewDump()
	b.GraphChannels = 2
	b.Channels = nil
	b.Order = nil
	b.NetDevs = nil
	assert.Equal(t, []string{"graphChannels 1 -> 2", "channels 1 -> 0", "order asked network -> none", "channel 0's NIC index 1 -> none"}, score.ViewDifference(a, b))

	b = viewDump()
	b.Order.Sequence = []int{1, 0}
	assert.Equal(t, []string{"order sequence 0 1 -> 1 0"}, score.ViewDifference(a, b))
}
