package cputime

import (
	"context"
	"errors"
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

// A WithLimit context ends a spin at its limit of CPU, as a deadline
// would, and lets a wait of any length be.
func TestWithLimitEndsWorkNotWaits(t *testing.T) {
	ctx, cancel := WithLimit(context.Background(), 100*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	if err := ctx.Err(); err != nil {
		t.Fatalf("a 300 ms sleep ended a 100 ms CPU limit: %v", err)
	}
	for ctx.Err() == nil {
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("the limit's error: %v, want context.DeadlineExceeded", ctx.Err())
	}
	cancel()

	ctx, cancel = WithLimit(context.Background(), time.Hour)
	cancel()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", ctx.Err())
	}
}
