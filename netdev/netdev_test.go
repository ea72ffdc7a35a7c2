package netdev_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/netdev"
)

// graph4 is a 4-rank node (ranks 8..11) with 3 channels whose heads are
// 8, 10 and 11, and NIC pairs {10,11}, {20,21}, {30,31}.
func graph4() (*abi.TopoSystem, *abi.TopoGraph) {
	g := &abi.TopoGraph{NChannels: 3}
	copy(g.Intra[:], []int32{8, 9, 10, 11, 10, 11, 8, 9, 11, 10, 9, 8})
	copy(g.Inter[:], []int32{10, 11, 20, 21, 30, 31})
	return &abi.TopoSystem{Nodes0Count: 4}, g
}

func TestGetNetDevFollowsHeadAndDirection(t *testing.T) {
	sys, g := graph4()
	for _, tc := range []struct {
		rank, channel, want int32
	}{
		{8, 0, 10},  // head of channel 0: dir 0, inter[0]
		{9, 0, 11},  // not the head: dir 1, inter[1]
		{10, 1, 20}, // head of channel 1
		{8, 1, 21},
		{11, 2, 30},
		{8, 3, 10}, // channel 3 % 3 = 0: rails rotate
		{9, 4, 21}, // 4 % 3 = 1
		{11, 5, 30},
		{99, 0, 11}, // a rank from another node is never the head
	} {
		dev, err := netdev.GetNetDev(sys, tc.rank, g, tc.channel)
		require.NoError(t, err)
		assert.Equal(t, tc.want, dev, "rank %d channel %d", tc.rank, tc.channel)
	}
}

func TestGetNetDevErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		count     int32
		nChannels int32
		channel   int32
		text      string
	}{
		{"G5 no channels", 4, 0, 0, "ncclTopoGetNetDev: graph->nChannels 0 is not positive"},
		{"G5 negative channels", 4, -2, 0, "ncclTopoGetNetDev: graph->nChannels -2 is not positive"},
		{"G6 negative channelId", 4, 3, -1, "ncclTopoGetNetDev: channelId -1 is negative"},
		{"G7 count zero", 0, 3, 0, "ncclTopoGetNetDev: sys->nodes[0].count 0 is outside [1, 256]"},
		{"G7 count too big", 257, 3, 0, "ncclTopoGetNetDev: sys->nodes[0].count 257 is outside [1, 256]"},
		{"G8 past intra", 256, 40, 33, "ncclTopoGetNetDev: channel 33 x count 256 reaches past graph->intra[8192]"},
		// 32 x 256 is intra[8192] itself, one past the last (G8 before G9).
		{"G8 at intra's end", 256, 40, 32, "ncclTopoGetNetDev: channel 32 x count 256 reaches past graph->intra[8192]"},
		{"G9 past inter", 1, 40, 32, "ncclTopoGetNetDev: channel 32 reaches past graph->inter[64]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := &abi.TopoSystem{Nodes0Count: tc.count}
			g := &abi.TopoGraph{NChannels: tc.nChannels}
			_, err := netdev.GetNetDev(sys, 0, g, tc.channel)
			var e *abi.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, abi.InvalidArgument, e.Code)
			assert.Equal(t, tc.text, e.Text)
		})
	}
}

func TestGetNetDevLastValidChannel(t *testing.T) {
	// c = 31 with count 256: intra[7936] and inter[62/63] are in bounds.
	g := &abi.TopoGraph{NChannels: 32}
	g.Intra[31*256] = 5
	g.Inter[62], g.Inter[63] = 7, 8
	dev, err := netdev.GetNetDev(&abi.TopoSystem{Nodes0Count: 256}, 5, g, 63)
	require.NoError(t, err)
	assert.EqualValues(t, 7, dev)
}
