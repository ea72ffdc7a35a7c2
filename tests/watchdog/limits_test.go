package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const s = time.Second

// times builds one sample: tid, seconds on a CPU, seconds on a run queue.
func times(tidRunWait ...float64) map[int]taskTimes {
	out := map[int]taskTimes{}
	for i := 0; i+2 < len(tidRunWait); i += 3 {
		out[int(tidRunWait[i])] = taskTimes{
			Run:  time.Duration(tidRunWait[i+1] * float64(s)),
			Wait: time.Duration(tidRunWait[i+2] * float64(s)),
		}
	}
	return out
}

// A thread that neither runs nor waits for 10 s is blocked; the limit
// fires at the sample that reaches it, not before.
func TestMonitorBlockedFiresAtTheLimit(t *testing.T) {
	m := newMonitor(Limits{CPU: 60 * s, Blocked: 10 * s, Wall: 600 * s})
	require.Equal(t, SignalNone, m.observe(1*s, times(7, 0.5, 0.1), true)) // ran 0.6 s of 1 s: active
	for at := 2; at <= 10; at++ {
		require.Equal(t, SignalNone, m.observe(time.Duration(at)*s, times(7, 0.5, 0.1), false), "at %d s", at)
	}
	assert.Equal(t, 9*s, m.BlockedFor)
	assert.Equal(t, SignalBlocked, m.observe(11*s, times(7, 0.5, 0.1), false))
	assert.Contains(t, m.explain(SignalBlocked, 11*s),
		"the blocked limit: none of its threads ran or waited to run for 10.0 s (--blocked 10.0 s); it ran 11.0 s and used 0.5 s of CPU")
}

// Starved of CPU on a busy machine: the thread waits on a run queue the
// whole time and gets 1% of a CPU. It is neither blocked nor spinning,
// however long it lasts, until the wall-clock cap.
func TestMonitorStarvedIsNotAHang(t *testing.T) {
	m := newMonitor(Limits{CPU: 20 * s, Blocked: 10 * s, Wall: 1000 * s})
	for at := 1; at < 1000; at++ {
		run, wait := 0.01*float64(at), 0.99*float64(at)
		require.Equal(t, SignalNone, m.observe(time.Duration(at)*s, times(3, run, wait), false), "at %d s", at)
	}
	assert.Equal(t, SignalWall, m.observe(1000*s, times(3, 10, 990), false))
	assert.Equal(t, 10*s, m.CPU)
}

// A wake now and then (under 10% of a CPU) is still blocked; 10% or more is not.
func TestMonitorIdleShare(t *testing.T) {
	m := newMonitor(Limits{Blocked: 3 * s})
	m.observe(1*s, times(1, 0.05, 0.04), false) // 0.09 s of 1 s
	assert.Equal(t, 1*s, m.BlockedFor)
	m.observe(2*s, times(1, 0.10, 0.09), false) // +0.10 s
	assert.Equal(t, time.Duration(0), m.BlockedFor)
}

// CPU counts since the last output; output resets it.
func TestMonitorCPUSinceProgress(t *testing.T) {
	m := newMonitor(Limits{CPU: 3 * s})
	assert.Equal(t, SignalNone, m.observe(1*s, times(1, 1, 0, 2, 1, 0), false))     // 2 s
	assert.Equal(t, SignalNone, m.observe(2*s, times(1, 1.5, 0, 2, 1.5, 0), true))  // output: 0
	assert.Equal(t, SignalNone, m.observe(3*s, times(1, 2.5, 0, 2, 2.5, 0), false)) // 2 s
	assert.Equal(t, SignalCPU, m.observe(4*s, times(1, 3.5, 0, 2, 2.5, 0), false))  // 3 s
	assert.Equal(t, 3*s, m.CPUSinceProgress)
	assert.Equal(t, 6*s, m.CPU)
	assert.Contains(t, m.explain(SignalCPU, 4*s), "the CPU limit: it used 3.0 s of CPU since its last output, 2.0 s ago (--cpu 3.0 s)")
}

// A thread first seen counts from zero (it began after the last sample);
// one whose times went down is a new thread with a reused id; a thread
// that ended takes nothing away.
func TestMonitorThreadsComeAndGo(t *testing.T) {
	m := newMonitor(Limits{})
	m.observe(1*s, times(1, 0.4, 0), false)
	m.observe(2*s, times(1, 0.6, 0, 2, 0.3, 0), false)
	assert.Equal(t, 900*time.Millisecond, m.CPU)
	m.observe(3*s, times(2, 0.1, 0), false) // 1 ended; 2 reused
	assert.Equal(t, time.Second, m.CPU)
	assert.Equal(t, SignalNone, m.observe(1e6*s, nil, false), "no limit set, none fires")
}

func TestMonitorWallIsTheLastResort(t *testing.T) {
	m := newMonitor(Limits{CPU: 100 * s, Blocked: 100 * s, Wall: 5 * s})
	assert.Equal(t, SignalNone, m.observe(4*s, times(1, 4, 0), true))
	assert.Equal(t, SignalWall, m.observe(5*s, times(1, 5, 0), true))
	assert.Contains(t, m.explain(SignalWall, 5*s), "the wall-clock cap (--wall 5.0 s), the last resort")
}
