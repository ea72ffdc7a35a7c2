// Package cputime reads the CPU time this process has used, for the tests
// whose bounds are on work done in the test process: on a machine busy
// with other work a call takes longer by the wall clock, but not more CPU,
// so a bound on CPU fails only when the code does more (issue 32). It
// counts every thread: the garbage collector's and other goroutines' too,
// which only errs towards passing a bound set well above the work.
package cputime

import (
	"context"
	"syscall"
	"time"
)

// Process is the CPU time, user and system, this process has used so far.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("getrusage(RUSAGE_SELF): " + err.Error()) // only for a bad argument
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pollEvery is how often a WithLimit context reads the CPU time.
const pollEvery = 50 * time.Millisecond

// WithLimit is a context done once this process has used limit of CPU
// time since the call (its Err then context.DeadlineExceeded, as for a
// deadline), or when parent is done; cancel releases it. A deadline on
// work rather than on the wall clock: a process starved by a busy machine
// uses no CPU, so it never reaches it.
func WithLimit(parent context.Context, limit time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	start := Process()
	go func() {
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if Process()-start >= limit {
					cancel(context.DeadlineExceeded)
					return
				}
			}
		}
	}()
	return limitContext{ctx}, func() { cancel(context.Canceled) }
}

// limitContext says context.DeadlineExceeded when the limit ended it.
type limitContext struct{ context.Context }

func (c limitContext) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}
