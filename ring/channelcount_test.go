package ring_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
)

// D27's WARN: one node of 4 ranks whose graphs have 14 or 12 channels (the
// job has 12). A rank whose own graph has 14 is told so, with the first
// rank that holds 12; a rank whose own graph has the job's 12 is told
// nothing. Rank 0 may hold either count; when it holds the larger, the
// first of the two that hold 12 is named.
func TestOwnChannelsWarningOnlyOnRanksWithMoreChannels(t *testing.T) {
	graph := func(n int) *abi.TopoGraph {
		g := &abi.TopoGraph{Pattern: 4, NChannels: int32(n)}
		for c := range n {
			copy(g.Intra[c*4:], []int32{0, 1, 2, 3})
		}
		return g
	}
	warning := func(first int) string {
		return fmt.Sprintf("ncclTopoPostset: this rank's graph has 14 channels (comm->nChannels), the job 12 (the smallest channel count of any fragment, first held by rank %d): give its ncclTopoGetNetDev a graph of 12 channels, or its channels use the NICs of another graph channel (D27, D28)", first)
	}
	for _, tc := range []struct {
		name     string
		channels [4]int // each rank's graph
		want     [4]string
	}{
		{"rank 3 holds 12", [4]int{14, 14, 14, 12}, [4]string{warning(3), warning(3), warning(3), ""}},
		{"ranks 0 and 2 hold 12", [4]int{12, 14, 12, 14}, [4]string{"", warning(0), "", warning(0)}},
		{"ranks 1 and 3 hold 12", [4]int{14, 12, 14, 12}, [4]string{warning(1), "", warning(1), ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := gather(t, 4, func(int) int { return 4 }, func(r int) *abi.TopoGraph { return graph(tc.channels[r]) }, 0)
			all := make([]*abi.TopoRanks, 4)
			for r := range all {
				all[r] = &j.fragments[r]
			}
			for r, comm := range j.comms {
				res, err := ring.Postset(comm, make([]int32, 4), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
				require.NoError(t, err, "rank %d", r)
				assert.Equal(t, 24, res.NChannels, "rank %d", r)
				assert.Equal(t, tc.want[r], res.OwnChannelsWarning(), "rank %d", r)
			}
		})
	}
}

// All 32 channels (layout.MaxChannels): the doubling adds none (D10), and
// the last channel is read, stitched and written like the others. Two
// nodes of 4; even channels run each node forwards, odd ones backwards, so
// from rank 0 the rings are 0 1 2 3 4 5 6 7 and 0 7 6 5 4 3 2 1.
func TestThirtyTwoChannels(t *testing.T) {
	cl := newCluster(4, 4)
	for c := range 32 {
		order := []int{0, 1, 2, 3}
		if c%2 == 1 {
			order = []int{3, 2, 1, 0}
		}
		cl.channel(c, order, 0, 0)
	}
	cl.channels(32)
	v := oneVerdict(t, postsetEveryRank(t, gatherCluster(t, cl)))
	require.Equal(t, abi.Success, v.code, v.text)
	require.Equal(t, 32, v.nChannels)
	for c, ring := range v.rings {
		want := ints(0, 1, 2, 3, 4, 5, 6, 7)
		if c%2 == 1 {
			want = ints(0, 7, 6, 5, 4, 3, 2, 1)
		}
		assert.Equal(t, want, ring, "channel %d", c)
	}

	// Channel 31 of node 1 runs 7 6 5 4; rank 6 says its head is 5. The
	// job fails on channel 31, whose other channels are whole.
	j := gatherCluster(t, cl)
	j.fragments[6].RingRecv[31] = 5
	v = oneVerdict(t, postsetEveryRank(t, j))
	assert.Equal(t, abi.InternalError, v.code)
	assert.Equal(t, "ncclTopoPostset: rank 6, channel 31: ringRecv (head) is 5 but node 1's head is 7 (held by 3 of its 4 ranks)", v.text)
}
