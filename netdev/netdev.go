// Package netdev is ncclTopoGetNetDev (spec §5, D18): the NIC a channel of
// this rank uses, byte-exact with libnccom 2.31.24 on every input the real
// library can serve, and an error instead of a division by zero or an
// out-of-bounds read on the rest.
package netdev

import (
	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/layout"
)

// GetNetDev returns graph.Inter[2c + dir] with c = channelID % graph.NChannels
// and dir = 1 when this rank is not channel c's head graph.Intra[c*count]
// (count = sys.Nodes0Count, the node's NeuronCore count): channels rotate
// across rails and the direction bit picks the rail pair's entry or exit NIC.
// Errors are ncclInvalidArgument, checked in the order of docs/errors.md
// G5-G9 (P10).
func GetNetDev(sys *abi.TopoSystem, rank int32, graph *abi.TopoGraph, channelID int32) (int32, error) {
	nChannels := graph.NChannels
	if nChannels <= 0 {
		return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoGetNetDev: graph->nChannels %d is not positive", nChannels)
	}
	if channelID < 0 {
		return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoGetNetDev: channelId %d is negative", channelID)
	}
	count := sys.Nodes0Count
	if count < 1 || count > layout.MaxLocalRanks {
		return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoGetNetDev: sys->nodes[0].count %d is outside [1, %d]", count, layout.MaxLocalRanks)
	}
	c := int(channelID % nChannels)
	head := c * int(count)
	if head >= layout.MaxIntra {
		return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoGetNetDev: channel %d x count %d reaches past graph->intra[%d]", c, count, layout.MaxIntra)
	}
	if 2*c+1 >= layout.MaxInter {
		return 0, abi.Errorf(abi.InvalidArgument, "ncclTopoGetNetDev: channel %d reaches past graph->inter[%d]", c, layout.MaxInter)
	}
	dir := 0
	if graph.Intra[head] != rank {
		dir = 1
	}
	return graph.Inter[2*c+dir], nil
}
