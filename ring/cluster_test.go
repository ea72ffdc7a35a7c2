package ring_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/kanga"
	"github.com/nccomring/libnccomring/layout"
	"github.com/nccomring/libnccomring/ring"
)

// cluster is a simulated cluster for tests: nodes of given sizes, ranks
// numbered node-major, one graph per node whose intra holds global ranks.
type cluster struct {
	nRanks int
	first  []int // first global rank of each node
	local  []int // local ranks of each node
	graphs []*abi.TopoGraph
}

func newCluster(local ...int) *cluster {
	cl := &cluster{local: local}
	for _, l := range local {
		cl.first = append(cl.first, cl.nRanks)
		cl.nRanks += l
		g := &abi.TopoGraph{Pattern: 4}
		for i := range g.Inter {
			g.Inter[i] = -1
		}
		cl.graphs = append(cl.graphs, g)
	}
	return cl
}

func (cl *cluster) nodeOf(rank int) int {
	for m := len(cl.first) - 1; m >= 0; m-- {
		if rank >= cl.first[m] {
			return m
		}
	}
	return -1
}

// channel sets channel c on every node from a local order and NIC pair.
func (cl *cluster) channel(c int, localOrder []int, in, out int32) *cluster {
	for m, g := range cl.graphs {
		l := len(localOrder)
		for i, v := range localOrder {
			g.Intra[c*l+i] = int32(cl.first[m] + v)
		}
		g.Inter[2*c], g.Inter[2*c+1] = in, out
	}
	return cl
}

func (cl *cluster) channels(n int) *cluster {
	for _, g := range cl.graphs {
		g.NChannels = int32(n)
	}
	return cl
}

// comm returns a zeroed communicator for rank, as a host allocates it.
func (cl *cluster) comm(rank int) *abi.Comm {
	c := new(abi.Comm)
	c.Rank, c.NRanks = int32(rank), int32(cl.nRanks)
	c.LocalRanks = int32(cl.local[cl.nodeOf(rank)])
	return c
}

// goAlloc is a ring.Allocator over Go memory, kept alive by the allocator.
type goAlloc struct {
	live  map[uintptr][]int32
	fail  int // fail this many allocations first
	calls int
}

func newGoAlloc() *goAlloc { return &goAlloc{live: map[uintptr][]int32{}} }

func (a *goAlloc) AllocInts(n int) uintptr {
	a.calls++
	if a.fail > 0 {
		a.fail--
		return 0
	}
	buf := make([]int32, n)
	p := abi.Address(buf)
	a.live[p] = buf
	return p
}

func (a *goAlloc) Free(p uintptr) { delete(a.live, p) }

// stage is the outcome of a whole ring stage.
type stage struct {
	comms     []*abi.Comm
	fragments []abi.TopoRanks
	all       []*abi.TopoRanks
	heads     [][]int32
	results   []ring.PostsetResult
	alloc     *goAlloc
}

// run drives Preset on every rank, the AllGather and Postset on every rank,
// failing the test on any error.
func (cl *cluster) run(t *testing.T, platform kanga.Resolver) *stage {
	t.Helper()
	st, err := cl.stage(platform)
	require.NoError(t, err)
	return st
}

// stage is run without a test: it returns the first error instead, so a
// worker goroutine can call it and leave failing to the test's own.
func (cl *cluster) stage(platform kanga.Resolver) (*stage, error) {
	return buildStage(cl.nRanks, platform, cl.comm, func(r int) *abi.TopoGraph { return cl.graphs[cl.nodeOf(r)] })
}

// runStage is a job of nRanks ranks, each with the communicator comm(r)
// and the graph graph(r): Preset on every rank (with
// NCCOM_RING_POD_ORDER=node), the AllGather, Postset on every rank, failing
// the test on any error.
func runStage(t *testing.T, nRanks int, platform kanga.Resolver, comm func(r int) *abi.Comm, graph func(r int) *abi.TopoGraph) *stage {
	t.Helper()
	st, err := buildStage(nRanks, platform, comm, graph)
	require.NoError(t, err)
	return st
}

// buildStage is runStage returning its first error (the stage so far with
// it).
func buildStage(nRanks int, platform kanga.Resolver, comm func(r int) *abi.Comm, graph func(r int) *abi.TopoGraph) (*stage, error) {
	st := &stage{alloc: newGoAlloc(), fragments: make([]abi.TopoRanks, nRanks)}
	for r := range nRanks {
		c := comm(r)
		// Every rank says NCCOM_RING_POD_ORDER=node: the stage stitches pods
		// in node order (D27).
		if err := ring.Preset(c, graph(r), &st.fragments[r], ring.PresetOptions{Platforms: platform, PodNode: true}); err != nil {
			return st, fmt.Errorf("Preset rank %d: %w", r, err)
		}
		st.comms = append(st.comms, c)
		st.all = append(st.all, &st.fragments[r])
	}
	for r, c := range st.comms {
		heads := make([]int32, nRanks)
		res, err := ring.Postset(c, heads, st.all, ring.PostsetOptions{Platforms: platform, Alloc: st.alloc})
		if err != nil {
			return st, fmt.Errorf("Postset rank %d: %w", r, err)
		}
		st.heads = append(st.heads, heads)
		st.results = append(st.results, res)
	}
	return st, nil
}

func (st *stage) userRanks(rank, c int) []int32 {
	comm := st.comms[rank]
	return abi.Ints(comm.Channels[c].Ring.UserRanks, int(comm.NRanks))
}

func ints(v ...int32) []int32 { return v }

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

var generic = kanga.Fixed(kanga.Generic)

// ringField is one of a fragment's four ring arrays, by the index the
// corruption tests draw: 0 ringRecv, 1 ringSend, 2 ringPrev, 3 ringNext.
func ringField(f *abi.TopoRanks, k int) *[layout.MaxChannels]int32 {
	switch k {
	case 0:
		return &f.RingRecv
	case 1:
		return &f.RingSend
	case 2:
		return &f.RingPrev
	default:
		return &f.RingNext
	}
}
