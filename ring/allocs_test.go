package ring_test

import (
	"testing"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/netdev"
	"github.com/nccomring/libnccomring/ring"
)

// Issue 13: at steady state the ring stage allocates nothing on the Go heap
// in proportion to nRanks, so a host that calls it again and again gives
// the Go garbage collector nothing to do. Working memory comes from the
// call's Allocator (C malloc in the library; here reusedBlock, which hands
// out one buffer again as malloc reuses a freed block), the userRanks
// buffers are the host's.

// postsetAllocs is the Go heap allocations of one steady-state Postset of
// rank 0 on the bench cluster of nRanks ranks.
func postsetAllocs(t *testing.T, nRanks int) float64 {
	t.Helper()
	st := newBenchPostset(t, nRanks, benchRecords{})
	preset, all, heads, opt := st.preset, st.all, st.heads, st.opt
	comm := new(abi.Comm)
	return testing.AllocsPerRun(5, func() {
		*comm = *preset
		if _, err := ring.Postset(comm, heads, all, opt); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPostsetAllocatesNothingOnTheGoHeap(t *testing.T) {
	sizes := []int{1024, 65536}
	if testing.Short() {
		sizes = sizes[:1] // the cluster of 65,536 ranks takes most of a second
	}
	for _, n := range sizes {
		if a := postsetAllocs(t, n); a != 0 {
			t.Errorf("Postset at %d ranks: %v Go heap allocations per call, want 0", n, a)
		}
	}
}

func TestBuildRingsAllocatesNothingOnTheGoHeap(t *testing.T) {
	const nRings, n = 32, 65536
	next := make([]int32, nRings*n)
	for r := range nRings {
		for i := range n {
			next[r*n+i] = int32((i + 2*r + 1) % n) // an odd step: one cycle through 2^16 ranks
		}
	}
	rings := make([]int32, nRings*n)
	scratch := &reusedBlock{} // the working memory, C malloc's in the library
	if a := testing.AllocsPerRun(5, func() {
		if err := ring.BuildRings(nRings, 3, n, rings, next, scratch); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("BuildRings of %d rings of %d ranks: %v Go heap allocations per call, want 0", nRings, n, a)
	}
}

func TestGetNetDevAllocatesNothingOnTheGoHeap(t *testing.T) {
	sys := &abi.TopoSystem{Nodes0Count: benchLocal}
	g := benchGraph(0)
	if a := testing.AllocsPerRun(100, func() {
		if _, err := netdev.GetNetDev(sys, 3, g, 5); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("GetNetDev: %v Go heap allocations per call, want 0", a)
	}
}
