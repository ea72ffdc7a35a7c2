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
