// Package cli is what the project's command-line tools (nccom-abi,
// nccom-rings) share: the exit codes each documents in its --help, and
// flags parsed anywhere among the operands.
package cli

import (
	"flag"
	"io"
	"strings"
)

// Exit codes, one meaning each so scripts can branch on them.
const (
	ExitOK       = 0 // nothing found
	ExitFinding  = 1 // the input was read and something in it is wrong
	ExitUnusable = 2 // the input (or the command line) could not be used
)

// NewFlagSet makes a command's flag set that prints nothing itself: the
// tool prints its usage, --help to stdout with ExitOK and a bad flag to
// stderr with ExitUnusable, after Parse returns.
func NewFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// Parse parses fs's flags anywhere among args, not only before the first
// operand as package flag does (`nccom-rings verify DIR --json` is how
// people type it), and returns the operands in order; everything after
// "--" is an operand. err is flag.ErrHelp for -h or --help, else the
// flag package's error for a bad flag.
func Parse(fs *flag.FlagSet, args []string) (operands []string, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 || stoppedAtTerminator(fs, args[:len(args)-len(rest)]) {
			return append(operands, rest...), nil
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// stoppedAtTerminator reports whether the arguments package flag consumed
// end with the "--" that ends the flags, not with "--" as the value of a
// flag that takes one (-channel --).
func stoppedAtTerminator(fs *flag.FlagSet, consumed []string) bool {
	n := len(consumed)
	if n == 0 || consumed[n-1] != "--" {
		return false
	}
	if n == 1 || !strings.HasPrefix(consumed[n-2], "-") {
		return true
	}
	name := strings.TrimPrefix(strings.TrimPrefix(consumed[n-2], "-"), "-")
	f := fs.Lookup(name) // nil for -name=value
	if f == nil {
		return true
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
