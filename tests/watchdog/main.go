// Command watchdog runs make test's steps and the commands inside them
// under limits that detect a hang without timing the machine: CPU used
// since the last output (a spin), no thread running or waiting to run (a
// deadlock or a sleep), and a wall-clock cap only as the last resort.
// When a limit ends something it says which, how long it ran, its CPU and
// where each of its threads was (docs/testing.md, "Limits").
//
//	watchdog run [--name NAME] [--cpu D] [--blocked D] [--wall D] -- COMMAND [ARG...]
//	watchdog steps [--table FILE] [--junit FILE] [--logs DIR] [--fail-fast] [STEP...]
//
// It is a test tool of this repository (built as build/watchdog by the
// Makefile), Linux only: it reads /proc.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nccomring/libnccomring/internal/cli"
)

const (
	runUsage   = "run [--name NAME] [--cpu D] [--blocked D] [--wall D] -- COMMAND [ARG...]"
	stepsUsage = "steps [--table FILE] [--junit FILE] [--logs DIR] [--fail-fast] [STEP...]"
)

// commands is the tool's one table: name, usage, what it does, and its
// function (the arguments after the name; it returns the exit status).
var commands = []struct {
	name, usage, short string
	run                func(args []string, stdout, stderr io.Writer) int
}{
	{"run", runUsage,
		"run COMMAND under the three limits; exit with its status, or 124 when a limit ended it", runCommand},
	{"steps", stepsUsage,
		"run make test's steps (all, or those named) one after another, each in make STEP under its limits; a table of every step; exit 1 when one failed", runSteps},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: watchdog COMMAND [FLAGS] [ARGS]")
	for _, c := range commands {
		fmt.Fprintf(w, "\n  watchdog %s\n      %s\n", c.usage, c.short)
	}
	fmt.Fprintln(w, `
Durations are Go's ("90s", "2m") or seconds ("90"); 0 turns a limit off.
Exit: run: the command's status (128+N for signal N), 124 when a limit
ended it, 2 for a bad command line; steps: 0 every step passed or
skipped, 1 one failed, 2 an unusable table.`)
}

func main() {
	becomeSubreaper()
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// becomeSubreaper makes the orphans of the watched commands this
// process's children, so they stay in the tree it watches and ends.
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return cli.ExitUnusable
		}
		return cli.ExitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "watchdog: no command %q\n", args[0])
	usage(stderr)
	return cli.ExitUnusable
}

// durationFlag reads "90s", "2m" or "90" (seconds).
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil && n >= 0 {
		*f.d = time.Duration(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration", s)
	}
	*f.d = d
	return nil
}

// parse parses fs over args; it returns the status to exit with when
// parsing ends the command (help, a bad flag), else -1.
func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, usageLine string) ([]string, int) {
	rest, err := cli.Parse(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(stdout, "usage: watchdog %s\n", usageLine)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return nil, cli.ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "watchdog: %v\nusage: watchdog %s\n", err, usageLine)
		return nil, cli.ExitUnusable
	}
	return rest, -1
}

func runCommand(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("run")
	lim := Limits{CPU: 10 * time.Minute, Blocked: 60 * time.Second, Wall: 60 * time.Minute}
	name := fs.String("name", "", "what to call the command in the watchdog's lines (default: its file name)")
	fs.Var(durationFlag{&lim.CPU}, "cpu", "CPU its processes may use since their last output (default 10m)")
	fs.Var(durationFlag{&lim.Blocked}, "blocked", "how long none of its threads may run or wait to run (default 60s)")
	fs.Var(durationFlag{&lim.Wall}, "wall", "the wall-clock cap, the last resort (default 60m)")
	rest, code := parse(fs, args, stdout, stderr, runUsage)
	if code >= 0 {
		return code
	}
	if len(rest) == 0 {
		fmt.Fprintf(stderr, "watchdog run: no command\nusage: watchdog %s\n", runUsage)
		return cli.ExitUnusable
	}
	if *name == "" {
		*name = rest[0][strings.LastIndexByte(rest[0], '/')+1:]
	}
	w := &watch{Name: *name, Limits: lim, Stdout: os.Stdout, Stderr: os.Stderr, Report: os.Stderr}
	return w.run(rest).Exit
}

func runSteps(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("steps")
	table := fs.String("table", "mk/test-steps.txt", "the steps table: NAME QUIET [OUTPUT...] a line")
	junitPath := fs.String("junit", "build/test-results.xml", "the JUnit file: one testcase a step")
	logs := fs.String("logs", "build/test-logs", "where each step's output goes, as STEP.log")
	failFast := fs.Bool("fail-fast", false, "stop at the first step that fails (the rest: not run)")
	makeCmd := fs.String("make", "make", "the make to run each step with")
	only, code := parse(fs, args, stdout, stderr, stepsUsage)
	if code >= 0 {
		return code
	}
	steps, budget, err := readSteps(*table)
	if err == nil && len(only) > 0 {
		steps, err = selectSteps(steps, only)
	}
	if err != nil {
		fmt.Fprintf(stderr, "watchdog steps: %v\n", err)
		return cli.ExitUnusable
	}
	if err := os.MkdirAll(*logs, 0o755); err != nil {
		fmt.Fprintf(stderr, "watchdog steps: %v\n", err)
		return cli.ExitUnusable
	}
	os.Remove(*junitPath)
	r := &runner{Make: *makeCmd, Logs: *logs, FailFast: *failFast, Out: stdout}
	start := time.Now()
	results := r.run(steps)
	ok := summary(stdout, results, time.Since(start), budget)
	if err := writeResults(*junitPath, results); err != nil {
		fmt.Fprintf(stderr, "watchdog steps: %v\n", err)
		return cli.ExitFinding
	}
	fmt.Fprintf(stdout, "make test: %s (one testcase a step), each step's output in %s/STEP.log\n", *junitPath, *logs)
	if !ok {
		return cli.ExitFinding
	}
	return cli.ExitOK
}

// selectSteps keeps the steps named, in the table's order.
func selectSteps(steps []step, names []string) ([]step, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []step
	for _, s := range steps {
		if want[s.Name] {
			out = append(out, s)
			delete(want, s.Name)
		}
	}
	for n := range want {
		return nil, fmt.Errorf("no step %q in the table", n)
	}
	return out, nil
}
