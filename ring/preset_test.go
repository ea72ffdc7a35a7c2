package ring_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
)

// Preset finds a rank listed twice with an open-addressing table of 512
// slots (preset.go's positionSet), which ranks 512 apart share: 0, 512,
// 1024 and 1536 all hash to slot 0, so each is stored one slot past the
// last, and a rank listed again is found after probing past the others.
func TestPresetIntraRanksSharingAHashSlot(t *testing.T) {
	preset := func(rank int32, intra ...int32) (*abi.TopoRanks, error) {
		comm := &abi.Comm{Rank: rank, NRanks: 2048, LocalRanks: 4}
		graph := &abi.TopoGraph{Pattern: 4, NChannels: 1}
		copy(graph.Intra[:], intra)
		frag := new(abi.TopoRanks)
		return frag, ring.Preset(comm, graph, frag, ring.PresetOptions{Platforms: generic})
	}

	frag, err := preset(1024, 0, 512, 1024, 1536)
	require.NoError(t, err)
	assert.Equal(t, [4]int32{0, 1536, 512, 1536}, [4]int32{frag.RingRecv[0], frag.RingSend[0], frag.RingPrev[0], frag.RingNext[0]},
		"head, tail, prev, next of rank 1024")

	_, err = preset(0, 0, 512, 1024, 512)
	requireNCCLError(t, err, abi.InvalidArgument, "ncclTopoPreset: channel 0 lists rank 512 twice (positions 1 and 3)")
	_, err = preset(0, 0, 512, 1024, 1024)
	requireNCCLError(t, err, abi.InvalidArgument, "ncclTopoPreset: channel 0 lists rank 1024 twice (positions 2 and 3)")
}

// The largest node Preset takes: 256 local ranks (S6) on 32 channels (S7),
// which fill graph->intra's 8192 entries (S8's bound) exactly. Channel c
// runs the node's ranks from rank c: rank 5 is at position 5 - c.
func TestPresetTakes256LocalRanksOn32Channels(t *testing.T) {
	comm := &abi.Comm{Rank: 5, NRanks: 256, LocalRanks: 256}
	graph := &abi.TopoGraph{Pattern: 4, NChannels: 32}
	for c := range 32 {
		for i := range 256 {
			graph.Intra[c*256+i] = int32((c + i) % 256)
		}
	}
	frag := new(abi.TopoRanks)
	require.NoError(t, ring.Preset(comm, graph, frag, ring.PresetOptions{Platforms: generic}))
	assert.EqualValues(t, 32, comm.NChannels)
	for _, tc := range []struct{ c, head, tail, prev, next int32 }{
		{0, 0, 255, 4, 6},  // position 5
		{5, 5, 4, -1, 6},   // position 0: the head
		{6, 6, 5, 4, -1},   // position 255: the tail
		{31, 31, 30, 4, 6}, // position 230
	} {
		got := [4]int32{frag.RingRecv[tc.c], frag.RingSend[tc.c], frag.RingPrev[tc.c], frag.RingNext[tc.c]}
		assert.Equal(t, [4]int32{tc.head, tc.tail, tc.prev, tc.next}, got, "channel %d: head, tail, prev, next", tc.c)
	}
}

func TestPresetLeavesExistingUserRanksPointers(t *testing.T) {
	// Rank 2 of 0 1 2 3: prev 1, next 3, neither of them the zero a fresh
	// communicator holds. n = 1, so channel 1 is the copy and channel 2 is
	// past [n, 2n).
	cl := newCluster(4).channel(0, []int{0, 1, 2, 3}, 0, 0).channels(1)
	c := cl.comm(2)
	c.Channels[1].Ring.UserRanks = 0x1000
	c.Channels[1].Ring.DevUserRanks = 0x2000
	c.Channels[0].Opaque[100] = 7
	c.Channels[2].Ring.Prev, c.Channels[2].Ring.Next = 99, 98
	var frag abi.TopoRanks
	require.NoError(t, ring.Preset(c, cl.graphs[0], &frag, ring.PresetOptions{Platforms: generic}))
	for ch := range 2 {
		assert.EqualValues(t, 1, c.Channels[ch].Ring.Prev, "ch%d prev", ch)
		assert.EqualValues(t, 3, c.Channels[ch].Ring.Next, "ch%d next", ch)
	}
	assert.EqualValues(t, 0x1000, c.Channels[1].Ring.UserRanks, "D6 keeps the destination's pointers")
	assert.EqualValues(t, 0x2000, c.Channels[1].Ring.DevUserRanks)
	assert.EqualValues(t, 7, c.Channels[1].Opaque[100], "D6 copies the rest of the channel")
	assert.EqualValues(t, 99, c.Channels[2].Ring.Prev, "channel 2 is past [n, 2n): untouched")
	assert.EqualValues(t, 98, c.Channels[2].Ring.Next)
}

// Spec §2, D5 worked by hand: one node of 4 ranks, channel 0 runs 2 0 3 1
// and channel 1 runs 1 3 0 2. Rank 2 heads channel 0 (prev -1, next 0) and
// ends channel 1 (prev 0, next -1); the head and tail of each channel are
// its first and last entries. Rank 3 is inside both: 0/1 and 1/0.
func TestPresetPacksHeadTailAndNeighbours(t *testing.T) {
	cl := newCluster(4).channel(0, []int{2, 0, 3, 1}, 0, 0).channel(1, []int{1, 3, 0, 2}, 0, 0).channels(2)
	for _, tc := range []struct {
		rank       int
		prev, next [2]int32
		recv, send [2]int32
	}{
		{2, [2]int32{-1, 0}, [2]int32{0, -1}, [2]int32{2, 1}, [2]int32{1, 2}},
		{3, [2]int32{0, 1}, [2]int32{1, 0}, [2]int32{2, 1}, [2]int32{1, 2}},
	} {
		c := cl.comm(tc.rank)
		var frag abi.TopoRanks
		require.NoError(t, ring.Preset(c, cl.graphs[0], &frag, ring.PresetOptions{Platforms: generic}))
		for ch := range 2 {
			assert.Equal(t, tc.recv[ch], frag.RingRecv[ch], "rank %d ch%d ringRecv", tc.rank, ch)
			assert.Equal(t, tc.send[ch], frag.RingSend[ch], "rank %d ch%d ringSend", tc.rank, ch)
			assert.Equal(t, tc.prev[ch], frag.RingPrev[ch], "rank %d ch%d ringPrev", tc.rank, ch)
			assert.Equal(t, tc.next[ch], frag.RingNext[ch], "rank %d ch%d ringNext", tc.rank, ch)
			for _, dst := range []int{ch, ch + 2} { // channels [2, 4) are the copies (D6)
				assert.Equal(t, tc.prev[ch], c.Channels[dst].Ring.Prev, "rank %d channels[%d].ring.prev", tc.rank, dst)
				assert.Equal(t, tc.next[ch], c.Channels[dst].Ring.Next, "rank %d channels[%d].ring.next", tc.rank, dst)
			}
		}
		assert.EqualValues(t, 2, c.NChannels, "D4")
	}
}
