package simulate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/plan"
	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
)

// planJob is what plan builds for hosts h001.. at locs, local ranks a
// node, on the embedded default graph, in the rank or network order.
func planJob(t *testing.T, locs []string, local int, network bool) *score.Job {
	t.Helper()
	hosts := make([]string, len(locs))
	for m := range hosts {
		hosts[m] = fmt.Sprintf("h%03d", m+1)
	}
	res, err := plan.Rings(plan.Cluster{Hosts: hosts, Locations: locs, RanksPerNode: local}, network)
	require.NoError(t, err)
	return res.Job
}

// d25Locations is D25's example: 8 nodes alternating between two leaves.
func d25Locations() []string {
	var locs []string
	for m := range 8 {
		locs = append(locs, "spine0/leaf"+string(rune('A'+m%2)))
	}
	return locs
}

// nodeRanks is node m's ranks, ascending, as hierarchicalFlows groups them.
func nodeRanks(j *score.Job) [][]int {
	ranks := make([][]int, j.NNodes)
	for r, m := range j.Node {
		ranks[m] = append(ranks[m], r)
	}
	return ranks
}

// Which NIC each local rank's inter-node ring uses, by hand from the
// default graph (plan.DefaultGraph): L cores, min(8, L) NICs, core i on
// NIC i x NICs / L; channel c (of 8) starts at core c x L / 8, forward
// for even c, backward for odd, and GetNetDev (D18) answers the head
// inter[2c] (its first core's NIC) and every other rank inter[2c+1]
// (its last core's NIC).
//
// D25's 4 ranks a node: 4 NICs; the heads are cores 0, 0, 1, 1, 2, 2,
// 3, 3 (channels 0..7), so every core heads a channel and its netDev
// there is its own NIC: local index i on NIC i, one ring a NIC. (On
// channel 0 alone the answers are 0, 3, 3, 3: core 0 is the head, the
// others get the tail's NIC.)
//
// 32 ranks a node: 8 NICs, core i on NIC i / 4. Heads are cores 0, 4,
// .., 28; tails are start - 1 forward (31, 7, 15, 23) and start + 1
// backward (5, 13, 21, 29); the other 16 cores touch no inter-node edge
// and take i x 8 / 32: every core on NIC i / 4, four rings a NIC.
func TestOwnNICsDefaultGraph(t *testing.T) {
	for _, network := range []bool{false, true} {
		j := planJob(t, d25Locations(), 4, network)
		ranks := nodeRanks(j)
		own := ownNICs(j, ranks, []int{4, 4, 4, 4, 4, 4, 4, 4})
		for m, rs := range ranks {
			for i, r := range rs {
				assert.Equal(t, i, own[r], "network=%v node %d local %d", network, m, i)
			}
		}
		// channel 0's answers pile 3 ranks on NIC 3: what the rule replaces.
		assert.Equal(t, []int{0, 3, 3, 3}, j.NetDev[0:4])
	}

	j := planJob(t, []string{"s/a", "s/b", "s/a", "s/b"}, 32, false)
	ranks := nodeRanks(j)
	own := ownNICs(j, ranks, []int{8, 8, 8, 8})
	edge := map[int]bool{}
	for _, ring := range j.Rings {
		for k, r := range ring {
			if next := ring[(k+1)%len(ring)]; j.Node[r] != j.Node[next] {
				edge[r%32], edge[next%32] = true, true
			}
		}
	}
	assert.Equal(t, map[int]bool{0: true, 4: true, 8: true, 12: true, 16: true, 20: true, 24: true, 28: true,
		31: true, 7: true, 15: true, 23: true, 5: true, 13: true, 21: true, 29: true}, edge)
	for m, rs := range ranks {
		for i, r := range rs {
			assert.Equal(t, i/4, own[r], "node %d local %d", m, i)
		}
	}
}

// The library's answer wins over the spreading rule: two nodes of two
// ranks and 4 NICs, one channel 0 1 | 2 3 whose inter-node edges are
// 1 -> 2 and 3 -> 0, with netDev 3 for every rank. Ranks 1, 2, 3 and 0
// all have an edge: NIC 3 each. With a second channel 1 0 | 3 2 (edges
// 0 -> 3, 2 -> 1) first and netDev 2 there, the lowest channel's answer
// is 2. An unknown netDev (-1) falls back to i x 4 / 2: 0 and 2.
func TestOwnNICsLibraryFirst(t *testing.T) {
	leaves := []string{"leafA", "leafB"}
	j := handJob(leaves, identity(2), 2, [][]int{{0, 1, 2, 3}}, func(int, int) int { return 3 })
	assert.Equal(t, []int{3, 3, 3, 3}, ownNICs(j, nodeRanks(j), []int{4, 4}))
	j = handJob(leaves, identity(2), 2, [][]int{{1, 0, 3, 2}, {0, 1, 2, 3}}, func(c, _ int) int { return 2 + c })
	assert.Equal(t, []int{2, 2, 2, 2}, ownNICs(j, nodeRanks(j), []int{4, 4}))
	j = handJob(leaves, identity(2), 2, [][]int{{0, 1, 2, 3}}, func(int, int) int { return -1 })
	assert.Equal(t, []int{0, 2, 0, 2}, ownNICs(j, nodeRanks(j), []int{4, 4}))
}

// D25's example, hierarchical, by hand (256 MiB, 100 Gbit/s NICs, 15
// us): local index i on NIC i (above), 4 rings of 8 nodes, a part is
// 256 MiB / (4 x 8) = 8 MiB, AllReduce 2 x 7 = 14 steps, busbw factor
// 2 x 31 / 32. Network order (A A A A B B B B): a ring crosses each way
// once, 4 flows up a leaf of 16 NICs, under any ratio up to 4:1 each
// flow has its NIC's 100 Gbit/s: 14 x (15 us + 8 MiB / 12.5 GB/s) =
// 9.605 ms, 433.17 Gbit/s. Rank order (A B A B ...): every edge
// crosses, 16 flows up each leaf: 1600/16 = 100 at 1:1 (433.17), 800/16
// = 50 at 2:1 (14 x (15 us + 8 MiB / 6.25 GB/s) = 19.0 ms, 218.98),
// 400/16 = 25 at 4:1 (110.10).
func TestHierarchicalD25ByHand(t *testing.T) {
	e := engine(t)
	want := map[string]float64{"rank 1": 433.17, "rank 2": 218.98, "rank 4": 110.10,
		"network 1": 433.17, "network 2": 433.17, "network 4": 433.17}
	var ords []Order
	for _, o := range []string{"rank", "network"} {
		ords = append(ords, Order{Name: o, Job: planJob(t, d25Locations(), 4, o == "network")})
	}
	opt := Options{Model: Model{NICGbps: 100, LatencySeconds: 15e-6}, Algorithms: []string{"hierarchical"},
		Bytes: []int64{256 << 20}, Engine: e}
	for _, s := range []string{"1", "2", "4"} {
		opt.Oversubscriptions = append(opt.Oversubscriptions, ratio(t, s))
	}
	rep, err := Simulate(ords, opt)
	require.NoError(t, err)
	got := 0
	for _, p := range rep.Predictions {
		if p.Collective == "allreduce" {
			assert.InEpsilon(t, want[p.Order+" "+p.Oversubscription], p.BusbwGbps, 1e-3, "%s %s:1", p.Order, p.Oversubscription)
			got++
		}
	}
	assert.Equal(t, 6, got)
}

// Closed form for the hierarchical model on a non-blocking tree (1:1):
// L rings of X nodes, each moving bytes / L; on L distinct NICs of C
// each a ring's flows run at C, on NICs shared k ways at C / k. AllReduce
// = 2(X-1) x (latency + bytes / (L X) / rate). Default graph, 6 nodes on
// 3 leaves in an order that crosses often: L = 4 (4 NICs, one ring
// each: C) and L = 32 (8 NICs, 4 rings each: C / 4). A model that piles
// rings on one NIC, or splits the message over channels instead of local
// ranks, misses by far more than 1%.
func TestHierarchicalClosedForm(t *testing.T) {
	e := engine(t)
	locs := []string{"s/a", "s/b", "s/c", "s/a", "s/b", "s/c"}
	const c, lat, bytes = 100e9 / 8, 15e-6, 64 << 20
	for _, tc := range []struct{ local, share int }{{4, 1}, {32, 4}} {
		for _, network := range []bool{false, true} {
			j := planJob(t, locs, tc.local, network)
			st, err := Solve(e, j, "hierarchical", Model{NICGbps: 100}, ratio(t, "1"))
			require.NoError(t, err)
			require.Len(t, st.Rates, tc.local*6)
			for i, r := range st.Rates {
				require.InEpsilon(t, c/float64(tc.share), r, 0.01, "L %d flow %d", tc.local, i)
			}
			x := 6.0
			rate := c / float64(tc.share)
			want := 2 * (x - 1) * (lat + bytes/(float64(tc.local)*x)/rate)
			assert.InEpsilon(t, want, st.Seconds("allreduce", bytes, lat), 0.01, "L %d network %v", tc.local, network)
			wantAG := (x - 1) * (lat + bytes/(float64(tc.local)*x)/rate)
			assert.InEpsilon(t, wantAG, st.Seconds("allgather", bytes, lat), 0.01, "L %d network %v", tc.local, network)
		}
	}
}
