package main

import (
	"fmt"
	"time"
)

// Limits are what ends a watched command. Each detects a hang from what
// the command's processes did, not from how busy the machine is:
//
//   - CPU: the CPU time its processes used since its last output (a spin:
//     a starved command gets no CPU, so it never reaches this);
//   - Blocked: how long none of its threads ran or waited to run (a
//     deadlock or a sleep: a starved thread waits on a run queue, so it is
//     not blocked);
//   - Wall: the wall clock, the last resort, at least ten times what the
//     command takes on a quiet machine.
//
// Zero turns a limit off.
type Limits struct {
	CPU     time.Duration
	Blocked time.Duration
	Wall    time.Duration
}

// idleShare is the share of one CPU under which an interval counts as
// blocked: the time the tree's threads ran or waited to run, over the
// interval's length. Not zero: a hung process still wakes now and then
// (the Go runtime's sysmon, the race detector's background thread), and
// each wake waits its turn on a busy machine.
const idleShare = 0.1

// Signal names the limit that fired.
type Signal string

const (
	SignalNone    Signal = ""
	SignalCPU     Signal = "cpu"
	SignalBlocked Signal = "blocked"
	SignalWall    Signal = "wall"
)

// taskTimes is one thread's cumulative times, from /proc/PID/task/TID/schedstat.
type taskTimes struct {
	Run  time.Duration // on a CPU
	Wait time.Duration // runnable, waiting on a run queue
}

// monitor turns samples of the watched tree into a verdict. It keeps each
// thread's last times, so a thread's share is counted once, and a thread
// first seen counts from zero (it began after the previous sample).
type monitor struct {
	lim  Limits
	last map[int]taskTimes
	at   time.Duration // the previous sample's time since the start

	CPU              time.Duration // used by the tree since the start
	CPUSinceProgress time.Duration // used since the last output
	BlockedFor       time.Duration // how long nothing ran or waited to run
	SinceProgress    time.Duration // wall time since the last output
}

func newMonitor(lim Limits) *monitor {
	return &monitor{lim: lim, last: map[int]taskTimes{}}
}

// observe takes the tree's threads at time at (since the start) and
// whether the command wrote output since the previous sample; it returns
// the limit that fired, if any.
func (m *monitor) observe(at time.Duration, tasks map[int]taskTimes, progressed bool) Signal {
	interval := at - m.at
	m.at = at
	var run, active time.Duration
	for tid, t := range tasks {
		p := m.last[tid]
		if t.Run < p.Run || t.Wait < p.Wait { // the id was reused by a new thread
			p = taskTimes{}
		}
		run += t.Run - p.Run
		active += t.Run - p.Run + t.Wait - p.Wait
	}
	m.last = tasks
	m.CPU += run
	m.CPUSinceProgress += run
	m.SinceProgress += interval
	if progressed {
		m.CPUSinceProgress, m.SinceProgress = 0, 0
	}
	if !progressed && float64(active) < idleShare*float64(interval) {
		m.BlockedFor += interval
	} else {
		m.BlockedFor = 0
	}
	switch {
	case m.lim.Blocked > 0 && m.BlockedFor >= m.lim.Blocked:
		return SignalBlocked
	case m.lim.CPU > 0 && m.CPUSinceProgress >= m.lim.CPU:
		return SignalCPU
	case m.lim.Wall > 0 && at >= m.lim.Wall:
		return SignalWall
	}
	return SignalNone
}

// explain is the verdict's first line: which limit fired, how long the
// command ran and the CPU it got.
func (m *monitor) explain(s Signal, ran time.Duration) string {
	var why string
	switch s {
	case SignalBlocked:
		why = fmt.Sprintf("the blocked limit: none of its threads ran or waited to run for %s (--blocked %s)",
			seconds(m.BlockedFor), seconds(m.lim.Blocked))
	case SignalCPU:
		why = fmt.Sprintf("the CPU limit: it used %s of CPU since its last output, %s ago (--cpu %s)",
			seconds(m.CPUSinceProgress), seconds(m.SinceProgress), seconds(m.lim.CPU))
	case SignalWall:
		why = fmt.Sprintf("the wall-clock cap (--wall %s), the last resort: it was neither blocked nor spinning without output",
			seconds(m.lim.Wall))
	}
	return fmt.Sprintf("ended by %s; it ran %s and used %s of CPU", why, seconds(ran), seconds(m.CPU))
}

// seconds prints d as "12.3 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1f s", d.Seconds())
}
