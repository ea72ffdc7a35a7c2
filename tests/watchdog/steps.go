package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nccomring/libnccomring/internal/junit"
)

// A step of make test, as the steps table (mk/test-steps.txt) gives it.
type step struct {
	Name    string
	Quiet   time.Duration // how long it takes alone on a quiet 2-core machine
	Outputs []string      // files it promises CI (written for it when it does not)
	Set     Limits        // limits the table sets itself (cpu=, blocked=, wall=); zero: from Quiet
}

// The limits a step runs under, from its quiet duration: a wall-clock cap
// of ten times it (at least minWall: a spin starved at load 14 took 9 min
// to use minCPU, and the CPU limit should be the one that names it), CPU
// since the last output of ten times it (a step uses at most two CPUs'
// worth of it on the machine it was measured on; at least minCPU), and
// blockedLimit with no thread running or waiting to run. The limits of the commands inside a step
// (mk/watch.mk) are tighter, and say more of what hung.
const (
	minWall      = 20 * time.Minute
	minCPU       = 2 * time.Minute
	blockedLimit = 90 * time.Second
)

func (s step) limits() Limits {
	lim := Limits{
		CPU:     max(10*s.Quiet, minCPU),
		Blocked: blockedLimit,
		Wall:    max(10*s.Quiet, minWall),
	}
	for _, set := range []struct{ from, to *time.Duration }{
		{&s.Set.CPU, &lim.CPU}, {&s.Set.Blocked, &lim.Blocked}, {&s.Set.Wall, &lim.Wall},
	} {
		if *set.from > 0 {
			*set.to = *set.from
		}
	}
	return lim
}

// readSteps reads the steps table: one step a line, "NAME QUIET
// [OUTPUT...] [cpu=D] [blocked=D] [wall=D]", durations as Go's ("2m30s");
// # starts a comment. The line "budget DURATION" is make test's time
// budget on a quiet machine.
func readSteps(path string) (steps []step, budget time.Duration, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) < 2 {
			return nil, 0, fmt.Errorf("%s:%d: want NAME QUIET [OUTPUT...]", path, n)
		}
		d, err := time.ParseDuration(fields[1])
		if err != nil || d <= 0 {
			return nil, 0, fmt.Errorf("%s:%d: %q is not a duration", path, n, fields[1])
		}
		if fields[0] == "budget" {
			budget = d
			continue
		}
		st := step{Name: fields[0], Quiet: d, Outputs: []string{}}
		for _, f := range fields[2:] {
			key, value, isSetting := strings.Cut(f, "=")
			if !isSetting {
				st.Outputs = append(st.Outputs, f)
				continue
			}
			to := map[string]*time.Duration{"cpu": &st.Set.CPU, "blocked": &st.Set.Blocked, "wall": &st.Set.Wall}[key]
			v, err := time.ParseDuration(value)
			if to == nil || err != nil || v <= 0 {
				return nil, 0, fmt.Errorf("%s:%d: %q: want cpu=, blocked= or wall= and a duration", path, n, f)
			}
			*to = v
		}
		steps = append(steps, st)
	}
	return steps, budget, sc.Err()
}

// result is how one step ended.
type result struct {
	step
	Status  string // passed, skipped, FAILED, not run
	Why     string // one line: what failed, or what was skipped
	Detail  string // for the JUnit file: the watchdog's lines and the log's last lines
	Elapsed time.Duration
}

// skipLine is how a step says it skipped a check: "STEP: skipped: WHY".
var skipLine = regexp.MustCompile(`(?m)^[A-Za-z0-9_.-]+: skipped: (.*)$`)

// runner runs steps one after another, each under its watchdog, in make
// processes of their own (make STEP), every one even after one fails
// unless FailFast.
type runner struct {
	Make     string // the make command, split at spaces ("make -f FILE")
	Logs     string // each step's output, as STEP.log
	FailFast bool
	Out      io.Writer
}

func (r *runner) run(steps []step) []result {
	return r.runWith(steps, step.limits)
}

// runWith is run with each step's limits from limitsOf.
func (r *runner) runWith(steps []step, limitsOf func(step) Limits) []result {
	var results []result
	start := time.Now()
	failed := ""
	for _, s := range steps {
		if failed != "" && r.FailFast {
			results = append(results, result{step: s, Status: "not run", Why: "FAIL_FAST=1 and " + failed + " failed"})
			continue
		}
		t := time.Since(start)
		fmt.Fprintf(r.Out, "\n== make test: %s  [%s]\n", s.Name, minutes(t))
		res := r.one(s, limitsOf(s))
		fmt.Fprintf(r.Out, "make test: %s %s in %s (quiet: %s)%s\n", s.Name, res.Status, minutes(res.Elapsed), minutes(s.Quiet), suffix(res.Why))
		if res.Status == "FAILED" && failed == "" {
			failed = s.Name
		}
		results = append(results, res)
	}
	return results
}

func suffix(why string) string {
	if why == "" {
		return ""
	}
	return ": " + why
}

// one runs step s: its output to r.Out and to its log.
func (r *runner) one(s step, lim Limits) result {
	for _, o := range s.Outputs {
		os.Remove(o)
	}
	logPath := filepath.Join(r.Logs, s.Name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return result{step: s, Status: "FAILED", Why: err.Error()}
	}
	defer log.Close()
	var tail tailBuffer
	to := io.MultiWriter(r.Out, log, &tail)
	w := &watch{Name: s.Name, Limits: lim, Stdout: to, Stderr: to, Report: to}
	o := w.run(append(strings.Fields(r.Make), "--no-print-directory", s.Name))
	res := result{step: s, Elapsed: o.Ran}
	var why []string
	for _, m := range skipLine.FindAllStringSubmatch(tail.skips.String(), -1) {
		why = append(why, m[1])
	}
	switch {
	case o.Fired != SignalNone:
		res.Status = "FAILED"
		res.Why = fmt.Sprintf("the %s limit ended it (%s ran, %s of CPU)", o.Fired, minutes(o.Ran), seconds(o.CPU))
	case o.Exit != 0:
		res.Status = "FAILED"
		res.Why = fmt.Sprintf("exit %d: %s", o.Exit, tail.why())
	case len(why) > 0:
		res.Status = "skipped"
		res.Why = strings.Join(why, "; ")
	default:
		res.Status = "passed"
	}
	for _, out := range s.Outputs {
		if _, err := os.Stat(out); err != nil {
			note := fmt.Sprintf("%s did not write %s", s.Name, out)
			if writeStandIn(out, s.Name, res) == nil {
				note += " (a stand-in saying so is there)"
			}
			fmt.Fprintf(r.Out, "make test: %s\n", note)
			if res.Status != "FAILED" {
				res.Status, res.Why = "FAILED", note
			}
		}
	}
	if res.Status == "FAILED" {
		res.Detail = o.Verdict + tail.String()
	}
	return res
}

// writeStandIn writes, in place of an output a step promised and did not
// write, a file of the same kind saying so: CI then reads a failure, not
// a missing file or last run's.
func writeStandIn(path, stepName string, res result) error {
	msg := fmt.Sprintf("make test: %s did not write this file (%s: %s)", stepName, res.Status, res.Why)
	if strings.HasSuffix(path, ".json") {
		b := []byte(fmt.Sprintf("{\"result\": \"error\", \"exit_status\": 2, \"error\": %s}\n", strconv.Quote(msg)))
		return os.WriteFile(path, b, 0o644)
	}
	return junit.WriteFile(path, junit.Suite{Name: stepName, Cases: []junit.Case{{Name: stepName, Classname: "make-test", Error: msg}}})
}

// tailBuffer keeps a step's last lines (for the failure's detail), every
// line that says it skipped something, and the first of Go's test
// failures ("--- FAIL: TestX"), which say more than the lines after them.
type tailBuffer struct {
	lines     []string
	partial   []byte
	skips     bytes.Buffer
	goFailure string
}

const tailLines = 40

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		line := string(t.partial[:i])
		t.partial = t.partial[i+1:]
		if skipLine.MatchString(line) {
			t.skips.WriteString(line + "\n")
		}
		if t.goFailure == "" && strings.HasPrefix(strings.TrimSpace(line), "--- FAIL: ") {
			t.goFailure = strings.TrimSpace(line)
		}
		t.lines = append(t.lines, line)
		if len(t.lines) > tailLines {
			t.lines = t.lines[len(t.lines)-tailLines:]
		}
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	return strings.Join(append(t.lines, string(t.partial)), "\n")
}

// why is a failed step's one line: its first Go test failure, else its
// last line that is not make's own "Error N" (which says which recipe
// line failed, not why) nor go test's bare "FAIL".
func (t *tailBuffer) why() string {
	if t.goFailure != "" {
		return t.goFailure
	}
	for i := len(t.lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(t.lines[i])
		if l != "" && l != "FAIL" && !strings.HasPrefix(l, "make") {
			if len(l) > 160 {
				l = l[:157] + "..."
			}
			return l
		}
	}
	return "no output"
}

// minutes prints d as make test always has: "2m05s".
func minutes(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%dm%02ds", s/60, s%60)
}

// summary prints the table of every step and the closing line, and
// returns whether every step passed or skipped.
func summary(w io.Writer, results []result, total, budget time.Duration) bool {
	fmt.Fprintf(w, "\nmake test: every step (QUIET: its time in make test on a quiet 2-core machine, mk/test-steps.txt)\n")
	fmt.Fprintf(w, "  %-26s %-8s %7s %7s  %s\n", "STEP", "RESULT", "TIME", "QUIET", "WHY")
	var quiet time.Duration
	counts := map[string]int{}
	var failed []string
	for _, r := range results {
		quiet += r.Quiet
		counts[r.Status]++
		if r.Status == "FAILED" {
			failed = append(failed, r.Name)
		}
		fmt.Fprintf(w, "  %-26s %-8s %7s %7s  %s\n", r.Name, r.Status, minutes(r.Elapsed), minutes(r.Quiet), r.Why)
	}
	var parts []string
	for _, s := range []string{"passed", "skipped", "FAILED", "not run"} {
		if counts[s] > 0 {
			part := fmt.Sprintf("%d %s", counts[s], strings.ToLower(s))
			if s == "FAILED" {
				part = fmt.Sprintf("%d FAILED (%s)", counts[s], strings.Join(failed, ", "))
			}
			parts = append(parts, part)
		}
	}
	over := ""
	if budget > 0 && quiet > budget {
		over = " (OVER: move open-ended work to a target of its own)"
	}
	fmt.Fprintf(w, "make test: %s of %d steps in %s; quiet, they take %s of the %s budget%s\n",
		strings.Join(parts, ", "), len(results), minutes(total), minutes(quiet), minutes(budget), over)
	return len(failed) == 0
}

// writeResults writes the JUnit file of make test: one testcase a step.
func writeResults(path string, results []result) error {
	s := junit.Suite{Name: "make test"}
	for _, r := range results {
		c := junit.Case{Name: r.Name, Classname: "make-test", Seconds: r.Elapsed.Seconds(), Detail: r.Detail}
		switch r.Status {
		case "FAILED":
			c.Failure = r.Why
		case "skipped", "not run":
			c.Skipped = r.Why
		}
		s.Cases = append(s.Cases, c)
	}
	return junit.WriteFile(path, s)
}
