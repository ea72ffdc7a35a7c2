package ring_test

import (
	"fmt"
	"testing"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/netdev"
	"github.com/nccomring/libnccomring/nodeorder"
	"github.com/nccomring/libnccomring/ring"
)

// Benchmarks of issue 5 at cluster scale: 32 ranks per node, 16 graph
// channels (32 after doubling), nRanks from 64 to 131,072. Postset is one
// rank's call with every fragment prepared beforehand and the userRanks
// buffers already given (steady state). Run with `make bench` (or go test
// -bench . ./ring); BENCHMARKS.md has the numbers.

const (
	benchLocal    = 32
	benchChannels = 16
)

var benchSizes = []int{64, 1024, 16384, 65536, 131072}

// benchCluster returns every rank's fragment for nRanks/32 nodes, each
// record carrying what rec says.
func benchCluster(b testing.TB, nRanks int, rec benchRecords) []abi.TopoRanks {
	b.Helper()
	frags := make([]abi.TopoRanks, nRanks)
	for first := 0; first < nRanks; first += benchLocal {
		g := benchGraph(first)
		opt := ring.PresetOptions{Platforms: generic, Network: rec.network}
		if rec.located {
			// As bench.c's node-order table (issue 33): 16 nodes a leaf, 8
			// leaves a spine, node m on leaf m % leaves, so that consecutive
			// nodes sit on different leaves and the network order really
			// reorders them (nodes already in location order would cost the
			// stitch nothing extra).
			leaves := (nRanks/benchLocal + 15) / 16
			leaf := first / benchLocal % leaves
			opt.Location = nodeorder.Location{Levels: 2, Hash: [nodeorder.MaxLevels]uint32{uint32(leaf / 8), uint32(leaf)}}
		}
		for r := first; r < first+benchLocal; r++ {
			comm := &abi.Comm{Rank: int32(r), NRanks: int32(nRanks), LocalRanks: benchLocal}
			if err := ring.Preset(comm, g, &frags[r], opt); err != nil {
				b.Fatal(err)
			}
		}
	}
	return frags
}

func BenchmarkPreset(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			graph := benchGraph(0)
			comm := &abi.Comm{Rank: 5, NRanks: int32(n), LocalRanks: benchLocal}
			var frag abi.TopoRanks
			for b.Loop() {
				if err := ring.Preset(comm, graph, &frag, ring.PresetOptions{Platforms: generic}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPostset(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) { benchmarkPostset(b, n, benchRecords{}) })
	}
}

// BenchmarkPostsetLocated: every rank's record carries a location and none
// asks for the network order, so Postset reads no record (D25; gather
// counts the records that ask). It costs what BenchmarkPostset does.
func BenchmarkPostsetLocated(b *testing.B) {
	for _, n := range []int{16384, 65536} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) { benchmarkPostset(b, n, benchRecords{located: true}) })
	}
}

// BenchmarkPostsetNetwork: every rank asks for the network order and
// carries a location, so Postset reads every record and stitches the nodes
// in location order (D25).
func BenchmarkPostsetNetwork(b *testing.B) {
	for _, n := range []int{16384, 65536} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) { benchmarkPostset(b, n, benchRecords{located: true, network: true}) })
	}
}

func benchmarkPostset(b *testing.B, n int, rec benchRecords) {
	st := newBenchPostset(b, n, rec)
	preset, all, heads, opt := st.preset, st.all, st.heads, st.opt
	comm := new(abi.Comm)
	b.ResetTimer()
	for b.Loop() {
		*comm = *preset
		if _, err := ring.Postset(comm, heads, all, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rank")
	// Bytes the call must touch: 4 ring arrays x 16 channels of every
	// fragment read, 32 channels of userRanks written.
	b.ReportMetric(float64(n*(4*benchChannels*4+2*benchChannels*4)), "touched-B/op")
}

func BenchmarkBuildRings(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			nrings := 2 * benchChannels
			next := make([]int32, nrings*n)
			for r := range nrings {
				for i := range n {
					next[r*n+i] = int32((i + 1) % n)
				}
			}
			rings := make([]int32, nrings*n)
			for b.Loop() {
				if err := ring.BuildRings(nrings, 0, n, rings, next, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/rank")
		})
	}
}

func BenchmarkGetNetDev(b *testing.B) {
	sys := &abi.TopoSystem{Nodes0Count: benchLocal}
	g := &abi.TopoGraph{NChannels: benchChannels}
	var sink int32
	for b.Loop() {
		d, err := netdev.GetNetDev(sys, 3, g, 21)
		if err != nil {
			b.Fatal(err)
		}
		sink += d
	}
	_ = sink
}
