// Package cputime reads the CPU time this process has used, for the tests
// whose bounds are on work done in the test process: on a machine busy
// with other work a call takes longer by the wall clock, but not more CPU,
// so a bound on CPU fails only when the code does more (issue 32). It
// counts every thread: the garbage collector's and other goroutines' too,
// which only errs towards passing a bound set well above the work.
package cputime

import (
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
