package ring_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
)

// Issue 9: ranks numbered across nodes, not only node-major. A launcher may
// number ranks round-robin over the nodes, or in any order; the ring stage
// must not care. Node membership is each fragment's channel-0 head, nodes are
// numbered in order of first appearance over ranks 0…nRanks-1 (D8), and the
// stitch follows that node order (D9). (The same numberings run through the
// C ABI against the reference model in tests/c/conformance, spec.numbering.)

// spread is a cluster whose ranks are numbered in any order: members[m]
// lists node m's global ranks by local index, and each node's graph holds
// global ranks.
type spread struct {
	nRanks  int
	members [][]int
	node    []int // node of each global rank, in members' numbering
	graphs  []*abi.TopoGraph
}

func newSpread(members ...[]int) *spread {
	cl := &spread{members: members}
	for _, ranks := range members {
		cl.nRanks += len(ranks)
	}
	cl.node = make([]int, cl.nRanks)
	for m, ranks := range members {
		for _, r := range ranks {
			cl.node[r] = m
		}
		g := &abi.TopoGraph{Pattern: 4}
		for i := range g.Inter {
			g.Inter[i] = -1
		}
		cl.graphs = append(cl.graphs, g)
	}
	return cl
}

// order sets channel c of node m to the given global ranks.
func (cl *spread) order(m, c int, ranks ...int) *spread {
	l := len(cl.members[m])
	for i, r := range ranks {
		cl.graphs[m].Intra[c*l+i] = int32(r)
	}
	return cl
}

func (cl *spread) channels(n int) *spread {
	for _, g := range cl.graphs {
		g.NChannels = int32(n)
	}
	return cl
}

// run drives Preset on every rank with its own node's graph and size, the
// AllGather, then Postset on every rank, failing the test on any error.
func (cl *spread) run(t *testing.T) *stage {
	return runStage(t, cl.nRanks, generic, func(r int) *abi.Comm {
		return &abi.Comm{Rank: int32(r), NRanks: int32(cl.nRanks), LocalRanks: int32(len(cl.members[cl.node[r]]))}
	}, func(r int) *abi.TopoGraph { return cl.graphs[cl.node[r]] })
}

// rotate returns cycle started at rank r.
func rotate(cycle []int32, r int) []int32 {
	for i, v := range cycle {
		if v == int32(r) {
			return append(append([]int32{}, cycle[i:]...), cycle[:i]...)
		}
	}
	return nil
}

// requireStage checks every rank of a finished stage against the expected
// node count, heads, each rank's node and each graph channel's cycle (the
// doubled channels repeat them, D10): userRanks is the cycle started at the
// rank, prev and next its neighbours in it.
func requireStage(t *testing.T, cl *spread, st *stage, heads []int32, nodeOf []int32, cycles [][]int32) {
	t.Helper()
	n, nNodes := cl.nRanks, len(heads)
	total := min(2*len(cycles), 32)
	for r, c := range st.comms {
		require.Equal(t, total, st.results[r].NChannels, "rank %d *nChannels", r)
		require.EqualValues(t, total, c.NChannels, "rank %d comm->nChannels", r)
		require.Equal(t, nNodes, st.results[r].NNodes, "rank %d *nNodes", r)
		require.EqualValues(t, nNodes, c.NNodes, "rank %d comm->nNodes", r)
		require.Equal(t, heads, st.heads[r][:nNodes], "rank %d nodesFirstRank (D8)", r)
		require.Equal(t, nodeOf[r], c.Node, "rank %d comm->node (D8)", r)
		for ch := range total {
			want := rotate(cycles[ch%len(cycles)], r)
			require.Equal(t, want, st.userRanks(r, ch), "rank %d channel %d userRanks", r, ch)
			require.Equal(t, want[n-1], c.Channels[ch].Ring.Prev, "rank %d channel %d prev", r, ch)
			require.Equal(t, want[1%n], c.Channels[ch].Ring.Next, "rank %d channel %d next", r, ch)
		}
	}
}

// requireHamiltonian checks, independently of any expected ring, that every
// channel's next visits every rank once and returns to rank 0, and that
// r.next == s exactly when s.prev == r.
func requireHamiltonian(t *testing.T, st *stage) {
	t.Helper()
	n := len(st.comms)
	for ch := range int(st.comms[0].NChannels) {
		seen := make([]bool, n)
		at := int32(0)
		for range n {
			require.True(t, at >= 0 && int(at) < n && !seen[at], "channel %d: next reaches %d again or out of range", ch, at)
			seen[at] = true
			next := st.comms[at].Channels[ch].Ring.Next
			require.True(t, next >= 0 && int(next) < n, "channel %d: rank %d's next is %d", ch, at, next)
			require.Equal(t, at, st.comms[next].Channels[ch].Ring.Prev, "channel %d: %d's next is %d, whose prev differs", ch, at, next)
			at = next
		}
		require.EqualValues(t, 0, at, "channel %d: %d steps from rank 0 end elsewhere", ch, n)
	}
}

// 2 nodes x 3 ranks numbered round-robin: node 0 holds ranks 0 2 4, node 1
// holds 1 3 5 (rank r on node r % 2). Worked by hand:
//
//	channel 0, local order 1 0 2: node 0 = 2 0 4, node 1 = 3 1 5
//	channel 1, local order 2 1 0: node 0 = 4 2 0, node 1 = 5 3 1
//
// D8: rank 0's fragment has head 2 (new node 0), rank 1's head 3 (new node
// 1); ranks 2…5 repeat those heads. nodesFirstRank = 2 3, nNodes = 2,
// node of ranks 0…5 = 0 1 0 1 0 1.
// D9: node 0 then node 1, closing back: channel 0 = 2 0 4 3 1 5, channel 1
// = 4 2 0 5 3 1. From rank 0: 0 4 3 1 5 2 (prev 2, next 4) and 0 5 3 1 4 2
// (prev 2, next 5). D10: channels 2 and 3 repeat 0 and 1.
func TestRoundRobinTwoNodesOfThree(t *testing.T) {
	cl := newSpread([]int{0, 2, 4}, []int{1, 3, 5})
	cl.order(0, 0, 2, 0, 4).order(1, 0, 3, 1, 5)
	cl.order(0, 1, 4, 2, 0).order(1, 1, 5, 3, 1)
	st := cl.channels(2).run(t)

	c := st.comms[0]
	require.Equal(t, ints(0, 4, 3, 1, 5, 2), st.userRanks(0, 0))
	require.Equal(t, ints(0, 5, 3, 1, 4, 2), st.userRanks(0, 1))
	require.Equal(t, ints(0, 4, 3, 1, 5, 2), st.userRanks(0, 2), "doubled copy of channel 0")
	require.Equal(t, ints(0, 5, 3, 1, 4, 2), st.userRanks(0, 3), "doubled copy of channel 1")
	require.EqualValues(t, 2, c.Channels[0].Ring.Prev)
	require.EqualValues(t, 4, c.Channels[0].Ring.Next)
	require.EqualValues(t, 2, c.Channels[1].Ring.Prev)
	require.EqualValues(t, 5, c.Channels[1].Ring.Next)
	// Rank 4 is node 0's tail on channel 0 and feeds node 1's head 3; rank
	// 1 is node 1's tail on channel 1 and feeds node 0's head 4.
	require.EqualValues(t, 3, st.comms[4].Channels[0].Ring.Next)
	require.EqualValues(t, 4, st.comms[1].Channels[1].Ring.Next)

	requireStage(t, cl, st, ints(2, 3), ints(0, 1, 0, 1, 0, 1),
		[][]int32{ints(2, 0, 4, 3, 1, 5), ints(4, 2, 0, 5, 3, 1)})
	requireHamiltonian(t, st)
}

// 3 nodes of 3, 2 and 2 ranks numbered in no order: A = 5 1 6, B = 0 4,
// C = 3 2 (A listed first, but rank 0 is on B). Worked by hand:
//
//	channel 0: A = 6 5 1, B = 4 0, C = 2 3
//	channel 1: A = 1 6 5, B = 0 4, C = 3 2
//
// D8, over ranks 0, 1, 2: rank 0's head 4 (B becomes node 0), rank 1's
// head 6 (A node 1), rank 2's head 2 (C node 2). nodesFirstRank = 4 6 2,
// nNodes = 3, node of ranks 0…6 = 0 1 2 2 0 1 1.
// D9 in that order (B A C): channel 0 = 4 0 6 5 1 2 3, channel 1 = 0 4 1 6
// 5 3 2. From rank 0: 0 6 5 1 2 3 4 (prev 4, next 6) and 0 4 1 6 5 3 2
// (prev 2, next 4). In the listed order (A B C) channel 0 would have been
// 6 5 1 4 0 2 3, so rank 0's next would be 2.
func TestPermutedUnequalNodesFollowFirstAppearance(t *testing.T) {
	cl := newSpread([]int{5, 1, 6}, []int{0, 4}, []int{3, 2})
	cl.order(0, 0, 6, 5, 1).order(1, 0, 4, 0).order(2, 0, 2, 3)
	cl.order(0, 1, 1, 6, 5).order(1, 1, 0, 4).order(2, 1, 3, 2)
	st := cl.channels(2).run(t)

	c := st.comms[0]
	require.Equal(t, ints(0, 6, 5, 1, 2, 3, 4), st.userRanks(0, 0))
	require.Equal(t, ints(0, 4, 1, 6, 5, 3, 2), st.userRanks(0, 1))
	require.EqualValues(t, 4, c.Channels[0].Ring.Prev)
	require.EqualValues(t, 6, c.Channels[0].Ring.Next)
	require.EqualValues(t, 2, c.Channels[1].Ring.Prev)
	require.EqualValues(t, 4, c.Channels[1].Ring.Next)
	require.EqualValues(t, 0, c.Node, "rank 0's node B is D8's node 0")
	require.EqualValues(t, 1, st.comms[5].Node, "node A is D8's node 1")
	require.EqualValues(t, 2, st.comms[3].Node, "node C is D8's node 2")
	// C closes the ring back to B: its channel-0 tail 3 feeds B's head 4.
	require.EqualValues(t, 4, st.comms[3].Channels[0].Ring.Next)
	require.EqualValues(t, 3, st.comms[4].Channels[0].Ring.Prev)

	requireStage(t, cl, st, ints(4, 6, 2), ints(0, 1, 2, 2, 0, 1, 1),
		[][]int32{ints(4, 0, 6, 5, 1, 2, 3), ints(0, 4, 1, 6, 5, 3, 2)})
	requireHamiltonian(t, st)
}

// TestRandomSpreadClustersMatchFirstAppearanceModel compares Postset on
// clusters numbered round-robin or by a random permutation with an
// independent model: nodes ordered by the first rank 0, 1, … that belongs
// to each, nodesFirstRank their channel-0 heads, and each channel's ring the
// nodes' intra orders back to back in that order, read from the rank.
func TestRandomSpreadClustersMatchFirstAppearanceModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	notListed := 0 // clusters whose D8 order is not the listed order
	for trial := range 300 {
		nNodes := 1 + rng.IntN(6)
		sizes := make([]int, nNodes)
		nRanks := 0
		equal := rng.IntN(2) == 0
		l0 := 1 + rng.IntN(8)
		for m := range sizes {
			sizes[m] = l0
			if !equal {
				sizes[m] = 1 + rng.IntN(8)
			}
			nRanks += sizes[m]
		}
		members := make([][]int, nNodes)
		if trial%3 == 0 {
			// round-robin: deal ranks in turns, skipping full nodes
			for r, k := 0, 0; r < nRanks; k++ {
				for m := range members {
					if k < sizes[m] {
						members[m] = append(members[m], r)
						r++
					}
				}
			}
		} else {
			perm, at := rng.Perm(nRanks), 0
			for m := range members {
				members[m] = perm[at : at+sizes[m]]
				at += sizes[m]
			}
		}
		cl := newSpread(members...)
		nChannels := 1 + rng.IntN(20)
		for m, ranks := range members {
			for c := range nChannels {
				order := make([]int, len(ranks))
				for i, k := range rng.Perm(len(ranks)) {
					order[i] = ranks[k]
				}
				cl.order(m, c, order...)
			}
		}
		st := cl.channels(nChannels).run(t)

		// The model.
		var appearance []int // listed node indices in D8 order
		d8 := make([]int32, nNodes)
		for m := range d8 {
			d8[m] = -1
		}
		for r := range nRanks {
			if m := cl.node[r]; d8[m] < 0 {
				d8[m] = int32(len(appearance))
				appearance = append(appearance, m)
			}
		}
		heads := make([]int32, 0, nNodes)
		for _, m := range appearance {
			heads = append(heads, cl.graphs[m].Intra[0])
		}
		nodeOf := make([]int32, nRanks)
		for r := range nodeOf {
			nodeOf[r] = d8[cl.node[r]]
		}
		cycles := make([][]int32, nChannels)
		for c := range cycles {
			for _, m := range appearance {
				l := len(members[m])
				cycles[c] = append(cycles[c], cl.graphs[m].Intra[c*l:(c+1)*l]...)
			}
		}
		for i, m := range appearance {
			if m != i {
				notListed++
				break
			}
		}

		requireStage(t, cl, st, heads, nodeOf, cycles)
		requireHamiltonian(t, st)
	}
	// The permuted clusters must exercise an order other than the listed one.
	t.Logf("%d of 300 clusters have a first-appearance node order other than the listed one", notListed)
	require.Greater(t, notListed, 100, "clusters whose first-appearance order differs from the listed order")
}
