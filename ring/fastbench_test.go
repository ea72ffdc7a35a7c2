package ring_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nccomring/libnccomring/abi"
	"github.com/nccomring/libnccomring/ring"
)

// BenchmarkPostsetPaths times Postset's fast path and its exact path alone
// on the same fragments (fastpath.go).
func BenchmarkPostsetPaths(b *testing.B) {
	for _, n := range []int{16384, 65536} {
		frags := benchCluster(b, n)
		graph := benchGraph(0)
		all := make([]*abi.TopoRanks, n)
		for r := range frags {
			all[r] = &frags[r]
		}
		preset := &abi.Comm{Rank: 0, NRanks: int32(n), LocalRanks: benchLocal}
		if err := ring.Preset(preset, graph, new(abi.TopoRanks), generic); err != nil {
			b.Fatal(err)
		}
		alloc := newGoAlloc()
		for c := range preset.Channels {
			preset.Channels[c].Ring.UserRanks = alloc.AllocInts(n)
		}
		heads := make([]int32, n)
		comm := new(abi.Comm)
		fast := ring.PostsetOptions{Platforms: generic, Alloc: alloc, Scratch: &reusedBlock{}}
		for _, path := range []string{"fast", "exact"} {
			opt := fast
			if path == "exact" {
				opt = ring.ExactOnly(fast)
			}
			b.Run(fmt.Sprintf("ranks=%d/%s", n, path), func(b *testing.B) {
				for b.Loop() {
					*comm = *preset
					if _, err := ring.Postset(comm, heads, all, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestPostsetPathsTiming (FASTPATH_TIMING=1) alternates the two paths many
// times on the bench's shape and prints the median and minimum of each.
func TestPostsetPathsTiming(t *testing.T) {
	if os.Getenv("FASTPATH_TIMING") == "" {
		t.Skip("FASTPATH_TIMING unset")
	}
	n := 65536
	frags := benchCluster(t, n)
	all := make([]*abi.TopoRanks, n)
	for r := range frags {
		all[r] = &frags[r]
	}
	preset := &abi.Comm{Rank: 0, NRanks: int32(n), LocalRanks: benchLocal}
	if err := ring.Preset(preset, benchGraph(0), new(abi.TopoRanks), generic); err != nil {
		t.Fatal(err)
	}
	alloc := newGoAlloc()
	for c := range preset.Channels {
		preset.Channels[c].Ring.UserRanks = alloc.AllocInts(n)
	}
	heads := make([]int32, n)
	comm := new(abi.Comm)
	fast := ring.PostsetOptions{Platforms: generic, Alloc: alloc, Scratch: &reusedBlock{}}
	opts := []ring.PostsetOptions{fast, ring.ExactOnly(fast)}
	var times [2][]float64
	for range 60 {
		for k, opt := range opts {
			*comm = *preset
			t0 := time.Now()
			if _, err := ring.Postset(comm, heads, all, opt); err != nil {
				t.Fatal(err)
			}
			times[k] = append(times[k], float64(time.Since(t0).Microseconds())/1000)
		}
	}
	for k, name := range []string{"fast", "exact"} {
		slices.Sort(times[k])
		t.Logf("%s: median %.3f ms, min %.3f ms", name, times[k][len(times[k])/2], times[k][0])
	}
}
