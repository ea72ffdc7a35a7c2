package cputime

import (
	"testing"
	"time"
)

// A loop shows in the count, and a sleep does not.
func TestProcessCountsWorkNotWaits(t *testing.T) {
	start := Process()
	time.Sleep(200 * time.Millisecond)
	slept := Process() - start
	for Process()-start < slept+50*time.Millisecond {
	}
	if slept > 100*time.Millisecond {
		t.Errorf("a 200 ms sleep counted %v of CPU", slept)
	}
}
