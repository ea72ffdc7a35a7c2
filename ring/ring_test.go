package ring_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/ring"
)

// The expected values of issue 2, worked by hand from spec §2-§3 and D9/D10
// (the same cases run through the C ABI in tests/c/expected).

func TestOneNodeEightRanksTwoChannels(t *testing.T) {
	fwd, rev := []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{0, 7, 6, 5, 4, 3, 2, 1}
	st := newCluster(8).channel(0, fwd, -1, -1).channel(1, rev, -1, -1).channels(2).run(t, generic)
	c := st.comms[0]
	require.EqualValues(t, 4, c.NChannels, "doubling (D10)")
	assert.EqualValues(t, 4, st.results[0].NChannels)
	// One node closes on itself (D9): ch0's tail 7 feeds head 0.
	for _, ch := range []int{0, 2} {
		assert.EqualValues(t, 7, c.Channels[ch].Ring.Prev, "ch%d prev", ch)
		assert.EqualValues(t, 1, c.Channels[ch].Ring.Next, "ch%d next", ch)
		assert.Equal(t, ints(0, 1, 2, 3, 4, 5, 6, 7), st.userRanks(0, ch), "ch%d", ch)
	}
	for _, ch := range []int{1, 3} {
		assert.EqualValues(t, 1, c.Channels[ch].Ring.Prev, "ch%d prev", ch)
		assert.EqualValues(t, 7, c.Channels[ch].Ring.Next, "ch%d next", ch)
		assert.Equal(t, ints(0, 7, 6, 5, 4, 3, 2, 1), st.userRanks(0, ch), "ch%d", ch)
	}
	assert.NotEqual(t, c.Channels[0].Ring.UserRanks, c.Channels[2].Ring.UserRanks, "D6: no shared userRanks buffers")
}

func TestTwoNodesFourRanksReversedSecondChannel(t *testing.T) {
	st := newCluster(4, 4).channel(0, []int{0, 1, 2, 3}, 0, 0).channel(1, []int{3, 2, 1, 0}, 1, 1).channels(2).run(t, generic)
	c := st.comms[3]
	// Node 0's ch0 tail 3 feeds node 1's head 4.
	assert.EqualValues(t, 2, c.Channels[0].Ring.Prev)
	assert.EqualValues(t, 4, c.Channels[0].Ring.Next)
	assert.Equal(t, ints(3, 4, 5, 6, 7, 0, 1, 2), st.userRanks(3, 0))
	// ch1: rank 3 heads node 0, so its prev is node 1's tail 4.
	assert.EqualValues(t, 4, c.Channels[1].Ring.Prev)
	assert.EqualValues(t, 2, c.Channels[1].Ring.Next)
	assert.Equal(t, ints(3, 2, 1, 0, 7, 6, 5, 4), st.userRanks(3, 1))
	assert.EqualValues(t, 2, c.NNodes)
	assert.EqualValues(t, 0, c.Node)
	assert.Equal(t, ints(0, 4), st.heads[3][:2], "nodesFirstRank: each node's channel-0 head (D8)")
	assert.EqualValues(t, 1, st.comms[5].Node)
}

func TestChannelThreeRotatedOrder(t *testing.T) {
	cl := newCluster(4, 4)
	for c := range 3 {
		cl.channel(c, []int{0, 1, 2, 3}, int32(c), int32(c))
	}
	st := cl.channel(3, []int{2, 3, 0, 1}, 3, 3).channels(4).run(t, generic)
	assert.Equal(t, ints(0, 1, 6, 7, 4, 5, 2, 3), st.userRanks(0, 3))
	assert.Equal(t, ints(0, 1, 6, 7, 4, 5, 2, 3), st.userRanks(0, 7), "doubled copy")
}

func TestTwoNodesEightRanksReversed(t *testing.T) {
	st := newCluster(8, 8).channel(0, []int{0, 7, 6, 5, 4, 3, 2, 1}, 0, 0).channels(1).run(t, generic)
	assert.Equal(t, ints(0, 7, 6, 5, 4, 3, 2, 1, 8, 15, 14, 13, 12, 11, 10, 9), st.userRanks(0, 0))
	assert.EqualValues(t, 9, st.comms[0].Channels[0].Ring.Prev)
}

func TestOneRankPerNodeDoubles(t *testing.T) {
	st := newCluster(1, 1, 1, 1).channel(0, []int{0}, 0, 1).channel(1, []int{0}, 2, 3).channels(2).run(t, generic)
	for r, c := range st.comms {
		require.EqualValues(t, 4, c.NChannels)
		assert.EqualValues(t, 4, c.NNodes)
		assert.EqualValues(t, r, c.Node)
		want := ints(int32(r), int32((r+1)%4), int32((r+2)%4), int32((r+3)%4))
		for ch := range 4 {
			assert.Equal(t, want, st.userRanks(r, ch), "rank %d ch%d", r, ch)
			assert.EqualValues(t, (r+3)%4, c.Channels[ch].Ring.Prev)
			assert.EqualValues(t, (r+1)%4, c.Channels[ch].Ring.Next)
		}
	}
}

func TestTwentyChannelsClampToThirtyTwo(t *testing.T) {
	cl := newCluster(4, 4)
	for c := range 20 {
		cl.channel(c, []int{c % 4, (c + 1) % 4, (c + 2) % 4, (c + 3) % 4}, 0, 0)
	}
	st := cl.channels(20).run(t, generic)
	for r, c := range st.comms {
		require.EqualValues(t, 32, c.NChannels, "rank %d", r)
		for ch := 20; ch < 32; ch++ {
			assert.Equal(t, st.userRanks(r, ch-20), st.userRanks(r, ch), "rank %d ch%d repeats ch%d", r, ch, ch-20)
		}
	}
	// "Nothing past channels[31]" is not asserted here: in Go a write to
	// Channels[32] panics whatever the library means to do. The check that
	// can fail is expected/twenty_channels, through the C ABI, on every byte
	// of the communicator after channels[31].
}

func TestSingleRank(t *testing.T) {
	st := newCluster(1).channel(0, []int{0}, 5, 6).channels(1).run(t, generic)
	c := st.comms[0]
	assert.EqualValues(t, 2, c.NChannels)
	assert.EqualValues(t, 0, c.Channels[0].Ring.Prev)
	assert.EqualValues(t, 0, c.Channels[0].Ring.Next)
	assert.Equal(t, ints(0), st.userRanks(0, 1))
}

func TestUnequalNodesFormOneRing(t *testing.T) {
	// P6: 3 + 2 ranks; each node's fragments agree, so the ring is the node
	// orders back to back.
	cl := newCluster(3, 2)
	g0, g1 := cl.graphs[0], cl.graphs[1]
	copy(g0.Intra[:], []int32{2, 0, 1})
	copy(g1.Intra[:], []int32{4, 3})
	cl.channels(1)
	st := cl.run(t, generic)
	assert.Equal(t, ints(0, 1, 4, 3, 2), st.userRanks(0, 0))
	assert.Equal(t, ints(3, 2, 0, 1, 4), st.userRanks(3, 0))
}

func TestPostsetKeepsCallerUserRanksBuffers(t *testing.T) {
	cl := newCluster(2).channel(0, []int{0, 1}, 0, 0).channels(1)
	st := &stage{alloc: newGoAlloc()}
	st.fragments = make([]abi.TopoRanks, 2)
	comms := []*abi.Comm{cl.comm(0), cl.comm(1)}
	for r, c := range comms {
		require.NoError(t, ring.Preset(c, cl.graphs[0], &st.fragments[r], ring.PresetOptions{Platforms: generic}))
	}
	own := make([]int32, 2)
	comms[0].Channels[0].Ring.UserRanks = abi.Address(own)
	// devUserRanks belongs to the device runtime (D12): sentinels that no
	// write of Postset's would leave as they are.
	comms[0].Channels[0].Ring.DevUserRanks = 0xD000
	comms[0].Channels[1].Ring.DevUserRanks = 0xD001
	all := []*abi.TopoRanks{&st.fragments[0], &st.fragments[1]}
	_, err := ring.Postset(comms[0], make([]int32, 2), all, ring.PostsetOptions{Platforms: generic, Alloc: st.alloc})
	require.NoError(t, err)
	assert.Equal(t, abi.Address(own), comms[0].Channels[0].Ring.UserRanks)
	assert.Equal(t, ints(0, 1), own)
	assert.Equal(t, 1, st.alloc.calls, "only channel 1's NULL userRanks is allocated (D12)")
	fresh := comms[0].Channels[1].Ring.UserRanks
	require.Contains(t, st.alloc.live, fresh, "channel 1's userRanks is the buffer Postset allocated")
	assert.Equal(t, ints(0, 1), abi.Ints(fresh, 2))
	assert.EqualValues(t, 0xD000, comms[0].Channels[0].Ring.DevUserRanks, "devUserRanks untouched (D12)")
	assert.EqualValues(t, 0xD001, comms[0].Channels[1].Ring.DevUserRanks)
}

// TestRandomClustersMatchNodeOrderModel compares Postset with an independent
// model: channel c's ring is the node orders of channel c back to back in
// node order (D9), read from the rank (spec §3).
func TestRandomClustersMatchNodeOrderModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		nNodes := 1 + rng.IntN(6)
		local := 1 + rng.IntN(9)
		nChannels := 1 + rng.IntN(20)
		sizes := make([]int, nNodes)
		for i := range sizes {
			sizes[i] = local
		}
		cl := newCluster(sizes...)
		for c := range nChannels {
			cl.channel(c, rng.Perm(local), int32(rng.IntN(8)), int32(rng.IntN(8)))
		}
		st := cl.channels(nChannels).run(t, generic)
		total := min(2*nChannels, 32)
		for r := range cl.nRanks {
			c := st.comms[r]
			require.EqualValues(t, total, c.NChannels)
			for ch := range total {
				var order []int32
				for _, g := range cl.graphs {
					gc := ch % nChannels
					order = append(order, g.Intra[gc*local:(gc+1)*local]...)
				}
				start := 0
				for i, v := range order {
					if v == int32(r) {
						start = i
					}
				}
				want := append(append([]int32{}, order[start:]...), order[:start]...)
				require.Equal(t, want, st.userRanks(r, ch), "trial %d rank %d ch %d", trial, r, ch)
				require.EqualValues(t, want[len(want)-1], c.Channels[ch].Ring.Prev)
				require.EqualValues(t, want[1%len(want)], c.Channels[ch].Ring.Next)
			}
		}
	}
}

// D22: calls for different communicators run concurrently and share no
// state (go test -race checks the scratch pool and everything else).
func TestConcurrentStagesAgree(t *testing.T) {
	build := func() *cluster {
		cl := newCluster(4, 4, 4)
		for c := range 6 {
			cl.channel(c, []int{c % 4, (c + 3) % 4, (c + 1) % 4, (c + 2) % 4}, int32(c), int32(c))
		}
		return cl.channels(6)
	}
	want := build().run(t, generic)
	// The workers only report: FailNow (require) must run on the test's
	// own goroutine, so each sends its stage and error back.
	const workers = 8
	type report struct {
		st  *stage
		err error
	}
	done := make(chan report, workers)
	for range workers {
		go func() {
			st, err := build().stage(generic)
			done <- report{st, err}
		}()
	}
	for i := range workers {
		got := <-done
		require.NoError(t, got.err, "report %d", i)
		for r := range want.comms {
			for ch := range 12 {
				require.Equal(t, want.userRanks(r, ch), got.st.userRanks(r, ch), "report %d rank %d ch %d", i, r, ch)
			}
		}
	}
}

// Spec §4: Preset asks only the family hook; the virtual-core and JBOG hooks
// run only in Postset, and only when the family hook says SwitchV1.
// D27: the preconditions are asked in Preset, on SwitchV1 only (other
// platforms' hooks may assert), and travel in the record; Postset asks the
// platform only its family.
func TestPlatformGateAsksPreconditionsOnlyInPresetOnSwitchV1(t *testing.T) {
	for _, switchV1 := range []bool{false, true} {
		cl := newCluster(2, 2).channel(0, []int{0, 1}, 0, 0).channels(1)
		spy := &countingPlatform{switchV1: switchV1}
		frags := make([]abi.TopoRanks, 4)
		all := make([]*abi.TopoRanks, 4)
		for r := range 4 {
			require.NoError(t, ring.Preset(cl.comm(r), cl.graphs[r/2], &frags[r], ring.PresetOptions{Platforms: spy}))
			all[r] = &frags[r]
		}
		assert.Equal(t, 4, spy.family, "Preset asks the family once per call")
		want := 0
		if switchV1 {
			want = 4
		}
		assert.Equal(t, want, spy.preconditions, "SwitchV1 %v: Preset asks the preconditions on SwitchV1 only", switchV1)
		spy.family, spy.preconditions = 0, 0
		comm := cl.comm(1)
		require.NoError(t, ring.Preset(comm, cl.graphs[0], new(abi.TopoRanks), ring.PresetOptions{Platforms: kanga.Fixed(kanga.Generic)}))
		_, err := ring.Postset(comm, make([]int32, 4), all, ring.PostsetOptions{Platforms: spy, Alloc: newGoAlloc()})
		require.NoError(t, err)
		assert.Zero(t, spy.family, "Postset asks no platform hook when the records hold the platform (D28)")
		assert.Zero(t, spy.preconditions, "SwitchV1 %v: Postset never asks the preconditions", switchV1)
	}
}
