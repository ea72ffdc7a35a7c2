package ring_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/record"
	"github.com/nccomring/libnccomring/ring"
)

// Every failure of docs/errors.md returns its code and exact WARN text and
// leaves caller memory byte-identical (D11): the tests below fill the
// communicator, fragment and nodesFirstRank with a canary before the call
// and compare every byte after it.

// presetCase builds a valid 2-node x 4-rank Preset for rank 1 and lets the
// case break one thing.
func TestPresetErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		break_   func(c *abi.Comm, g *abi.TopoGraph)
		platform kanga.Resolver
		code     abi.Result
		text     string
	}{
		{"S4 nRanks zero", func(c *abi.Comm, g *abi.TopoGraph) { c.NRanks = 0 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: comm->nRanks 0 is not positive"},
		{"S5 rank past nRanks", func(c *abi.Comm, g *abi.TopoGraph) { c.Rank = 8 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: comm->rank 8 is outside [0, 8)"},
		{"S5 negative rank", func(c *abi.Comm, g *abi.TopoGraph) { c.Rank = -1 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: comm->rank -1 is outside [0, 8)"},
		{"S6 localRanks zero", func(c *abi.Comm, g *abi.TopoGraph) { c.LocalRanks = 0 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: comm->localRanks 0 is outside [1, 256]"},
		{"S6 localRanks 257", func(c *abi.Comm, g *abi.TopoGraph) { c.LocalRanks = 257 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: comm->localRanks 257 is outside [1, 256]"},
		{"S7 nChannels zero", func(c *abi.Comm, g *abi.TopoGraph) { g.NChannels = 0 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: graph->nChannels 0 is outside [1, 32]"},
		{"S7 nChannels 33", func(c *abi.Comm, g *abi.TopoGraph) { g.NChannels = 33 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: graph->nChannels 33 is outside [1, 32]"},
		{"S9 kangaRing count 5", func(c *abi.Comm, g *abi.TopoGraph) { c.NKangaRingChannels = 5 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: comm->nKangaRingChannels 5 is outside [0, 4]"},
		{"S11 intra past nRanks", func(c *abi.Comm, g *abi.TopoGraph) { g.Intra[6] = 8 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: graph->intra[6] (channel 1, position 2) is 8, outside [0, 8)"},
		{"S11 negative intra", func(c *abi.Comm, g *abi.TopoGraph) { g.Intra[3] = -1 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: graph->intra[3] (channel 0, position 3) is -1, outside [0, 8)"},
		{"S12 rank twice", func(c *abi.Comm, g *abi.TopoGraph) { g.Intra[7] = 3 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: channel 1 lists rank 3 twice (positions 0 and 3)"},
		{"S13 rank missing", func(c *abi.Comm, g *abi.TopoGraph) { g.Intra[6] = 4 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: rank 1 is not in channel 1's intra order"},
		{"S13 GPU list longer than the node", func(c *abi.Comm, g *abi.TopoGraph) { c.LocalRanks = 2 }, generic, abi.InvalidArgument,
			"ncclTopoPreset: rank 1 is not in channel 1's intra order"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := newCluster(4, 4).channel(0, []int{0, 1, 2, 3}, 0, 0).channel(1, []int{3, 2, 1, 0}, 1, 1).channels(2)
			comm := cl.comm(1)
			graph := cl.graphs[0]
			tc.break_(comm, graph)
			before := bytes.Clone(bytesOf(comm))
			var frag abi.TopoRanks
			canary(&frag)
			fragBefore := bytes.Clone(bytesOf(&frag))

			err := ring.Preset(comm, graph, &frag, ring.PresetOptions{Platforms: tc.platform})
			requireNCCLError(t, err, tc.code, tc.text)
			assert.Equal(t, before, bytesOf(comm), "comm changed on error")
			assert.Equal(t, fragBefore, bytesOf(&frag), "fragment changed on error")
		})
	}
}

// setField breaks a fixture by setting rank's ring field k (ringField's
// order) on channel c to v.
func setField(rank, k, c int, v int32) func(*postsetFixture) {
	return func(f *postsetFixture) { ringField(&f.frags[rank], k)[c] = v }
}

// withRecords writes every fragment's record as fields(r) says, its rank
// and its graph's channel count (2) filled in, as each rank's Preset would
// have with those settings.
func withRecords(f *postsetFixture, fields func(r int) record.Fields) {
	for r := range f.frags {
		x := fields(r)
		x.Rank, x.GraphChannels = int32(r), 2
		record.Write(&f.frags[r], &x)
	}
}

func TestPostsetErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		break_   func(f *postsetFixture)
		platform kanga.Resolver
		code     abi.Result
		text     string
	}{
		{"P2 nRanks zero", func(f *postsetFixture) { f.comm.NRanks = 0 }, generic, abi.InvalidArgument,
			"ncclTopoPostset: comm->nRanks 0 is not positive"},
		{"P3 rank out of range", func(f *postsetFixture) { f.comm.Rank = 9 }, generic, abi.InvalidArgument,
			"ncclTopoPostset: comm->rank 9 is outside [0, 8)"},
		{"P3 rank at nRanks", func(f *postsetFixture) { f.comm.Rank = 8 }, generic, abi.InvalidArgument,
			"ncclTopoPostset: comm->rank 8 is outside [0, 8)"},
		{"P7 missing fragment", func(f *postsetFixture) { f.all[6] = nil }, generic, abi.InvalidArgument,
			"ncclTopoPostset: allTopoRanks[6] is NULL"},
		{"P8 ringRecv out of range", setField(2, 0, 1, 8), generic, abi.InvalidArgument, "ncclTopoPostset: rank 2, channel 1: ringRecv is 8, outside [0, 8)"},
		{"P8 ringSend negative", setField(5, 1, 0, -1), generic, abi.InvalidArgument, "ncclTopoPostset: rank 5, channel 0: ringSend is -1, outside [0, 8)"},
		{"P8 ringSend of a whole node at nRanks on the last channel", func(f *postsetFixture) {
			for r := 4; r < 8; r++ {
				f.frags[r].RingSend[1] = 8
			}
		}, generic, abi.InvalidArgument, "ncclTopoPostset: rank 4, channel 1: ringSend is 8, outside [0, 8)"},
		{"P9 ringPrev below -1", setField(0, 2, 1, -2), generic, abi.InvalidArgument, "ncclTopoPostset: rank 0, channel 1: ringPrev is -2, outside [-1, 8)"},
		{"P9 ringNext past nRanks", setField(7, 3, 0, 8), generic, abi.InvalidArgument, "ncclTopoPostset: rank 7, channel 0: ringNext is 8, outside [-1, 8)"},
		{"P10 head: ranks of a node disagree on a head", setField(6, 0, 1, 6), generic, abi.InternalError, "ncclTopoPostset: rank 6, channel 1: ringRecv (head) is 6 but node 1's head is 7 (held by 3 of its 4 ranks)"},
		{"P10 next: fragment from a rank of another node", func(f *postsetFixture) { f.frags[2] = f.frags[5] }, generic, abi.InternalError,
			// Slot 2 holds rank 5's fragment: it claims node 1 and rank 5's
			// neighbours, which rank 6 contradicts.
			"ncclTopoPostset: rank 2, channel 0: ringNext is 6 but rank 6's ringPrev is 5"},
		{"P10 tail: ranks of a node disagree on a tail", setField(3, 1, 0, 2), generic, abi.InternalError, "ncclTopoPostset: rank 3, channel 0: ringSend (tail) is 2 but node 0's tail is 3 (held by 3 of its 4 ranks)"},
		{"P12 pods refused", func(f *postsetFixture) {
			withRecords(f, func(int) record.Fields { return record.Fields{EnablePod: true} })
		}, generic, abi.InvalidUsage,
			"ncclTopoPostset: comm->enablePod is set on 2 nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set NCCOM_RING_POD_ORDER=node on every rank to stitch in node order (rank 0 did not)"},
		{"P12 pods refused: one rank's record does not say node (D27)", func(f *postsetFixture) {
			withRecords(f, func(r int) record.Fields { return record.Fields{EnablePod: true, PodNode: r != 5} })
		}, generic, abi.InvalidUsage,
			"ncclTopoPostset: comm->enablePod is set on 2 nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set NCCOM_RING_POD_ORDER=node on every rank to stitch in node order (rank 5 did not)"},
		{"P12 pods refused: one rank's valid record does not say node (D27)", func(f *postsetFixture) {
			// Every rank asks for the network order, so rank 5 carries a
			// record all the same: it is read, and it says no.
			withRecords(f, func(r int) record.Fields { return record.Fields{EnablePod: true, Network: true, PodNode: r != 5} })
		}, generic, abi.InvalidUsage,
			"ncclTopoPostset: comm->enablePod is set on 2 nodes: UltraServer pod ordering (ncclTopoGetP2pPodInterNodeGraph) is not reimplemented; set NCCOM_RING_POD_ORDER=node on every rank to stitch in node order (rank 5 did not)"},
		{"P13 virtual core size of the first failing rank, before its JBOG id (D27)", func(f *postsetFixture) {
			withRecords(f, func(r int) record.Fields {
				return record.Fields{Platform: record.SwitchV1, VirtualCore: []int32{0, 0, 0, 0, 0, 0, 2, 3}[r], JbogID: []int32{1, 2, 3, 1, 2, 3, 0, 1}[r]}
			})
		}, kanga.Fixed(kanga.SwitchV1), abi.InternalError,
			"ncclTopoPostset: kangaRing precondition failed: virtual core size of rank 6 is 2, expected 0"},
		{"P14 JBOG id of the first failing rank (D27)", func(f *postsetFixture) {
			withRecords(f, func(r int) record.Fields {
				return record.Fields{Platform: record.SwitchV1, JbogID: []int32{1, 2, 3, 1, 2, 3, 1, 4}[r]}
			})
		}, kanga.Fixed(kanga.SwitchV1), abi.InternalError,
			"ncclTopoPostset: kangaRing precondition failed: JBOG id of rank 7 is 4, expected 1, 2 or 3"},
		{"P14 a rank whose record says another platform is the odd one out, before any precondition (D28)", func(f *postsetFixture) {
			withRecords(f, func(r int) record.Fields {
				p := record.SwitchV1
				if r == 4 {
					p = record.Generic
				}
				return record.Fields{Platform: p, JbogID: []int32{1, 2, 3, 1, 9, 0, 1, 1}[r]}
			})
		}, generic, abi.InternalError,
			"ncclTopoPostset: rank 4 has platform generic, unlike rank 0 (platform trn3-switchv1, the most common): trn3-switchv1 on 7 ranks, generic on 1 rank; every rank must run on one platform (D28)"},
		{"P14 a rank that ran no Preset of this library on SwitchV1 is not checked (D27, D28)", func(f *postsetFixture) {
			withRecords(f, func(r int) record.Fields {
				return record.Fields{Platform: record.SwitchV1, JbogID: []int32{1, 2, 3, 1, 9, 0, 1, 1}[r]}
			})
			record.Of(&f.frags[4]).Magic = 0 // another ring stage
		}, generic, abi.InternalError,
			"ncclTopoPostset: kangaRing precondition failed: JBOG id of rank 5 is 0, expected 1, 2 or 3"},
		{"P10 next: intra order disagreement inside one node", func(f *postsetFixture) {
			// Ranks 1 and 2 believe node 0 runs 0 2 1 3 on channel 0, ranks 0
			// and 3 that it runs 0 1 2 3: heads and tails agree, the walk
			// 1 3 4 5 6 7 0 1 does not close.
			f.frags[1].RingPrev[0], f.frags[1].RingNext[0] = 2, 3
			f.frags[2].RingPrev[0], f.frags[2].RingNext[0] = 0, 1
		}, generic, abi.InternalError, "ncclTopoPostset: rank 0, channel 0: ringNext is 1 but rank 1's ringPrev is 2; rank 2 is reached by nobody"},
		{"P10 next: lost successor", setField(5, 3, 0, -1), generic, abi.InternalError, "ncclTopoPostset: rank 5, channel 0: ringNext is -1 but node 1's tail is 7"},
		{"P10 next: successor that skips a rank", setField(2, 3, 1, 3), generic, abi.InternalError, "ncclTopoPostset: rank 2, channel 1: ringNext is 3, its node's head"},
		{"P10 next: two-rank cycle", func(f *postsetFixture) { f.frags[2].RingNext[0] = 1 }, generic, abi.InternalError,
			// 1 2 1 2 ...: rank 1's prev is still 0, and 3 is left out.
			"ncclTopoPostset: rank 2, channel 0: ringNext is 1 but rank 1's ringPrev is 0; rank 3 is reached by nobody"},
		{"P10 prev: corrupted ringPrev of this rank", setField(1, 2, 0, 3), generic, abi.InternalError, "ncclTopoPostset: rank 1, channel 0: ringPrev is 3, its node's tail"},
		{"P10 two channels: the lowest channel decides (D24)", func(f *postsetFixture) {
			// Each alone is a case above; rank 2's is found first in rank
			// order, rank 5's in channel order.
			f.frags[2].RingNext[1] = 3
			f.frags[5].RingNext[0] = -1
		}, generic, abi.InternalError, "ncclTopoPostset: rank 5, channel 0: ringNext is -1 but node 1's tail is 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPostsetFixture(t)
			tc.break_(f)
			before := bytes.Clone(bytesOf(f.comm))
			heads := []int32{-5, -5, -5, -5, -5, -5, -5, -5}
			alloc := newGoAlloc()
			_, err := ring.Postset(f.comm, heads, f.all, ring.PostsetOptions{Platforms: tc.platform, Alloc: alloc})
			requireNCCLError(t, err, tc.code, tc.text)
			assert.Equal(t, before, bytesOf(f.comm), "comm changed on error")
			assert.Equal(t, []int32{-5, -5, -5, -5, -5, -5, -5, -5}, heads, "nodesFirstRank changed on error")
			assert.Empty(t, alloc.live, "userRanks left allocated")
		})
	}
}

func TestPostsetMallocFailureFreesAndWritesNothing(t *testing.T) {
	f := newPostsetFixture(t)
	before := bytes.Clone(bytesOf(f.comm))
	alloc := newGoAlloc()
	// Fail the third allocation: the first two are freed again.
	a := &failAfter{inner: alloc, after: 2}
	_, err := ring.Postset(f.comm, make([]int32, 8), f.all, ring.PostsetOptions{Platforms: generic, Alloc: a})
	requireNCCLError(t, err, abi.SystemError, "ncclTopoPostset: malloc of 32 bytes for channels[2].ring.userRanks failed")
	assert.Equal(t, before, bytesOf(f.comm))
	assert.Empty(t, alloc.live)
}

// D27: pods are stitched in node order when every rank's record says
// NCCOM_RING_POD_ORDER=node.
func TestPostsetPodNodeOrder(t *testing.T) {
	f := newPostsetFixture(t)
	withRecords(f, func(int) record.Fields { return record.Fields{EnablePod: true, PodNode: true} })
	res, err := ring.Postset(f.comm, make([]int32, 8), f.all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
	require.NoError(t, err)
	assert.True(t, res.PodFallback)
	assert.Equal(t, "ncclTopoPostset: enablePod set on 2 nodes: stitching in node order (NCCOM_RING_POD_ORDER=node)", ring.PodFallbackLine(res.NNodes))
}

func TestPostsetPodOneNodeNeedsNoOrder(t *testing.T) {
	cl := newCluster(4).channel(0, []int{0, 1, 2, 3}, 0, 0).channels(1)
	frags := make([]abi.TopoRanks, 4)
	var all []*abi.TopoRanks
	for r := range 4 {
		require.NoError(t, ring.Preset(cl.comm(r), cl.graphs[0], &frags[r], ring.PresetOptions{Platforms: generic}))
		all = append(all, &frags[r])
	}
	c := cl.comm(0)
	require.NoError(t, ring.Preset(c, cl.graphs[0], new(abi.TopoRanks), ring.PresetOptions{Platforms: generic}))
	c.EnablePod = 1
	res, err := ring.Postset(c, make([]int32, 4), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
	require.NoError(t, err, "D15 applies only with more than one node")
	assert.False(t, res.PodFallback)
}

func TestPostsetSwitchV1MaterializesKangaRing(t *testing.T) {
	f := newPostsetFixture(t)
	for r := range f.frags {
		for k := range 4 {
			f.frags[r].JbogKangaringPath[k] = [4]int32{int32(r), int32(k), 7, 8}
		}
	}
	// The path count is the records' (D28), not the calling rank's comm.
	withRecords(f, func(int) record.Fields {
		return record.Fields{Platform: record.SwitchV1, JbogID: 1, KangaChannels: 1}
	})
	f.comm.NKangaRingChannels = 3
	res, err := ring.Postset(f.comm, make([]int32, 8), f.all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
	require.NoError(t, err)
	assert.Equal(t, int32(1), res.KangaPaths)
	assert.True(t, res.KangaInts > 0, "materialized on SwitchV1")
	assert.Equal(t, 32, res.KangaInts, "8 ranks x 4 ints (D13)")
	assert.Equal(t, []int32{0, 0, 7, 8, 1, 0, 7, 8}, f.comm.KangaRing[0][:8])
	assert.Equal(t, []int32{7, 0, 7, 8, 0, 0, 0, 0}, f.comm.KangaRing[0][28:36])
	assert.Zero(t, f.comm.KangaRing[1])
}

// A disagreement whose differing bits are also set in the tail: the
// branch-free check must not let (head ^ head') | tail ^ tail' cancel out.
func TestPostsetCatchesHeadDisagreementMaskedByTail(t *testing.T) {
	cl := newCluster(4, 4).channel(0, []int{0, 1, 2, 3}, 0, 0).channel(1, []int{0, 1, 2, 3}, 1, 1).channels(2)
	frags := make([]abi.TopoRanks, 8)
	var all []*abi.TopoRanks
	for r := range 8 {
		require.NoError(t, ring.Preset(cl.comm(r), cl.graphs[r/4], &frags[r], ring.PresetOptions{Platforms: generic}))
		all = append(all, &frags[r])
	}
	frags[6].RingRecv[1] = 5 // node 1's head on channel 1 is 4 and its tail 7
	comm := cl.comm(1)
	require.NoError(t, ring.Preset(comm, cl.graphs[0], new(abi.TopoRanks), ring.PresetOptions{Platforms: generic}))
	_, err := ring.Postset(comm, make([]int32, 8), all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc()})
	requireNCCLError(t, err, abi.InternalError,
		"ncclTopoPostset: rank 6, channel 1: ringRecv (head) is 5 but node 1's head is 4 (held by 3 of its 4 ranks)")
}

// P7b: working memory that cannot be had is ncclSystemError, and nothing is
// written (the library's Scratch is C malloc, so this is the path a large
// job takes under an address-space limit instead of Go's fatal error). The
// block is (2 + 3n) ints per rank, n being rank 0's channel count (D27):
// pairs (each rank's next and prev), node table, heads, the walks; here
// (2 + 3*2) * 8 * 4 = 256 bytes.
func TestPostsetWithoutWorkingMemoryIsASystemError(t *testing.T) {
	f := newPostsetFixture(t)
	before := bytes.Clone(bytesOf(f.comm))
	heads := make([]int32, 8)
	_, err := ring.Postset(f.comm, heads, f.all, ring.PostsetOptions{Platforms: generic, Alloc: newGoAlloc(), Scratch: noMemory{}})
	requireNCCLError(t, err, abi.SystemError, "ncclTopoPostset: malloc of 256 bytes of working memory for 8 ranks x 2 channels failed")
	assert.Equal(t, before, bytesOf(f.comm))
	assert.Equal(t, make([]int32, 8), heads)
}

// D27: comm->nChannels, which only the calling rank holds, plays no part:
// whatever it says (Preset not called, stale, larger or smaller than the
// fragments'), Postset gives the rings of the fragments' 2 channels.
func TestPostsetDoesNotReadCommNChannels(t *testing.T) {
	alloc := newGoAlloc() // holds every userRanks buffer below until the end
	defer runtime.KeepAlive(alloc)
	want := newPostsetFixture(t)
	_, err := ring.Postset(want.comm, make([]int32, 8), want.all, ring.PostsetOptions{Platforms: generic, Alloc: alloc})
	require.NoError(t, err)
	for _, nChannels := range []int32{0, -3, 1, 3, 32, 99} {
		f := newPostsetFixture(t)
		f.comm.NChannels = nChannels
		res, err := ring.Postset(f.comm, make([]int32, 8), f.all, ring.PostsetOptions{Platforms: generic, Alloc: alloc})
		require.NoError(t, err, "comm->nChannels %d", nChannels)
		assert.Equal(t, 2, res.GraphChannels, "comm->nChannels %d", nChannels)
		assert.EqualValues(t, 4, f.comm.NChannels, "comm->nChannels %d", nChannels)
		for c := range 4 {
			assert.Equal(t, abi.Ints(want.comm.Channels[c].Ring.UserRanks, 8), abi.Ints(f.comm.Channels[c].Ring.UserRanks, 8), "comm->nChannels %d, channel %d", nChannels, c)
		}
	}
}
