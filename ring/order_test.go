package ring_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/record"
	"github.com/nccomring/libnccomring/ring"
)

// Issue 22: the inter-node order policy (D25) and the verdicts D27 moved
// into the record, on every rank of jobs of nodes of 4 ranks with two
// channels: channel 0 runs each node forwards, channel 1 backwards.

// nodeRing is a ring (from rank 0) as its sequence of nodes, one entry per
// run of ranks of one node.
func nodeRing(ring []int32) []int {
	var nodes []int
	for i, r := range ring {
		m := int(r) / orderLocal
		if i == 0 || m != nodes[len(nodes)-1] {
			nodes = append(nodes, m)
		}
	}
	return nodes
}

// crossings counts the ring's edges (the wrap-around one included) between
// ranks whose nodes have different locations.
func crossings(ring []int32, loc func(m int) string) int {
	n := 0
	for i, r := range ring {
		if loc(int(r)/orderLocal) != loc(int(ring[(i+1)%len(ring)])/orderLocal) {
			n++
		}
	}
	return n
}

// D25's example: 8 nodes of 4 ranks alternating between two leaves in rank
// order. With network on every rank, each ring of the first 2 channels
// crosses between the leaves exactly twice (the doubled channels repeat
// them), the same node sequence on every rank; D8's order crosses 8 times.
func TestNetworkOrderGroupsTheLeaves(t *testing.T) {
	cl := orderCluster(8)
	before := oneVerdict(t, postsetEveryRank(t, orderJob(t, cl, noRank, alternating)))
	require.Equal(t, abi.Success, before.code, before.text)
	assert.Equal(t, ring.Order{}, before.order, "no rank asks: D8's order, nothing said")
	for _, r := range before.rings {
		assert.Equal(t, 8, crossings(r, alternating))
	}

	v := oneVerdict(t, postsetEveryRank(t, orderJob(t, cl, everyRank, alternating)))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.True(t, v.order.Network && v.order.Asked)
	assert.Equal(t, []int32{0, 2, 4, 6, 1, 3, 5, 7}, v.order.Sequence)
	assert.Empty(t, v.order.Warn)
	assert.Equal(t, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 2:8 4:16 6:24 1:4 3:12 5:20 7:28; per ring, level 1: 0 crossings of 1 groups, level 2: 2 crossings of 2 groups",
		v.order.Summary)
	require.Len(t, v.rings, 4)
	want := [][]int32{
		{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27, 4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31},
		{0, 11, 10, 9, 8, 19, 18, 17, 16, 27, 26, 25, 24, 7, 6, 5, 4, 15, 14, 13, 12, 23, 22, 21, 20, 31, 30, 29, 28, 3, 2, 1},
	}
	for c, r := range v.rings {
		assert.Equal(t, want[c%2], r, "channel %d", c)
		assert.Equal(t, 2, crossings(r, alternating), "channel %d", c)
	}
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7}, nodeRing(v.rings[0]))
	assert.Equal(t, []int{0, 2, 4, 6, 1, 3, 5, 7, 0}, nodeRing(v.rings[1]), "channel 1 runs each node backwards, the nodes in sequence")
	assert.Equal(t, 8, v.nNodes, "nodes stay D8's")
}

// Locations already grouped in rank order: the policy gives D8's order,
// and the rings are exactly those of a job without it.
func TestNetworkOrderOverGroupedRanksChangesNothing(t *testing.T) {
	cl := orderCluster(8)
	grouped := func(m int) string { return []string{"spine0/leafA", "spine0/leafB"}[m/4] }
	plain := oneVerdict(t, postsetEveryRank(t, orderJob(t, cl, noRank, func(int) string { return "" })))
	v := oneVerdict(t, postsetEveryRank(t, orderJob(t, cl, everyRank, grouped)))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.True(t, v.order.Network)
	assert.Equal(t, []int32{0, 1, 2, 3, 4, 5, 6, 7}, v.order.Sequence)
	assert.Equal(t, plain.rings, v.rings)
}

// The fallbacks of D25: D9 on every rank, one identical WARN naming the
// first rank (or node) that differs and how many; never a refusal.
func TestNetworkOrderFallsBackToRankOrderOnEveryRank(t *testing.T) {
	cl := orderCluster(8)
	plain := oneVerdict(t, postsetEveryRank(t, orderJob(t, cl, noRank, alternating)))
	for _, tc := range []struct {
		name  string
		job   func() *job
		warn  string
		rings bool // D8's rings
	}{
		{"one rank of 32 without NCCOM_RING_NODE_ORDER", func() *job {
			return orderJob(t, cl, func(r int) bool { return r != 13 }, alternating)
		}, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 13 asks for rank, unlike rank 0 (asks for network, the most common): network on 31 ranks, rank on 1, no valid record on 0: stitching in rank order (D9) on every rank", true},
		{"ranks 0 and 21 without NCCOM_RING_NODE_ORDER: the first named", func() *job {
			return orderJob(t, cl, func(r int) bool { return r != 0 && r != 21 }, alternating)
		}, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 0 asks for rank, unlike rank 1 (asks for network, the most common): network on 30 ranks, rank on 2, no valid record on 0: stitching in rank order (D9) on every rank", true},
		{"a node whose graph has other NICs", func() *job {
			odd := orderCluster(8)
			odd.graphs[5].Inter[1] = 9
			return orderJob(t, odd, everyRank, alternating)
		}, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 20 (node 5) has graph fingerprint 0x1d333f3f, unlike rank 0 (node 0; 0x80cfbdb7, the most common): 0x80cfbdb7 on 28 ranks, 0x1d333f3f on 4 ranks; reordering nodes would change their NICs: stitching in rank order (D9) on every rank", true},
		{"a stale record from an earlier communicator in one slot", func() *job {
			j := orderJob(t, cl, everyRank, alternating)
			*record.Of(&j.fragments[9]) = *record.Of(&j.fragments[3]) // rank 3's record: not slot 9's
			return j
		}, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 9 carries no valid record, unlike rank 0 (asks for network, the most common): network on 31 ranks, rank on 0, no valid record on 1: stitching in rank order (D9) on every rank", true},
		{"a record whose checksum fails", func() *job {
			j := orderJob(t, cl, everyRank, alternating)
			record.Of(&j.fragments[30]).Location[1] ^= 0x100
			return j
		}, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 30 carries no valid record, unlike rank 0 (asks for network, the most common): network on 31 ranks, rank on 0, no valid record on 1: stitching in rank order (D9) on every rank", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := oneVerdict(t, postsetEveryRank(t, tc.job()))
			require.Equal(t, abi.Success, v.code, v.text)
			assert.Equal(t, ring.Order{Asked: true, Warn: tc.warn}, v.order)
			if tc.rings {
				assert.Equal(t, plain.rings, v.rings, "D9's rings")
			}
		})
	}
}

// A duplicated fragment pointer fails the rings themselves, on every rank
// alike (D24), whatever the records ask.
func TestNetworkOrderWithADuplicatedFragmentFailsOnEveryRank(t *testing.T) {
	j := orderJob(t, orderCluster(8), everyRank, alternating)
	for r := range j.fragments {
		j.all = append(j.all, &j.fragments[r])
	}
	j.all[9] = j.all[8]
	v := oneVerdict(t, postsetEveryRank(t, j))
	requireNamesRank(t, v, 9)
}

// Nodes without a location come after all others, in D8's order, with one
// WARN naming the first one's head and how many; a node's location is the
// one most of its ranks carry.
func TestNodesWithoutALocationComeLast(t *testing.T) {
	cl := orderCluster(6)
	loc := func(m int) string { return []string{"s/leafA", "s/leafB", "", "s/leafA", "", "s/leafB"}[m] }
	j := orderJob(t, cl, everyRank, loc)
	// Node 1: three of its four ranks say leafB, rank 4 (its head) leafA.
	rewriteRecords(j, func(r int, f *record.Fields) {
		if r == 4 {
			f.Location, _ = nodeorder.Parse("s/leafA")
		}
	})
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.Equal(t, []int32{0, 3, 1, 5, 2, 4}, v.order.Sequence)
	assert.Equal(t, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: node 2 (head rank 8) has no location (2 of 6 nodes have none, NCCOM_RING_LOCATION unset or invalid on most of their ranks): they come after all others, in rank order",
		v.order.Warn)
	assert.Equal(t, []int{0, 3, 1, 5, 2, 4}, nodeRing(v.rings[0]))
}

// A node's location is the one most of its ranks carry; ties go to its
// head's, else to the tied location whose lowest holder is the lowest
// rank. Nodes 0-3 of 6 ranks sit under x/a, x/b, x/c, x/d; node 4 (ranks
// 24-29, head 24) is the node under test, and the group it joins shows in
// the sequence.
func TestNodeLocationIsTheMostCarried(t *testing.T) {
	forward, backward := []int{0, 1, 2, 3, 4, 5}, []int{5, 4, 3, 2, 1, 0}
	cl := newCluster(6, 6, 6, 6, 6).channel(0, forward, 0, 1).channel(1, backward, 2, 3).channels(2)
	for _, tc := range []struct {
		name  string
		ranks [6]string // ranks 24..29
		seq   []int32
	}{
		{"a majority", [6]string{"x/e", "x/a", "x/a", "x/a", "x/b", "x/c"}, []int32{0, 4, 1, 2, 3}},
		{"a tie with the head's", [6]string{"x/c", "x/a", "x/a", "x/c", "x/c", "x/a"}, []int32{0, 1, 2, 4, 3}},
		{"a tie without the head's: the lowest holder", [6]string{"x/e", "x/c", "x/b", "x/c", "x/b", "x/a"}, []int32{0, 1, 2, 4, 3}},
		{"a tie without the head's, the other way", [6]string{"x/e", "x/b", "x/c", "x/c", "x/b", "x/a"}, []int32{0, 1, 4, 2, 3}},
		{"all once: the head's, a group of its own", [6]string{"x/e", "x/a", "x/b", "x/c", "x/d", "y/a"}, []int32{0, 1, 2, 3, 4}},
		{"most have none: the node has none", [6]string{"x/a", "", "", "", "x/b", "x/c"}, []int32{0, 1, 2, 3, 4}},
		{"most have one", [6]string{"", "x/b", "x/b", "x/b", "x/b", ""}, []int32{0, 1, 4, 2, 3}},
		{"none tied with one, the head's none", [6]string{"", "", "x/b", "x/b", "x/b", ""}, []int32{0, 1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := gatherWith(t, cl.nRanks, func(int) int { return 6 }, func(r int) *abi.TopoGraph { return cl.graphs[r/6] },
				func(r int) ring.PresetOptions {
					v := []string{"x/a", "x/b", "x/c", "x/d"}[min(r/6, 3)]
					if r >= 24 {
						v = tc.ranks[r-24]
					}
					opt := ring.PresetOptions{Platforms: generic, Network: true}
					if v != "" {
						opt.Location, _ = nodeorder.Parse(v)
					}
					return opt
				}, 0)
			v := oneVerdict(t, postsetEveryRank(t, j))
			require.Equal(t, abi.Success, v.code, v.text)
			assert.Equal(t, tc.seq, v.order.Sequence)
		})
	}
}

// podsJob is cl's job with every rank asking for the network order and
// the pod order (NCCOM_RING_POD_ORDER=node), node m at loc(m), and
// comm->enablePod set on every rank.
func podsJob(t *testing.T, cl *cluster, loc func(m int) string) *job {
	t.Helper()
	j := gatherWith(t, cl.nRanks, func(int) int { return orderLocal }, func(r int) *abi.TopoGraph { return cl.graphs[r/orderLocal] },
		func(r int) ring.PresetOptions {
			l, _ := nodeorder.Parse(loc(r / orderLocal))
			return ring.PresetOptions{Platforms: generic, Network: true, Location: l, PodNode: true}
		}, 0)
	rewriteRecords(j, func(_ int, f *record.Fields) { f.EnablePod = true })
	return j
}

// Policies not applied (D25): with enablePod on several nodes or on
// TRN3-SwitchV1, D8's order and one INFO line; with enablePod on one node
// the policy applies.
func TestNetworkOrderIsNotAppliedToPodsOrOnSwitchV1(t *testing.T) {
	cl := orderCluster(4)
	loc := func(m int) string { return []string{"s/b", "s/a", "s/b", "s/a"}[m] }
	j := podsJob(t, cl, loc)
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.Equal(t, ring.Order{Asked: true, Info: "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied with comm->enablePod on 4 nodes (D15): stitching in rank order"}, v.order)

	j = orderJob(t, cl, everyRank, loc)
	rewriteRecords(j, func(_ int, f *record.Fields) { f.Platform, f.JbogID = record.SwitchV1, 1 })
	v = oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.Equal(t, ring.Order{Asked: true, Info: "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied on TRN3-SwitchV1: stitching in rank order"}, v.order)

	// enablePod on one node is no pod job (D15 is for more than one node):
	// the policy applies, to a sequence of one node.
	one := orderCluster(1)
	j = orderJob(t, one, everyRank, loc)
	rewriteRecords(j, func(_ int, f *record.Fields) { f.EnablePod = true })
	v = oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.Equal(t, ring.Order{Asked: true, Network: true, Sequence: []int32{0},
		Summary: "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0; per ring, level 1: 0 crossings of 1 groups, level 2: 0 crossings of 1 groups"}, v.order)
}

// The decision depends on the gathered bytes alone: fragments at shuffled
// addresses, and GOMAXPROCS 1 and 64, give the same outcome on every rank.
func TestNetworkOrderIsTheSameWhereverTheFragmentsLie(t *testing.T) {
	cl := orderCluster(16)
	loc := func(m int) string { return fmt.Sprintf("s%d/l%d", m%3, m%5) }
	want := oneVerdict(t, postsetEveryRank(t, orderJob(t, cl, everyRank, loc)))
	require.True(t, want.order.Network)
	rng := rand.New(rand.NewPCG(22, 25))
	for _, procs := range []int{1, 64} {
		old := runtime.GOMAXPROCS(procs)
		j := orderJob(t, cl, everyRank, loc)
		// The same bytes, each fragment somewhere else in one buffer.
		moved := make([]abi.TopoRanks, len(j.fragments))
		slots := rng.Perm(len(moved))
		for r, s := range slots {
			moved[s] = j.fragments[r]
			j.all = append(j.all, &moved[s])
		}
		got := oneVerdict(t, postsetEveryRank(t, j))
		runtime.GOMAXPROCS(old)
		assert.Equal(t, want, got, "GOMAXPROCS %d", procs)
		assert.True(t, strings.HasPrefix(got.order.Summary, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 "))
	}
}

// A broken ring under the network order: the verdict is D24's, the same on
// every rank, and rank 0's walk follows the stitch Postset made, the
// location order (node 0, then node 2 = ranks 8-11), not D8's (node 1 =
// ranks 4-7 after rank 3). Rank 10's ringNext 9 sends channel 0 back and
// forth between 9 and 10. This call takes five blocks of working memory
// (the link tables, the locations, the order, the diagnosis, the walks):
// one more than the scratch holds in itself.
func TestBrokenRingUnderTheNetworkOrder(t *testing.T) {
	j := orderJob(t, orderCluster(8), everyRank, alternating)
	j.fragments[10].RingNext[0] = 9
	out := postsetEveryRank(t, j)
	v := oneVerdict(t, out)
	assert.Equal(t, "ncclTopoPostset: rank 10, channel 0: ringNext is 9 but rank 9's ringPrev is 8; rank 11 is reached by nobody", v.text)
	// 32 steps: 0 1 2 3 8 9 10, then 9 10 twelve times, then 9.
	want := "Channel 00/02 :    0   1   2   3   8   9  10"
	for range 12 {
		want += "   9  10"
	}
	assert.Equal(t, []string{want + "   9"}, out[0].walks)
}

// Eight levels, the most a location has: node m of 16 sits under
// z/z/z/z/z, then a<bit 0 of m>/b<bit 1>/c<bit 2>. Grouping level 6 first
// (even nodes, then odd), then 7, then 8 gives the nodes in bit-reversed
// order; each ring crosses the 2, 4 and 8 groups of levels 6-8 once each.
// The summary shows 16 nodes in full and cuts a 17th (node 16, under
// node 0's location, so right after it).
func TestNetworkOrderOfEightLevels(t *testing.T) {
	loc := func(m int) string {
		return fmt.Sprintf("z/z/z/z/z/a%d/b%d/c%d", m%2, m/2%2, m/4%2)
	}
	levels := ", level 1: 0 crossings of 1 groups, level 2: 0 crossings of 1 groups, level 3: 0 crossings of 1 groups, level 4: 0 crossings of 1 groups, level 5: 0 crossings of 1 groups, " +
		"level 6: 2 crossings of 2 groups, level 7: 4 crossings of 4 groups, level 8: 8 crossings of 8 groups"
	for _, tc := range []struct {
		nodes   int
		seq     []int32
		summary string
	}{
		{16, []int32{0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15},
			"ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 8:32 4:16 12:48 2:8 10:40 6:24 14:56 1:4 9:36 5:20 13:52 3:12 11:44 7:28 15:60; per ring" + levels},
		{17, []int32{0, 8, 16, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15},
			"ncclTopoPostset: NCCOM_RING_NODE_ORDER=network: nodes 0:0 8:32 16:64 4:16 12:48 2:8 10:40 6:24 14:56 1:4 9:36 5:20 13:52 3:12 11:44 7:28 ... (1 more); per ring" + levels},
	} {
		t.Run(fmt.Sprint(tc.nodes, " nodes"), func(t *testing.T) {
			v := oneVerdict(t, postsetEveryRank(t, orderJob(t, orderCluster(tc.nodes), everyRank, loc)))
			require.Equal(t, abi.Success, v.code, v.text)
			assert.Equal(t, tc.seq, v.order.Sequence)
			assert.Equal(t, tc.summary, v.order.Summary)
			var want []int
			for _, m := range tc.seq {
				want = append(want, int(m))
			}
			assert.Equal(t, want, nodeRing(v.rings[0]))
		})
	}
}

// Nodes of one rank each (one process per host), 2 to 9 of them,
// alternating between two leaves: the even nodes, then the odd ones. Each
// node's location is its one rank's; the ranks' and the nodes' locations
// share one block of working memory, laid out for any ratio of the two.
func TestNetworkOrderOfSingleRankNodes(t *testing.T) {
	for nodes := 2; nodes <= 9; nodes++ {
		sizes := make([]int, nodes)
		for m := range sizes {
			sizes[m] = 1
		}
		cl := newCluster(sizes...).channel(0, []int{0}, 0, 1).channels(1)
		j := gatherWith(t, nodes, func(int) int { return 1 }, func(r int) *abi.TopoGraph { return cl.graphs[r] },
			func(r int) ring.PresetOptions {
				l, err := nodeorder.Parse(alternating(r))
				require.NoError(t, err)
				return ring.PresetOptions{Platforms: generic, Network: true, Location: l}
			}, 0)
		v := oneVerdict(t, postsetEveryRank(t, j))
		require.Equal(t, abi.Success, v.code, v.text)
		var want []int32
		for m := 0; m < nodes; m += 2 {
			want = append(want, int32(m))
		}
		for m := 1; m < nodes; m += 2 {
			want = append(want, int32(m))
		}
		assert.Equal(t, want, v.order.Sequence, "%d nodes", nodes)
		assert.Equal(t, [][]int32{want, want}, v.rings, "%d nodes: the ring is the sequence (channel 0 and its double)", nodes)
	}
}

// countingScratch is a Postset Scratch over Go memory that adds up the
// ints asked of it.
type countingScratch struct {
	goAlloc
	ints int
}

func (s *countingScratch) AllocInts(n int) uintptr {
	s.ints += n
	return s.goAlloc.AllocInts(n)
}

// The network order's working memory is linear in ranks and nodes, and
// small: per rank a location (9 ints: the level count and 8 hashes), its
// node and its place among its node's ranks; per node a location, its
// place in a count, the groups of 8 levels, a sort's work, the sequence
// and the heads in order. On D25's 8 nodes of 4 ranks, 2 channels:
// (2+2x2)x32 ints of link tables, (9+2)x32 + (9+1)x8 + 1 for the
// locations, (8+3)x8 for the order: 192 + 433 + 88 = 713 ints.
func TestNetworkOrderWorkingMemory(t *testing.T) {
	for _, network := range []bool{false, true} {
		j := orderJob(t, orderCluster(8), func(int) bool { return network }, alternating)
		all, _ := j.inputs()
		sc := &countingScratch{goAlloc: *newGoAlloc()}
		comm := *j.comms[3]
		res, err := ring.Postset(&comm, make([]int32, 32), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc(), Scratch: sc})
		require.NoError(t, err)
		require.Equal(t, network, res.Order.Network)
		want := 256 // the link tables and walks alone: (2 + 3*2) * 32
		if network {
			want = 256 + 288 + 137 + 8
		}
		assert.Equal(t, want, sc.ints, "network %v", network)
		assert.Empty(t, sc.live, "all freed")
	}
}

// P7b for the node order's working memory: rank 0's record asks for the
// network order, so Postset takes room for the nodes' locations as gather
// finds them (nodeorder.CompactInts(32) = 9 x 32 = 288 ints); every rank
// carries its head's location, so those are the nodes'. When that block,
// the order's (nodeorder.NodesInts(8) - CompactInts(8) = 8 + 8x8 + 16 +
// 6x8 + 1 = 137 ints: the sequence, the groups, the table and the places)
// or the ordered heads' (8 ints) cannot be had, Postset is ncclSystemError naming
// the bytes, writes nothing and frees what it took.
func TestNetworkOrderWithoutWorkingMemoryIsASystemError(t *testing.T) {
	j := orderJob(t, orderCluster(8), everyRank, alternating)
	all, _ := j.inputs()
	for _, tc := range []struct {
		blocks int // given before the one that fails
		bytes  int
	}{{1, 4 * 288}, {2, 4 * 137}, {3, 4 * 8}} {
		comm := *j.comms[5]
		before := bytes.Clone(bytesOf(&comm))
		heads := make([]int32, 32)
		sc := &failAfter{inner: newGoAlloc(), after: tc.blocks}
		_, err := ring.Postset(&comm, heads, all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc(), Scratch: sc})
		requireNCCLError(t, err, abi.SystemError, fmt.Sprintf("ncclTopoPostset: malloc of %d bytes of working memory for 32 ranks x 2 channels failed", tc.bytes))
		assert.Equal(t, before, bytesOf(&comm))
		assert.Equal(t, make([]int32, 32), heads)
		assert.Empty(t, sc.inner.live, "working memory freed")
	}
}

// When gather already shows that the order cannot apply (a record without
// the flag, pods on more than one node, TRN3-SwitchV1), Postset takes no
// memory beyond the link tables and walks, (2 + 3*2) x 32 ints, and the
// room for the nodes' locations it takes when rank 0's record asks (9 x
// 32 ints): with only those two blocks it still stitches in rank order
// with its WARN or INFO.
func TestNetworkOrderNotAppliedTakesNoLocationMemory(t *testing.T) {
	notAll := orderJob(t, orderCluster(8), func(r int) bool { return r != 13 }, alternating)
	pods := podsJob(t, orderCluster(8), alternating)
	switchV1 := orderJob(t, orderCluster(8), everyRank, alternating)
	rewriteRecords(switchV1, func(_ int, f *record.Fields) { f.Platform, f.JbogID = record.SwitchV1, 1 })
	for _, tc := range []struct {
		name string
		j    *job
		warn bool // the fallback's line is a WARN (else an INFO)
	}{{"rank 13 does not ask", notAll, true}, {"enablePod on 8 nodes", pods, false}, {"SwitchV1", switchV1, false}} {
		all, platform := tc.j.inputs()
		counted := &countingScratch{goAlloc: *newGoAlloc()}
		oneBlock := &failAfter{inner: newGoAlloc(), after: 2}
		for _, sc := range []ring.Allocator{counted, oneBlock} {
			comm := *tc.j.comms[3]
			res, err := ring.Postset(&comm, make([]int32, 32), all, ring.PostsetOptions{Platforms: platform, Alloc: newGoAlloc(), Scratch: sc})
			require.NoError(t, err, tc.name)
			assert.True(t, res.Order.Asked && !res.Order.Network, tc.name)
			assert.Equal(t, tc.warn, res.Order.Warn != "", tc.name)
			assert.Equal(t, !tc.warn, res.Order.Info != "", tc.name)
		}
		assert.Equal(t, 256+288, counted.ints, tc.name)
		assert.Empty(t, oneBlock.inner.live, "%s: working memory freed", tc.name)
	}
}

// Nodes of 8 to 16 ranks (an average of at least a cache line of pairs, so
// the walk is told the nodes ahead, walk.go's lookahead), of unequal sizes,
// alternating between two leaves: every rank's rings are the model's, each
// leaf's nodes in rank order, channel 0 running each node forwards and
// channel 1 backwards, from every rank's start (the walk starts in every
// node and at every offset within one).
func TestNetworkOrderOfUnequalNodesIsTheModels(t *testing.T) {
	sizes := []int{8, 12, 9, 16, 8, 10, 8, 11}
	cl := newCluster(sizes...).channels(2)
	for m, g := range cl.graphs {
		l := sizes[m]
		for i := range l {
			g.Intra[i] = int32(cl.first[m] + i)
			g.Intra[l+i] = int32(cl.first[m] + l - 1 - i)
		}
		g.Inter[0], g.Inter[1], g.Inter[2], g.Inter[3] = 0, 1, 2, 3
	}
	j := gatherWith(t, cl.nRanks, func(r int) int { return cl.local[cl.nodeOf(r)] },
		func(r int) *abi.TopoGraph { return cl.graphs[cl.nodeOf(r)] },
		func(r int) ring.PresetOptions {
			l, err := nodeorder.Parse(alternating(cl.nodeOf(r)))
			require.NoError(t, err)
			return ring.PresetOptions{Platforms: generic, Network: true, Location: l}
		}, 0)
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	sequence := []int{0, 2, 4, 6, 1, 3, 5, 7}
	assert.Equal(t, []int32{0, 2, 4, 6, 1, 3, 5, 7}, v.order.Sequence)
	var forwards, backwards []int32
	for _, m := range sequence {
		for i := range sizes[m] {
			forwards = append(forwards, int32(cl.first[m]+i))
			backwards = append(backwards, int32(cl.first[m]+sizes[m]-1-i))
		}
	}
	// Rotated to start at rank 0, as outcome.rings are.
	at := slices.Index(backwards, 0)
	backwards = append(backwards[at:], backwards[:at]...)
	require.Len(t, v.rings, 4)
	for c, r := range v.rings {
		assert.Equal(t, [][]int32{forwards, backwards}[c%2], r, "channel %d", c)
	}
}

// A one-node job with the network order and no location prints no WARN:
// there is nothing to order (D28).
func TestOneNodeWithoutLocationIsQuiet(t *testing.T) {
	one := newCluster(4).channel(0, []int{0, 1, 2, 3}, 0, 0).channels(1)
	j := d28Job(t, one, func(int) ring.PresetOptions { return ring.PresetOptions{Platforms: generic, Network: true} }, nil)
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.Empty(t, v.order.Warn)
}

// The policy's odd one out against "rank": the lowest rank that asks for
// network, not a rank of another ring stage (which cannot differ from the
// rank order it follows anyway).
func TestPolicyOddOneOutAgainstRank(t *testing.T) {
	j := orderJob(t, orderCluster(2), func(r int) bool { return r == 6 }, alternating)
	*record.Of(&j.fragments[0]) = abi.Record{}
	v := oneVerdict(t, postsetEveryRank(t, j))
	require.Equal(t, abi.Success, v.code, v.text)
	assert.Equal(t, "ncclTopoPostset: NCCOM_RING_NODE_ORDER=network is not applied: rank 6 asks for network, unlike rank 1 (asks for rank, the most common): network on 1 rank, rank on 6, no valid record on 1: stitching in rank order (D9) on every rank", v.order.Warn)
}
