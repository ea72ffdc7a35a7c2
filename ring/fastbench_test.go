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
		st := newBenchPostset(b, n)
		preset, all, heads, fast := st.preset, st.all, st.heads, st.opt
		comm := new(abi.Comm)
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
	st := newBenchPostset(t, 65536)
	preset, all, heads, fast := st.preset, st.all, st.heads, st.opt
	comm := new(abi.Comm)
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
