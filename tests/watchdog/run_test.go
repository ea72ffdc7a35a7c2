package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nccomring/libnccomring/internal/junit"
)

func TestMain(m *testing.M) {
	becomeSubreaper() // as main does: what a command leaves running stays in the tree
	os.Exit(m.Run())
}

// runWatched runs sh -c script under lim; it returns the outcome and
// everything written (the command's output and the watchdog's lines).
func runWatched(t *testing.T, lim Limits, script string) (outcome, string) {
	t.Helper()
	var out bytes.Buffer
	w := &watch{Name: "probe", Limits: lim, Stdout: &out, Stderr: &out, Report: &out}
	o := w.run([]string{"sh", "-c", script})
	return o, out.String()
}

// No limit reached: the command's status, 128+N for a signal, its output.
func TestRunPassesTheStatusThrough(t *testing.T) {
	var stdout, stderr bytes.Buffer
	w := &watch{Name: "probe", Limits: Limits{Blocked: time.Minute}, Stdout: &stdout, Stderr: &stderr, Report: &stderr}
	o := w.run([]string{"sh", "-c", "echo one; echo two >&2; echo three; exit 3"})
	assert.Equal(t, 3, o.Exit)
	assert.Equal(t, SignalNone, o.Fired)
	assert.Equal(t, "one\nthree\n", stdout.String())
	assert.Equal(t, "two\n", stderr.String())
	o, _ = runWatched(t, Limits{}, "kill -9 $$")
	assert.Equal(t, 128+9, o.Exit)
}

// A sleep is blocked: no CPU, no run-queue wait. The report says so and
// where each thread was: sh in wait4, sleep in clock_nanosleep.
func TestRunBlockedNamesWhereItWaited(t *testing.T) {
	o, out := runWatched(t, Limits{CPU: time.Hour, Blocked: time.Second, Wall: time.Hour}, "echo started; sleep 600")
	assert.Equal(t, ExitLimit, o.Exit)
	assert.Equal(t, SignalBlocked, o.Fired)
	assert.Contains(t, out, "started\nwatchdog: probe: ended by the blocked limit: none of its threads ran or waited to run for ")
	assert.Regexp(t, `watchdog:   pid \d+ sh \(parent \d+\): 1 thread S in wait4 \(do_wait\): \d+\n`, out)
	assert.Regexp(t, `watchdog:   pid \d+ sleep \(parent \d+\): 1 thread S in (clock_)?nanosleep \(\w*nanosleep\w*\): \d+\n`, out)
	assert.Equal(t, o.Verdict, out[len("started\n"):], "the verdict is the lines printed")
}

// A loop without output spins: it reaches the CPU limit whatever else
// the machine runs, however long that takes by the clock.
func TestRunSpinReachesTheCPULimit(t *testing.T) {
	o, out := runWatched(t, Limits{CPU: 300 * time.Millisecond, Blocked: time.Hour, Wall: time.Hour}, "while :; do :; done")
	assert.Equal(t, ExitLimit, o.Exit)
	assert.Equal(t, SignalCPU, o.Fired)
	assert.GreaterOrEqual(t, o.CPU, 300*time.Millisecond)
	assert.Contains(t, out, "watchdog: probe: ended by the CPU limit: it used ")
	assert.Regexp(t, `pid \d+ sh \(parent \d+\): 1 thread R running or waiting to run: \d+`, out)
}

// What the command leaves running is ended and named, so it cannot hold
// the output open or outlive the step.
func TestRunEndsWhatTheCommandLeftRunning(t *testing.T) {
	o, out := runWatched(t, Limits{Blocked: time.Hour}, "sleep 600 & echo $! > /dev/null; exit 0")
	assert.Equal(t, 0, o.Exit)
	assert.Regexp(t, `watchdog: probe: killed what it left running: \d+ (sleep|sh)\n`, out)
	assert.Empty(t, descendants(os.Getpid()), "nothing left, not even a zombie")
}

// A Go test binary gets SIGQUIT (its goroutines' stacks), whether stat's
// name holds all of PKG.test or only its first 15 bytes.
func TestGoTestByNameOrCommandLine(t *testing.T) {
	root := t.TempDir()
	for pid, cmdline := range map[string]string{
		"41": "/tmp/go-build1/b001/ringdump.test\x00-test.v\x00",
		"42": "/tmp/go-build1/b001/nccom-rings.test\x00-test.timeout=10m0s\x00",
		"43": "sh\x00-c\x00echo x.test\x00",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, pid), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, pid, "cmdline"), []byte(cmdline), 0o644))
	}
	old := procRoot
	procRoot = root
	defer func() { procRoot = old }()
	assert.True(t, goTest(member{pid: 41, name: "ringdump.test"}))
	assert.True(t, goTest(member{pid: 42, name: "nccom-rings.tes"}))
	assert.False(t, goTest(member{pid: 43, name: "sh"}))
	assert.False(t, goTest(member{pid: 44, name: "gone"}), "a process that ended")
}

// A Go test binary gets SIGQUIT and its ancestors no signal: go test
// prints the binary's output (the stacks SIGQUIT made) only once the
// binary has ended, so it must outlive it. Here a stand-in PKG.test (a
// copy of sleep) under a shell that speaks when it ends.
func TestRunLetsGoTestPrintTheStacks(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	b, err := os.ReadFile(sleep)
	require.NoError(t, err)
	fake := filepath.Join(t.TempDir(), "nccom-rings.test")
	require.NoError(t, os.WriteFile(fake, b, 0o755))
	o, out := runWatched(t, Limits{CPU: time.Hour, Blocked: time.Second, Wall: time.Hour},
		fake+" 600; echo \"the test binary ended: $?\"")
	assert.Equal(t, ExitLimit, o.Exit)
	assert.Equal(t, SignalBlocked, o.Fired)
	assert.Contains(t, out, "the test binary ended: 131\n", "131: SIGQUIT; the shell lived to say so")
}

// fakeMake writes a make that runs each step as the script says: ok
// passes, skip says it skipped a check, fail fails, hang sleeps.
func fakeMake(t *testing.T, dir string) string {
	path := filepath.Join(dir, "make")
	script := `#!/bin/sh
step=$2
case $step in
  ok) echo "ok: fine"; echo out > "` + dir + `/ok.json" ;;
  skip) echo "skip: skipped: the browser check: chromium is a stub"; echo "skip: rest passed" ;;
  fail) echo "fail: the table says 4"; echo "make: *** [Makefile:1: fail] Error 1"; exit 2 ;;
  gofail) echo "--- FAIL: TestA (0.01s)"; echo "    a_test.go:3: 4 != 5"; echo "--- FAIL: TestB (0.00s)"; echo FAIL; echo "FAIL	pkg	0.1s"; echo FAIL; exit 2 ;;
  hang) echo "hang: waiting"; sleep 600 ;;
esac
`
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

// Every step runs, even after one fails; the table and the JUnit file
// say passed, skipped and why, FAILED and why; a promised output the
// step did not write is written for it, saying so.
func TestStepsRunEveryStepAndReportIt(t *testing.T) {
	dir := t.TempDir()
	steps := []step{
		{Name: "fail", Quiet: time.Second, Outputs: []string{filepath.Join(dir, "fail.xml")}},
		{Name: "skip", Quiet: time.Second},
		{Name: "ok", Quiet: 2 * time.Second, Outputs: []string{filepath.Join(dir, "ok.json")}},
	}
	var out bytes.Buffer
	r := &runner{Make: fakeMake(t, dir), Logs: dir, Out: &out}
	results := r.run(steps)
	require.Len(t, results, 3)
	assert.Equal(t, []string{"FAILED", "skipped", "passed"}, []string{results[0].Status, results[1].Status, results[2].Status})
	assert.Equal(t, "exit 2: fail: the table says 4", results[0].Why)
	assert.Equal(t, "the browser check: chromium is a stub", results[1].Why)
	// The table prints each step's time: fixed here, since how long a step
	// takes is the machine's.
	for i := range results {
		results[i].Elapsed = time.Duration(i+1) * time.Second
	}
	ok := summary(&out, results, 3*time.Second, 20*time.Minute)
	assert.False(t, ok)
	assert.Contains(t, out.String(), "  skip                       skipped    0m02s   0m01s  the browser check: chromium is a stub\n")
	assert.Contains(t, out.String(), "make test: 1 passed, 1 skipped, 1 FAILED (fail) of 3 steps in 0m03s; quiet, they take 0m04s of the 20m00s budget\n")

	// The failing step's promised JUnit file: a stand-in with its error.
	b, err := os.ReadFile(filepath.Join(dir, "fail.xml"))
	require.NoError(t, err)
	stand, err := junit.Parse(b)
	require.NoError(t, err)
	assert.Equal(t, "make test: fail did not write this file (FAILED: exit 2: fail: the table says 4)", stand.Cases[0].Error)
	log, err := os.ReadFile(filepath.Join(dir, "skip.log"))
	require.NoError(t, err)
	assert.Equal(t, "skip: skipped: the browser check: chromium is a stub\nskip: rest passed\n", string(log))

	path := filepath.Join(dir, "results.xml")
	require.NoError(t, writeResults(path, results))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	doc, err := junit.Parse(b)
	require.NoError(t, err)
	tests, failures, errs := doc.Counts()
	assert.Equal(t, [3]int{3, 1, 0}, [3]int{tests, failures, errs})
	assert.Equal(t, "the browser check: chromium is a stub", doc.Cases[1].Skipped)
	assert.Contains(t, string(b), "make: *** [Makefile:1: fail] Error 1", "the failure's text is the log's tail")
}

// A Go test's failure is the step's one line: the first "--- FAIL", not
// go test's closing FAIL.
func TestStepsSayWhichGoTestFailed(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	r := &runner{Make: fakeMake(t, dir), Logs: dir, Out: &out}
	results := r.run([]step{{Name: "gofail"}})
	assert.Equal(t, "exit 2: --- FAIL: TestA (0.01s)", results[0].Why)
}

// FAIL_FAST=1: the steps after the first failure are not run, and say why.
func TestStepsFailFast(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	r := &runner{Make: fakeMake(t, dir), Logs: dir, Out: &out, FailFast: true}
	results := r.run([]step{{Name: "ok"}, {Name: "fail"}, {Name: "skip"}})
	assert.Equal(t, "not run", results[2].Status)
	assert.Equal(t, "FAIL_FAST=1 and fail failed", results[2].Why)
	assert.NotContains(t, out.String(), "== make test: skip")
}

// A step that hangs is ended by its limit and reported as such; the steps
// after it still run.
func TestStepsAHangingStepIsReportedByItsLimit(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	r := &runner{Make: fakeMake(t, dir), Logs: dir, Out: &out}
	hang := step{Name: "hang", Quiet: time.Second}
	results := r.runWith([]step{hang, {Name: "ok"}}, func(s step) Limits {
		if s.Name == "hang" {
			return Limits{CPU: time.Hour, Blocked: time.Second, Wall: time.Hour}
		}
		return s.limits()
	})
	assert.Equal(t, "FAILED", results[0].Status)
	assert.True(t, strings.HasPrefix(results[0].Why, "the blocked limit ended it ("), results[0].Why)
	assert.Contains(t, results[0].Detail, "sleep (parent ")
	assert.Equal(t, "passed", results[1].Status)
}

func TestReadSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "steps.txt")
	require.NoError(t, os.WriteFile(path, []byte("# comment\nbudget 20m\n\ntest-go 150s # note\ntest-cmake 40s build/ctest-junit.xml\nhang 1s blocked=5s cpu=3s\n"), 0o644))
	steps, budget, err := readSteps(path)
	require.NoError(t, err)
	assert.Equal(t, 20*time.Minute, budget)
	assert.Equal(t, []step{{Name: "test-go", Quiet: 150 * time.Second, Outputs: []string{}},
		{Name: "test-cmake", Quiet: 40 * time.Second, Outputs: []string{"build/ctest-junit.xml"}},
		{Name: "hang", Quiet: time.Second, Outputs: []string{}, Set: Limits{CPU: 3 * time.Second, Blocked: 5 * time.Second}}}, steps)
	assert.Equal(t, Limits{CPU: 3 * time.Second, Blocked: 5 * time.Second, Wall: 20 * time.Minute}, steps[2].limits())
	assert.Equal(t, Limits{CPU: 25 * time.Minute, Blocked: 90 * time.Second, Wall: 25 * time.Minute}, steps[0].limits())
	assert.Equal(t, Limits{CPU: 400 * time.Second, Blocked: 90 * time.Second, Wall: 20 * time.Minute}, steps[1].limits())
	assert.Equal(t, Limits{CPU: 2 * time.Minute, Blocked: 90 * time.Second, Wall: 20 * time.Minute}, step{Quiet: time.Second}.limits())
	require.NoError(t, os.WriteFile(path, []byte("test-go soon\n"), 0o644))
	_, _, err = readSteps(path)
	assert.EqualError(t, err, path+`:1: "soon" is not a duration`)
	require.NoError(t, os.WriteFile(path, []byte("test-go 1s idle=5s\n"), 0o644))
	_, _, err = readSteps(path)
	assert.EqualError(t, err, path+`:1: "idle=5s": want cpu=, blocked= or wall= and a duration`)
}
