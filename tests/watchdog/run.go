package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ExitLimit is the watchdog's exit status when a limit ended the command,
// as timeout(1)'s.
const ExitLimit = 124

// How often the tree is sampled, and how long the processes get to end
// after SIGTERM (or SIGQUIT, which makes a Go test binary print every
// goroutine's stack) before SIGKILL.
const (
	sampleEvery = 250 * time.Millisecond
	graceAfter  = 5 * time.Second
)

// watch runs one command under Limits: its output passes through to
// Stdout and Stderr (a byte written is a sign of progress), and the
// watchdog's own lines go to Report.
type watch struct {
	Name           string
	Limits         Limits
	Stdout, Stderr io.Writer
	Report         io.Writer

	mu sync.Mutex // held for each write to any of the three: lines stay whole
}

// outcome is how a watched command ended.
type outcome struct {
	Exit    int    // its exit status, 128+N for signal N; ExitLimit when a limit ended it
	Fired   Signal // the limit that ended it, SignalNone if none
	Verdict string // the watchdog's lines about it ("" when no limit fired)
	Ran     time.Duration
	CPU     time.Duration
}

// progressWriter passes output on and notes that some came.
type progressWriter struct {
	to   io.Writer
	mu   *sync.Mutex
	seen *atomic.Bool
}

func (p progressWriter) Write(b []byte) (int, error) {
	p.seen.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.to.Write(b)
}

// pump copies r to w until r ends.
func pump(r io.Reader, w io.Writer, done *sync.WaitGroup) {
	defer done.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// run starts args and watches its whole tree (every descendant of this
// process) until the command ends or a limit fires.
func (w *watch) run(args []string) outcome {
	var seen atomic.Bool
	outR, outW, err1 := os.Pipe()
	errR, errW, err2 := os.Pipe()
	if err1 != nil || err2 != nil {
		w.say("watchdog: %s: cannot make pipes: %v %v\n", w.Name, err1, err2)
		return outcome{Exit: 2}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, outW, errW
	start := time.Now()
	if err := cmd.Start(); err != nil {
		w.say("watchdog: %s: %v\n", w.Name, err)
		return outcome{Exit: 127}
	}
	outW.Close()
	errW.Close()
	var pumps sync.WaitGroup
	pumps.Add(2)
	go pump(outR, progressWriter{w.Stdout, &w.mu, &seen}, &pumps)
	go pump(errR, progressWriter{w.Stderr, &w.mu, &seen}, &pumps)

	exited := make(chan *os.ProcessState, 1)
	go func() {
		cmd.Wait()
		exited <- cmd.ProcessState
	}()

	self := os.Getpid()
	m := newMonitor(w.Limits)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	var state *os.ProcessState
	fired := SignalNone
	var verdict string
	for state == nil && fired == SignalNone {
		select {
		case state = <-exited:
		case <-tick.C:
			tree := descendants(self)
			reapOrphans(tree, self, cmd.Process.Pid)
			fired = m.observe(time.Since(start), treeTimes(tree), seen.Swap(false))
			if fired != SignalNone {
				verdict = w.verdict(m, fired, time.Since(start), tree)
				w.say("%s", verdict)
				state = w.end(tree, cmd.Process.Pid, exited)
			}
		}
	}
	// What the command left running would hold its pipes open: end it.
	var left []member
	for _, p := range descendants(self) {
		if p.state != "Z" { // ended, not yet reaped: reapOrphans below
			left = append(left, p)
		}
	}
	if len(left) > 0 {
		var names []string
		for _, p := range left {
			names = append(names, fmt.Sprintf("%d %s", p.pid, p.name))
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
		w.say("watchdog: %s: killed what it left running: %s\n", w.Name, strings.Join(names, ", "))
	}
	if stuck := reapAll(self); len(stuck) > 0 {
		w.say("watchdog: %s: still there %v after SIGKILL (in the kernel, not waiting for it): %s\n", w.Name, graceAfter, strings.Join(stuck, ", "))
	}
	// Only a process outside the tree (one started elsewhere that was
	// handed the pipes) can still hold them open: do not wait for it.
	pumped := make(chan struct{})
	go func() { pumps.Wait(); close(pumped) }()
	select {
	case <-pumped:
	case <-time.After(graceAfter):
		w.say("watchdog: %s: its output is held open by a process outside its tree; not waiting for it\n", w.Name)
	}
	out := outcome{Fired: fired, Verdict: verdict, Ran: time.Since(start), CPU: m.CPU}
	switch {
	case fired != SignalNone:
		out.Exit = ExitLimit
	case state.Exited():
		out.Exit = state.ExitCode()
	default:
		out.Exit = 128 + int(state.Sys().(syscall.WaitStatus).Signal())
	}
	return out
}

// say writes the watchdog's own lines, between the command's.
func (w *watch) say(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintf(w.Report, format, args...)
}

// end stops the tree after a limit fired: SIGQUIT to Go test binaries
// (named *.test: they print every goroutine's stack on their stderr),
// SIGTERM to the rest but a test binary's ancestors, SIGKILL to whatever
// is left after graceAfter. The ancestors (go test, the shell that ran it)
// end on their own once the binary has: go test prints the binary's
// output, the stacks with it, only when the binary ends, and SIGTERM
// would end go test first and lose them. It returns once the command has
// ended and the rest of the tree with it.
func (w *watch) end(tree []member, command int, exited <-chan *os.ProcessState) *os.ProcessState {
	parent := map[int]int{}
	for _, p := range tree {
		parent[p.pid] = p.ppid
	}
	spare := map[int]bool{}
	for _, p := range tree {
		if goTest(p) {
			for a, ok := parent[p.pid]; ok; a, ok = parent[a] {
				spare[a] = true
			}
		}
	}
	for _, p := range tree {
		switch {
		case goTest(p):
			syscall.Kill(p.pid, syscall.SIGQUIT)
		case !spare[p.pid]:
			syscall.Kill(p.pid, syscall.SIGTERM)
		}
	}
	var state *os.ProcessState
	deadline := time.Now().Add(graceAfter)
	for {
		select {
		case s := <-exited:
			state = s
		case <-time.After(sampleEvery / 5):
		}
		self := os.Getpid()
		left := descendants(self)
		live := 0
		for _, p := range left {
			if p.state != "Z" {
				live++
				if time.Now().After(deadline) {
					syscall.Kill(p.pid, syscall.SIGKILL)
				}
			}
		}
		reapOrphans(left, self, command) // never the command: exec.Cmd.Wait reaps it
		if state != nil && live == 0 {
			return state
		}
	}
}

// reapAll reaps what is left of the command's tree once it has been sent
// SIGKILL: until no descendant of self remains, it reaps every zombie
// that became self's child (a killed process's own children come to self
// as their parent dies, so one pass is not enough). It waits for the
// kills to land, however long a loaded machine takes to deliver them,
// and gives up only after graceAfter with processes that SIGKILL has not
// ended at all (stuck in the kernel), which it returns.
func reapAll(self int) (stuck []string) {
	deadline := time.Now().Add(graceAfter)
	for {
		tree := descendants(self)
		if len(tree) == 0 {
			return nil
		}
		reapOrphans(tree, self, -1)
		if time.Now().After(deadline) {
			for _, p := range tree {
				stuck = append(stuck, fmt.Sprintf("%d %s (%s)", p.pid, p.name, p.state))
			}
			return stuck
		}
		time.Sleep(sampleEvery / 25)
	}
}

// reapOrphans waits for the zombies that became this process's children
// (it is their subreaper) other than the command itself, which
// exec.Cmd.Wait reaps.
func reapOrphans(tree []member, self, command int) {
	for _, p := range tree {
		if p.ppid == self && p.pid != command && p.state == "Z" {
			var ws syscall.WaitStatus
			syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// verdict is what the watchdog says when a limit fires: the limit, how
// long the command ran and its CPU, then where each thread was.
func (w *watch) verdict(m *monitor, s Signal, ran time.Duration, tree []member) string {
	var b strings.Builder
	fmt.Fprintf(&b, "watchdog: %s: %s\n", w.Name, m.explain(s, ran))
	procs := describe(tree)
	fmt.Fprintf(&b, "watchdog: %s: where its threads were (%s; state, system call, kernel function):\n", w.Name, plural(len(procs), "process", "processes"))
	for _, p := range procs {
		fmt.Fprintf(&b, "watchdog:   pid %d %s (parent %d): %s\n", p.pid, p.name, p.ppid, threadGroups(p.threads))
	}
	return b.String()
}

// threadGroups says where a process's threads were, one group per place:
// "2 threads S in futex (futex_wait_queue): 101 102".
func threadGroups(ts []thread) string {
	type group struct {
		place string
		tids  []int
	}
	var groups []group
	index := map[string]int{}
	for _, t := range ts {
		place := t.state
		switch {
		case t.state == "R":
			place += " running or waiting to run"
		case t.syscall != "" && t.wchan != "":
			place += " in " + t.syscall + " (" + t.wchan + ")"
		case t.syscall != "":
			place += " in " + t.syscall
		case t.wchan != "":
			place += " in " + t.wchan
		}
		i, ok := index[place]
		if !ok {
			i = len(groups)
			index[place] = i
			groups = append(groups, group{place: place})
		}
		groups[i].tids = append(groups[i].tids, t.tid)
	}
	if len(groups) == 0 {
		return "ended while it was read"
	}
	var parts []string
	for _, g := range groups {
		ids := g.tids
		more := ""
		if len(ids) > 8 {
			ids, more = ids[:8], " ..."
		}
		parts = append(parts, fmt.Sprintf("%s %s: %s%s", plural(len(g.tids), "thread", "threads"), g.place, strings.Trim(fmt.Sprint(ids), "[]"), more))
	}
	return strings.Join(parts, "; ")
}

// plural is "1 thread" or "3 threads".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
