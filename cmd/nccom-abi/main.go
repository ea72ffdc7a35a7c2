// Command nccom-abi checks a libnccom build against the layout libnccomring
// assumes (layout/, D2 and D3), from that build's own DWARF, and tells
// whether LD_PRELOAD can replace its four ring-stage functions.
//
//	nccom-abi check [--json] [--junit F] LIB   compare the ring-stage structs with layout/
//	nccom-abi preload [--json] [--junit F] LIB can LD_PRELOAD replace the four functions?
//	nccom-abi dump [--json] LIB [STRUCT...]  pahole-style listing
//	nccom-abi profile LIB > layout.json  the ASSUMED ncclComm offsets LIB has
//
// It reads the file with debug/elf and debug/dwarf only and never loads or
// runs it. Exit codes: 0 nothing to report, 1 a finding (a mismatch, a
// function preloading cannot fully replace, a missing field), 2 unusable
// input or usage (not ELF, no DWARF, a struct missing entirely, bad flags).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nccomring/libnccomring/abicheck"
	"github.com/nccomring/libnccomring/internal/cli"
	"github.com/nccomring/libnccomring/internal/quote"
	"github.com/nccomring/libnccomring/version"
)

const exitCodesHelp = `Exit codes:
  0  no finding
  1  a finding (check: a size or field differs from layout/; preload: a
     function LD_PRELOAD cannot replace everywhere; profile: a field missing
     or a documented field that differs)
  2  unusable input or usage: not an ELF file, no DWARF, a struct missing
     entirely, a bad flag; the message says what to do. Also a file beyond
     the reader's limits (abicheck/limits.go: a DWARF section over 256 MiB,
     compressed or not, a type that contains itself, ...), on one line
`

// command is one subcommand: its usage text and what runs it.
type command struct {
	name    string
	summary string
	usage   string // everything --help prints after the synopsis line
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is filled in init: the subcommands print their own usage from
// it, which a static initializer would make an initialization cycle.
var commands []command

func init() {
	commands = []command{
		{"check", "compare LIB's ring-stage structs with layout/ (D2, D3)", checkUsage, runCheck},
		{"preload", "can LD_PRELOAD replace LIB's four ring-stage functions?", preloadUsage, runPreload},
		{"dump", "pahole-style listing of structs from LIB's DWARF", dumpUsage, runDump},
		{"profile", "the ASSUMED ncclComm offsets LIB has, as JSON (NCCOM_RING_LAYOUT)", profileUsage, runProfile},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		topUsage(stderr)
		return cli.ExitUnusable
	}
	name := args[0]
	switch name {
	case "--version", "-version", "version":
		fmt.Fprintf(stdout, "nccom-abi %s (libnccomring %s)\n", version.Library, version.Library)
		return cli.ExitOK
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && name == "help" {
			if c := findCommand(args[1]); c != nil {
				commandUsage(stdout, c)
				return cli.ExitOK
			}
		}
		topUsage(stdout)
		return cli.ExitOK
	}
	c := findCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "nccom-abi: unknown command %q\n\n", name)
		topUsage(stderr)
		return cli.ExitUnusable
	}
	return c.run(args[1:], stdout, stderr)
}

func findCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

func topUsage(w io.Writer) {
	fmt.Fprint(w, `nccom-abi: check a libnccom build's ring-stage ABI from its own DWARF

Usage: nccom-abi COMMAND [--json] LIB [ARGS]
       nccom-abi COMMAND --help
       nccom-abi --version

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
LIB is a libnccom shared object built with debug info (-g), or its separate
debug file. nccom-abi reads it with Go's debug/elf and debug/dwarf; it never
loads or runs it.

`+exitCodesHelp)
}

func commandUsage(w io.Writer, c *command) {
	fmt.Fprintf(w, "Usage: nccom-abi %s\n%s", c.usage, exitCodesHelp)
}

// parseArgs parses fs's flags anywhere among args (cli.Parse) and returns
// the operands; ok is false when the caller should return code, after the
// command's usage went to stdout (--help) or stderr (a bad flag).
func parseArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (operands []string, code int, ok bool) {
	operands, err := cli.Parse(fs, args)
	c := findCommand(fs.Name())
	switch {
	case errors.Is(err, flag.ErrHelp):
		commandUsage(stdout, c)
		return nil, cli.ExitOK, false
	case err != nil:
		fmt.Fprintf(stderr, "nccom-abi %s: %v\n\n", fs.Name(), err)
		commandUsage(stderr, c)
		return nil, cli.ExitUnusable, false
	}
	return operands, cli.ExitOK, true
}

// usageError reports a wrong number of operands.
func usageError(stderr io.Writer, name, msg string) int {
	fmt.Fprintf(stderr, "nccom-abi %s: %s\n\n", name, msg)
	commandUsage(stderr, findCommand(name))
	return cli.ExitUnusable
}

// unusableError is input the tool cannot judge (exit 2): abicheck's, which
// says what is wrong and what to do about it.
type unusableError = abicheck.UnusableError

// reportError prints err for a subcommand and returns its exit code:
// unusable input is 2, anything else (a read error in the middle of the
// DWARF, say) is 2 as well, since no verdict was reached. The text may
// carry the LIB operand, which shows with its hidden characters escaped
// (quote.Visible, issue 34 F7).
func reportError(stderr io.Writer, name string, err error) int {
	fmt.Fprintf(stderr, "nccom-abi %s: %s\n", name, quote.Visible(strings.TrimSpace(err.Error())))
	return cli.ExitUnusable
}
