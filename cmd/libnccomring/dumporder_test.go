package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/ring"
	"github.com/nccomring/libnccomring/ringdump"
)

// D28: a dump holds the location of the rank's own gathered record, and
// the name only when the environment's value hashes to it. One process
// plays 4 ranks (2 nodes of 2), each Preset with its own
// NCCOM_RING_LOCATION as the library reads it; at Postset the environment
// holds the last rank's value, so only the ranks with that location have
// their name in their dump; the others' hashes are still their records'.
func TestDumpsHoldTheRecordsLocationsWhenOneProcessPlaysSeveralRanks(t *testing.T) {
	locs := []string{"s0/a", "s0/a", "s1/b", "s1/c"}
	hashes := [][]uint32{{fnv1a("s0"), fnv1a("a")}, {fnv1a("s0"), fnv1a("a")}, {fnv1a("s1"), fnv1a("b")}, {fnv1a("s1"), fnv1a("c")}}
	const n, local = 4, 2
	graph := func(first int) *abi.TopoGraph {
		g := &abi.TopoGraph{Pattern: 4, MinChannels: 1, MaxChannels: layout.MaxChannels, NChannels: 1}
		for i := range g.Inter {
			g.Inter[i] = -1
		}
		g.Intra[0], g.Intra[1], g.Inter[0], g.Inter[1] = int32(first), int32(first+1), 0, 0
		return g
	}
	t.Setenv(NodeOrderEnvVar, "network")
	frags := make([]abi.TopoRanks, n)
	all := make([]*abi.TopoRanks, n)
	for r := range n {
		t.Setenv(LocationEnvVar, locs[r])
		network, _ := nodeOrderParam.get()
		location, _ := locationParam.get()
		comm := &abi.Comm{Rank: int32(r), NRanks: n, LocalRanks: local}
		opt := ring.PresetOptions{Platforms: kanga.Fixed{}, Network: network.value, Location: location.value}
		require.NoError(t, ring.Preset(comm, graph(r/local*local), &frags[r], opt))
		all[r] = &frags[r]
	}
	// The environment now holds rank 3's location, "s1/c".
	buffers := make([]int32, layout.MaxChannels*n)
	heads := make([]int32, n)
	for r := range n {
		comm := &abi.Comm{Rank: int32(r), NRanks: n, LocalRanks: local}
		for c := range comm.Channels {
			comm.Channels[c].Ring.UserRanks = abi.Address(buffers[c*n : (c+1)*n])
		}
		res, err := ring.Postset(comm, heads, all, ring.PostsetOptions{Platforms: kanga.Fixed{}, Sequence: true})
		runtime.KeepAlive(buffers)
		require.NoError(t, err)
		want := &ringdump.Order{Asked: "network", LocationHashes: hashes[r], FromRecord: true, Network: true, Sequence: []int{0, 1}}
		if r == 3 {
			want.Location = "s1/c"
		} else {
			want.NameUnknown = true
		}
		assert.Equal(t, want, orderOf(res), "rank %d", r)
	}
}

// fnv1a is 32-bit FNV-1a, written out here.
func fnv1a(s string) uint32 {
	h := uint32(0x811c9dc5)
	for _, c := range []byte(s) {
		h = (h ^ uint32(c)) * 0x01000193
	}
	return h
}
